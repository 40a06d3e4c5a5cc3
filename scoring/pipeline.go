package scoring

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resfit/resfit/resource"
)

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

// FilterNames returns the filters' names in the order they run.
func (p *Pipeline) FilterNames() []string {
	names := make([]string, len(p.filters))
	for i, f := range p.filters {
		names[i] = f.Name()
	}
	return names
}

// CheckedAmounts are the slots whose free amount the pipeline's fit
// filter (NodeResourcesFit) checks against a task's requests, in order;
// nil when it has none. A node lacking a task's request in one of them is
// infeasible whatever else the pipeline says (a planner's bound).
func (p *Pipeline) CheckedAmounts() []int {
	for _, f := range p.filters {
		if fit, ok := f.(*FitFilter); ok {
			return append([]int(nil), fit.planFor(p.schema).slots...)
		}
	}
	return nil
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

// Score filters and scores task on every node of the table into b. With a
// batch large enough for the table it does not allocate. An error means the
// inputs do not fit the pipeline (wrong schema, bad request vector); b is
// then not valid.
func (p *Pipeline) Score(task *Task, nodes *resource.Table, b *Batch) error {
	if err := p.prepare(task, nodes, b); err != nil {
		return err
	}
	return p.scoreSpan(task, Span{table: nodes, end: nodes.Len()}, b, &b.verdicts)
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
			span := Span{table: nodes, start: c * chunk, end: min(n, (c+1)*chunk)}
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
	span := Span{table: nodes, start: row, end: row + 1}
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

// evaluate is the one way a Placer runs the pipeline: it scores a task on
// a table's rows into a batch that prepare sized, every row when rows is
// nil (on up to workers goroutines, result i being row i), else the
// listed rows in one span of scattered rows (result i being rows[i]).
func (p *Pipeline) evaluate(task *Task, table *resource.Table, rows []int, b *Batch, workers int) error {
	switch {
	case rows != nil:
		return p.scoreSpan(task, b.scattered.gather(table, rows), b, &b.verdicts)
	case workers == 1:
		return p.scoreSpan(task, Span{table: table, end: table.Len()}, b, &b.verdicts)
	}
	return p.scoreParallel(task, table, b, workers)
}

// scoreSpan runs every filter and scorer on one span, writing only that
// span's part of the batch: positions [start, end) of a contiguous span,
// [0, Len) of a span of scattered rows.
func (p *Pipeline) scoreSpan(task *Task, span Span, b *Batch, v *Verdicts) error {
	n := b.n
	rejectedBy := b.rejectedBy[span.start:span.end]
	totals := b.totals[span.start:span.end]
	clear(rejectedBy)
	v.rejectedBy, v.slots = rejectedBy, b.slots[span.start:span.end]
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
		col := b.columns[j*n+span.start : j*n+span.end]
		if err := s.ScoreNodes(task, span, col); err != nil {
			return fmt.Errorf("score: scorer %s: %w", s.Name(), err)
		}
		if i := weigh(col, totals, s.Weight, s.MaxScore(), j == 0); i >= 0 {
			return fmt.Errorf("score: scorer %s gave node %q a score of %v, outside [0, %v]", s.Name(), span.table.Name(span.Row(i)), col[i], s.MaxScore())
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

// scorerColumn places one of a pipeline's scorers in a split: its column
// in the volatile or the stable part.
type scorerColumn struct {
	volatile bool
	index    int
}

// split divides the pipeline into the filters and scorers whose results a
// Placer may remember (stable, Phased scorers among them: remembered per
// phase) and the other Volatile ones, which it runs for every task;
// columns says where each scorer went, in order. Without volatile parts
// (or with Phased ones only among them), stable is p and volatile nil.
func (p *Pipeline) split() (stable, volatile *Pipeline, columns []scorerColumn, err error) {
	var stableF, volatileF []Filter
	for _, f := range p.filters {
		if isVolatile(f) {
			volatileF = append(volatileF, f)
		} else {
			stableF = append(stableF, f)
		}
	}
	var stableS, volatileS []WeightedScorer
	for _, s := range p.scorers {
		if isVolatile(s.Scorer) && !isPhased(s.Scorer) {
			columns = append(columns, scorerColumn{volatile: true, index: len(volatileS)})
			volatileS = append(volatileS, s)
		} else {
			columns = append(columns, scorerColumn{index: len(stableS)})
			stableS = append(stableS, s)
		}
	}
	if volatileF == nil && volatileS == nil {
		return p, nil, columns, nil
	}
	if stable, err = NewPipeline(p.schema, stableF, stableS); err != nil {
		return nil, nil, nil, err
	}
	if volatile, err = NewPipeline(p.schema, volatileF, volatileS); err != nil {
		return nil, nil, nil, err
	}
	return stable, volatile, columns, nil
}

// excluders returns the pipeline's parts as Excluders when it has no
// scorers and every filter is one (see Excluder); ok is false otherwise,
// and for a nil pipeline.
func (p *Pipeline) excluders() (xs []Excluder, ok bool) {
	if p == nil || len(p.scorers) > 0 {
		return nil, false
	}
	for _, f := range p.filters {
		x, is := f.(Excluder)
		if !is {
			return nil, false
		}
		xs = append(xs, x)
	}
	return xs, len(xs) > 0
}

// monotone returns the filters that implement Monotone and, per filter
// number (index+1, as Verdicts number them; 0 is none), whether it is one.
func (p *Pipeline) monotone() ([]Monotone, []bool) {
	var ms []Monotone
	is := make([]bool, len(p.filters)+1)
	for i, f := range p.filters {
		if m, ok := f.(Monotone); ok {
			ms = append(ms, m)
			is[i+1] = true
		}
	}
	return ms, is
}

// Volatile reports whether a filter or scorer of the pipeline is volatile
// (see the Volatile interface).
func (p *Pipeline) Volatile() bool {
	return slices.ContainsFunc(p.filters, func(f Filter) bool { return isVolatile(f) }) ||
		slices.ContainsFunc(p.scorers, func(s WeightedScorer) bool { return isVolatile(s.Scorer) })
}

// Indifferent reports whether the pipeline adds nothing for the task:
// every scorer of some weight is Indifferent to it (see the Indifferent
// interface), so every node's total is 0. The filters still decide which
// nodes pass.
func (p *Pipeline) Indifferent(task *Task) bool {
	for _, s := range p.scorers {
		if s.Weight == 0 {
			continue
		}
		i, ok := s.Scorer.(Indifferent)
		if !ok || !i.Indifferent(task) {
			return false
		}
	}
	return true
}

// OverrideError says why the task's Volcano annotations go unused where
// the pipeline reads them (a Volcano scorer, NewVolcanoScorer): the
// annotation named, and that the scorer scores the task 0 on every node.
// That is what Volcano's resource-strategy-fit does with such a pod (it
// logs the error and scores 0), and resfit follows it rather than falling
// back to the configured weights, so that a pod places as it did under
// Volcano. Nil when the annotations are usable or absent, or no scorer
// reads them.
func (p *Pipeline) OverrideError(task *Task) error {
	if task.OverrideErr == nil {
		return nil
	}
	for _, s := range p.scorers {
		if _, ok := s.Scorer.(interface{ readsOverride() }); ok {
			return fmt.Errorf("%w: %s scores it 0 on every node, as Volcano does", task.OverrideErr, s.Scorer.Name())
		}
	}
	return nil
}

// Observe shows the pipeline's learners (Learner) a task the host has
// placed. Call it from the loop that scores with the pipeline, not
// alongside a Score.
func (p *Pipeline) Observe(task *Task) {
	for _, f := range p.filters {
		if l, ok := f.(Learner); ok {
			l.Observe(task)
		}
	}
	for _, s := range p.scorers {
		if l, ok := s.Scorer.(Learner); ok {
			l.Observe(task)
		}
	}
}

// scorerCount and filterCount are the pipeline's numbers of parts.
func (p *Pipeline) scorerCount() int { return len(p.scorers) }
func (p *Pipeline) filterCount() int { return len(p.filters) }
