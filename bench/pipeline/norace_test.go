//go:build !race

package pipeline

const raceSlowdown = 1
