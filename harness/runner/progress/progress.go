// Package progress reports a pass's runs as they go: a bar on a terminal, a log line per run elsewhere.
package progress

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// Bar reports runs as they go: a bar with an ETA redrawn in place on a terminal,
// one log line per run elsewhere (CI logs).
type Bar struct {
	w        io.Writer
	term     bool
	log      *slog.Logger
	total    int
	finished int
	failed   int
	began    time.Time
	runAt    time.Time
}

// New is a Bar for total runs, drawn on w when term, else logged to log.
func New(w io.Writer, term bool, log *slog.Logger, total int) *Bar {
	return &Bar{w: w, term: term && w != nil, log: log, total: total, began: time.Now()}
}

// eta extrapolates the mean run so far; rounds interleave every cell, so after the
// first round the mean is a fair estimate of what is left.
func (p *Bar) eta() string {
	if p.finished == 0 {
		return "?"
	}
	per := time.Since(p.began) / time.Duration(p.finished)
	return (per * time.Duration(p.total-p.finished)).Round(time.Second).String()
}

// Start says the run of the cell named name began.
func (p *Bar) Start(name string) {
	p.runAt = time.Now()
	if !p.term {
		return
	}
	const width = 30
	filled := width * p.finished / max(p.total, 1)
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d ETA %s  %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		p.finished, p.total, p.eta(), name)
}

// Done says run index (1-based) of the cell named name ended, failed for reason
// when reason is not "".
func (p *Bar) Done(index int, name, reason string) {
	p.finished++
	took := time.Since(p.runAt).Round(time.Millisecond)
	if reason != "" {
		p.failed++
	}
	if p.term {
		if reason != "" {
			fmt.Fprintf(p.w, "\r\033[KFAILED run %d %s: %s\n", index, name, reason)
		}
		return
	}
	attrs := []any{"run", fmt.Sprintf("%d/%d", index, p.total), "cell", name, "took", took, "eta", p.eta()}
	if reason != "" {
		p.log.Error("run failed", append(attrs, "reason", reason)...)
		return
	}
	p.log.Info("run done", attrs...)
}

// Finish ends the bar with the count of runs and failures.
func (p *Bar) Finish() {
	if p.term {
		fmt.Fprintf(p.w, "\r\033[K%d runs in %v, %d failed\n", p.finished, time.Since(p.began).Round(time.Second), p.failed)
	}
}
