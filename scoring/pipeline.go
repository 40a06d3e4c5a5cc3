package scoring

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/strategy"
)

// Task is what is being placed: a pod, or one task of a batch job.
type Task struct {
	Name string
	// Job is the job (pod group) the task belongs to; a reservation lets
	// only the target job's tasks onto the nodes it locks.
	Job string
	// Requests are the task's requests in canonical units, one per schema
	// slot (see resource.PodRequests).
	Requests resource.Vector
	// NonZeroRequests are the requests with kube-scheduler's non-zero
	// defaults (resource.PodRequests with nonZero), which the kube-scheduler
	// scorers use; nil means Requests.
	NonZeroRequests resource.Vector
	// KoordinatorRequests are the non-zero requests summed by Koordinator's
	// rule (resource.KoordinatorPodRequests), which NodeResourcesFitPlus
	// scores; nil means NonZeroRequests. The two differ only for pods with
	// init containers after a sidecar, pod-level requests or overhead.
	KoordinatorRequests resource.Vector
	// Override is a Volcano per-task strategy (pod annotations); nil means
	// the configured one.
	Override *strategy.Override
	// Devices is what the task asks of individual devices (a share of one
	// GPU, or whole GPUs), checked by a DeviceFilter; the zero value asks
	// for nothing. Requests still carries the total in the resource's slot.
	Devices resource.DeviceRequest
	// Models are the device models the task's devices may be (a
	// DeviceFilter rejects a node of another model, FGD counts such a
	// node's idle devices as fragment for it); empty accepts any.
	Models resource.ModelSet
}

func (t *Task) nonZero() resource.Vector {
	if t.NonZeroRequests != nil {
		return t.NonZeroRequests
	}
	return t.Requests
}

func (t *Task) koordinator() resource.Vector {
	if t.KoordinatorRequests != nil {
		return t.KoordinatorRequests
	}
	return t.nonZero()
}

// Span is the unit of work a filter or scorer receives: Len nodes of a
// table, node i being table row Row(i). A span the pipeline makes is a
// contiguous run of rows, [Start, End), so that it can split a table
// across workers; a Placer also makes spans of scattered rows (the rows
// that changed), for the filters and scorers that implement Scattered.
type Span struct {
	Table      *resource.Table
	Start, End int
	// gather, when not nil, makes the span one of scattered rows: node i
	// is row gather.rows[i], and its amounts are copied into gather's
	// views. Start is then 0 and End the number of rows.
	gather *gathered
}

// gathered is the rows of a span of scattered rows, with their amounts
// copied out of the table in that order.
type gathered struct {
	rows             []int
	plain, nonZero   resource.Rows
	alloc, used, nzu []int64 // the views' storage
}

// gather copies the table's rows into g, in the order given.
func (g *gathered) gather(t *resource.Table, rows []int) {
	plain, nonZero := t.Rows(), t.NonZeroRows()
	k := plain.Stride
	m := len(rows) * k
	g.rows = rows
	g.alloc = slices.Grow(g.alloc[:0], m)[:m]
	g.used = slices.Grow(g.used[:0], m)[:m]
	for i, r := range rows {
		copy(g.alloc[i*k:i*k+k], plain.Allocatable[r*k:r*k+k])
		copy(g.used[i*k:i*k+k], plain.Used[r*k:r*k+k])
	}
	g.plain = resource.Rows{Stride: k, Allocatable: g.alloc, Used: g.used}
	g.nonZero = g.plain
	if m > 0 && &nonZero.Used[0] != &plain.Used[0] {
		g.nzu = slices.Grow(g.nzu[:0], m)[:m]
		for i, r := range rows {
			copy(g.nzu[i*k:i*k+k], nonZero.Used[r*k:r*k+k])
		}
		g.nonZero.Used = g.nzu
	}
}

// Len is the number of rows.
func (s Span) Len() int { return s.End - s.Start }

// Row is node i's row in the table.
func (s Span) Row(i int) int {
	if s.gather != nil {
		return s.gather.rows[i]
	}
	return s.Start + i
}

// Rows is the span's view with plain used amounts: node i's amounts are
// the view's row i.
func (s Span) Rows() resource.Rows {
	if s.gather != nil {
		return s.gather.plain
	}
	return s.slice(s.Table.Rows())
}

// NonZeroRows is the span's view with non-zero used amounts.
func (s Span) NonZeroRows() resource.Rows {
	if s.gather != nil {
		return s.gather.nonZero
	}
	return s.slice(s.Table.NonZeroRows())
}

// Scattered is implemented by a Filter or Scorer that reads its span's
// nodes only through Span.Len, Span.Row, Span.Rows and Span.NonZeroRows,
// never through Start and End, and so can be given a span of scattered
// rows. A Placer scores the rows that changed in one such span when every
// filter and scorer it remembers reports true, and in contiguous runs
// otherwise.
type Scattered interface {
	Scattered() bool
}

func (s Span) slice(r resource.Rows) resource.Rows {
	lo, hi := s.Start*r.Stride, s.End*r.Stride
	return resource.Rows{Stride: r.Stride, Allocatable: r.Allocatable[lo:hi], Used: r.Used[lo:hi]}
}

// Scorer scores one task on every node of a span: out[i] for row
// nodes.Row(i), each in [0, MaxScore()]. It must not allocate. MaxScore
// must be finite and ≥ 0; the pipeline checks every score against it and
// turns one outside the range (NaN included) into an error that names the
// scorer and the node.
//
// A node's score must depend only on the task's class (its Requests,
// NonZeroRequests, KoordinatorRequests, Devices, Models and Override) and on the
// node's table row, or on state kept per row that changes only together
// with the row (resource.Table.Version), such as a device view that is
// changed along with the table: a Placer remembers each node's score until
// its row changes. A scorer for which that is not true (random, shared
// state, other nodes, the task's name) implements Volatile.
type Scorer interface {
	Name() string
	MaxScore() float64
	ScoreNodes(task *Task, nodes Span, out []float64) error
}

// Filter rejects the nodes of a span a task must not go to: it calls
// v.Reject(i, slot) for row nodes.Row(i), naming the resource concerned
// (or -1). It must not allocate. Its verdict on a node must depend only on what a
// Scorer's score may depend on, or it implements Volatile.
type Filter interface {
	Name() string
	FilterNodes(task *Task, nodes Span, v *Verdicts) error
	// Explain says in a sentence why it rejected the task on the table's
	// row, given the slot it named. It is called only when asked (see
	// Batch.Reason), so rejecting stays cheap.
	Explain(task *Task, nodes *resource.Table, row, slot int) string
}

// Verdicts collects the filters' rejections for one span of a batch;
// indices are relative to the span.
type Verdicts struct {
	rejectedBy []uint16 // index+1 of the rejecting filter; 0 means feasible
	slots      []int16  // the resource the filter named, where rejected
	filter     uint16
}

// Feasible reports whether node i of the span is still feasible.
func (v *Verdicts) Feasible(i int) bool { return v.rejectedBy[i] == 0 }

// Reject marks node i infeasible for the current filter, naming a resource
// slot (or -1), unless an earlier filter already rejected it.
func (v *Verdicts) Reject(i, slot int) {
	if v.rejectedBy[i] == 0 {
		v.rejectedBy[i] = v.filter
		v.slots[i] = int16(slot)
	}
}

// WeightedScorer is a scorer with its plugin weight in the total, in
// [0, resource.MaxWeight].
type WeightedScorer struct {
	Scorer
	Weight float64
}

// MaxTotalScore bounds a pipeline's largest total, Σ weight × MaxScore:
// 2^53, below which every integer score times an integer weight, and every
// sum of them, is exact in float64. With weights and scorer maxima at
// resource.MaxWeight × 100 × resource.MaxWeight (10^14) it admits 90
// scorers; real pipelines are far below it.
const MaxTotalScore = 1 << 53

// Pipeline runs filters, then weighted scorers, over many nodes. It is
// immutable and safe for concurrent use; each goroutine needs its own Batch.
type Pipeline struct {
	schema  *resource.Schema
	filters []Filter
	scorers []WeightedScorer
}

// NewPipeline assembles a pipeline. Filters and scorers must not be nil;
// weights must be in [0, resource.MaxWeight]; each scorer's MaxScore must be
// finite and ≥ 0, and the largest total, Σ weight × MaxScore, at most
// MaxTotalScore.
func NewPipeline(schema *resource.Schema, filters []Filter, scorers []WeightedScorer) (*Pipeline, error) {
	if schema == nil {
		return nil, errors.New("pipeline: nil schema")
	}
	for i, f := range filters {
		if f == nil {
			return nil, fmt.Errorf("pipeline: filters[%d]: nil filter", i)
		}
	}
	total := 0.0
	for i, s := range scorers {
		if s.Scorer == nil {
			return nil, fmt.Errorf("pipeline: scorers[%d]: nil scorer", i)
		}
		if !(s.Weight >= 0 && s.Weight <= resource.MaxWeight) {
			return nil, fmt.Errorf("pipeline: scorers[%d] (%s): weight must be in [0, %d], got %v", i, s.Name(), resource.MaxWeight, s.Weight)
		}
		if m := s.MaxScore(); !(m >= 0 && m <= MaxTotalScore) {
			return nil, fmt.Errorf("pipeline: scorers[%d] (%s): MaxScore must be in [0, 2^53], got %v", i, s.Name(), m)
		}
		total += s.Weight * s.MaxScore()
	}
	if total > MaxTotalScore {
		return nil, fmt.Errorf("pipeline: the largest total, Σ weight × MaxScore = %v, is above 2^53; lower the weights", total)
	}
	if len(filters) >= 1<<16 {
		return nil, errors.New("pipeline: too many filters")
	}
	return &Pipeline{
		schema:  schema,
		filters: append([]Filter(nil), filters...),
		scorers: append([]WeightedScorer(nil), scorers...),
	}, nil
}

// WithFilters returns a pipeline with extra filters run after p's own, as a
// per-cycle reservation filter needs. p is unchanged.
func (p *Pipeline) WithFilters(extra ...Filter) (*Pipeline, error) {
	return NewPipeline(p.schema, append(append([]Filter(nil), p.filters...), extra...), p.scorers)
}

// Schema returns the schema the pipeline was built for.
func (p *Pipeline) Schema() *resource.Schema { return p.schema }

// ScorerNames returns the scorers' names in column order.
func (p *Pipeline) ScorerNames() []string {
	names := make([]string, len(p.scorers))
	for i, s := range p.scorers {
		names[i] = s.Name()
	}
	return names
}

// Scorers returns the weighted scorers in column order (a copy of the
// list; the scorers themselves are shared).
func (p *Pipeline) Scorers() []WeightedScorer {
	return append([]WeightedScorer(nil), p.scorers...)
}

// MaxScore is the largest total: Σ weight × scorer maximum, at most
// MaxTotalScore.
func (p *Pipeline) MaxScore() float64 {
	total := 0.0
	for _, s := range p.scorers {
		total += s.Weight * s.MaxScore()
	}
	return total
}

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

// Score filters and scores task on every node of the table into b. With a
// batch large enough for the table it does not allocate. An error means the
// inputs do not fit the pipeline (wrong schema, bad request vector); b is
// then not valid.
func (p *Pipeline) Score(task *Task, nodes *resource.Table, b *Batch) error {
	if err := p.prepare(task, nodes, b); err != nil {
		return err
	}
	return p.scoreSpan(task, Span{Table: nodes, Start: 0, End: nodes.Len()}, b, &b.verdicts)
}

// ScoreParallel is Score with the table split across worker goroutines
// (workers ≤ 0 means GOMAXPROCS); the results are exactly Score's. The rows
// are cut into chunks that the workers, the caller among them, claim one at
// a time, so the caller starts at once and a helper that is slow to wake
// only takes what is left. It allocates a little per call (the goroutines),
// so it pays off for large tables.
func (p *Pipeline) ScoreParallel(task *Task, nodes *resource.Table, b *Batch, workers int) error {
	if err := p.prepare(task, nodes, b); err != nil {
		return err
	}
	return p.scoreParallel(task, nodes, b, workers)
}

// scoreParallel is ScoreParallel on a prepared batch.
func (p *Pipeline) scoreParallel(task *Task, nodes *resource.Table, b *Batch, workers int) error {
	n := nodes.Len()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, n))
	if len(b.spanVerdicts) < workers {
		b.spanVerdicts = make([]Verdicts, workers)
	}
	chunk := max(parallelChunk, (n+8*workers-1)/(8*workers))
	chunks := (n + chunk - 1) / chunk
	var next atomic.Int64
	errs := make([]error, workers)
	work := func(w int) {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			span := Span{Table: nodes, Start: c * chunk, End: min(n, (c+1)*chunk)}
			if err := p.scoreSpan(task, span, b, &b.spanVerdicts[w]); err != nil {
				errs[w] = err
				return
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(0)
	wg.Wait()
	return errors.Join(errs...)
}

// parallelChunk is the fewest rows a parallel worker claims at a time.
const parallelChunk = 1024

// prepare checks the inputs and sizes the batch.
func (p *Pipeline) prepare(task *Task, nodes *resource.Table, b *Batch) error {
	if b == nil {
		return errors.New("score: nil batch")
	}
	if err := p.check(task, nodes); err != nil {
		return err
	}
	b.pipe, b.task, b.nodes = p, task, nodes
	b.resize(nodes.Len())
	return nil
}

// check checks that a task and a table fit the pipeline.
func (p *Pipeline) check(task *Task, nodes *resource.Table) error {
	if task == nil || nodes == nil {
		return errors.New("score: nil task or table")
	}
	if nodes.Schema() != p.schema {
		return errors.New("score: the table was built for another schema than the pipeline")
	}
	if err := p.schema.Check(task.Requests); err != nil {
		return fmt.Errorf("score: task %q requests: %w", task.Name, err)
	}
	if d := task.Devices; d.Count < 0 || d.Each < 0 || (d.Count == 0) != (d.Each == 0) {
		return fmt.Errorf("score: task %q devices: need both a count and an amount per device ≥ 1, or neither; got %d × %d", task.Name, d.Count, d.Each)
	}
	if task.NonZeroRequests != nil {
		if err := p.schema.Check(task.NonZeroRequests); err != nil {
			return fmt.Errorf("score: task %q non-zero requests: %w", task.Name, err)
		}
	}
	if task.KoordinatorRequests != nil {
		if err := p.schema.Check(task.KoordinatorRequests); err != nil {
			return fmt.Errorf("score: task %q Koordinator requests: %w", task.Name, err)
		}
	}
	return nil
}

// Reason says why the pipeline's filters reject the task on one node of
// the table, or "" when every filter passes it: Batch.Reason for one row,
// for a caller that kept only whether nodes are feasible (Placer.Scores).
// It only reads the task and the table, so calls may run concurrently
// while nothing changes them; it allocates a little.
func (p *Pipeline) Reason(task *Task, nodes *resource.Table, row int) (string, error) {
	if err := p.check(task, nodes); err != nil {
		return "", err
	}
	if row < 0 || row >= nodes.Len() {
		return "", fmt.Errorf("score: row %d is outside the table's [0, %d)", row, nodes.Len())
	}
	v := &Verdicts{rejectedBy: make([]uint16, 1), slots: make([]int16, 1)}
	span := Span{Table: nodes, Start: row, End: row + 1}
	for i, f := range p.filters {
		v.filter = uint16(i + 1)
		if err := f.FilterNodes(task, span, v); err != nil {
			return "", fmt.Errorf("score: filter %s: %w", f.Name(), err)
		}
		if !v.Feasible(0) {
			return f.Explain(task, nodes, row, int(v.slots[0])), nil
		}
	}
	return "", nil
}

// scoreSpan runs every filter and scorer on one span, writing only that
// span's part of the batch.
func (p *Pipeline) scoreSpan(task *Task, span Span, b *Batch, v *Verdicts) error {
	n := b.n
	rejectedBy := b.rejectedBy[span.Start:span.End]
	totals := b.totals[span.Start:span.End]
	clear(rejectedBy)
	v.rejectedBy, v.slots = rejectedBy, b.slots[span.Start:span.End]
	for i, f := range p.filters {
		v.filter = uint16(i + 1)
		if err := f.FilterNodes(task, span, v); err != nil {
			return fmt.Errorf("score: filter %s: %w", f.Name(), err)
		}
	}
	if len(p.scorers) == 0 {
		clear(totals)
	}
	for j, s := range p.scorers {
		col := b.columns[j*n+span.Start : j*n+span.End]
		if err := s.ScoreNodes(task, span, col); err != nil {
			return fmt.Errorf("score: scorer %s: %w", s.Name(), err)
		}
		w, limit := s.Weight, s.MaxScore()
		for i, x := range col {
			if !(x >= 0 && x <= limit) { // NaN fails too
				return fmt.Errorf("score: scorer %s gave node %q a score of %v, outside [0, %v]", s.Name(), span.Table.Name(span.Row(i)), x, limit)
			}
			col[i] = x * w
		}
		// The first scorer's contribution is the total so far: 0 + x, which
		// is x except for a score of −0, which it makes +0 (a total is
		// never −0); the others add theirs in order.
		if j == 0 {
			for i, x := range col {
				totals[i] = 0 + x
			}
			continue
		}
		for i, x := range col {
			totals[i] += x
		}
	}
	if len(p.filters) > 0 {
		for i, r := range rejectedBy {
			if r != 0 {
				totals[i] = 0
			}
		}
	}
	return nil
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
