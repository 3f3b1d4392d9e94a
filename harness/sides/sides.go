// Package sides tells what a user named as a compare's side (a git ref to build
// and run, a results file or a results directory) and reads results files into
// memory.
package sides

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
)

// Spec is what a user named as one side.
type Spec struct {
	Arg  string
	File string // a results file, or "" for a ref
	Ref  string // a git ref; "" with File "" is the working tree
}

// Parse tells a results file or directory from a ref. An argument that names
// neither an existing path nor (later) a commit is reported as both.
func Parse(arg string) Spec {
	if arg == "" {
		return Spec{}
	}
	if st, err := os.Stat(arg); err == nil {
		if st.IsDir() {
			return Spec{Arg: arg, File: filepath.Join(arg, "results.txt")}
		}
		return Spec{Arg: arg, File: arg}
	}
	return Spec{Arg: arg, Ref: arg}
}

// Label names the side in the verdict and the output directory.
func (s Spec) Label() string {
	if s.Arg == "" {
		return "working-tree"
	}
	return s.Arg
}

// Check refuses a ref that reads as a path: refs end in no .txt and start with
// no / or ./.
func (s Spec) Check() error {
	if ref := s.Ref; strings.HasSuffix(ref, ".txt") || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") {
		return fmt.Errorf("compare: %s: no such results file or directory", ref)
	}
	return nil
}

// ReadFiles reads the two results files the user named, as benchstat would: the
// warnings name what was skipped.
func ReadFiles(base, head string) (judge.Pair, []string, error) {
	var s judge.Pair
	b, err := contract.ReadLenient(base)
	if err != nil {
		return s, nil, fmt.Errorf("compare: %w", err)
	}
	h, err := contract.ReadLenient(head)
	if err != nil {
		return s, nil, fmt.Errorf("compare: %w", err)
	}
	s.Base.Results, s.Head.Results, s.Units = b.Results, h.Results, b.Units
	for k, u := range h.Units {
		s.Units[k] = u
	}
	return s, append(b.Warnings, h.Warnings...), nil
}

// Failed names the benchmarks whose job failed in a results file ("--- FAIL:
// BenchmarkX" of go test) or, for a results directory, in its failures.txt.
func Failed(side Spec) ([]string, error) {
	var failed []string
	data, err := os.ReadFile(side.File)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "--- FAIL: "); ok && strings.HasPrefix(name, "Benchmark") {
			name, _, _ = strings.Cut(name, " ")
			failed = append(failed, strings.TrimPrefix(name, "Benchmark"))
		}
	}
	if side.File == side.Arg { // a file, not a directory
		return failed, nil
	}
	data, err = os.ReadFile(filepath.Join(side.Arg, "failures.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return failed, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		// run 3 (round 2, head) BenchmarkX/…: reason, or after the cells (round 1) …
		if _, rest, ok := strings.Cut(l, ") Benchmark"); ok && (strings.HasPrefix(l, "run ") || strings.HasPrefix(l, "after the cells ")) {
			name, _, _ := strings.Cut(rest, ": ")
			failed = append(failed, name)
		}
	}
	return failed, nil
}
