package scoring

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/resfit/resfit/resource"
)

// ScaleTotal puts a pipeline total on a host's score scale: total over the
// pipeline's maximum, times scale, rounded half away from zero, as
// resfit's kube-scheduler plugins give kube-scheduler a score of 0 to 100
// (fwk.MaxNodeScore). A pipeline whose maximum is 0 scores 0.
func ScaleTotal(total, maxTotal float64, scale int64) int64 {
	if maxTotal <= 0 {
		return 0
	}
	return int64(math.Round(total / maxTotal * float64(scale)))
}

// ScaledScorer scores with a pipeline's scorers as one scorer: its score
// on a node is the pipeline's total there put on a scale by ScaleTotal,
// the way a host that adds a whole resfit pipeline as one plugin among its
// own scores it (a kube-scheduler profile weighing resfit's
// ResourceStrategyFit against other plugins). The total is summed as
// Pipeline.Score sums it, to the same float. The pipeline's filters are
// not run: Filters returns them, for the host to run beside.
//
// It is immutable and safe for concurrent use when the pipeline is; it is
// Volatile, and a Learner, when the pipeline's scorers are, and Phased
// when every volatile one of them is.
type ScaledScorer struct {
	name  string
	pipe  *Pipeline
	scale int64
	// columns holds one scorer's scores while the next is summed in;
	// a *[]float64, grown as needed, so that scoring does not allocate
	// once a buffer is large enough.
	columns sync.Pool
}

// NewScaledScorer makes the scorer of a pipeline named name, on a scale of
// 0 to scale (≥ 1).
func NewScaledScorer(name string, p *Pipeline, scale int64) (*ScaledScorer, error) {
	if p == nil {
		return nil, fmt.Errorf("scaled scorer %s: nil pipeline", name)
	}
	if scale < 1 || scale > MaxTotalScore {
		return nil, fmt.Errorf("scaled scorer %s: scale must be in [1, 2^53], got %d", name, scale)
	}
	return &ScaledScorer{name: name, pipe: p, scale: scale}, nil
}

// Name is the scorer's name.
func (s *ScaledScorer) Name() string { return s.name }

// MaxScore is the scale.
func (s *ScaledScorer) MaxScore() float64 { return float64(s.scale) }

// Pipeline is the pipeline it scores with.
func (s *ScaledScorer) Pipeline() *Pipeline { return s.pipe }

// Volatile reports whether one of the pipeline's scorers is volatile.
func (s *ScaledScorer) Volatile() bool {
	return slices.ContainsFunc(s.pipe.scorers, func(w WeightedScorer) bool { return isVolatile(w.Scorer) })
}

// Phased reports whether the pipeline has volatile scorers and every one
// of them is Phased: then the scaled total, a function of what each of
// them scores, changes apart from the table only with their phases, and a
// Placer may remember it per phase (AppendPhase).
func (s *ScaledScorer) Phased() bool {
	volatile := false
	for _, w := range s.pipe.scorers {
		if isVolatile(w.Scorer) {
			if !isPhased(w.Scorer) {
				return false
			}
			volatile = true
		}
	}
	return volatile
}

// AppendPhase appends the phases of the pipeline's Phased scorers, in
// order, each after its length (4 bytes, little-endian), so that the key
// reads back one way.
func (s *ScaledScorer) AppendPhase(key []byte, task *Task, table *resource.Table) []byte {
	for _, w := range s.pipe.scorers {
		if !isPhased(w.Scorer) {
			continue
		}
		key = appendPhase(key, w.Scorer.(Phased), task, table)
	}
	return key
}

// Indifferent reports whether the pipeline adds nothing for the task
// (Pipeline.Indifferent): its scaled total is then 0 on every node.
func (s *ScaledScorer) Indifferent(task *Task) bool { return s.pipe.Indifferent(task) }

// Observe shows the pipeline's learners a placed task.
func (s *ScaledScorer) Observe(task *Task) { s.pipe.Observe(task) }

// ScoreNodes scores the span: each scorer's scores checked against its
// maximum as Pipeline.Score checks them, weighted and summed in order,
// then scaled.
func (s *ScaledScorer) ScoreNodes(task *Task, nodes Span, out []float64) error {
	n := nodes.Len()
	out = out[:n]
	buf, _ := s.columns.Get().(*[]float64)
	if buf == nil {
		buf = new([]float64)
	}
	defer s.columns.Put(buf)
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	col := (*buf)[:n]
	clear(out)
	for j, w := range s.pipe.scorers {
		if err := w.ScoreNodes(task, nodes, col); err != nil {
			return fmt.Errorf("%s: scorer %s: %w", s.name, w.Name(), err)
		}
		limit := w.MaxScore()
		for i, x := range col {
			if !(x >= 0 && x <= limit) { // NaN fails too
				return fmt.Errorf("%s: scorer %s gave node %q a score of %v, outside [0, %v]", s.name, w.Name(), nodes.table.Name(nodes.Row(i)), x, limit)
			}
			if j == 0 {
				out[i] = 0 + x*w.Weight
			} else {
				out[i] += x * w.Weight
			}
		}
	}
	maxTotal := s.pipe.MaxScore()
	for i, total := range out {
		out[i] = float64(ScaleTotal(total, maxTotal, s.scale))
	}
	return nil
}

// Filters returns the pipeline's filters, in order.
func (s *ScaledScorer) Filters() []Filter { return append([]Filter(nil), s.pipe.filters...) }

var (
	_ Scorer   = (*ScaledScorer)(nil)
	_ Volatile = (*ScaledScorer)(nil)
	_ Learner  = (*ScaledScorer)(nil)
	_ Phased   = (*ScaledScorer)(nil)
)
