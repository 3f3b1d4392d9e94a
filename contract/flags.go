package contract

import (
	"flag"
	"strings"
)

// Names of the bench binary's flags besides the dimensions.
const (
	FlagProfileFile = "profile-file"
	FlagCrash       = "crash"
	FlagTrace       = "trace"
	FlagStartGate   = "start-gate"
	FlagWarmup      = "warmup"
)

// TestingFlags are the testing package's flags that Args passes; a fake bench
// binary declares them to accept the same command line.
var TestingFlags = []string{"test.run", "test.bench", "test.benchtime", "test.count"}

// Flags are the bench binary's own flags, declared once here and registered by the
// binary, by the harness's fakes, and read back by Args.
type Flags struct {
	dims         map[string]*string
	ProfileFiles *string // comma-separated profile files
	Crash        *string // BenchmarkRecovery's crash points
	Trace        *string // the JSON-lines trace file to append to
	StartGate    *bool   // wait at the start gate (see gate.AwaitStart) before the first timed job
	Warmup       *bool   // run one untimed job of each benchmark before its timed ones
}

// Register declares the flags on fs, each dimension defaulting to defaults' values.
func Register(fs *flag.FlagSet, defaults Matrix) *Flags {
	f := &Flags{dims: map[string]*string{}}
	for _, d := range Dims() {
		f.dims[d.Name] = fs.String(d.Name, defaults.Get(d.Name), "comma-separated "+d.Help)
	}
	f.ProfileFiles = fs.String(FlagProfileFile, "", "comma-separated profile files to add to the built-in profiles")
	f.Crash = fs.String(FlagCrash, "25%,50%,90%", "comma-separated fractions of the snapshot rows at which BenchmarkRecovery loses power")
	f.Trace = fs.String(FlagTrace, "", "append each job's trace (per-epoch rows and latencies, bytes per category) to this JSON-lines file")
	f.StartGate = fs.Bool(FlagStartGate, false, "before the first timed job, write a byte to file descriptor 3 and wait for one on file descriptor 4 (the harness starts the two jobs of a duet together this way)")
	f.Warmup = fs.Bool(FlagWarmup, false, "before each benchmark's timed jobs, run one untimed job of its own in the same process (a replay's recording backfill is its), so that a timed job meets a process that has run one before, as a resident engine's has; the harness sets it for every run of a run with baselines (runner.PassConfig.Warmup)")
	return f
}

// Matrix reads the dimension flags; an error names the flag.
func (f *Flags) Matrix() (Matrix, error) {
	var m Matrix
	for _, d := range DimensionNames() {
		if err := m.Set(d, *f.dims[d]); err != nil {
			return m, &FlagError{Flag: d, Err: err}
		}
	}
	return m, m.Validate()
}

// ProfileFileList is the -profile-file list, nil when empty.
func (f *Flags) ProfileFileList() []string {
	if *f.ProfileFiles == "" {
		return nil
	}
	return strings.Split(*f.ProfileFiles, ",")
}

// FlagError is a bad value of a named flag.
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return "-" + e.Flag + ": " + e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// Args are the bench binary's arguments that run exactly this cell once: each
// dimension set to the cell's value, -test.bench matching the cell's name level by
// level, one iteration, the trace file and the profile files (absolute paths). An
// optional dimension at its default is left out, so a bench binary built before
// that dimension existed still runs the cell.
func (c Cell) Args(trace string, profileFiles []string) []string {
	args := []string{"-test.run", "^$", "-test.bench", c.BenchRegexp()}
	for _, d := range Dims() {
		if v := d.get(c); d.Default == "" || v != d.Default {
			args = append(args, "-"+d.Name, v)
		}
	}
	args = append(args, "-test.benchtime", "1x", "-test.count", "1")
	if trace != "" {
		args = append(args, "-"+FlagTrace, trace)
	}
	if len(profileFiles) > 0 {
		args = append(args, "-"+FlagProfileFile, strings.Join(profileFiles, ","))
	}
	return args
}
