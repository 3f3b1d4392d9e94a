package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/backfill-bench/backfill-bench/contract"
	"github.com/backfill-bench/backfill-bench/internal/files"
)

// The Okabe–Ito palette, safe for colour-blind readers. A variant keeps its colour
// in every plot: off and base blue, on and head orange.
var (
	Blue      = color.RGBA{0x00, 0x72, 0xB2, 0xFF}
	Orange    = color.RGBA{0xE6, 0x9F, 0x00, 0xFF}
	Sky       = color.RGBA{0x56, 0xB4, 0xE9, 0xFF}
	Green     = color.RGBA{0x00, 0x9E, 0x73, 0xFF}
	Vermilion = color.RGBA{0xD5, 0x5E, 0x00, 0xFF}
	Purple    = color.RGBA{0xCC, 0x79, 0xA7, 0xFF}
	Yellow    = color.RGBA{0xF0, 0xE4, 0x42, 0xFF}
	Grey      = color.RGBA{0x88, 0x88, 0x88, 0xFF}
	Black     = color.RGBA{0x00, 0x00, 0x00, 0xFF}
)

// Variant is the colour of the i-th variant (off/base, on/head, then others).
func Variant(i int) color.Color {
	return []color.Color{Blue, Orange, Green, Purple, Sky, Vermilion}[i%6]
}

// Translucent is c at the alpha of a confidence band.
func Translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x30}
}

// Dashed is the dash pattern of reference lines.
var Dashed = []vg.Length{vg.Points(4), vg.Points(3)}

// Plot sizes: 800 px wide at 96 dpi.
const (
	Width  = 600 * vg.Length(1) // points
	Height = 375 * vg.Length(1)
	DPI    = 96
)

// KeyUnits are the metrics the variant and trend plots show, those present.
var KeyUnits = []string{contract.UnitSteadyRows, contract.Tidy(contract.UnitSteadyCPU), contract.UnitBarrierP99, contract.UnitWriteAmp,
	contract.UnitRowsPerSec, contract.Tidy(contract.UnitCPUPerRow), contract.UnitPersistBytes}

// New is a plot with its title and axis labels, the legend at the top.
func New(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	return p
}

// Better is a direction in words: "higher is better".
func Better(better int) string {
	return map[int]string{1: "higher is better", -1: "lower is better", 0: "no better direction"}[better]
}

// Headroom leaves the top of the plot to the legend, so it covers no data: a
// fifth of it, and more for legends of many entries.
func Headroom(p *plot.Plot, entries int) {
	p.Y.Max += max(0.25, 0.08*float64(entries)) * (p.Y.Max - math.Min(p.Y.Min, 0))
}

// RowLabels shortens cell names to the name keys that differ between them.
func RowLabels(rows []string) []string {
	split := make([][]contract.Field, len(rows))
	counts := map[string]map[string]bool{}
	for i, r := range rows {
		split[i] = contract.Fields(contract.Label(r))
		for _, f := range split[i] {
			if counts[f.Dim] == nil {
				counts[f.Dim] = map[string]bool{}
			}
			counts[f.Dim][f.Value] = true
		}
	}
	out := make([]string, len(rows))
	for i, parts := range split {
		var keep []string
		for _, f := range parts {
			if len(counts[f.Dim]) > 1 {
				keep = append(keep, f.String())
			}
		}
		out[i] = strings.Join(keep, "\n")
		if out[i] == "" {
			out[i] = "all cells"
		}
	}
	return out
}

// ErrorPoints are points with asymmetric vertical error bars.
type ErrorPoints []ErrorPoint

// ErrorPoint is a point and its error below and above.
type ErrorPoint struct{ X, Y, Lo, Hi float64 }

func (e ErrorPoints) Len() int                        { return len(e) }
func (e ErrorPoints) XY(i int) (float64, float64)     { return e[i].X, e[i].Y }
func (e ErrorPoints) YError(i int) (float64, float64) { return e[i].Lo, e[i].Hi }

// Empty is a blank tile of a grid.
func Empty() *plot.Plot {
	p := plot.New()
	p.HideAxes()
	return p
}

// Pairs lays tiles out two per row, a blank tile filling the last row.
func Pairs(tiles []*plot.Plot) [][]*plot.Plot {
	var grid [][]*plot.Plot
	for i := 0; i < len(tiles); i += 2 {
		row := []*plot.Plot{tiles[i], Empty()}
		if i+1 < len(tiles) {
			row[1] = tiles[i+1]
		}
		grid = append(grid, row)
	}
	return grid
}

// Draw draws a grid of plots on c.
func Draw(plots [][]*plot.Plot, c vg.CanvasSizer) {
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: 6 * vg.Millimeter, PadY: 6 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(plots, tiles, draw.New(c))
	for i := range plots {
		for j := range plots[i] {
			if plots[i][j] != nil {
				plots[i][j].Draw(canvases[i][j])
			}
		}
	}
}

// Save draws a grid of plots on one page and writes base.png and base.svg.
func Save(plots [][]*plot.Plot, w, h vg.Length, base string) error {
	for _, format := range []string{"png", "svg"} {
		var c vg.CanvasWriterTo
		if format == "png" {
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))}
		} else {
			c = vgsvg.New(w, h)
		}
		Draw(plots, c)
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("plot %s.%s: %w", base, format, err)
		}
		if err := files.WriteAtomic(base+"."+format, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
