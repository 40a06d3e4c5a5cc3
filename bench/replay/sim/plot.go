package sim

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// palette holds 12 colours told apart on screen and in print (Tableau's
// 10, then two more); shapes 8 markers. Series i has colour i and marker
// i, so no two of up to 12 series look alike.
var (
	palette = []color.Color{
		color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
		color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
		color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
		color.RGBA{23, 190, 207, 255}, color.RGBA{0, 0, 128, 255}, color.RGBA{128, 128, 0, 255},
	}
	shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
		draw.RingGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}, draw.SquareGlyph{}}
)

// seriesStyle is series i's line and marker.
func seriesStyle(i int) (draw.LineStyle, draw.GlyphStyle) {
	c := palette[i%len(palette)]
	return draw.LineStyle{Color: c, Width: vg.Points(1.5)},
		draw.GlyphStyle{Color: c, Shape: shapes[i%len(shapes)], Radius: vg.Points(3.5)}
}

// legendEntry is one line of a legend: its text and what it shows.
// thumbs draw in the legend only; the plot draws its own series.
type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// legendGap is the space around a legend's block and between its columns.
const legendGap = 8

// legendBlock is a legend laid out in columns under the plot, as wide as
// the canvas allows: each column's entries and the rectangle they take,
// and the height the block takes from the bottom of the canvas.
type legendBlock struct {
	columns []plot.Legend
	rects   []vg.Rectangle
	height  vg.Length
}

// legendLayout lays the entries out under a plot on a canvas w wide:
// as many columns as fit side by side, each as wide as the widest entry,
// filled top down and left to right, centred. A column beside the plot
// would take a third of the width from the data; a legend over the plot
// would hide some of it.
func legendLayout(entries []legendEntry, w vg.Length) legendBlock {
	if len(entries) == 0 {
		return legendBlock{}
	}
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	var width vg.Length
	for _, e := range entries {
		// A quarter more than measured: a viewer without Liberation Serif
		// or Times may set the text in a wider font (DejaVu Sans: a sixth).
		width = max(width, leg.ThumbnailWidth+leg.TextStyle.Width(" "+e.label)*5/4)
	}
	column := width + legendGap
	cols := max(1, min(len(entries), int((w-legendGap)/column)))
	rows := (len(entries) + cols - 1) / cols
	cols = (len(entries) + rows - 1) / rows // as few as the rows need
	rowHeight := leg.TextStyle.Height(" ") + leg.Padding
	height := vg.Length(rows)*rowHeight - leg.Padding
	left := (w - vg.Length(cols)*column + legendGap) / 2
	b := legendBlock{height: height + 2*legendGap}
	for c := range cols {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		for _, e := range entries[c*rows : min(len(entries), (c+1)*rows)] {
			l.Add(e.label, e.thumbs...)
		}
		x := left + vg.Length(c)*column
		b.columns = append(b.columns, l)
		b.rects = append(b.rects, vg.Rectangle{Min: vg.Point{X: x, Y: legendGap}, Max: vg.Point{X: x + width, Y: legendGap + height}})
	}
	return b
}

// save writes the plot, with the entries' legend under it
// (legendLayout), as an image of w × h: an SVG, or a PNG where the
// path ends in .png (to look at a plot where no SVG viewer is).
func save(p *plot.Plot, entries []legendEntry, w, h vg.Length, path string) error {
	b := legendLayout(entries, w)
	var img vg.CanvasWriterTo
	switch {
	case strings.HasSuffix(path, ".png"):
		img = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	default:
		// The text is Liberation Serif, metrically Times New Roman, which a
		// browser sets it in; the legend's columns leave room for a wider
		// font.
		img = vgsvg.New(w, h)
	}
	dc := draw.New(img)
	// A little room above the title, for a viewer's taller font, and to
	// the right of the last tick label.
	p.Draw(draw.Crop(dc, 0, -legendGap, b.height, -legendGap))
	for i, l := range b.columns {
		l.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: b.rects[i]})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// zoom sets an axis to the range of the values, on whole steps of step,
// with a tick at each step and a label at every other one when there
// are more than ten.
func zoom(a *plot.Axis, lo, hi, step float64) {
	a.Min = math.Floor(lo/step) * step
	a.Max = math.Ceil(hi/step) * step
	if a.Max-a.Min < step {
		a.Max = a.Min + step
	}
	n := int(math.Round((a.Max - a.Min) / step))
	scale := math.Pow(10, max(0, math.Ceil(-math.Log10(step)))) // the step's decimals
	var ticks []plot.Tick
	for i := 0; i <= n; i++ {
		v := math.Round((a.Min+float64(i)*step)*scale) / scale
		t := plot.Tick{Value: v}
		if n <= 10 || i%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	a.Tick.Marker = plot.ConstantTicks(ticks)
}

// niceStep is the step of 1, 2 or 5 times a power of ten that divides
// [lo, hi] into 4 to 10 steps, so that the axis spans the data closely.
func niceStep(lo, hi float64) float64 {
	span := hi - lo
	if !(span > 0) {
		return 1
	}
	for step := math.Pow(10, math.Floor(math.Log10(span/10))); ; step *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if span/(step*m) <= 10 {
				return step * m
			}
		}
	}
}

// unallocatedPlot is a plot of the unallocated GPU, in percent of
// capacity, against what the x label names, with a grid.
func unallocatedPlot(title, x string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = "GPU unallocated, % of capacity"
	p.Add(plotter.NewGrid())
	return p
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
	var entries []legendEntry
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
		ls, gs := seriesStyle(i)
		// Markers every 10 points, each series offset by one, so that close
		// curves still show whose marker is whose.
		line, scatter, err := markedLine(pts, ls, gs, i%10, 10)
		if err != nil {
			return err
		}
		p.Add(line, scatter)
		drawn[s.Allocation] = i
		entries = append(entries, legendEntry{thumbs: []plot.Thumbnailer{line, scatter}})
		policies = append(policies, []string{s.Policy})
		unallocated = append(unallocated, s.Unallocated.Mean)
	}
	for i := range entries {
		entries[i].label = fmt.Sprintf("%s: %.2f%%", strings.Join(policies[i], " = "), unallocated[i])
	}
	zoom(&p.Y, lo, hi, 1)
	return save(p, entries, 10*vg.Inch, 6*vg.Inch, path)
}

// markedLine is a line through the points in a series' style, and its
// markers on every every-th point from first.
func markedLine(pts plotter.XYs, ls draw.LineStyle, gs draw.GlyphStyle, first, every int) (*plotter.Line, *plotter.Scatter, error) {
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, nil, err
	}
	line.LineStyle = ls
	var marks plotter.XYs
	for j := first; j < len(pts); j += every {
		marks = append(marks, pts[j])
	}
	scatter, err := plotter.NewScatter(marks)
	if err != nil {
		return nil, nil, err
	}
	scatter.GlyphStyle = gs
	return line, scatter, nil
}

// TargetUnallocated is the unallocated GPU, in percent, that a pass of
// 1% of the placed pods was to reach on openb with ResfitFrag placing;
// PlotDefrags draws it beside the floor that rules it out.
const TargetUnallocated = 3.0

// PlotDefrags draws the mean unallocated GPU against the mean pods moved,
// on a logarithmic axis (the passes move from 2 to 400 pods), one marker
// and line per method across its budgets, the cluster without moves as a
// level line, the target and the floor at each budget, as an SVG file.
func PlotDefrags(path string, sums []DefragSummary) error {
	p := unallocatedPlot("Unallocated GPU after a pass of moves (mean over seeds)", "pods moved (log scale)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	byMethod := map[DefragMethod]plotter.XYs{}
	var floor plotter.XYs
	var order []DefragMethod
	none := math.NaN()
	lo, hi, most := math.Inf(1), math.Inf(-1), 1.0
	for _, s := range sums {
		m := s.Pass.Method
		lo, hi = min(lo, s.Unallocated.Mean), max(hi, s.Unallocated.Mean)
		if s.Moves.Mean < 1 { // no moves: a level line
			none = s.Unallocated.Mean
			continue
		}
		if _, seen := byMethod[m]; !seen {
			order = append(order, m)
		}
		byMethod[m] = append(byMethod[m], plotter.XY{X: s.Moves.Mean, Y: s.Unallocated.Mean})
		most = max(most, s.Moves.Mean)
		if m == Reclaim && s.Budget.Mean >= 1 {
			floor = append(floor, plotter.XY{X: s.Budget.Mean, Y: s.Floor.Mean})
			most = max(most, s.Budget.Mean)
			lo = min(lo, s.Floor.Mean)
		}
	}
	var entries []legendEntry
	level := func(y float64, style draw.LineStyle, label string) error {
		line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: y}, {X: most * 1.5, Y: y}})
		if err != nil {
			return err
		}
		line.LineStyle = style
		p.Add(line)
		entries = append(entries, legendEntry{label: label, thumbs: []plot.Thumbnailer{line}})
		return nil
	}
	if !math.IsNaN(none) {
		if err := level(none, draw.LineStyle{Color: color.Black, Width: vg.Points(1)}, fmt.Sprintf("no moves: %.2f%%", none)); err != nil {
			return err
		}
	}
	for i, m := range order {
		pts := byMethod[m]
		ls, gs := seriesStyle(i)
		// A method whose points lie on an earlier one's (make-room's and
		// reclaim's, which make the same few moves) stays visible: its
		// marker is a larger ring around the earlier one's.
		ring := slices.ContainsFunc(order[:i], func(earlier DefragMethod) bool { return near(byMethod[earlier], pts) })
		if ring {
			gs.Shape = draw.RingGlyph{}
		}
		scatter, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		// The legend shows the marker at its usual size, which fits a row.
		scatter.GlyphStyle = gs
		thumbs := []plot.Thumbnailer{scatter}
		if ring {
			big := *scatter
			big.GlyphStyle.Radius = vg.Points(7)
			p.Add(&big)
		} else {
			p.Add(scatter)
		}
		if len(pts) > 1 {
			line, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			line.LineStyle = ls
			p.Add(line)
			thumbs = append(thumbs, line)
		}
		entries = append(entries, legendEntry{label: string(m), thumbs: thumbs})
	}
	if len(floor) > 0 {
		if err := level(TargetUnallocated, draw.LineStyle{Color: palette[3], Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}},
			fmt.Sprintf("target: %.1f%%", TargetUnallocated)); err != nil {
			return err
		}
		line, err := plotter.NewLine(floor)
		if err != nil {
			return err
		}
		line.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(4)}}
		p.Add(line)
		entries = append(entries, legendEntry{label: "floor: the least any plan of as many moves leaves", thumbs: []plot.Thumbnailer{line}})
		lo = min(lo, TargetUnallocated)
	}
	p.X.Min, p.X.Max = 1, most*1.5
	zoom(&p.Y, lo, hi, 0.5)
	return save(p, entries, 10*vg.Inch, 6*vg.Inch, path)
}

// near reports whether a point of b lies on a point of a, as drawn on
// PlotDefrags' axes: within a tenth on the logarithmic x axis and 0.02
// percentage points.
func near(a, b plotter.XYs) bool {
	for _, p := range a {
		for _, q := range b {
			if math.Abs(math.Log(p.X/q.X)) < 0.1 && math.Abs(p.Y-q.Y) < 0.02 {
				return true
			}
		}
	}
	return false
}
