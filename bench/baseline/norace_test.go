//go:build !race

package baseline

const raceSlowdown = 1
