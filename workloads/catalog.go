package workloads

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/backfill-bench/backfill-bench/bench/row"
)

// WriteList writes every table (with its schema), key distribution and change mix,
// and how to combine them.
func WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	kind := ""
	for _, in := range List() {
		if in.Kind != kind {
			kind = in.Kind
			fmt.Fprintf(tw, "\n%s:\n", map[string]string{"table": "Tables", "keys": "Key distributions (+keys)", "mix": "Change mixes (+mix)"}[kind])
		}
		fmt.Fprintf(tw, "  %s\t%s\n", in.Name, in.Description)
		if in.Kind == "table" {
			var cols []string
			for _, c := range in.Columns {
				cols = append(cols, c.Name+" "+c.Kind.String())
			}
			fmt.Fprintf(tw, "  \tcolumns: %s\n", strings.Join(cols, ", "))
			fmt.Fprintf(tw, "  \tprimary key: %s; distribution key: %s\n", strings.Join(in.PK, ", "), strings.Join(in.DistKey, ", "))
		}
	}
	fmt.Fprintf(tw, "\nCombine as table[+keys][+mix], e.g. bid+zipfian:1.3+tombstone. Upstream rate and\nper-epoch shaping are job parameters (changes/s; spread or front-loaded).\n")
	return tw.Flush()
}

// GenConfig configures Gen: which rows of which workload, in which format.
type GenConfig struct {
	Workload string // a workloads spec
	Rows     int
	Seed     uint64
	Format   string // table, csv or json
}

// Gen writes the first Rows rows of the workload's initial table.
func Gen(w io.Writer, cfg GenConfig) error {
	if cfg.Rows < 0 {
		return fmt.Errorf("--rows %d: must be ≥ 0", cfg.Rows)
	}
	wl, err := Parse(cfg.Workload, cfg.Seed)
	if err != nil {
		return fmt.Errorf("--workload: %w", err)
	}
	s := wl.Schema()
	header := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		header[i] = c.Name
	}
	var r row.Row
	rows := func(yield func(row.Row) error) error {
		for id := 0; id < cfg.Rows; id++ {
			r = wl.Row(r, cfg.Seed, int64(id), 1)
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
	switch cfg.Format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		err := rows(func(r row.Row) error { return cw.Write(plainValues(r)) })
		cw.Flush()
		return errors.Join(err, cw.Error())
	case "json":
		enc := json.NewEncoder(w)
		return rows(func(r row.Row) error {
			obj := make(map[string]any, len(r))
			for i, d := range r {
				obj[header[i]] = jsonValue(d)
			}
			return enc.Encode(obj)
		})
	case "table", "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		err := rows(func(r row.Row) error {
			_, err := fmt.Fprintln(tw, strings.Join(plainValues(r), "\t"))
			return err
		})
		return errors.Join(err, tw.Flush())
	}
	return fmt.Errorf("--format %q: want table, csv or json", cfg.Format)
}

func plainValues(r row.Row) []string {
	out := make([]string, len(r))
	for i, d := range r {
		switch d.Kind {
		case row.String:
			out[i] = d.S
		case row.Timestamp:
			out[i] = time.UnixMicro(d.I).UTC().Format(time.RFC3339Nano)
		case row.Null:
			out[i] = ""
		default:
			out[i] = d.String()
		}
	}
	return out
}

func jsonValue(d row.Datum) any {
	switch d.Kind {
	case row.Int64:
		return d.I
	case row.Float64:
		return d.Float()
	case row.String:
		return d.S
	case row.Bool:
		return d.I != 0
	case row.Timestamp:
		return time.UnixMicro(d.I).UTC().Format(time.RFC3339Nano)
	}
	return nil
}
