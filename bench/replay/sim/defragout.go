package sim

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
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
