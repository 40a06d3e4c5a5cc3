package sim

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/resfit/resfit/bench/replay/figure"
)

// DefragSummary is one pass's results over the seeds.
type DefragSummary struct {
	Pass   Defrag
	Name   string
	Seeds  int
	Budget Stat // the moves it could make (budgeted passes)
	Moves  Stat
	Placed Stat
	Lost   Stat
	// Before and Unallocated are the GPU unallocated before and after the
	// pass, in percent of capacity; Floor the least any plan of as many
	// moves could leave (its lowest over the seeds as FloorMin).
	Before, Unallocated, Floor Stat
	FloorMin                   float64
	// WonBack is the GPUs (whole GPUs) the pass let pending pods take, a
	// mean over seeds; PerMove is its sum over the seeds over the moves'.
	WonBack, PerMove float64
}

// SummarizeDefrags groups a RunDefrags result by pass, in order.
func SummarizeDefrags(passes []Defrag, results []*Result, capacityGPUs float64) []DefragSummary {
	var out []DefragSummary
	for _, d := range passes {
		s := DefragSummary{Pass: d, Name: d.Name()}
		var budget, moves, placed, lost, before, after, floor []float64
		won, moved := 0.0, 0.0
		for _, r := range results {
			if r.Defrag == nil || r.Defrag.Name != s.Name {
				continue
			}
			x := r.Defrag
			budget, moves, placed, lost = append(budget, float64(x.Budget)), append(moves, float64(x.Moves)), append(placed, float64(x.Placed)), append(lost, float64(x.Lost))
			before, after, floor = append(before, r.Unallocated()), append(after, x.Unallocated), append(floor, x.Floor)
			won += (r.Unallocated() - x.Unallocated) * capacityGPUs / 100
			moved += float64(x.Moves)
		}
		if len(after) == 0 {
			continue
		}
		s.Seeds = len(after)
		s.Budget, s.Moves, s.Placed, s.Lost = statOf(budget), statOf(moves), statOf(placed), statOf(lost)
		s.Before, s.Unallocated, s.Floor = statOf(before), statOf(after), statOf(floor)
		s.FloorMin = floor[0]
		for _, f := range floor {
			s.FloorMin = min(s.FloorMin, f)
		}
		s.WonBack = won / float64(s.Seeds)
		if moved > 0 {
			s.PerMove = won / moved
		}
		out = append(out, s)
	}
	return out
}

// DefragTable writes the summaries as a Markdown table.
func DefragTable(policy string, sums []DefragSummary) string {
	var b strings.Builder
	seeds := 0
	if len(sums) > 0 {
		seeds = sums[0].Seeds
	}
	fmt.Fprintf(&b, "%s placing, then one pass of moves; mean ± sd over %d seeds\n\n", policy, seeds)
	b.WriteString("| pass | moves allowed | moves made | pending pods placed | unallocated GPU % | GPUs won back | GPUs per move | floor: the least any plan of as many moves leaves, % (lowest seed) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, s := range sums {
		allowed := "—"
		if s.Pass.budgeted() {
			allowed = fmt.Sprintf("%.0f", s.Budget.Mean)
		}
		perMove := "—"
		if s.Moves.Mean > 0 {
			perMove = fmt.Sprintf("%.3f", s.PerMove)
		}
		lost := ""
		if s.Lost.Mean > 0 {
			lost = fmt.Sprintf(" (%.1f lost)", s.Lost.Mean)
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f%s | **%.2f** ± %.2f | %.1f | %s | %.2f (%.2f) |\n",
			s.Name, allowed, s.Moves.Mean, s.Placed.Mean, lost, s.Unallocated.Mean, s.Unallocated.Std, s.WonBack, perMove, s.Floor.Mean, s.FloorMin)
	}
	return b.String()
}

// WriteDefragFiles writes defrag.csv (every pass and seed) and
// defrag.svg (PlotDefrags) into dir.
func WriteDefragFiles(dir string, results []*Result, sums []DefragSummary) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	rows := [][]string{{"pass", "policy", "seed", "moves_allowed", "moves", "placed", "lost", "pending", "unallocated_before_pct", "unallocated_pct", "fragmented_pct", "floor_pct"}}
	for _, r := range results {
		x := r.Defrag
		rows = append(rows, []string{x.Name, r.Policy, strconv.FormatUint(r.Seed, 10), strconv.Itoa(x.Budget), strconv.Itoa(x.Moves), strconv.Itoa(x.Placed),
			strconv.Itoa(x.Lost), strconv.Itoa(x.Pending), f(r.Unallocated()), f(x.Unallocated), f(x.Fragmented), f(x.Floor)})
	}
	if err := WriteCSV(filepath.Join(dir, "defrag.csv"), rows); err != nil {
		return err
	}
	return PlotDefrags(filepath.Join(dir, "defrag.svg"), sums)
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
	d := defragPoints(sums)
	var entries []figure.Entry
	level := func(y float64, style draw.LineStyle, label string) error {
		line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: y}, {X: d.most * 1.5, Y: y}})
		if err != nil {
			return err
		}
		line.LineStyle = style
		p.Add(line)
		entries = append(entries, figure.Entry{Label: label, Thumbs: []plot.Thumbnailer{line}})
		return nil
	}
	if !math.IsNaN(d.none) {
		if err := level(d.none, draw.LineStyle{Color: color.Black, Width: vg.Points(1)}, fmt.Sprintf("no moves: %.2f%%", d.none)); err != nil {
			return err
		}
	}
	for i, m := range d.order {
		// A method whose points lie on an earlier one's (make-room's and
		// reclaim's, which make the same few moves) stays visible: its
		// marker is a larger ring around the earlier one's.
		ring := slices.ContainsFunc(d.order[:i], func(earlier DefragMethod) bool { return near(d.byMethod[earlier], d.byMethod[m]) })
		thumbs, err := methodMarks(p, d.byMethod[m], i, ring)
		if err != nil {
			return err
		}
		entries = append(entries, figure.Entry{Label: string(m), Thumbs: thumbs})
	}
	lo := d.lo
	if len(d.floor) > 0 {
		if err := level(TargetUnallocated, draw.LineStyle{Color: figure.Palette[3], Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}},
			fmt.Sprintf("target: %.1f%%", TargetUnallocated)); err != nil {
			return err
		}
		line, err := plotter.NewLine(d.floor)
		if err != nil {
			return err
		}
		line.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(4)}}
		p.Add(line)
		entries = append(entries, figure.Entry{Label: "floor: the least any plan of as many moves leaves", Thumbs: []plot.Thumbnailer{line}})
		lo = min(lo, TargetUnallocated)
	}
	p.X.Min, p.X.Max = 1, d.most*1.5
	figure.Zoom(&p.Y, lo, d.hi, 0.5)
	return figure.Save(p, entries, 10*vg.Inch, 6*vg.Inch, path)
}

// defragSeries are what PlotDefrags draws: each method's points (pods
// moved, unallocated GPU) in the order the methods came, the reclaim
// floor at each budget, the level without moves (NaN: none), and the
// ranges of the axes.
type defragSeries struct {
	byMethod map[DefragMethod]plotter.XYs
	order    []DefragMethod
	floor    plotter.XYs
	none     float64
	lo, hi   float64
	most     float64
}

func defragPoints(sums []DefragSummary) defragSeries {
	d := defragSeries{byMethod: map[DefragMethod]plotter.XYs{}, none: math.NaN(), lo: math.Inf(1), hi: math.Inf(-1), most: 1}
	for _, s := range sums {
		m := s.Pass.Method
		d.lo, d.hi = min(d.lo, s.Unallocated.Mean), max(d.hi, s.Unallocated.Mean)
		if s.Moves.Mean < 1 { // no moves: a level line
			d.none = s.Unallocated.Mean
			continue
		}
		if _, seen := d.byMethod[m]; !seen {
			d.order = append(d.order, m)
		}
		d.byMethod[m] = append(d.byMethod[m], plotter.XY{X: s.Moves.Mean, Y: s.Unallocated.Mean})
		d.most = max(d.most, s.Moves.Mean)
		if m == Reclaim && s.Budget.Mean >= 1 {
			d.floor = append(d.floor, plotter.XY{X: s.Budget.Mean, Y: s.Floor.Mean})
			d.most = max(d.most, s.Budget.Mean)
			d.lo = min(d.lo, s.Floor.Mean)
		}
	}
	return d
}

// methodMarks draws method i's points on p, markers joined by a line, the
// markers as larger rings where ring; it returns what the legend shows,
// the marker at its usual size, which fits a row.
func methodMarks(p *plot.Plot, pts plotter.XYs, i int, ring bool) ([]plot.Thumbnailer, error) {
	ls, gs := figure.Style(i)
	if ring {
		gs.Shape = draw.RingGlyph{}
	}
	scatter, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
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
			return nil, err
		}
		line.LineStyle = ls
		p.Add(line)
		thumbs = append(thumbs, line)
	}
	return thumbs, nil
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
