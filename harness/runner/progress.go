package runner

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// progress reports runs as they go: a bar with an ETA redrawn in place on a terminal,
// one log line per run elsewhere (CI logs).
type progress struct {
	w        io.Writer
	term     bool
	log      *slog.Logger
	total    int
	finished int
	failed   int
	began    time.Time
	runAt    time.Time
}

func newProgress(w io.Writer, term bool, log *slog.Logger, total int) *progress {
	return &progress{w: w, term: term && w != nil, log: log, total: total, began: time.Now()}
}

// eta extrapolates the mean run so far; rounds interleave every cell, so after the
// first round the mean is a fair estimate of what is left.
func (p *progress) eta() string {
	if p.finished == 0 {
		return "?"
	}
	per := time.Since(p.began) / time.Duration(p.finished)
	return (per * time.Duration(p.total-p.finished)).Round(time.Second).String()
}

func (p *progress) start(t Trial) {
	p.runAt = time.Now()
	if !p.term {
		return
	}
	const width = 30
	filled := width * p.finished / max(p.total, 1)
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d ETA %s  %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		p.finished, p.total, p.eta(), t.Cell.Name())
}

func (p *progress) done(t Trial, f *Failure) {
	p.finished++
	took := time.Since(p.runAt).Round(time.Millisecond)
	if f != nil {
		p.failed++
	}
	if p.term {
		if f != nil {
			fmt.Fprintf(p.w, "\r\033[KFAILED run %d %s: %s\n", t.Index, t.Cell.Name(), f.Reason)
		}
		return
	}
	attrs := []any{"run", fmt.Sprintf("%d/%d", t.Index, p.total), "cell", t.Cell.Name(), "took", took, "eta", p.eta()}
	if f != nil {
		p.log.Error("run failed", append(attrs, "reason", f.Reason)...)
		return
	}
	p.log.Info("run done", attrs...)
}

func (p *progress) finish() {
	if p.term {
		fmt.Fprintf(p.w, "\r\033[K%d runs in %v, %d failed\n", p.finished, time.Since(p.began).Round(time.Second), p.failed)
	}
}
