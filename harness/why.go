package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/profile"
	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/pprofdiff"
	"github.com/backfill-bench/backfill-bench/harness/runner"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// whyTop is how many functions a diff lists.
const whyTop = 10

// profiledSide is a bench binary to profile a cell with.
type profiledSide struct {
	Label, Binary string
}

// explain profiles every confirmed regressed cell of v once on each side (CPU, and
// the heap where job-B/op or job-allocs/op regressed) and adds to v.Why the
// functions that grew, with the profiles kept under dir/profiles for go tool pprof.
// A cell that cannot be profiled says why in its entry; the comparison goes on.
func explain(ctx context.Context, dir string, sides [2]profiledSide, profileFiles []string, timeout time.Duration, v *judge.Verdict) {
	var cells []string
	heap := map[string]bool{}
	for _, f := range v.Findings {
		if f.Status != judge.Regression {
			continue
		}
		if !slices.Contains(cells, f.Cell) {
			cells = append(cells, f.Cell)
		}
		if f.Unit == contract.Tidy(contract.UnitAllocBytes) || f.Unit == contract.UnitAllocs {
			heap[f.Cell] = true
		}
	}
	for _, name := range cells {
		w := judge.Why{Cell: name}
		if err := profileCell(ctx, dir, sides, profileFiles, timeout, name, heap[name], &w); err != nil {
			w.Error = err.Error()
		}
		v.Why = append(v.Why, w)
	}
}

// profileCell runs cell once per side with profiles and diffs them into w.
func profileCell(ctx context.Context, dir string, sides [2]profiledSide, profileFiles []string, timeout time.Duration, name string, heap bool, w *judge.Why) error {
	cell, err := contract.ParseName(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
		return err
	}
	profiles, err := profile.NewSet(profileFiles)
	if err != nil {
		return err
	}
	prof, err := profiles.Get(cell.Profile)
	if err != nil {
		return err
	}
	var cpu, mem [2]string // relative to dir
	for i, s := range sides {
		base := filepath.Join("profiles", s.Label+"-"+files.SafeName(name))
		cpu[i] = base + ".cpu.pprof"
		diag := []string{"-test.cpuprofile", filepath.Join(dir, cpu[i])}
		if heap {
			mem[i] = base + ".heap.pprof"
			diag = append(diag, "-test.memprofile", filepath.Join(dir, mem[i]))
		}
		var out bytes.Buffer
		err := runner.Job{Binary: s.Binary, Args: cell.Args("", profileFiles), Diagnostics: diag, Dir: dir, CPUs: prof.CPUs,
			Timeout: timeout, Stdout: &out, Stderr: &out}.Run(ctx)
		if err != nil {
			return fmt.Errorf("profile %s on %s: %v: %s", name, s.Label, err, tail(out.Bytes()))
		}
	}
	w.Profiles = append(w.Profiles, cpu[:]...)
	if w.CPU, err = diffFiles(dir, cpu, pprofdiff.CPU, "phase", "job"); err != nil {
		return err
	}
	if heap {
		w.Profiles = append(w.Profiles, mem[:]...)
		// Heap profiles carry no labels: the whole process, setup included.
		if w.Heap, err = diffFiles(dir, mem, pprofdiff.Alloc, "", ""); err != nil {
			return err
		}
	}
	return nil
}

func diffFiles(dir string, names [2]string, kind, key, value string) (*pprofdiff.Diff, error) {
	base, err := os.Open(filepath.Join(dir, names[0]))
	if err != nil {
		return nil, err
	}
	defer base.Close()
	head, err := os.Open(filepath.Join(dir, names[1]))
	if err != nil {
		return nil, err
	}
	defer head.Close()
	return pprofdiff.Compare(base, head, kind, key, value, whyTop)
}

// tail is the end of a command's output, for an error message.
func tail(out []byte) string {
	const n = 400
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return string(out)
}

// addByteChanges puts beside each profiled cell of v its bytes by category (the
// logical bytes, then each filesystem category, then what persisting state added),
// from v's own findings.
func addByteChanges(v *judge.Verdict) {
	units := []string{contract.UnitLogicalPerOp}
	for _, c := range contract.FSCategories {
		units = append(units, contract.FSUnit(c))
	}
	units = append(units, contract.UnitPersistBytes)
	for i := range v.Why {
		for _, u := range units {
			for _, f := range v.Findings {
				if f.Cell != v.Why[i].Cell || f.Unit != u || f.Base.Median == 0 && f.Head.Median == 0 {
					continue // a category neither side wrote says nothing
				}
				b := judge.ByteChange{Unit: u, Base: f.Base.Median, Head: f.Head.Median}
				if b.Base != 0 {
					d := b.Head/b.Base - 1
					b.Delta = &d
				}
				v.Why[i].Bytes = append(v.Why[i].Bytes, b)
			}
		}
	}
}
