package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/resfit/resfit/bench/replay/figure"
)

// The legend's columns lie inside the canvas, under the plot, side by
// side without overlap: every entry of the replay's policies fits its
// column, the longest label too (policies with the same curve share an
// entry, their names joined), with room for a viewer's wider font; and
// the legend takes at most a third of the height.
func TestLegendInsideTheCanvas(t *testing.T) {
	w, h := 10*vg.Inch, 6*vg.Inch
	var entries []figure.Entry
	for _, p := range Policies() {
		entries = append(entries, figure.Entry{Label: p.Name + ": 12.34%"})
	}
	entries = append(entries, figure.Entry{Label: "RSF = RSF+retention = RSF+proportional: 12.34%"})
	b := figure.Layout(entries, w)
	if len(b.Columns) < 2 || b.Height > h/3 {
		t.Fatalf("%d columns, %v high on a canvas of %v × %v", len(b.Columns), b.Height, w, h)
	}
	for i, r := range b.Rects {
		if r.Min.X < 0 || r.Max.X > w || r.Min.Y < 0 || r.Max.Y > b.Height {
			t.Errorf("column %d at %v, outside %v × %v", i, r, w, b.Height)
		}
		if i > 0 && r.Min.X < b.Rects[i-1].Max.X {
			t.Errorf("column %d at %v overlaps %v", i, r, b.Rects[i-1])
		}
	}
	leg := plot.NewLegend()
	for _, e := range entries {
		if need := leg.ThumbnailWidth + leg.TextStyle.Width(" "+e.Label); need > b.Rects[0].Size().X {
			t.Errorf("%q needs %v, a column is %v wide", e.Label, need, b.Rects[0].Size().X)
		}
	}
}

// Plot draws one entry per distinct curve: policies whose curves are the
// same share it; the file is written.
func TestPlotSharesIdenticalCurves(t *testing.T) {
	var a, b Summary
	a.Policy, b.Policy = "RSF", "RSF+retention"
	for x := range LoadPoints {
		a.Allocation[x] = float64(x) * 0.7
	}
	b.Allocation = a.Allocation
	c := a
	c.Policy, c.Allocation[120] = "FGD", 80
	path := filepath.Join(t.TempDir(), "allocation.svg")
	if err := Plot(path, []Summary{a, b, c}); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(svg)
	if !strings.Contains(text, "RSF = RSF+retention: 0.00%") || !strings.Contains(text, "FGD: 0.00%") || strings.Count(text, "RSF+retention") != 1 {
		t.Errorf("legend entries not as expected")
	}
}
