package scoring

import (
	"errors"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/sra"
	"github.com/resfit/resfit/strategy"
)

// Names of the pipeline parts that scarce-resource avoidance adds.
const (
	SRARetention    = "sra.retention"
	SRAProportional = "sra.proportional"
)

// RowsScorer is what kube-scheduler's strategies offer for many nodes:
// strategy.KubeFit, RequestedToCapacityRatio and BalancedAllocation.
type RowsScorer interface {
	ScoreNodes(req []int64, rows resource.Rows, out []float64) error
}

// NewStrategyScorer adapts a kube-scheduler strategy to the pipeline. It
// scores the task's non-zero requests against the nodes' non-zero used
// amounts, as NodeResourcesFit and RequestedToCapacityRatio do, or with
// plain the plain ones, as BalancedAllocation does. Its maximum is 100.
func NewStrategyScorer(name string, s RowsScorer, plain bool) Scorer {
	return &strategyScorer{name: name, s: s, plain: plain}
}

type strategyScorer struct {
	name  string
	s     RowsScorer
	plain bool
}

func (k *strategyScorer) Name() string      { return k.name }
func (k *strategyScorer) MaxScore() float64 { return strategy.MaxNodeScore }
func (k *strategyScorer) Scattered() bool   { return true }

func (k *strategyScorer) ScoreNodes(task *Task, nodes Span, out []float64) error {
	if k.plain {
		return k.s.ScoreNodes(task.Requests, nodes.Rows(), out)
	}
	return k.s.ScoreNodes(task.nonZero(), nodes.NonZeroRows(), out)
}

// NewKoordinatorScorer adapts Koordinator's NodeResourcesFitPlus: it
// chooses resources by the task's plain requests and scores its
// Koordinator non-zero amounts (Task.KoordinatorRequests) against the
// nodes' non-zero used amounts. Its maximum is 100.
func NewKoordinatorScorer(name string, f *strategy.KoordinatorFit) Scorer {
	return &koordinatorScorer{name: name, f: f}
}

type koordinatorScorer struct {
	name string
	f    *strategy.KoordinatorFit
}

func (k *koordinatorScorer) Name() string      { return k.name }
func (k *koordinatorScorer) MaxScore() float64 { return strategy.MaxNodeScore }
func (k *koordinatorScorer) Scattered() bool   { return true }

func (k *koordinatorScorer) ScoreNodes(task *Task, nodes Span, out []float64) error {
	return k.f.ScoreNodes(task.Requests, task.koordinator(), nodes.NonZeroRows(), out)
}

// NewVolcanoScorer adapts Volcano's resource-strategy-fit or binpack score
// (strategy.VolcanoFit), honouring the task's Override. Its maximum is the
// VolcanoFit's.
func NewVolcanoScorer(name string, f *strategy.VolcanoFit) Scorer {
	return &volcanoScorer{name: name, f: f}
}

type volcanoScorer struct {
	name string
	f    *strategy.VolcanoFit
}

func (v *volcanoScorer) Name() string      { return v.name }
func (v *volcanoScorer) MaxScore() float64 { return v.f.MaxScore() }
func (v *volcanoScorer) Scattered() bool   { return true }

func (v *volcanoScorer) ScoreNodes(task *Task, nodes Span, out []float64) error {
	return v.f.ScoreNodes(task.Requests, task.Override, nodes.Rows(), out)
}

// NewRetentionScorer adapts Volcano's sra retention score; its name is
// SRARetention.
func NewRetentionScorer(r *sra.Retention) Scorer { return &retentionScorer{r: r} }

type retentionScorer struct {
	r *sra.Retention
}

func (s *retentionScorer) Name() string      { return SRARetention }
func (s *retentionScorer) MaxScore() float64 { return s.r.MaxScore() }
func (s *retentionScorer) Scattered() bool   { return true }
func (s *retentionScorer) ScoreNodes(task *Task, nodes Span, out []float64) error {
	return s.r.ScoreNodes(task.Requests, nodes.Rows().Allocatable, out)
}

// NewAvoidanceScorer adapts Koordinator's ScarceResourceAvoidance score.
func NewAvoidanceScorer(name string, a *sra.Avoidance) Scorer {
	return &avoidanceScorer{name: name, a: a}
}

type avoidanceScorer struct {
	name string
	a    *sra.Avoidance
}

func (s *avoidanceScorer) Name() string      { return s.name }
func (s *avoidanceScorer) MaxScore() float64 { return s.a.MaxScore() }
func (s *avoidanceScorer) Scattered() bool   { return true }
func (s *avoidanceScorer) ScoreNodes(task *Task, nodes Span, out []float64) error {
	return s.a.ScoreNodes(task.Requests, nodes.Rows().Allocatable, out)
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

// Scattered is true: the filter reads its span through Rows alone.
func (f *ProportionalFilter) Scattered() bool { return true }

func (f *ProportionalFilter) FilterNodes(task *Task, nodes Span, v *Verdicts) error {
	rows := nodes.Rows()
	return f.p.FilterNodes(task.Requests, rows.Allocatable, rows.Used, func(i int, fl sra.Failure) {
		v.Reject(i, fl.Primary)
	})
}

func (f *ProportionalFilter) Explain(task *Task, nodes *resource.Table, row, _ int) string {
	if ok, fl := f.p.CheckNode(task.Requests, nodes.Allocatable(row), nodes.Used(row)); !ok {
		return fl.Explain(nodes.Schema())
	}
	return "proportional check failed (the node has changed since)"
}
