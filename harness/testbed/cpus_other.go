//go:build !linux

package testbed

import "errors"

// PinSupported: pinning is implemented for Linux only.
func PinSupported() error {
	return errors.New("pinning processes to CPUs is implemented for Linux only")
}

// CPUs: none known here.
func CPUs() []int { return nil }

// Pin is never called here (PinSupported refuses).
func Pin(pid int, cpus []int) error { return PinSupported() }
