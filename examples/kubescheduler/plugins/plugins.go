package plugins

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/strategy"
)

// Plugin names.
const (
	NodeResourcesFitPlusName    = "NodeResourcesFitPlus"
	ScarceResourceAvoidanceName = "ScarceResourceAvoidance"
	FGDName                     = "FGD"
	ResourceStrategyFitName     = "ResourceStrategyFit"
	LifetimeName                = config.Lifetime
	LearnedLifetimeName         = config.LearnedLifetime
	NodeSizeName                = config.NodeSize
)

// Plugin scores, and for ResourceStrategyFit filters, with a resfit
// configuration. It keeps state across scheduling cycles (see the package
// documentation), some of it shared with the profile's other resfit
// plugins; kube-scheduler runs one cycle at a time per profile, and each
// profile has its own Plugins.
type Plugin struct {
	name   string
	handle fwk.Handle // nil in tests that build a plugin alone
	config *config.Config
	filter bool
	// overrides is set when the plugin honours Volcano's per-pod scoring
	// annotations, which then belong in the pod's signature.
	overrides bool
	stateKey  fwk.StateKey

	// profile is what the plugin shares with the other resfit plugins of
	// its profile (the table, the pod's task); scorer is its own part.
	profile *profile
	scorer  scorer
	// last is the CycleState the last evaluation wrote to, with what it
	// wrote: Score and Filter, called for every node, find their cycle's
	// results without a lookup in the CycleState.
	last atomic.Pointer[lastCycle]
}

type lastCycle struct {
	state fwk.CycleState
	data  *cycleState
}

var (
	_ fwk.PreScorePlugin  = &Plugin{}
	_ fwk.ScorePlugin     = &Plugin{}
	_ fwk.PreFilterPlugin = &Plugin{}
	_ fwk.FilterPlugin    = &Plugin{}
	_ fwk.SignPlugin      = &Plugin{}
	_ fwk.ReservePlugin   = &Plugin{}
)

// NewNodeResourcesFitPlus builds Koordinator's NodeResourcesFitPlus from
// its args: resources: {name: {type, weight}}.
func NewNodeResourcesFitPlus(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return newSingle(NodeResourcesFitPlusName, obj, h, false)
}

// NewScarceResourceAvoidance builds Koordinator's ScarceResourceAvoidance
// from its args: resources: [names].
func NewScarceResourceAvoidance(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return newSingle(ScarceResourceAvoidanceName, obj, h, false)
}

// NewFGD builds FGD, the fragmentation gradient descent score, from its
// arguments (config.FGDArgs: the device resource, the workload's classes
// or how to learn them). It keeps a device view of the GPUs beside its
// table, as ResourceStrategyFit does, and filters by it (DeviceShare) when
// enabled at PreFilter and Filter. Its score is FGD's own 0..100, so that
// a profile can weigh it against other plugins exactly: ResfitFrag in
// kube-scheduler is FGD at weight 101 beside PackLeastUsed at weight 1
// (kube-scheduler's sum is then ResfitFrag's total), with the
// proportional filter from ResourceStrategyFit (README).
func NewFGD(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	pl, err := newSingle(FGDName, obj, h, true)
	if err != nil {
		return nil, err
	}
	p := pl.(*Plugin)
	p.filter = true
	return p, nil
}

// NewLifetime builds ResfitLifetime, the lifetime term alone
// (config.Lifetime; its one argument, ends: all or declared): a node
// scores 0..100 by how likely the pod is to end before the node would
// empty anyway, by the pods' declared ends (a Job's or the pod's
// activeDeadlineSeconds, resfit.io/runs-for) and by what the profile
// learned of pods that ended (lifetimes.go). With FGD at weight 101 and
// ResourceStrategyFit's PackLeastUsed at 1, ResfitLifetime with ends:
// declared at weight 10 (config.DefaultLifetimeWeight) and
// ResfitLearnedLifetime at 1000 (config.DefaultLearnedLifetimeWeight) make
// the profile ResfitFrag with its lifetime term. It shares the profile's
// table with FGD and ResourceStrategyFit.
func NewLifetime(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return newSingle(LifetimeName, obj, h, true)
}

// NewLearnedLifetime builds ResfitLearnedLifetime (config.LearnedLifetime,
// no arguments): ResfitLifetime for the pods whose ends were learned of
// pods like them alone; for the others it adds nothing, and its PreScore
// returns Skip. Beside ResfitLifetime with ends: declared, a profile
// weighs declared and learned ends apart, as ResfitFrag's lifetime:
// {weight, learnedWeight} does.
func NewLearnedLifetime(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return newSingle(LearnedLifetimeName, obj, h, true)
}

// NewNodeSize builds ResfitNodeSize (config.NodeSize; its one argument,
// largest, the reference node): the smaller node first, 0..100 by how
// small a node is beside the cluster's largest, each resource apart, so
// that small pods fill the small nodes and the largest stay whole for the
// pods only they hold. It counts once anything is known of when any pod
// ends (a pod declares its end, one has ended, or one has run for a
// while) and, while no pod has been seen to end, half of the GPUs are in
// use (lifetime.NewOnceKnown, lifetime.OnceKnownFillShare), and scores
// every node 0 until then. At weight 1 (config.DefaultNodeSizeWeight)
// beside FGD at 101, ResourceStrategyFit at 1 and the lifetime plugins,
// it makes the profile ResfitFrag as it is by default. It shares the
// profile's table with FGD and ResourceStrategyFit.
func NewNodeSize(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return newSingle(NodeSizeName, obj, h, true)
}

// newSingle builds a plugin of that name from its args, sharing its
// profile's state with the profile's other resfit plugins that read
// devices as it does (devices).
func newSingle(name string, obj runtime.Object, h fwk.Handle, devices bool) (fwk.Plugin, error) {
	cfg, err := pluginConfig(name, obj)
	if err != nil {
		return nil, err
	}
	pr, err := profileOf(name, h, devices)
	if err != nil {
		return nil, err
	}
	if cfg.ReadsLifetimes() {
		if err := followLifetimes(pr, h, name, cfg); err != nil {
			return nil, err
		}
	}
	return &Plugin{name: name, handle: h, stateKey: fwk.StateKey("resfit/" + name), config: cfg, profile: pr}, nil
}

// followLifetimes has the profile follow when its nodes empty, with the
// model the plugin's configuration asks for.
func followLifetimes(pr *profile, h fwk.Handle, name string, cfg *config.Config) error {
	opts, err := cfg.LifetimeModel()
	if err == nil {
		err = pr.followLifetimes(h, name, opts)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// pluginConfig is the configuration the plugin of that name runs with the
// args kube-scheduler hands it, decoded as config.Load decodes them in a
// profile (config.KubePlugin).
func pluginConfig(name string, obj runtime.Object) (*config.Config, error) {
	doc, err := decodeArgs(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cfg, err := config.KubePlugin(name, doc, config.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s args: %w", name, err)
	}
	return cfg, nil
}

// NewResourceStrategyFit builds ResourceStrategyFit from a resfit
// configuration in any form config.Load reads (resfit's plugins list, a
// Volcano scheduler configuration, ...). Its score is the pipeline's total
// scaled to kube-scheduler's 0..100; its filters run in PreFilter/Filter.
func NewResourceStrategyFit(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	cfg, err := pluginConfig(ResourceStrategyFitName, obj)
	if err != nil {
		return nil, err
	}
	pr, err := profileOf(ResourceStrategyFitName, h, true)
	if err != nil {
		return nil, err
	}
	if cfg.ReadsLifetimes() {
		if err := followLifetimes(pr, h, ResourceStrategyFitName, cfg); err != nil {
			return nil, err
		}
	}
	return &Plugin{name: ResourceStrategyFitName, handle: h, stateKey: "resfit/" + ResourceStrategyFitName,
		config: cfg, filter: true, overrides: true, profile: pr}, nil
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return p.name }

// SignPod returns what the plugin's results depend on in the pod: its
// requests (containers, init containers in order with their restart
// policy, pod-level requests, overhead) and, for ResourceStrategyFit,
// Volcano's scoring annotations and the annotations that say which GPU
// models it accepts. Pods with equal fragments get equal
// results, so kube-scheduler may reuse one pod's ranking for the next.
func (p *Plugin) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	requests, err := kubebridge.PodOf(pod)
	if err != nil { // unsigned; PreFilter says why the pod cannot be scored
		return nil, fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	fragments := []fwk.SignFragment{{Key: RequestsSignerName, Value: requests}}
	if p.overrides {
		fragments = append(fragments, fwk.SignFragment{Key: VolcanoAnnotationsSignerName, Value: [2]string{
			pod.Annotations[strategy.VolcanoScoringTypeAnnotation], pod.Annotations[strategy.VolcanoWeightAnnotation]}})
	}
	if p.profile.nodes.withDevices {
		fragments = append(fragments, fwk.SignFragment{Key: GPUModelsSignerName, Value: [3]string{
			pod.Annotations[resource.GPUModelsAnnotation], pod.Annotations[resource.UseGPUTypeAnnotation], pod.Annotations[resource.NoUseGPUTypeAnnotation]}})
	}
	if p.config.ReadsLifetimes() {
		fragments = append(fragments, fwk.SignFragment{Key: LifetimeSignerName, Value: lifetimeSignature(pod)})
	}
	return fragments, nil
}

// Signature fragment keys, named as kube-scheduler names its own: the
// state they read, then the function of it.
const (
	RequestsSignerName           = "v1.Pod.Spec.ContainerRequestsInOrderAndOverhead()"
	VolcanoAnnotationsSignerName = "v1.Pod.Annotations.VolcanoResourceStrategy()"
	GPUModelsSignerName          = "v1.Pod.Annotations.AcceptedGPUModels()"
	LifetimeSignerName           = "v1.Pod.DeclaredEndAndLifetimeKeys()"
)

// cycleState is one cycle's results: the task, and the cycle they belong
// to (the per-node results are in the plugin's reused slices).
type cycleState struct {
	cycle uint64
	pod   *v1.Pod
	task  *scoring.Task
	// podTask is the pod with what its DRA claims take (task is its Task),
	// dra what DRA said in the cycle.
	podTask *kubebridge.PodTask
	dra     *dra.Reading
	// schema is the schema the task was made for, opts how it was read.
	schema *resource.Schema
	opts   scoring.TaskOptions
	// filtersNothing says the plugin's filters pass every node for the
	// pod, whatever the nodes hold (kubebridge.PodTask.FiltersNothing).
	filtersNothing bool
	// indifferent says the plugin's configuration adds nothing for the pod
	// (scoring.Pipeline.Indifferent): PreScore returns Skip, and no node was
	// scored unless the plugin filters.
	indifferent bool
	// ends are the profile's lifetimes, when it follows them, and endsAt
	// the cycle's time, for a node worked out alone (lifetimes.one).
	ends   *lifetimes
	endsAt time.Time
	// unusable says why the pod's Volcano scoring annotations go unused
	// (scoring.Pipeline.OverrideError), for PreFilter or PreScore to log.
	unusable error
}

func (s *cycleState) Clone() fwk.StateData { return s }

func (p *Plugin) key() fwk.StateKey {
	if p.stateKey == "" { // built in a test without a constructor
		return fwk.StateKey("resfit/" + p.name)
	}
	return p.stateKey
}

// evaluate scores (and filters) the pod on every node of the cycle's
// snapshot in one batch, updating only the rows of nodes that changed.
// The profile's table and the pod's task are made once per cycle, by the
// first of the profile's resfit plugins to evaluate it (profile.prepare);
// each plugin then scores them with its own pipeline. PreScore is handed
// only the feasible nodes, a different list each cycle; the snapshot's
// list of all nodes is the same from cycle to cycle, so its rows are
// found without a lookup, and a node that left is noticed.
//
// given are the nodes the framework asked about; from PreScore (subset) they
// are the feasible ones, often a sample (percentageOfNodesToScore), and
// when they are few only their rows are read again.
func (p *Plugin) evaluate(state fwk.CycleState, pod *v1.Pod, given []fwk.NodeInfo, subset bool) (*cycleState, error) {
	pr := p.profile
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if err := pr.prepare(p.handle, state, pod, given, subset); err != nil {
		return nil, err
	}
	n := &pr.nodes
	if err := p.scorer.ready(p.config, n); err != nil {
		return nil, err
	}
	// A plugin that filters is asked of every node at Filter: it scores
	// them all, alike or not.
	indifferent := !p.filter && p.scorer.pipe.Indifferent(pr.podTask.Task)
	if !indifferent {
		if err := p.scorer.score(pr.podTask, n.table, pr.cycle); err != nil {
			return nil, err
		}
	}
	return &cycleState{cycle: pr.cycle, pod: pod, task: pr.podTask.Task, podTask: pr.podTask, dra: n.dra, schema: n.schema, opts: pr.opts,
		filtersNothing: pr.podTask.FiltersNothing(p.scorer.onlyDeviceShare), indifferent: indifferent, ends: n.ends,
		endsAt: n.ends.cycleTime(), unusable: p.scorer.pipe.OverrideError(pr.podTask.Task)}, nil
}

// PreFilter evaluates every node once, for ResourceStrategyFit's filters
// (and its scores, which do not depend on which nodes pass). When the
// filters pass every node for the pod whatever the nodes hold (a pod that
// asks for no devices, under filters that are DeviceShare alone:
// kubebridge.PodTask.FiltersNothing) it returns Skip, and the framework
// calls no Filter of the plugin for the pod, not even with nominated pods
// added, which could not change the answer.
func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !p.filter {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	s, err := p.evaluate(state, pod, nodes, false)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	p.sayUnusable(ctx, s)
	p.write(state, s)
	if s.filtersNothing {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

// PreFilterExtensions is nil: Filter works a node out afresh when the
// NodeInfo it is given is not the one the cycle's batch read (preemption's
// dry runs, nominated pods).
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node the configuration's filters rejected.
func (p *Plugin) Filter(_ context.Context, state fwk.CycleState, _ *v1.Pod, node fwk.NodeInfo) *fwk.Status {
	s, err := p.read(state)
	if err != nil {
		return fwk.AsStatus(err)
	}
	r, err := p.result(s, node, true)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !r.feasible {
		return fwk.NewStatus(fwk.Unschedulable, r.reason)
	}
	return nil
}

// PreScore evaluates the candidate nodes once, unless PreFilter did. When
// the plugin does not filter and its configuration ranks nothing for the
// pod (scoring.Pipeline.Indifferent: ResfitLifetime for a pod whose end is
// not known, ResfitLearnedLifetime for one that declares its end), it
// scores no node and returns Skip, and the framework calls no Score of
// the plugin for the pod: the plugin would have scored every node 0.
func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	s, ok := p.stateOf(state)
	if !ok {
		var err error
		if s, err = p.evaluate(state, pod, nodes, true); err != nil {
			return fwk.AsStatus(err)
		}
		p.sayUnusable(ctx, s)
		p.write(state, s)
	}
	if s.indifferent {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// sayUnusable logs, once a cycle, that the pod's Volcano scoring
// annotations are there but unusable where the plugin's configuration
// reads them (scoring.Pipeline.OverrideError): the pod then scores 0 on
// every node, as under Volcano, which logs it likewise.
func (p *Plugin) sayUnusable(ctx context.Context, s *cycleState) {
	if s.unusable != nil {
		klog.FromContext(ctx).Error(s.unusable, "Scoring annotations unusable", "plugin", p.name, "pod", klog.KObj(s.pod))
	}
}

// Score returns the node's score from the batch.
func (p *Plugin) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, node fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := p.read(state)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	r, err := p.result(s, node, false)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	return r.score, nil
}

// ScoreExtensions is nil: scores are already on 0..100.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

// Reserve notes the node the pod goes to: kube-scheduler assumes the pod
// there, so the node's row is read again at the start of the next cycle
// instead of being worked out on its own in Score. It shows the pod to the
// configuration's learners (FGD learning the workload's classes), which an
// Unreserve does not take back. It never fails.
func (p *Plugin) Reserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	p.profile.hint(nodeName)
	p.noteDRA(state, pod)
	if s, ok := p.stateOf(state); ok {
		p.profile.mu.Lock()
		if p.scorer.pipe != nil && s.schema == p.profile.nodes.schema {
			p.scorer.pipe.Observe(s.podTask.Placed(nodeName))
		}
		p.profile.mu.Unlock()
	}
	return nil
}

// Unreserve notes the node the pod leaves, as Reserve does.
func (p *Plugin) Unreserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	p.profile.hint(nodeName)
	p.noteDRA(state, pod)
}

// noteDRA has DRA read again at the next cycle when the pod's placement
// changes what its claims hold.
func (p *Plugin) noteDRA(state fwk.CycleState, pod *v1.Pod) {
	if p.profile.draWatch == nil {
		return
	}
	var d *dra.Reading
	if s, ok := p.stateOf(state); ok {
		d = s.dra
	}
	if !usesDRA(pod, d) {
		return
	}
	keys, complete := dra.PodClaimKeys(pod)
	if !complete || len(keys) == 0 { // a claim not named yet, or one the scheduler makes (KEP-5004)
		p.profile.draWatch.readAll()
		return
	}
	for _, key := range keys {
		p.profile.draWatch.claim(key, nil, false)
	}
}

// write keeps a cycle's results in its CycleState.
func (p *Plugin) write(state fwk.CycleState, s *cycleState) {
	state.Write(p.key(), s)
	p.last.Store(&lastCycle{state: state, data: s})
}

// sameState reports whether two CycleStates are the same object, as
// sameInfo does for NodeInfos (read runs in every Score).
func sameState(a, b fwk.CycleState) bool {
	if pa, ok := a.(*framework.CycleState); ok {
		pb, ok := b.(*framework.CycleState)
		return ok && pa == pb
	}
	return a == b
}

// read returns a cycle's results.
func (p *Plugin) read(state fwk.CycleState) (*cycleState, error) {
	if s, ok := p.stateOf(state); ok {
		return s, nil
	}
	d, err := state.Read(p.key())
	if err != nil {
		return nil, fmt.Errorf("%s: no state from PreFilter/PreScore (enable the plugin under multiPoint, or at preScore as well as score): %w", p.name, err)
	}
	return nil, fmt.Errorf("%s: state has type %T", p.name, d)
}

// stateOf returns a cycle's results, if PreFilter or PreScore wrote them.
func (p *Plugin) stateOf(state fwk.CycleState) (*cycleState, bool) {
	if last := p.last.Load(); last != nil && sameState(last.state, state) {
		return last.data, true
	}
	d, err := state.Read(p.key())
	if err != nil {
		return nil, false
	}
	s, ok := d.(*cycleState)
	return s, ok
}

// nodeResult is one node's outcome; reason is set only when asked for.
type nodeResult struct {
	feasible bool
	score    int64 // 0 when infeasible
	reason   string
}

// result looks a node's outcome up in the cycle's batch, or works it out
// afresh when the batch did not read this NodeInfo as it now is. The
// reason a node is infeasible is worked out only when asked for (Filter).
func (p *Plugin) result(s *cycleState, node fwk.NodeInfo, reason bool) (nodeResult, error) {
	if r, ok, err := p.scorer.lookup(&p.profile.nodes, s.cycle, node, reason); ok || err != nil {
		return r, err
	}
	return evaluateOne(p.config, p.profile.nodes.withDevices, s, node)
}

// toScore scales a pipeline total to kube-scheduler's 0..100, as
// config.KubePluginArgs scores the plugin.
func toScore(total, max float64) int64 {
	return scoring.ScaleTotal(total, max, fwk.MaxNodeScore)
}

// registered are resfit's kube-scheduler plugins, in the order the command
// registers them.
var registered = []struct {
	name    string
	factory frameworkruntime.PluginFactory
}{
	{NodeResourcesFitPlusName, NewNodeResourcesFitPlus},
	{ScarceResourceAvoidanceName, NewScarceResourceAvoidance},
	{ResourceStrategyFitName, NewResourceStrategyFit},
	{FGDName, NewFGD},
	{LifetimeName, NewLifetime},
	{LearnedLifetimeName, NewLearnedLifetime},
	{NodeSizeName, NewNodeSize},
	{RoomsName, NewRooms},
}

// Names are resfit's kube-scheduler plugins, in the order the command
// registers them (and --version names them).
func Names() []string {
	names := make([]string, len(registered))
	for i, p := range registered {
		names[i] = p.name
	}
	return names
}

// Registry is every resfit plugin by name, for a scheduler built out of
// tree (app.WithPlugin, the framework's out-of-tree registry): what the
// command registers, and so what a shipped profile may enable.
func Registry() frameworkruntime.Registry {
	r := frameworkruntime.Registry{}
	for _, p := range registered {
		r[p.name] = p.factory
	}
	return r
}
