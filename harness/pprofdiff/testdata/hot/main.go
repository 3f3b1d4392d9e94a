// Command hot burns CPU in two functions under the pprof label phase=job, and in
// a third outside it, and writes a CPU profile (and a heap profile) where the
// flags -test.cpuprofile (-test.memprofile) say, ignoring a bench binary's other
// arguments: the tests of pprofdiff and of compare's profiling build it twice, with
// more work in main.hot in one of them.
package main

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

// hotRounds is set at link time (-X main.hotRounds=…).
var hotRounds = "1"

var sink uint64

// Each function burns its own CPU (no shared callee), so its time is its flat time.

//go:noinline
func hot() {
	x := sink
	for i := 0; i < 50_000_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

//go:noinline
func cold() {
	x := sink
	for i := 0; i < 50_000_000; i++ {
		x = x*2862933555777941757 + 3037000493
	}
	sink = x
}

//go:noinline
func setup() {
	x := sink
	for i := 0; i < 100_000_000; i++ {
		x = x*3935559000370003845 + 2691343689449507681
	}
	sink = x
}

var kept [][]byte

func main() {
	var cpuFile, memFile string
	for i, a := range os.Args[:len(os.Args)-1] {
		switch a {
		case "-test.cpuprofile":
			cpuFile = os.Args[i+1]
		case "-test.memprofile":
			memFile = os.Args[i+1]
		}
	}
	f, err := os.Create(cpuFile)
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	setup()
	n, _ := strconv.Atoi(hotRounds)
	pprof.Do(context.Background(), pprof.Labels("phase", "job"), func(context.Context) {
		for range 3 {
			cold()
		}
		for range n {
			hot()
			kept = append(kept, make([]byte, 1<<20)) // 1 MiB allocated per round
		}
	})
	pprof.StopCPUProfile()
	f.Close()
	if memFile != "" {
		m, err := os.Create(memFile)
		if err != nil {
			panic(err)
		}
		runtime.GC() // the profile shows allocations up to the last GC
		if err := pprof.Lookup("allocs").WriteTo(m, 0); err != nil {
			panic(err)
		}
		m.Close()
	}
}
