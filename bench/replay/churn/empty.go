package churn

import "github.com/resfit/resfit/bench/replay/sim"

// EmptyReport is how often the nodes with 8 GPUs were empty (no pod at
// all), LAVA's measure of a placement that lets hosts come free: the time
// average of their empty share over the window, in percent.
type EmptyReport struct {
	// Empty8 is the time-average share of the 8-GPU nodes that are empty,
	// in percent; Nodes8 how many nodes have 8 GPUs.
	Empty8 float64
	Nodes8 int
}

// Columns are empty_8gpu_nodes_pct.
func (x EmptyReport) Columns() []Column {
	return []Column{{"empty_8gpu_nodes_pct", decimal(x.Empty8)}}
}

// Empty is what the empty-node metric measured.
func (res *Result) Empty() EmptyReport { return reportOf[EmptyReport](res) }

// emptyMetric counts the 8-GPU nodes without pods as pods start, leave
// and move, and integrates the count over the window.
type emptyMetric struct {
	quiet
	r       *replay
	eight   []bool // rows with 8 GPUs
	nodes   int
	empty   int // of them, with no pod
	seconds float64
}

func newEmptyMetric(r *replay) *emptyMetric {
	x := &emptyMetric{r: r, eight: make([]bool, r.c.Table.Len())}
	for row := range x.eight {
		if r.c.Table.Allocatable(row)[sim.SlotGPU] == 8000 {
			x.eight[row] = true
			x.nodes++
			if len(r.onRow[row]) == 0 {
				x.empty++
			}
		}
	}
	return x
}

// on counts a pod gone from a row (it is empty when none is left) and a
// pod come to one (it was empty when the pod is its only one).
func (x *emptyMetric) on(e event) error {
	left, came := e.rows()
	if left >= 0 && x.eight[left] && len(x.r.onRow[left]) == 0 {
		x.empty++
	}
	if came >= 0 && x.eight[came] && len(x.r.onRow[came]) == 1 {
		x.empty--
	}
	return nil
}

func (x *emptyMetric) advance(from, to float64) {
	if from = max(from, x.r.spec.WarmUp); to > from {
		x.seconds += float64(x.empty) * (to - from)
	}
}

func (x *emptyMetric) report() Report {
	out := EmptyReport{Nodes8: x.nodes}
	if x.nodes > 0 {
		out.Empty8 = 100 * x.seconds / x.r.spec.Window / float64(x.nodes)
	}
	return out
}
