package plugins

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/inturn"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// noop is a Score plugin that does nothing: the framework's own cost per
// node and cycle, the floor any plugin adds to.
type noop struct{ name string }

func (n noop) Name() string { return n.name }
func (noop) Score(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}
func (noop) ScoreExtensions() fwk.ScoreExtensions { return nil }
func (noop) SignPod(context.Context, *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return nil, nil
}

// nodeLookup is noop whose Score finds the node's row, as a plugin that
// keeps results per node must, and reads its NodeInfo's generation, which
// says whether the node changed since: a probe of the row index (the
// kubebridge.RowIndex resfit's plugins probe) and a cache line of the
// NodeInfo that the framework's own per-node work does not read. It is
// the floor of a plugin that answers from per-node state: what resfit's
// plugins cost beyond it is their own (the cycle's state, the row's
// result, its score). The index is the snapshot's nodes at construction.
type nodeLookup struct {
	noop
	rows kubebridge.RowIndex[v1.Node]
	gens []int64
}

func newNodeLookup(name string, h fwk.Handle) (fwk.Plugin, error) {
	infos, err := h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, err
	}
	l := &nodeLookup{noop: noop{name}, rows: kubebridge.NewRowIndex[v1.Node](len(infos)), gens: make([]int64, len(infos))}
	for i, info := range infos {
		l.rows.Put(info.Node(), int32(i))
		l.gens[i] = info.GetGeneration()
	}
	return l, nil
}

func (l *nodeLookup) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, node fwk.NodeInfo) (int64, *fwk.Status) {
	row, ok := l.rows.Get(node.Node())
	if ok && l.gens[row] == node.GetGeneration() {
		return 1, nil
	}
	return 0, nil
}

// benchCluster is a generated cluster: a quarter GPU nodes (96 cores,
// 768Gi, 8 GPUs), the rest CPU nodes (64 cores, 256Gi), each running one
// pod of a random size.
func benchCluster(n int) ([]*v1.Node, []*v1.Pod) {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		alloc := resources("cpu", "64", "memory", "256Gi")
		req := resources("cpu", fmt.Sprint(r.IntN(48)+1), "memory", fmt.Sprint(r.IntN(192)+1, "Gi"))
		if i%4 == 0 {
			alloc = resources("cpu", "96", "memory", "768Gi", gpu, "8")
			req[gpu] = resources(gpu, fmt.Sprint(r.IntN(8)))[gpu]
		}
		nodes = append(nodes, node(name, alloc))
		load := pod("load-"+name, name, req)
		// Running for up to a day; every other one declaring how long it
		// runs (what the lifetime term reads).
		started := metav1.NewTime(benchStart.Add(-time.Duration(r.IntN(24*60)) * time.Minute))
		load.Status.StartTime, load.Status.Phase = &started, v1.PodRunning
		if i%2 == 0 {
			load.Annotations = map[string]string{planning.RunsForAnnotation: fmt.Sprintf("%dh", r.IntN(48)+1)}
		}
		pods = append(pods, load)
	}
	return nodes, pods
}

// benchPod is the pod the cycle benchmarks score: 8 cores, 32Gi and a
// GPU, declaring that it runs for two hours, so that the lifetime term
// scores it (ResfitLifetime with ends: declared; ResfitLearnedLifetime
// adds nothing for it, and its PreScore returns Skip: a pod's end is
// declared, learned or not known, and at most one of the two plugins
// scores it).
func benchPod() *v1.Pod {
	p := pod("train", "", resources("cpu", "8", "memory", "32Gi", gpu, "1"))
	p.Annotations = map[string]string{planning.RunsForAnnotation: "2h"}
	return p
}

// benchStart is when the benchmarks' clusters were made: their pods
// started before it.
var benchStart = time.Now()

var mostAllocated = `{"filters": [], "plugins": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated",
  "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]}}}]}`

// benchClasses are the benchmark workload's typical pods, for the
// fragmentation plugins: the benchmarked pod's shape, a 2-GPU one and a
// CPU pod.
const benchClasses = `[{"cpu": 8, "gpus": 1, "weight": 3}, {"cpu": 16, "gpus": 2, "weight": 1}, {"cpu": 4, "weight": 2}]`

var (
	fgdConfig        = `{"plugins": [{"name": "FGD", "args": {"classes": ` + benchClasses + `}}]}`
	resfitFragConfig = `{"plugins": [{"name": "ResfitFrag", "args": {"classes": ` + benchClasses + `}}]}`
	// resfitFragProfile is ResfitFrag as the README deploys it in
	// kube-scheduler: the FGD plugin at weight 101, ResourceStrategyFit at 1
	// with the tie-breaker and the proportional reserve.
	resfitFragProfile = []enabled{
		{FGDName, 101, `{"classes": ` + benchClasses + `}`},
		{ResourceStrategyFitName, 1, `{"plugins": [
  {"name": "PackLeastUsed", "args": {"resources": [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}], "untilEndsKnown": "NodeResourcesBalancedAllocation"}},
  {"name": "resource-strategy-fit", "scores": false, "args": {"sra": {"policy": "proportional", "resources": "nvidia.com/gpu",
    "proportional": {"nvidia.com/gpu.cpu": 8, "nvidia.com/gpu.memory": 0}}}}]}`},
	}
	// resfitFragLifetimeProfile is that profile with the lifetime term at
	// ResfitFrag's default weights: ResfitLifetime following the declared
	// ends, ResfitLearnedLifetime the learned ones.
	resfitFragLifetimeProfile = append(slices.Clone(resfitFragProfile),
		enabled{LifetimeName, resfitconfig.DefaultLifetimeWeight, `{"ends": "declared"}`},
		enabled{LearnedLifetimeName, resfitconfig.DefaultLearnedLifetimeWeight, `{}`})
	// resfitFragShippedProfile adds the node size (ResfitNodeSize at
	// ResfitFrag's default weight): the README's profile, and the chart's.
	resfitFragShippedProfile = append(slices.Clone(resfitFragLifetimeProfile),
		enabled{NodeSizeName, resfitconfig.DefaultNodeSizeWeight, `{}`})
)

// BenchmarkFrameworkCycle measures one scheduling cycle's scoring as
// kube-scheduler runs it — RunPreScorePlugins, then RunScorePlugins over
// every node — through the real framework runtime, on the same nodes and
// pod, for: a Score plugin that does nothing (the floor; two of them, the
// floor of a two-plugin profile), kube-scheduler's
// NodeResourcesFit (MostAllocated on cpu, memory and GPUs), and each resfit
// plugin (Koordinator's two alone and as the pair they are deployed as;
// resfit's configurations, the fragmentation plugins FGD and ResfitFrag
// among them; the FGD plugin alone, and FGD with ResourceStrategyFit as
// the README's ResfitFrag profile, whose floor is two no-ops).
// It reports ns/node per cycle; allocs/op are per cycle.
func BenchmarkFrameworkCycle(b *testing.B) { benchmarkCycles(b, sameShape) }

// BenchmarkFrameworkCycleAfterABind is BenchmarkFrameworkCycle as cycles
// follow one another in a running kube-scheduler: each cycle ends with
// RunReservePluginsReserve on a node, and that node's NodeInfo then
// changes in place (a pod assumed there, or taken off again the next time
// round, so the cluster stays as it was), as the scheduler's cache and
// snapshot change it before the next cycle.
func BenchmarkFrameworkCycleAfterABind(b *testing.B) { benchmarkCycles(b, afterABind) }

// BenchmarkFrameworkCycleNewShape is BenchmarkFrameworkCycle with a pod of
// requests no earlier cycle saw in every cycle (its cpu request grows by
// one millicore each time): what a plugin that remembers results per pod
// shape costs when nothing repeats.
func BenchmarkFrameworkCycleNewShape(b *testing.B) { benchmarkCycles(b, newShape) }

// How the cycles of a benchmark follow one another.
const (
	sameShape  = iota // the same pod on the same cluster
	afterABind        // the same pod, one node changed since the last cycle
	newShape          // a pod of new requests on the same cluster
)

// cycleProfiles are the profiles the cycle benchmarks measure, the
// floors first.
var cycleProfiles = []struct {
	name    string
	plugins []enabled
	inTree  bool
}{
	{name: "Noop"},
	{name: "Noop×2"},
	{name: "Noop×3"},
	{name: "Noop×4"},
	{name: "NodeResourcesFit", inTree: true},
	{name: "ResourceStrategyFit-MostAllocated", plugins: []enabled{{ResourceStrategyFitName, 1, mostAllocated}}},
	{name: "ResourceStrategyFit-AIScenario", plugins: []enabled{{ResourceStrategyFitName, 1, aiScenario}}},
	{name: "ResourceStrategyFit-FGD", plugins: []enabled{{ResourceStrategyFitName, 1, fgdConfig}}},
	{name: "ResourceStrategyFit-ResfitFrag", plugins: []enabled{{ResourceStrategyFitName, 1, resfitFragConfig}}},
	{name: "FGD", plugins: resfitFragProfile[:1]},
	{name: "FGD+ResourceStrategyFit", plugins: resfitFragProfile},
	{name: "FGD+ResourceStrategyFit+ResfitLifetime+ResfitLearnedLifetime", plugins: resfitFragLifetimeProfile},
	{name: "FGD+ResourceStrategyFit+ResfitLifetime+ResfitLearnedLifetime+ResfitNodeSize", plugins: resfitFragShippedProfile},
	{name: "NodeResourcesFitPlus", plugins: koordinatorPlugins[:1]},
	{name: "ScarceResourceAvoidance", plugins: koordinatorPlugins[1:]},
	{name: "NodeResourcesFitPlus+ScarceResourceAvoidance", plugins: koordinatorPlugins},
}

func benchmarkCycles(b *testing.B, mode int) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		infos, snapshot := benchSnapshot(b, n)
		p := benchPod()
		for _, prof := range cycleProfiles {
			b.Run(fmt.Sprintf("%s/nodes=%d", prof.name, n), func(b *testing.B) {
				fw := benchFramework(b, snapshot, prof.name, prof.inTree, prof.plugins)
				binds := newBinder(b, infos, p)
				measureCycles(b, n, newCycle(b, fw, fw, mode, p, infos, binds))
				binds.undo()
			})
		}
	}
}

func quietKlog() {
	klog.SetOutput(discard{})
	klog.LogToStderr(false)
}

// benchSnapshot is kube-scheduler's snapshot of benchCluster(n) and its
// list of NodeInfos.
func benchSnapshot(b *testing.B, n int) ([]fwk.NodeInfo, *cache.Snapshot) {
	nodes, pods := benchCluster(n)
	snapshot := cache.NewSnapshot(pods, nodes)
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		b.Fatal(err)
	}
	return infos, snapshot
}

// newCycle is one scheduling cycle's scoring of p through fw, followed as
// mode says; after a bind, the Reserve runs through reserve's plugins.
func newCycle(b *testing.B, fw, reserve framework.Framework, mode int, p *v1.Pod, infos []fwk.NodeInfo, binds *binder) func() {
	ctx := context.Background()
	shapes := newShapes(p)
	return func() {
		state := framework.NewCycleState()
		p := p
		if mode == newShape {
			p = shapes.next()
		}
		if s := fw.RunPreScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
			b.Fatal(s.AsError())
		}
		if _, s := fw.RunScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
			b.Fatal(s.AsError())
		}
		if mode == afterABind {
			binds.next(ctx, reserve, state)
		}
	}
}

// BenchmarkFrameworkCycleVsFloor measures each resfit profile's cycle
// against its floor's in the same loop, a cycle of each in turn (which
// goes first alternating), so that whatever else the machine does in a
// stretch of time weighs on both alike: this VM's runs of
// BenchmarkFrameworkCycle, a profile after the other, differ by up to a
// third. Same pod (same), and after a bind (bind: each cycle, the
// floor's too, ends with a Reserve through the profile's plugins and that
// node changed, so the profile is told of every node that changes, as
// kube-scheduler tells a profile's plugins of the pods it binds). It
// reports the profile's ns/node, the floor's (floor-ns/node) and their
// ratio (×floor).
func BenchmarkFrameworkCycleVsFloor(b *testing.B) { benchmarkInTurn(b, "Noop", false) }

// BenchmarkFrameworkCycleVsLookup is BenchmarkFrameworkCycleVsFloor
// against nodeLookup's floor (Lookup; Lookup×2 for a profile of two
// plugins, Lookup×3 for three, and so on): what resfit's plugins cost beyond finding each node's row and
// reading its generation. Its first rows put Lookup itself against Noop.
func BenchmarkFrameworkCycleVsLookup(b *testing.B) { benchmarkInTurn(b, "Lookup", true) }

// benchmarkInTurn runs every resfit profile's cycle and its floor's in
// turn (floor, or floor×k for a profile of k plugins), same pod and after
// a bind, at 1000 and 5000 nodes; with withFloor, floor's own cycle against
// Noop's first.
func benchmarkInTurn(b *testing.B, floor string, withFloor bool) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		infos, snapshot := benchSnapshot(b, n)
		p := benchPod()
		for _, mode := range []struct {
			name string
			mode int
		}{{"same", sameShape}, {"bind", afterABind}} {
			type row struct {
				name, floor string
				plugins     []enabled // none for a floor
			}
			var rows []row
			if withFloor {
				rows = append(rows, row{floor, "Noop", nil})
			}
			for _, prof := range cycleProfiles {
				if prof.inTree || len(prof.plugins) == 0 {
					continue
				}
				r := row{prof.name, floor, prof.plugins}
				if k := len(prof.plugins); k > 1 {
					r.floor = fmt.Sprintf("%s×%d", floor, k)
				}
				rows = append(rows, r)
			}
			for _, r := range rows {
				b.Run(fmt.Sprintf("%s/%s/nodes=%d", mode.name, r.name, n), func(b *testing.B) {
					binds := newBinder(b, infos, p)
					fw := benchFramework(b, snapshot, r.name, false, r.plugins)
					cycles := [2]func(){
						newCycle(b, benchFramework(b, snapshot, r.floor, false, nil), fw, mode.mode, p, infos, binds),
						newCycle(b, fw, fw, mode.mode, p, infos, binds),
					}
					inturn.Measure(b, n, cycles[0], cycles[1])
					binds.undo()
				})
			}
		}
	}
}

// shapes hands out copies of a pod, each with a cpu request one millicore
// above the last (made ahead, a thousand at a time, so that making them
// is not measured).
type shapes struct {
	pod   *v1.Pod
	made  []*v1.Pod
	i     int
	milli int64
}

func newShapes(p *v1.Pod) *shapes {
	return &shapes{pod: p, milli: p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()}
}

func (s *shapes) next() *v1.Pod {
	if s.i == len(s.made) {
		s.made, s.i = s.made[:0], 0
		for range 1000 {
			s.milli++
			p := s.pod.DeepCopy()
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = *resourceapi.NewMilliQuantity(s.milli, resourceapi.DecimalSI)
			s.made = append(s.made, p)
		}
	}
	s.i++
	return s.made[s.i-1]
}

// binder assumes a pod on one node after another, and takes it off again
// the next time round the nodes.
type binder struct {
	b      *testing.B
	infos  []*framework.NodeInfo
	pods   []*v1.Pod
	on     []bool
	cursor int
}

func newBinder(b *testing.B, infos []fwk.NodeInfo, p *v1.Pod) *binder {
	bd := &binder{b: b, on: make([]bool, len(infos))}
	for i, info := range infos {
		bd.infos = append(bd.infos, info.(*framework.NodeInfo))
		placed := p.DeepCopy()
		placed.Name, placed.UID, placed.Spec.NodeName = fmt.Sprint("placed-", i), types.UID(fmt.Sprint("placed-", i)), info.Node().Name
		bd.pods = append(bd.pods, placed)
	}
	return bd
}

// next reserves the pod on the next node and changes that node's NodeInfo.
func (bd *binder) next(ctx context.Context, fw framework.Framework, state fwk.CycleState) {
	i := bd.cursor
	bd.cursor = (i + 1) % len(bd.infos)
	if s := fw.RunReservePluginsReserve(ctx, state, bd.pods[i], bd.pods[i].Spec.NodeName); !s.IsSuccess() {
		bd.b.Fatal(s.AsError())
	}
	bd.flip(i)
}

func (bd *binder) flip(i int) {
	if bd.on[i] {
		if err := bd.infos[i].RemovePod(klog.Background(), bd.pods[i]); err != nil {
			bd.b.Fatal(err)
		}
	} else {
		bd.infos[i].AddPod(bd.pods[i])
	}
	bd.on[i] = !bd.on[i]
}

// undo takes off every pod still on, so the next benchmark sees the
// cluster as generated.
func (bd *binder) undo() {
	for i, on := range bd.on {
		if on {
			bd.flip(i)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// benchFramework builds a framework whose score plugins are the profile's.
func benchFramework(b *testing.B, snapshot *cache.Snapshot, name string, inTree bool, plugins []enabled) framework.Framework {
	b.Helper()
	registry := resfitRegistry()
	// as many floor plugins as the largest profile has score plugins
	for i := 1; i <= len(resfitFragShippedProfile); i++ {
		noopName, lookupName := "Noop", "Lookup"
		if i > 1 {
			noopName, lookupName = fmt.Sprint(noopName, i), fmt.Sprint(lookupName, i)
		}
		registry[noopName] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return noop{noopName}, nil }
		registry[lookupName] = func(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			return newNodeLookup(lookupName, h)
		}
	}
	registry[noderesources.Name] = frameworkruntime.FactoryAdapter(feature.Features{}, noderesources.NewFit)
	profile := &config.KubeSchedulerProfile{
		SchedulerName: "bench",
		Plugins: &config.Plugins{
			QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
			Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
		},
	}
	floor, times, _ := strings.Cut(name, "×") // the floor of a profile with that many score plugins
	switch {
	case floor == "Noop" || floor == "Lookup":
		profile.Plugins.Score.Enabled = []config.Plugin{{Name: floor, Weight: 1}}
		k, _ := strconv.Atoi(times)
		for i := 2; i <= k; i++ {
			profile.Plugins.Score.Enabled = append(profile.Plugins.Score.Enabled, config.Plugin{Name: fmt.Sprint(floor, i), Weight: 1})
		}
	case inTree:
		profile.Plugins.PreScore.Enabled = []config.Plugin{{Name: noderesources.Name}}
		profile.Plugins.Score.Enabled = []config.Plugin{{Name: noderesources.Name, Weight: 1}}
		profile.PluginConfig = []config.PluginConfig{{Name: noderesources.Name, Args: &config.NodeResourcesFitArgs{
			ScoringStrategy: &config.ScoringStrategy{Type: config.MostAllocated, Resources: []config.ResourceSpec{
				{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: gpu, Weight: 1}}},
		}}}
	default:
		for _, p := range plugins {
			profile.Plugins.PreScore.Enabled = append(profile.Plugins.PreScore.Enabled, config.Plugin{Name: p.name})
			profile.Plugins.Score.Enabled = append(profile.Plugins.Score.Enabled, config.Plugin{Name: p.name, Weight: p.weight})
			profile.Plugins.Reserve.Enabled = append(profile.Plugins.Reserve.Enabled, config.Plugin{Name: p.name})
			profile.PluginConfig = append(profile.PluginConfig, config.PluginConfig{
				Name: p.name, Args: &runtime.Unknown{Raw: []byte(p.args), ContentType: runtime.ContentTypeJSON},
			})
		}
	}
	fw, err := frameworkruntime.NewFramework(context.Background(), registry, profile, frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		b.Fatal(err)
	}
	return fw
}

// measureCycles times a benchmark's cycles after a first, untimed one
// (which builds what later ones keep), and reports ns per node of n.
func measureCycles(b *testing.B, n int, cycle func()) {
	cycle()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cycle()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
}
