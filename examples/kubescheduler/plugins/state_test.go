package plugins

import (
	"bytes"
	"context"
	"fmt"
	"k8s.io/client-go/informers"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"pgregory.net/rapid"
)

// aiScenario is the design's AI-scenario configuration for
// ResourceStrategyFit: GPU packed, cpu spread, sra retention and the
// proportional filter.
const aiScenario = `{"plugins": [{"name": "resource-strategy-fit", "args": {
  "resources": {"nvidia.com/gpu": {"type": "MostAllocated", "weight": 2}, "cpu": {"type": "LeastAllocated", "weight": 1}},
  "sra": {"policy": "retention, proportional", "resources": "nvidia.com/gpu",
          "retention": {"weight": 10, "nvidia.com/gpu": 1}, "proportional": {"nvidia.com/gpu.cpu": 8, "nvidia.com/gpu.memory": 8}}}}]}`

// live is a cluster as kube-scheduler holds it: the scheduler cache, and a
// snapshot that UpdateSnapshot refreshes node by node (NodeInfos that did
// not change keep their object and generation), under a framework whose
// plugins keep their state from cycle to cycle.
type live struct {
	cache    cache.Cache
	snapshot *cache.Snapshot
	fw       framework.Framework
	logger   klog.Logger
}

func newLive(t testing.TB, ctx context.Context, plugins ...enabled) *live {
	t.Helper()
	l := &live{cache: cache.New(ctx, nil, false, false), snapshot: cache.NewEmptySnapshot(), logger: klog.FromContext(ctx)}
	l.fw = newFrameworkOn(t, ctx, l.snapshot, plugins...)
	return l
}

func (l *live) sync(t testing.TB) []fwk.NodeInfo {
	t.Helper()
	if err := l.cache.UpdateSnapshot(l.logger, l.snapshot); err != nil {
		t.Fatal(err)
	}
	infos, err := l.snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// resfitRegistry registers resfit's plugins and what a profile needs
// besides (queue sort, bind).
func resfitRegistry() frameworkruntime.Registry {
	r := Registry()
	r[queuesort.Name] = queuesort.New
	r[defaultbinder.Name] = defaultbinder.New
	return r
}

// newFrameworkOn is newFramework over a given snapshot.
func newFrameworkOn(t testing.TB, ctx context.Context, snapshot *cache.Snapshot, plugins ...enabled) framework.Framework {
	t.Helper()
	return newFrameworkWith(t, ctx, snapshot, nil, plugins...)
}

// newFrameworkWithDRA is newFrameworkOn with kube-scheduler's
// SharedDRAManager and the informer factory its plugins watch.
func newFrameworkWithDRA(t testing.TB, ctx context.Context, snapshot *cache.Snapshot, m fwk.SharedDRAManager, factory informers.SharedInformerFactory, plugins ...enabled) framework.Framework {
	t.Helper()
	fw := newFrameworkWith(t, ctx, snapshot, []frameworkruntime.Option{frameworkruntime.WithSharedDRAManager(m), frameworkruntime.WithInformerFactory(factory)}, plugins...)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return fw
}

// newFrameworkWith is newFrameworkOn with more options.
func newFrameworkWith(t testing.TB, ctx context.Context, snapshot *cache.Snapshot, opts []frameworkruntime.Option, plugins ...enabled) framework.Framework {
	t.Helper()
	fw, err := frameworkruntime.NewFramework(ctx, resfitRegistry(), newProfile(plugins...), append(opts, frameworkruntime.WithSnapshotSharedLister(snapshot))...)
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

// newProfile is a profile that enables the given plugins where they
// work: every one at PreScore, Score and Reserve, ResourceStrategyFit and
// FGD at PreFilter and Filter too; their args passed as kube-scheduler
// passes an out-of-tree plugin's args, *runtime.Unknown with JSON.
func newProfile(plugins ...enabled) *config.KubeSchedulerProfile {
	profile := &config.KubeSchedulerProfile{
		SchedulerName: "resfit",
		Plugins: &config.Plugins{
			QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
			Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
		},
	}
	for _, p := range plugins {
		profile.Plugins.PreScore.Enabled = append(profile.Plugins.PreScore.Enabled, config.Plugin{Name: p.name})
		profile.Plugins.Score.Enabled = append(profile.Plugins.Score.Enabled, config.Plugin{Name: p.name, Weight: p.weight})
		profile.Plugins.Reserve.Enabled = append(profile.Plugins.Reserve.Enabled, config.Plugin{Name: p.name})
		if p.name == ResourceStrategyFitName || p.name == FGDName {
			profile.Plugins.PreFilter.Enabled = append(profile.Plugins.PreFilter.Enabled, config.Plugin{Name: p.name})
			profile.Plugins.Filter.Enabled = append(profile.Plugins.Filter.Enabled, config.Plugin{Name: p.name})
		}
		profile.PluginConfig = append(profile.PluginConfig, config.PluginConfig{
			Name: p.name, Args: &runtime.Unknown{Raw: []byte(p.args), ContentType: runtime.ContentTypeJSON},
		})
	}
	return profile
}

// outcome runs one cycle as kube-scheduler does (PreFilter, Filter on
// every node, PreScore and Score on the feasible ones) and returns, per
// node, its total score or the reason it was rejected.
func outcome(t testing.TB, fw framework.Framework, infos []fwk.NodeInfo, p *v1.Pod) map[string]string {
	return sampledOutcome(t, fw, infos, p, 0)
}

// sampledOutcome is outcome with at most sample feasible nodes scored (0:
// all), as kube-scheduler scores only a share of a large cluster's nodes
// (percentageOfNodesToScore).
func sampledOutcome(t testing.TB, fw framework.Framework, infos []fwk.NodeInfo, p *v1.Pod, sample int) map[string]string {
	t.Helper()
	rejected, scores := runCycle(t, fw, infos, p, sample)
	out := map[string]string{}
	for name, status := range rejected {
		out[name] = "rejected: " + status.Message()
	}
	for _, n := range scores {
		out[n.Name] = fmt.Sprint(n.TotalScore)
	}
	return out
}

// runCycle runs one cycle as kube-scheduler does (PreFilter, Filter on
// every node, PreScore and Score on at most sample of the feasible ones, 0:
// all) and returns the rejected nodes' statuses and the others' scores. A
// PreFilter that finds the pod unschedulable rejects every node.
func runCycle(t testing.TB, fw framework.Framework, infos []fwk.NodeInfo, p *v1.Pod, sample int) (map[string]*fwk.Status, []fwk.NodePluginScores) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	rejected := map[string]*fwk.Status{}
	if _, s, _ := fw.RunPreFilterPlugins(ctx, state, p); !s.IsSuccess() && !s.IsSkip() {
		if !s.IsRejected() {
			t.Fatalf("PreFilter: %v", s.AsError())
		}
		for _, info := range infos {
			rejected[info.Node().Name] = s
		}
		return rejected, nil
	}
	var feasible []fwk.NodeInfo
	for _, info := range infos {
		if s := fw.RunFilterPlugins(ctx, state, p, info); !s.IsSuccess() {
			rejected[info.Node().Name] = s
			continue
		}
		feasible = append(feasible, info)
	}
	if sample > 0 && len(feasible) > sample {
		feasible = feasible[len(feasible)-sample:]
	}
	if len(feasible) == 0 {
		return rejected, nil
	}
	if s := fw.RunPreScorePlugins(ctx, state, p, feasible); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s.AsError())
	}
	scores, s := fw.RunScorePlugins(ctx, state, p, feasible)
	if !s.IsSuccess() {
		t.Fatalf("Score: %v", s.AsError())
	}
	return rejected, scores
}

// TestStateKeptAcrossCyclesIsExact: the plugins keep their table and
// pipeline from cycle to cycle and read a node again only when its
// generation changed; after any sequence of cluster changes (pods bound
// and removed, nodes added, resized and removed, a new extended resource
// appearing) every cycle's outcome is the one a fresh framework gives on
// the same snapshot. A node changed since the last cycle may be worked out
// on its own once (kube-scheduler updates its NodeInfo in place, and the
// plugin notices the change when it looks the node up); in the cycle after
// that, every node's outcome comes from the kept table's batch — whether
// every feasible node is scored or, as in a large cluster, a sample.
func TestStateKeptAcrossCyclesIsExact(t *testing.T) {
	configs := map[string][]enabled{
		"ResourceStrategyFit": {{ResourceStrategyFitName, 1, aiScenario}},
		"Koordinator":         koordinatorPlugins,
	}
	for name, plugins := range configs {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				ctx := context.Background()
				l := newLive(t, ctx, plugins...)
				nodeNames := []string{"gpu-0", "gpu-1", "cpu-0", "cpu-1", "cpu-2"}
				drawNode := func(name string) *v1.Node {
					kv := []string{"cpu", fmt.Sprint(rapid.IntRange(8, 96).Draw(rt, "cores")), "memory", fmt.Sprint(rapid.IntRange(16, 512).Draw(rt, "gi"), "Gi")}
					if strings.HasPrefix(name, "gpu") {
						kv = append(kv, gpu, fmt.Sprint(rapid.IntRange(1, 8).Draw(rt, "gpus")))
					}
					if rapid.IntRange(0, 9).Draw(rt, "fpga") == 0 {
						kv = append(kv, "example.com/fpga", "2")
					}
					return node(name, resources(kv...))
				}
				drawPod := func(name, nodeName string) *v1.Pod {
					kv := []string{"cpu", fmt.Sprint(rapid.IntRange(1, 16).Draw(rt, "pod cores")), "memory", fmt.Sprint(rapid.IntRange(1, 64).Draw(rt, "pod gi"), "Gi")}
					if rapid.Bool().Draw(rt, "pod gpu") {
						kv = append(kv, gpu, fmt.Sprint(rapid.IntRange(1, 2).Draw(rt, "pod gpus")))
					}
					if rapid.IntRange(0, 4).Draw(rt, "only gpu") == 0 {
						kv = []string{gpu, "1"}
					}
					return pod(name, nodeName, resources(kv...))
				}
				present := map[string]*v1.Node{}
				bound := map[string]*v1.Pod{}
				for _, n := range nodeNames[:3] {
					present[n] = drawNode(n)
					l.cache.AddNode(l.logger, present[n])
				}
				for cycle := range rapid.IntRange(1, 12).Draw(rt, "cycles") {
					switch rapid.IntRange(0, 4).Draw(rt, "change") {
					case 0, 1: // a pod is bound
						names := sortedKeys(present)
						if len(names) == 0 {
							break
						}
						p := drawPod(fmt.Sprint("bound-", cycle), rapid.SampledFrom(names).Draw(rt, "bind to"))
						if rapid.Bool().Draw(rt, "reserved") { // placed by this profile
							if s := l.fw.RunReservePluginsReserve(ctx, framework.NewCycleState(), p, p.Spec.NodeName); !s.IsSuccess() {
								t.Fatal(s.AsError())
							}
						}
						if err := l.cache.AddPod(l.logger, p); err != nil {
							t.Fatal(err)
						}
						bound[p.Name] = p
					case 2: // a pod goes away
						if len(bound) == 0 {
							break
						}
						name := rapid.SampledFrom(sortedKeys(bound)).Draw(rt, "remove pod")
						if err := l.cache.RemovePod(l.logger, bound[name]); err != nil {
							t.Fatal(err)
						}
						delete(bound, name)
					case 3: // a node arrives or changes
						name := rapid.SampledFrom(nodeNames).Draw(rt, "node")
						n := drawNode(name)
						if old, ok := present[name]; ok {
							l.cache.UpdateNode(l.logger, old, n)
						} else {
							l.cache.AddNode(l.logger, n)
						}
						present[name] = n
					case 4: // a node leaves
						names := sortedKeys(present)
						if len(names) < 2 {
							break
						}
						name := rapid.SampledFrom(names).Draw(rt, "remove node")
						for pn, p := range bound {
							if p.Spec.NodeName == name {
								l.cache.RemovePod(l.logger, p)
								delete(bound, pn)
							}
						}
						if err := l.cache.RemoveNode(l.logger, present[name]); err != nil {
							t.Fatal(err)
						}
						delete(present, name)
					}
					infos := l.sync(t)
					fresh := newFrameworkOn(t, ctx, l.snapshot, plugins...)
					sample := rapid.IntRange(0, 2).Draw(rt, "nodes scored")
					for pass := range 2 {
						p := drawPod(fmt.Sprint("pending-", cycle, "-", pass), "")
						before := singleEvaluations.Load()
						got := sampledOutcome(t, l.fw, infos, p, sample)
						if n := singleEvaluations.Load() - before; pass == 1 && n != 0 {
							rt.Fatalf("cycle %d: %d nodes were evaluated one by one in a cycle after which nothing changed", cycle, n)
						}
						if want := sampledOutcome(t, fresh, infos, p, sample); fmt.Sprint(got) != fmt.Sprint(want) {
							rt.Fatalf("cycle %d, pass %d: kept state gave\n%v\na fresh framework\n%v", cycle, pass, got, want)
						}
					}
				}
			})
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// readingAnnotationsOrNot are two plugin sets: ResourceStrategyFit, whose
// configuration reads pods' Volcano scoring annotations, and Koordinator's,
// which does not.
var readingAnnotationsOrNot = map[string][]enabled{
	"ResourceStrategyFit": {{ResourceStrategyFitName, 1, aiScenario}},
	"Koordinator":         koordinatorPlugins,
}

// loggingContext is a context whose logger writes to the buffer returned.
func loggingContext() (context.Context, *bytes.Buffer) {
	var logs bytes.Buffer
	return klog.NewContext(context.Background(), textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&logs)))), &logs
}

// Every resfit plugin implements SignPlugin, so kube-scheduler keeps its
// opportunistic batching on for a profile that uses them: the framework
// does not log "Disabling signatures for profile because plugins do not
// support it", it signs a pod, two pods with equal requests share a
// signature and get the same outcome, and a pod with other requests (or,
// for ResourceStrategyFit, other Volcano annotations) does not share it.
func TestSignaturesKeepBatchingOn(t *testing.T) {
	for name, plugins := range readingAnnotationsOrNot {
		t.Run(name, func(t *testing.T) {
			ctx, logs := loggingContext()
			nodes := []*v1.Node{
				node("gpu", resources("cpu", "74", "memory", "128G", gpu, "8")),
				node("cpu", resources("cpu", "16", "memory", "64G")),
			}
			snapshot := cache.NewSnapshot([]*v1.Pod{pod("load", "gpu", resources("cpu", "8", "memory", "8G", gpu, "2"))}, nodes)
			fw := newFrameworkOn(t, ctx, snapshot, plugins...)
			if strings.Contains(logs.String(), "Disabling signatures") {
				t.Fatalf("the framework turned signatures off:\n%s", logs.String())
			}
			a := pod("a", "", resources("cpu", "4", "memory", "4G", gpu, "1"))
			b := pod("b", "", resources("cpu", "4", "memory", "4G", gpu, "1"))
			c := pod("c", "", resources("cpu", "4", "memory", "4G", gpu, "2"))
			sa, sb, sc := fw.SignPod(ctx, a), fw.SignPod(ctx, b), fw.SignPod(ctx, c)
			if sa == nil || !bytes.Equal(sa, sb) || bytes.Equal(sa, sc) {
				t.Fatalf("signatures: a %s, b %s, c %s", sa, sb, sc)
			}
			infos, _ := snapshot.NodeInfos().List()
			if oa, ob := outcome(t, fw, infos, a), outcome(t, fw, infos, b); fmt.Sprint(oa) != fmt.Sprint(ob) {
				t.Errorf("same signature, different outcomes: %v and %v", oa, ob)
			}
			annotated := a.DeepCopy()
			annotated.Annotations = map[string]string{"volcano.sh/resource-strategy-scoring-type": "LeastAllocated", "volcano.sh/resource-strategy-weight": `{"cpu": 1}`}
			same := bytes.Equal(fw.SignPod(ctx, annotated), sa)
			if overrides := name == "ResourceStrategyFit"; same == overrides {
				t.Errorf("Volcano annotations change the signature: %v, want %v", !same, overrides)
			}
		})
	}
}

// When kube-scheduler scores only a few of many nodes (a sample, as
// percentageOfNodesToScore takes in a large cluster), a plugin that only
// scores reads their rows afresh in PreScore where they changed (none is
// worked out alone in Score), and each sampled node gets the score it gets
// when every node is scored. ResourceStrategyFit, which filters (DeviceShare
// at least), evaluates every node in PreFilter instead (a node changed in
// place is worked out alone once, as for any filtering configuration); its
// sampled scores are the same.
func TestSampledScoringReadsTheSampleAfresh(t *testing.T) {
	ctx := context.Background()
	for name, plugins := range map[string][]enabled{
		"Koordinator":         koordinatorPlugins,
		"ResourceStrategyFit": {{ResourceStrategyFitName, 1, mostAllocated}},
	} {
		scoresOnly := name == "Koordinator"
		t.Run(name, func(t *testing.T) {
			l := newLive(t, ctx, plugins...)
			for i := range 12 {
				kv := []string{"cpu", fmt.Sprint(8 + 4*i), "memory", "64Gi"}
				if i%3 == 0 {
					kv = append(kv, gpu, "8")
				}
				l.cache.AddNode(l.logger, node(fmt.Sprint("node-", i), resources(kv...)))
			}
			p := pod("p", "", resources("cpu", "2", "memory", "4Gi", gpu, "1"))
			infos := l.sync(t)
			sampled := infos[len(infos)-1].Node().Name // sampledOutcome keeps the last ones
			for cycle := range 3 {
				if cycle > 0 { // a sampled node changes between cycles
					if err := l.cache.AddPod(l.logger, pod(fmt.Sprint("bound-", cycle), sampled, resources("cpu", "4", gpu, "2"))); err != nil {
						t.Fatal(err)
					}
				}
				infos = l.sync(t)
				before, singles := sampledRefreshes.Load(), singleEvaluations.Load()
				got := sampledOutcome(t, l.fw, infos, p, 2)
				if took := sampledRefreshes.Load() != before; took != scoresOnly {
					t.Fatalf("cycle %d: PreScore took the sampled path for 2 of 12 nodes: %v, want %v", cycle, took, scoresOnly)
				}
				if n := singleEvaluations.Load() - singles; scoresOnly && n != 0 {
					t.Errorf("cycle %d: %d of the sampled nodes were evaluated one by one", cycle, n)
				}
				// The reference scores every node, so it does not take the
				// sampled path.
				all := outcome(t, newFrameworkOn(t, ctx, l.snapshot, plugins...), infos, p)
				for name, score := range got {
					if all[name] != score {
						t.Errorf("cycle %d: %s scored %s in a sample, %s among all nodes", cycle, name, score, all[name])
					}
				}
			}
		})
	}
}

// A pod reserved on a node (kube-scheduler assumes it there, which
// changes the node's NodeInfo in place) makes the plugins read the node
// again at the start of the next cycle: no node is worked out on its own
// in Score, and the outcome is a fresh framework's. Without the Reserve
// call the changed node is noticed in Score and worked out alone, as the
// second half of the test shows.
func TestReserveReadsTheNodeAgainNextCycle(t *testing.T) {
	ctx := context.Background()
	for name, plugins := range map[string][]enabled{
		"Koordinator":         koordinatorPlugins,
		"ResourceStrategyFit": {{ResourceStrategyFitName, 1, aiScenario}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, reserve := range []bool{true, false} {
				l := newLive(t, ctx, plugins...)
				for i := range 4 {
					l.cache.AddNode(l.logger, node(fmt.Sprint("gpu-", i), resources("cpu", "32", "memory", "256Gi", gpu, "8")))
				}
				p := pod("p", "", resources("cpu", "4", "memory", "16Gi", gpu, "2"))
				infos := l.sync(t)
				outcome(t, l.fw, infos, p)
				placed := pod("placed", "gpu-2", resources("cpu", "4", "memory", "16Gi", gpu, "2"))
				if reserve {
					if s := l.fw.RunReservePluginsReserve(ctx, framework.NewCycleState(), placed, "gpu-2"); !s.IsSuccess() {
						t.Fatal(s.AsError())
					}
				}
				if err := l.cache.AssumePod(l.logger, placed); err != nil {
					t.Fatal(err)
				}
				infos = l.sync(t)
				singles := singleEvaluations.Load()
				got := outcome(t, l.fw, infos, p)
				alone := singleEvaluations.Load() - singles
				if want := outcome(t, newFrameworkOn(t, ctx, l.snapshot, plugins...), infos, p); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("reserve %v: kept state gave\n%v\na fresh framework\n%v", reserve, got, want)
				}
				if want := map[bool]int64{true: 0, false: 1}[reserve]; alone < want || reserve && alone != 0 {
					t.Errorf("reserve %v: %d nodes worked out alone in the next cycle, want %d", reserve, alone, want)
				}
			}
		})
	}
}

// The resfit plugins of a profile read the nodes and the pod once per
// cycle between them: FGD and ResourceStrategyFit (ResfitFrag's profile)
// share one reading, as Koordinator's two plugins share theirs; a profile
// with plugins that read devices and plugins that do not reads twice (a
// pod's task differs between them). Each plugin still scores with its own
// pipeline: the outcome is that of each plugin in a framework of its own.
func TestProfileReadsEachCycleOnce(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		plugins []enabled
		reads   int64
	}{
		{"ResfitFrag", resfitFragProfile, 1},
		{"Koordinator", koordinatorPlugins, 1},
		{"Koordinator+ResourceStrategyFit", append(slices.Clone(koordinatorPlugins), enabled{ResourceStrategyFitName, 1, aiScenario}), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLive(t, ctx, c.plugins...)
			for i := range 6 {
				l.cache.AddNode(l.logger, node(fmt.Sprint("gpu-", i), resources("cpu", "32", "memory", "256Gi", gpu, "8")))
			}
			infos := l.sync(t)
			p := pod("p", "", resources("cpu", "8", "memory", "32Gi", gpu, "1"))
			var got map[string]string
			for range 3 {
				before := cycleReads.Load()
				got = outcome(t, l.fw, infos, p)
				if reads := cycleReads.Load() - before; reads != c.reads {
					t.Fatalf("a cycle read the nodes and the pod %d times, want %d", reads, c.reads)
				}
			}
			// The sum of each plugin's score, each in a framework alone.
			want := map[string]int64{}
			for _, pl := range c.plugins {
				alone := outcome(t, newFrameworkOn(t, ctx, l.snapshot, pl), infos, p)
				for node, score := range alone {
					var v int64
					fmt.Sscan(score, &v)
					want[node] += v
				}
			}
			for node, score := range got {
				var v int64
				fmt.Sscan(score, &v)
				if v != want[node] {
					t.Errorf("node %s: %s in the shared profile, %d as the plugins' scores alone", node, score, want[node])
				}
			}
		})
	}
}

// A node that leaves while another arrives between two cycles keeps the
// list of NodeInfos as long as it was: the new node gets a row in the
// next cycle (no node is then worked out alone, in that cycle or the one
// after), and the outcome is a fresh framework's. Fails when the lists
// are taken as the same for their length.
func TestNodeReplacedAtTheSameCount(t *testing.T) {
	ctx := context.Background()
	plugins := []enabled{{ResourceStrategyFitName, 1, aiScenario}}
	l := newLive(t, ctx, plugins...)
	nodes := map[string]*v1.Node{}
	for _, name := range []string{"gpu-0", "cpu-0", "cpu-1"} {
		kv := []string{"cpu", "32", "memory", "128Gi"}
		if strings.HasPrefix(name, "gpu") {
			kv = append(kv, gpu, "8")
		}
		nodes[name] = node(name, resources(kv...))
		l.cache.AddNode(l.logger, nodes[name])
	}
	p := pod("pending", "", resources("cpu", "4", "memory", "8Gi"))
	sampledOutcome(t, l.fw, l.sync(t), p, 0)
	if err := l.cache.RemoveNode(l.logger, nodes["cpu-1"]); err != nil {
		t.Fatal(err)
	}
	l.cache.AddNode(l.logger, node("cpu-2", resources("cpu", "64", "memory", "256Gi")))
	infos := l.sync(t)
	fresh := newFrameworkOn(t, ctx, l.snapshot, plugins...)
	for pass := range 2 {
		before := singleEvaluations.Load()
		got := sampledOutcome(t, l.fw, infos, p, 0)
		if n := singleEvaluations.Load() - before; n != 0 {
			t.Errorf("pass %d: %d nodes worked out alone", pass, n)
		}
		if want := sampledOutcome(t, fresh, infos, p, 0); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("pass %d: kept state gave\n%v\na fresh framework\n%v", pass, got, want)
		}
	}
}

// A pod whose Volcano scoring annotations are unusable scores 0 on every
// node under ResourceStrategyFit, as under Volcano, and the plugin says so
// in the cycle's log, once, naming the annotation and the pod; the plugins
// that do not read the annotations say nothing.
func TestUnusableAnnotationsAreLogged(t *testing.T) {
	for name, plugins := range readingAnnotationsOrNot {
		t.Run(name, func(t *testing.T) {
			ctx, logs := loggingContext()
			snapshot := cache.NewSnapshot(nil, []*v1.Node{node("gpu", resources("cpu", "74", "memory", "128G", gpu, "8"))})
			fw := newFrameworkOn(t, ctx, snapshot, plugins...)
			p := pod("a", "", resources("cpu", "4", "memory", "4G", gpu, "1"))
			p.Annotations = map[string]string{"volcano.sh/resource-strategy-scoring-type": "LeastAllocated", "volcano.sh/resource-strategy-weight": `{"cpu": "1"}`}
			state := framework.NewCycleState()
			if _, s, _ := fw.RunPreFilterPlugins(ctx, state, p); !s.IsSuccess() && !s.IsSkip() {
				t.Fatal(s)
			}
			infos, _ := snapshot.NodeInfos().List()
			if s := fw.RunPreScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
				t.Fatal(s)
			}
			said := strings.Count(logs.String(), `"Scoring annotations unusable" err="annotation volcano.sh/resource-strategy-weight: want a JSON object of integer weights`)
			if want := map[bool]int{true: 1, false: 0}[name == "ResourceStrategyFit"]; said != want || want == 1 && !strings.Contains(logs.String(), `scores it 0 on every node, as Volcano does" plugin="ResourceStrategyFit" pod="default/a"`) {
				t.Errorf("said %d times, want %d:\n%s", said, want, logs.String())
			}
		})
	}
}
