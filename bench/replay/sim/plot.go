package sim

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/resfit/resfit/bench/replay/figure"
)

// unallocatedPlot is a plot of the unallocated GPU, in percent of
// capacity, against what the x label names, with a grid.
func unallocatedPlot(title, x string) *plot.Plot {
	return figure.New(title, x, "GPU unallocated, % of capacity")
}

// PlotFrom is the least arrived load Plot draws: below it every policy
// places nearly every pod, and what it leaves unallocated is the capacity
// not yet asked for, which would take the plot's height from the
// differences the policies make once demand passes capacity.
const PlotFrom = 100

// Plot draws the mean unallocated GPU against the arrived load, from
// PlotFrom to 130%, one line and marker per policy, as an SVG file; the
// y axis spans the data. Policies whose curves are the same to the last
// digit share one line and one legend entry; each entry gives the mean
// unallocated GPU at 130%.
func Plot(path string, sums []Summary) error {
	p := unallocatedPlot("Unallocated GPU as the workload arrives (mean over seeds)", "arrived workload, % of cluster GPU capacity")
	p.X.Min, p.X.Max = PlotFrom, LoadPoints-1
	lo, hi := math.Inf(1), math.Inf(-1)
	var entries []figure.Entry
	var policies [][]string // each entry's, with the same curve
	var unallocated []float64
	drawn := map[[LoadPoints]float64]int{} // a curve → its entry
	for _, s := range sums {
		if i, same := drawn[s.Allocation]; same {
			policies[i] = append(policies[i], s.Policy)
			continue
		}
		pts := make(plotter.XYs, 0, LoadPoints)
		for x := PlotFrom; x < LoadPoints; x++ {
			y := 100 - s.Allocation[x]
			lo, hi = min(lo, y), max(hi, y)
			pts = append(pts, plotter.XY{X: float64(x), Y: y})
		}
		i := len(entries)
		ls, gs := figure.Style(i)
		// Markers every 10 points, each series offset by one, so that close
		// curves still show whose marker is whose.
		line, scatter, err := figure.MarkedLine(pts, ls, gs, i%10, 10)
		if err != nil {
			return err
		}
		p.Add(line, scatter)
		drawn[s.Allocation] = i
		entries = append(entries, figure.Entry{Thumbs: []plot.Thumbnailer{line, scatter}})
		policies = append(policies, []string{s.Policy})
		unallocated = append(unallocated, s.Unallocated.Mean)
	}
	for i := range entries {
		entries[i].Label = fmt.Sprintf("%s: %.2f%%", strings.Join(policies[i], " = "), unallocated[i])
	}
	figure.Zoom(&p.Y, lo, hi, 1)
	return figure.Save(p, entries, 10*vg.Inch, 6*vg.Inch, path)
}
