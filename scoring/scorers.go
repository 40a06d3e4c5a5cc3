package scoring

import (
	"encoding/binary"
	"errors"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// Names of the pipeline parts that scarce-resource avoidance adds.
const (
	SRARetention    = "sra.retention"
	SRAProportional = "sra.proportional"
	SRASize         = "sra.size"
)

// RowsScorer is what kube-scheduler's strategies offer for many nodes:
// strategy.KubeFit, RequestedToCapacityRatio and BalancedAllocation.
type RowsScorer interface {
	ScoreNodes(req []int64, rows resource.Rows, out []float64) error
}

// NewScorer makes a Scorer of a name, a maximum and a function that scores
// a span's nodes (see Scorer for what the function must do). Every
// built-in scorer is one; so can a scorer of your own be.
func NewScorer(name string, maxScore float64, score func(task *Task, nodes Span, out []float64) error) Scorer {
	return &funcScorer{name: name, max: maxScore, score: score}
}

type funcScorer struct {
	name  string
	max   float64
	score func(task *Task, nodes Span, out []float64) error
}

func (s *funcScorer) Name() string      { return s.name }
func (s *funcScorer) MaxScore() float64 { return s.max }
func (s *funcScorer) ScoreNodes(task *Task, nodes Span, out []float64) error {
	return s.score(task, nodes, out)
}

// NewStrategyScorer adapts a kube-scheduler strategy to the pipeline. It
// scores the task's non-zero requests against the nodes' non-zero used
// amounts, as NodeResourcesFit and RequestedToCapacityRatio do, or with
// plain the plain ones, as BalancedAllocation does. Its maximum is 100.
func NewStrategyScorer(name string, s RowsScorer, plain bool) Scorer {
	if plain {
		return NewScorer(name, strategy.MaxNodeScore, func(task *Task, nodes Span, out []float64) error {
			return s.ScoreNodes(task.Requests, nodes.Rows(), out)
		})
	}
	return NewScorer(name, strategy.MaxNodeScore, func(task *Task, nodes Span, out []float64) error {
		return s.ScoreNodes(task.nonZero(), nodes.NonZeroRows(), out)
	})
}

// NewKoordinatorScorer adapts Koordinator's NodeResourcesFitPlus: it
// chooses resources by the task's plain requests and scores its
// Koordinator non-zero amounts (Task.KoordinatorRequests) against the
// nodes' non-zero used amounts. Its maximum is 100.
func NewKoordinatorScorer(name string, f *strategy.KoordinatorFit) Scorer {
	return NewScorer(name, strategy.MaxNodeScore, func(task *Task, nodes Span, out []float64) error {
		return f.ScoreNodes(task.Requests, task.koordinator(), nodes.NonZeroRows(), out)
	})
}

// NewVolcanoScorer adapts Volcano's resource-strategy-fit or binpack score
// (strategy.VolcanoFit), honouring the task's Override. Its maximum is the
// VolcanoFit's.
func NewVolcanoScorer(name string, f *strategy.VolcanoFit) Scorer {
	return overrideScorer{NewScorer(name, f.MaxScore(), func(task *Task, nodes Span, out []float64) error {
		return f.ScoreNodes(task.Requests, task.Override, nodes.Rows(), out)
	})}
}

// overrideScorer is a scorer that reads Task.Override.
type overrideScorer struct{ Scorer }

func (overrideScorer) readsOverride() {}

// NewRetentionScorer adapts Volcano's sra retention score; its name is
// SRARetention.
func NewRetentionScorer(r *sra.Retention) Scorer {
	return NewScorer(SRARetention, r.MaxScore(), func(task *Task, nodes Span, out []float64) error {
		return r.ScoreRows(task.Requests, nodes.Rows(), out)
	})
}

// NewSizeScorer adapts sra.Size, the smaller node first; its name is
// SRASize.
func NewSizeScorer(s *sra.Size) Scorer {
	return NewScorer(SRASize, s.MaxScore(), func(_ *Task, nodes Span, out []float64) error {
		return s.ScoreRows(nodes.Rows(), out)
	})
}

// NewLargestSizeScorer scores the smaller node first, as sra.Size does,
// beside the table's own largest node (resource.Table.Largest,
// sra.SizeRows), so that the reference follows the nodes a host has; its
// name is SRASize. A node's score changes when the largest node does, so
// it is Volatile and Phased, its phase the largest node's amounts: a
// Placer remembers its scores until a node larger in some resource than
// any before comes, or the largest leaves.
func NewLargestSizeScorer() Scorer { return largestSize{} }

type largestSize struct{}

func (largestSize) Name() string      { return SRASize }
func (largestSize) MaxScore() float64 { return sra.MaxNodeScore }
func (largestSize) Volatile() bool    { return true }
func (largestSize) Phased() bool      { return true }

// AppendPhase appends the table's largest node, 8 bytes an amount.
func (largestSize) AppendPhase(key []byte, _ *Task, table *resource.Table) []byte {
	for _, a := range table.Largest() {
		key = binary.LittleEndian.AppendUint64(key, uint64(a))
	}
	return key
}

func (largestSize) ScoreNodes(_ *Task, nodes Span, out []float64) error {
	return sra.SizeRows(nodes.Table().Largest(), nodes.Rows(), out)
}

// NewAvoidanceScorer adapts Koordinator's ScarceResourceAvoidance score.
func NewAvoidanceScorer(name string, a *sra.Avoidance) Scorer {
	return NewScorer(name, a.MaxScore(), func(task *Task, nodes Span, out []float64) error {
		return a.ScoreNodes(task.Requests, nodes.Rows().Allocatable, out)
	})
}

// ProportionalFilter wraps Volcano's sra proportional filter
// (sra.Proportional) as a pipeline filter; its name is SRAProportional.
type ProportionalFilter struct {
	p *sra.Proportional
}

// NewProportionalFilter wraps p.
func NewProportionalFilter(p *sra.Proportional) (*ProportionalFilter, error) {
	if p == nil {
		return nil, errors.New("proportional filter: nil sra.Proportional")
	}
	return &ProportionalFilter{p: p}, nil
}

func (f *ProportionalFilter) Name() string { return SRAProportional }

func (f *ProportionalFilter) FilterNodes(task *Task, nodes Span, v *Verdicts) error {
	return f.p.FilterRows(task.Requests, nodes.Rows(), func(i int, fl sra.Failure) {
		v.Reject(i, fl.Primary)
	})
}

func (f *ProportionalFilter) Explain(task *Task, nodes *resource.Table, row, _ int) string {
	if ok, fl := f.p.CheckNode(task.Requests, nodes.Allocatable(row), nodes.Used(row)); !ok {
		return fl.Explain(nodes.Schema())
	}
	return "proportional check failed (the node has changed since)"
}
