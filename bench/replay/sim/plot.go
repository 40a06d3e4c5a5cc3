package sim

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot draws the mean GPU allocation against the arrived load, one line
// per policy, as an SVG file.
func Plot(path string, sums []Summary) error {
	p := plot.New()
	p.Title.Text = "GPU allocation as the workload arrives (mean over seeds)"
	p.X.Label.Text = "arrived workload, % of cluster GPU capacity"
	p.Y.Label.Text = "GPU allocated, % of capacity"
	p.X.Min, p.X.Max = 50, 130
	p.Y.Min, p.Y.Max = 50, 100
	// Bottom right, below the lines: past 90% load every policy is above
	// 80% allocated.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-10), vg.Points(10)
	p.Add(plotter.NewGrid())
	for i, s := range sums {
		pts := make(plotter.XYs, 0, LoadPoints)
		for x := 50; x < LoadPoints; x++ {
			pts = append(pts, plotter.XY{X: float64(x), Y: s.Allocation[x]})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / 7)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (%.2f%% unallocated)", s.Policy, s.Unallocated.Mean), line)
	}
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}
