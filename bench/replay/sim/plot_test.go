package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// The legend's column lies inside the canvas, beside the plot: every
// entry of the replay's policies fits, the longest label too (policies
// with the same curve share an entry, their names joined), with room for
// a viewer's wider font.
func TestLegendInsideTheCanvas(t *testing.T) {
	w, h := 10*vg.Inch, 6*vg.Inch
	var entries []legendEntry
	for _, p := range Policies() {
		entries = append(entries, legendEntry{label: p.Name + ": 12.34%"})
	}
	entries = append(entries, legendEntry{label: "RSF = RSF+retention = RSF+proportional: 12.34%"})
	leg, r := legendLayout(entries, w, h)
	if r.Min.X < w/2 || r.Max.X > w || r.Min.Y < 0 || r.Max.Y > h {
		t.Fatalf("legend at %v on a canvas of %v × %v", r, w, h)
	}
	for _, e := range entries {
		if need := leg.ThumbnailWidth + leg.TextStyle.Width(" "+e.label); need > r.Size().X {
			t.Errorf("%q needs %v, the column is %v wide", e.label, need, r.Size().X)
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
