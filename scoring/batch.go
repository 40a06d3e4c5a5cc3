package scoring

import (
	"github.com/resfit/resfit/resource"
)

// Batch holds one Score call's results: per node, whether it is feasible
// (and if not, why), its total and each scorer's weighted contribution. It
// is reused from call to call, with any pipeline; Score allocates only when
// it has to grow. Its accessors (Feasible, Total, Contribution, Reason,
// RejectedBy) take a row in [0, Len()) and panic outside it, as indexing a
// slice does.
type Batch struct {
	n          int
	rejectedBy []uint16
	slots      []int16 // written only on rejection
	totals     []float64
	columns    []float64 // one column of n per scorer
	pipe       *Pipeline
	// task and nodes are the last Score call's, for Reason.
	task  *Task
	nodes *resource.Table
	// verdicts is handed to the filters; kept here so that passing it
	// through the Filter interface does not allocate. spanVerdicts are the
	// parallel workers'.
	verdicts     Verdicts
	spanVerdicts []Verdicts
	// scattered holds the amounts of the rows a Placer scores apart.
	scattered gathered
}

// NewBatch returns a batch with room for the given number of nodes (a
// hint: below 0 is 0; Score grows the batch to the table).
func (p *Pipeline) NewBatch(nodes int) *Batch {
	b := &Batch{pipe: p}
	b.resize(max(nodes, 0))
	return b
}

func (b *Batch) resize(n int) {
	b.n = n
	if cap(b.rejectedBy) < n {
		b.rejectedBy = make([]uint16, n)
		b.slots = make([]int16, n)
		b.totals = make([]float64, n)
	}
	if cols := n * len(b.pipe.scorers); cap(b.columns) < cols {
		b.columns = make([]float64, cols)
	}
	b.rejectedBy = b.rejectedBy[:n]
	b.slots = b.slots[:n]
	b.totals = b.totals[:n]
	b.columns = b.columns[:n*len(b.pipe.scorers)]
}

// Len is the number of nodes scored.
func (b *Batch) Len() int { return b.n }

// Feasible reports whether node i passed every filter.
func (b *Batch) Feasible(i int) bool { return b.rejectedBy[i] == 0 }

// Total is node i's total score (0 when infeasible).
func (b *Batch) Total(i int) float64 { return b.totals[i] }

// Contribution is scorer j's weighted score of node i.
func (b *Batch) Contribution(i, j int) float64 { return b.columns[j*b.n+i] }

// Reason says why node i was rejected, or "" when it is feasible. The
// filter works the numbers out again from the task and table of the last
// Score call, so ask before changing either.
func (b *Batch) Reason(i int) string {
	f := b.rejectedBy[i]
	if f == 0 {
		return ""
	}
	return b.pipe.filters[f-1].Explain(b.task, b.nodes, i, int(b.slots[i]))
}

// RejectedBy names the filter that rejected node i, or "".
func (b *Batch) RejectedBy(i int) string {
	f := b.rejectedBy[i]
	if f == 0 {
		return ""
	}
	return b.pipe.filters[f-1].Name()
}

// Top returns the rows of the best k feasible nodes, best first: highest
// total, ties to the lower row. It appends to dst[:0]; with cap(dst) ≥ k it
// does not allocate.
func (b *Batch) Top(k int, dst []int) []int {
	top := dst[:0]
	if k <= 0 {
		return top
	}
	// top is kept as a min-heap on (total, -row): its root is the worst kept.
	for i := 0; i < b.n; i++ {
		if b.rejectedBy[i] != 0 {
			continue
		}
		if len(top) < k {
			top = append(top, i)
			b.siftUp(top, len(top)-1)
			continue
		}
		if b.better(i, top[0]) {
			top[0] = i
			b.siftDown(top, 0)
		}
	}
	// Pop the heap from the back to sort best first.
	for end := len(top) - 1; end > 0; end-- {
		top[0], top[end] = top[end], top[0]
		b.siftDown(top[:end], 0)
	}
	return top
}

// better orders nodes: higher total first, then lower row.
func (b *Batch) better(i, j int) bool {
	if b.totals[i] != b.totals[j] {
		return b.totals[i] > b.totals[j]
	}
	return i < j
}

func (b *Batch) siftUp(h []int, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !b.better(h[parent], h[i]) {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (b *Batch) siftDown(h []int, i int) {
	for {
		worst, left, right := i, 2*i+1, 2*i+2
		if left < len(h) && b.better(h[worst], h[left]) {
			worst = left
		}
		if right < len(h) && b.better(h[worst], h[right]) {
			worst = right
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// rejecter is the number of the filter that rejected node i (index+1, as
// Verdicts number them), 0 when it is feasible.
func (b *Batch) rejecter(i int) int { return int(b.rejectedBy[i]) }

// totalsView is every node's total, a view into the batch valid until its
// next Score.
func (b *Batch) totalsView() []float64 { return b.totals[:b.n] }

// column is scorer j's weighted contributions, a view into the batch valid
// until its next Score.
func (b *Batch) column(j int) []float64 { return b.columns[j*b.n : (j+1)*b.n] }
