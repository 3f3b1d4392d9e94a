//go:build !linux

package heap

// TotalMemory is the machine's memory in bytes: unknown (0) off Linux.
func TotalMemory() int64 { return 0 }
