package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/harness/history"
	"github.com/backfill-bench/backfill-bench/harness/judge"
	"github.com/backfill-bench/backfill-bench/harness/render/site"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// SiteConfig configures `benchrun site`.
type SiteConfig struct {
	History   string         // the nightly history: a directory per machine fingerprint
	Out       string         // where the pages go
	CommitURL string         // a commit's web page, with %s for the commit ("": none)
	Analysis  history.Config // finds the change points, as nightly does
}

// SiteReport is what Site wrote.
type SiteReport struct {
	Pages   []string // index.html first
	Skipped []string // nights that could not be read, with why
}

// Site writes a static dashboard of the nightly history: an index, and per machine
// and profile a page with the trend of every judged metric of every cell, change
// points marked, each night linked to its report. The pages need no server and no
// network to view.
func Site(cfg SiteConfig) (*SiteReport, error) {
	if cfg.History == "" || cfg.Out == "" {
		return nil, &ConfigError{errors.New("site: want --history DIR and --out DIR")}
	}
	if cfg.CommitURL != "" && strings.Count(cfg.CommitURL, "%s") != 1 {
		return nil, &ConfigError{fmt.Errorf("site: --commit-url %q: want one %%s where the commit goes", cfg.CommitURL)}
	}
	if cfg.Analysis.Thresholds == nil {
		cfg.Analysis.Thresholds = judge.DefaultThresholds()
	}
	entries, err := os.ReadDir(cfg.History)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("site: --history: %w", err)}
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("site: --out: %w", err)
	}
	rep := &SiteReport{Pages: []string{filepath.Join(cfg.Out, "index.html")}}
	var index []site.IndexEntry
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		machine := e.Name()
		nights, skipped, err := history.Load(cfg.History, machine)
		if err != nil {
			return nil, err
		}
		rep.Skipped = append(rep.Skipped, skipped...)
		if len(nights) == 0 {
			continue
		}
		pages, err := machinePages(cfg, machine, nights)
		if err != nil {
			return nil, fmt.Errorf("site: machine %s: %w", machine, err)
		}
		for _, p := range pages {
			name := files.SafeName(machine) + "-" + files.SafeName(p.Profile) + ".html"
			var buf bytes.Buffer
			if err := site.WritePage(&buf, p); err != nil {
				return nil, err
			}
			path := filepath.Join(cfg.Out, name)
			if err := files.WriteAtomic(path, buf.Bytes()); err != nil {
				return nil, err
			}
			rep.Pages = append(rep.Pages, path)
			index = append(index, site.IndexEntry{Machine: machine, Profile: p.Profile, Page: name, Nights: len(p.Nights), Cells: p.Cells})
		}
	}
	var buf bytes.Buffer
	if err := site.WriteIndex(&buf, index); err != nil {
		return nil, err
	}
	if err := files.WriteAtomic(rep.Pages[0], buf.Bytes()); err != nil {
		return nil, err
	}
	return rep, nil
}

// machinePages builds one page per profile of a machine's nights.
func machinePages(cfg SiteConfig, machine string, nights []history.Night) ([]site.Page, error) {
	series, err := history.AllSeries(nights, cfg.Analysis.Thresholds)
	if err != nil {
		return nil, err
	}
	alerts, err := history.Analyze(nights, cfg.Analysis)
	if err != nil {
		return nil, err
	}
	nightIndex := map[string]int{}
	var siteNights []site.Night
	for i, n := range nights {
		nightIndex[n.Name] = i
		sn := site.Night{Name: n.Name, Commit: contract.ShortCommit(n.Commit), CommitTime: n.CommitTime}
		// Links relative to the pages, so the site and the history can move together.
		if rel, err := filepath.Rel(cfg.Out, filepath.Join(history.Dir(cfg.History, machine), n.Name, "nightly.md")); err == nil {
			sn.Report = filepath.ToSlash(rel)
		}
		if cfg.CommitURL != "" && n.Commit != "" {
			sn.CommitLink = fmt.Sprintf(cfg.CommitURL, n.Commit)
		}
		siteNights = append(siteNights, sn)
	}
	byProfile := map[string]*site.Page{}
	var order []string
	cellAt := map[string]int{} // index in its page's Cells
	for _, s := range series {
		c, err := contract.ParseName(s.Cell)
		if err != nil {
			continue // not a backfill cell
		}
		page := byProfile[c.Profile]
		if page == nil {
			page = &site.Page{Machine: machine, Profile: c.Profile, Index: "index.html", Nights: siteNights}
			byProfile[c.Profile] = page
			order = append(order, c.Profile)
		}
		at, ok := cellAt[s.Cell]
		if !ok {
			at = len(page.Cells)
			cellAt[s.Cell] = at
			page.Cells = append(page.Cells, site.Cell{Name: s.Cell, Anchor: files.SafeName(s.Cell)})
		}
		chart := site.Chart{Series: s}
		for _, a := range alerts {
			if a.Kind == history.AlertChange && a.Cell == s.Cell && a.Unit == s.Unit {
				chart.ChangePoints = append(chart.ChangePoints, site.Change{Night: nightIndex[a.Night], Delta: a.Delta, Worse: a.Status == judge.Regression})
			}
		}
		page.Cells[at].Charts = append(page.Cells[at].Charts, chart)
	}
	slices.Sort(order)
	var out []site.Page
	for _, p := range order {
		out = append(out, *byProfile[p])
	}
	return out, nil
}
