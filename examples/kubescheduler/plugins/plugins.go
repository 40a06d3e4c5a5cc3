// Package plugins runs resfit inside kube-scheduler as out-of-tree plugins:
//
//   - NodeResourcesFitPlus and ScarceResourceAvoidance, with Koordinator's
//     arguments;
//   - ResourceStrategyFit, with resfit's own configuration (strategies,
//     RequestedToCapacityRatio shape, sra retention, proportional filter).
//
// kube-scheduler calls Filter and Score once per node; these plugins do
// their work once per cycle instead, in PreFilter (ResourceStrategyFit) or
// PreScore, scoring every node in one resfit batch, and Filter and Score
// look the results up.
package plugins

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/resfit/resfit/scoring"
)

// Plugin names.
const (
	NodeResourcesFitPlusName    = "NodeResourcesFitPlus"
	ScarceResourceAvoidanceName = "ScarceResourceAvoidance"
	ResourceStrategyFitName     = "ResourceStrategyFit"
)

// Plugin scores, and for ResourceStrategyFit filters, with a resfit
// configuration.
type Plugin struct {
	name   string
	config *scoring.Config
	filter bool
}

var (
	_ fwk.PreScorePlugin  = &Plugin{}
	_ fwk.ScorePlugin     = &Plugin{}
	_ fwk.PreFilterPlugin = &Plugin{}
	_ fwk.FilterPlugin    = &Plugin{}
)

// NewNodeResourcesFitPlus builds Koordinator's NodeResourcesFitPlus from
// its args: resources: {name: {type, weight}}.
func NewNodeResourcesFitPlus(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return newSingle(NodeResourcesFitPlusName, obj)
}

// NewScarceResourceAvoidance builds Koordinator's ScarceResourceAvoidance
// from its args: resources: [names].
func NewScarceResourceAvoidance(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return newSingle(ScarceResourceAvoidanceName, obj)
}

func newSingle(name string, obj runtime.Object) (fwk.Plugin, error) {
	doc, err := decodeArgs(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	args, _, err := scoring.DecodeArgs(name, doc, scoring.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s args: %w", name, err)
	}
	return &Plugin{name: name, config: &scoring.Config{Scorers: []scoring.ScorerConfig{{Name: name, Weight: 1, Args: args}}}}, nil
}

// NewResourceStrategyFit builds ResourceStrategyFit from a resfit
// configuration in any form scoring.Load reads (resfit's plugins list, a
// Volcano scheduler configuration, ...). Its score is the pipeline's total
// scaled to kube-scheduler's 0..100; its filters run in PreFilter/Filter.
func NewResourceStrategyFit(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	doc, err := decodeArgs(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ResourceStrategyFitName, err)
	}
	cfg, err := scoring.Decode(doc, scoring.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s args: %w", ResourceStrategyFitName, err)
	}
	return &Plugin{name: ResourceStrategyFitName, config: cfg, filter: len(cfg.Filters) > 0}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return p.name }

// cycleState is one cycle's results, by node name.
type cycleState struct {
	scores  map[string]int64
	reasons map[string]string // rejected nodes
}

func (s *cycleState) Clone() fwk.StateData { return s }

func (p *Plugin) key() fwk.StateKey { return fwk.StateKey("resfit/" + p.name) }

// evaluate scores (and filters) the pod on every node in one batch.
func (p *Plugin) evaluate(pod *v1.Pod, nodes []fwk.NodeInfo) (*cycleState, error) {
	schema, err := schemaFor(pod, nodes)
	if err != nil {
		return nil, err
	}
	pipe, err := p.config.Build(schema)
	if err != nil {
		return nil, err
	}
	t, err := table(schema, nodes)
	if err != nil {
		return nil, err
	}
	plain, nonZero, koordinator, err := podRequests(schema, pod)
	if err != nil {
		return nil, err
	}
	b := pipe.NewBatch(t.Len())
	task := &scoring.Task{Name: pod.Name, Requests: plain, NonZeroRequests: nonZero, KoordinatorRequests: koordinator}
	if err := pipe.Score(task, t, b); err != nil {
		return nil, err
	}
	s := &cycleState{scores: make(map[string]int64, t.Len()), reasons: map[string]string{}}
	max := pipe.MaxScore()
	for i := 0; i < t.Len(); i++ {
		if !b.Feasible(i) {
			s.reasons[t.Name(i)] = b.Reason(i)
			continue
		}
		score := int64(0)
		if max > 0 {
			score = int64(math.Round(b.Total(i) / max * float64(fwk.MaxNodeScore)))
		}
		s.scores[t.Name(i)] = score
	}
	return s, nil
}

// PreFilter evaluates every node once, for ResourceStrategyFit's filters
// (and its scores, which do not depend on which nodes pass).
func (p *Plugin) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !p.filter {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	s, err := p.evaluate(pod, nodes)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	state.Write(p.key(), s)
	return nil, nil
}

// PreFilterExtensions is nil: the state is recomputed each cycle.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node the configuration's filters rejected.
func (p *Plugin) Filter(_ context.Context, state fwk.CycleState, _ *v1.Pod, node fwk.NodeInfo) *fwk.Status {
	s, err := p.read(state)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if reason, rejected := s.reasons[node.Node().Name]; rejected {
		return fwk.NewStatus(fwk.Unschedulable, reason)
	}
	return nil
}

// PreScore evaluates the candidate nodes once, unless PreFilter did.
func (p *Plugin) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if _, err := state.Read(p.key()); err == nil {
		return nil
	}
	s, err := p.evaluate(pod, nodes)
	if err != nil {
		return fwk.AsStatus(err)
	}
	state.Write(p.key(), s)
	return nil
}

// Score returns the node's score from the batch.
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, node fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := p.read(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	return s.scores[node.Node().Name], nil
}

// ScoreExtensions is nil: scores are already on 0..100.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

func (p *Plugin) read(state fwk.CycleState) (*cycleState, error) {
	d, err := state.Read(p.key())
	if err != nil {
		return nil, fmt.Errorf("%s: no state from PreFilter/PreScore: %w", p.name, err)
	}
	s, ok := d.(*cycleState)
	if !ok {
		return nil, fmt.Errorf("%s: state has type %T", p.name, d)
	}
	return s, nil
}
