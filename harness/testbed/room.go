package testbed

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Room is what the machine has for a job's tables: memory for the in-memory
// filesystem, and free disk per directory for disk profiles.
type Room struct {
	Memory int64                           // bytes available (0: unknown, nothing skipped for memory)
	Disk   func(dir string) (int64, error) // free bytes at dir
}

// MachineRoom reads the memory available (/proc/meminfo) and asks statfs for disk.
func MachineRoom() Room {
	return Room{Memory: memAvailable(), Disk: func(dir string) (int64, error) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return 0, err
		}
		return int64(st.Bavail) * st.Bsize, nil
	}}
}

func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
