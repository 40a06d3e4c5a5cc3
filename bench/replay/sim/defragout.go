package sim

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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
	if err := writeCSV(filepath.Join(dir, "defrag.csv"), rows); err != nil {
		return err
	}
	return PlotDefrags(filepath.Join(dir, "defrag.svg"), sums)
}

// TargetUnallocated is the unallocated GPU, in percent, that a pass of
// 1% of the placed pods was to reach on openb with ResfitFrag placing;
// PlotDefrags draws it beside the floor that rules it out.
const TargetUnallocated = 3.0

// PlotDefrags draws the mean unallocated GPU against the mean moves made,
// one line per method across its budgets (make-room's points by k), the
// cluster without moves as a point at 0, and the floor at each budget as
// a dashed line, as an SVG file.
func PlotDefrags(path string, sums []DefragSummary) error {
	p := plot.New()
	p.Title.Text = "Unallocated GPU after a pass of moves (mean over seeds)"
	p.X.Label.Text = "pods moved"
	p.Y.Label.Text = "GPU unallocated, % of capacity"
	p.Add(plotter.NewGrid())
	// Top right: the passes keep to the top left (few moves, little won
	// back), the floor falls away below them.
	p.Legend.Top = true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-10), vg.Points(-10)
	byMethod := map[DefragMethod]plotter.XYs{}
	var floor plotter.XYs
	var order []DefragMethod
	for _, s := range sums {
		m := s.Pass.Method
		if _, seen := byMethod[m]; !seen {
			order = append(order, m)
		}
		byMethod[m] = append(byMethod[m], plotter.XY{X: s.Moves.Mean, Y: s.Unallocated.Mean})
		if s.Pass.Method == Reclaim {
			floor = append(floor, plotter.XY{X: s.Budget.Mean, Y: s.Floor.Mean})
		}
	}
	for i, m := range order {
		pts := byMethod[m]
		scatter, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		scatter.Color = plotutil.Color(i)
		scatter.Shape = plotutil.Shape(i)
		scatter.Radius = vg.Points(4)
		p.Add(scatter)
		if len(pts) > 1 && m != MakeRoom {
			line, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			line.Color = plotutil.Color(i)
			line.Width = vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(string(m), line, scatter)
		} else {
			p.Legend.Add(string(m), scatter)
		}
	}
	if len(floor) > 0 {
		target, err := plotter.NewLine(plotter.XYs{{X: 0, Y: TargetUnallocated}, {X: floor[len(floor)-1].X, Y: TargetUnallocated}})
		if err != nil {
			return err
		}
		target.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		target.Color = plotutil.Color(len(order))
		p.Add(target)
		p.Legend.Add(fmt.Sprintf("target: %.1f%% unallocated", TargetUnallocated), target)
		line, err := plotter.NewLine(floor)
		if err != nil {
			return err
		}
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add("floor: the least any plan of as many moves leaves", line)
	}
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}
