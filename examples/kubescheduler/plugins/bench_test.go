package plugins

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
		pods = append(pods, pod("load-"+name, name, req))
	}
	return nodes, pods
}

var mostAllocated = `{"filters": [], "plugins": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated",
  "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]}}}]}`

// BenchmarkFrameworkCycle measures one scheduling cycle's scoring as
// kube-scheduler runs it — RunPreScorePlugins, then RunScorePlugins over
// every node — through the real framework runtime, on the same nodes and
// pod, for: a Score plugin that does nothing (the floor; two of them, the
// floor of a two-plugin profile), kube-scheduler's
// NodeResourcesFit (MostAllocated on cpu, memory and GPUs), and each resfit
// plugin. It reports ns/node per cycle; allocs/op are per cycle.
func BenchmarkFrameworkCycle(b *testing.B) {
	klog.SetOutput(discard{})
	klog.LogToStderr(false)
	profiles := []struct {
		name    string
		plugins []enabled
		inTree  bool
	}{
		{name: "Noop"},
		{name: "Noop×2"},
		{name: "NodeResourcesFit", inTree: true},
		{name: "ResourceStrategyFit-MostAllocated", plugins: []enabled{{ResourceStrategyFitName, 1, mostAllocated}}},
		{name: "ResourceStrategyFit-AIScenario", plugins: []enabled{{ResourceStrategyFitName, 1, aiScenario}}},
		{name: "NodeResourcesFitPlus+ScarceResourceAvoidance", plugins: koordinatorPlugins},
	}
	for _, n := range []int{1000, 5000} {
		nodes, pods := benchCluster(n)
		snapshot := cache.NewSnapshot(pods, nodes)
		infos, err := snapshot.NodeInfos().List()
		if err != nil {
			b.Fatal(err)
		}
		p := pod("train", "", resources("cpu", "8", "memory", "32Gi", gpu, "1"))
		for _, prof := range profiles {
			b.Run(fmt.Sprintf("%s/nodes=%d", prof.name, n), func(b *testing.B) {
				fw := benchFramework(b, snapshot, prof.name, prof.inTree, prof.plugins)
				ctx := context.Background()
				cycle := func() {
					state := framework.NewCycleState()
					if s := fw.RunPreScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
						b.Fatal(s.AsError())
					}
					if _, s := fw.RunScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
						b.Fatal(s.AsError())
					}
				}
				cycle() // the first cycle builds what later ones keep
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					cycle()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// benchFramework builds a framework whose score plugins are the profile's.
func benchFramework(b *testing.B, snapshot *cache.Snapshot, name string, inTree bool, plugins []enabled) framework.Framework {
	b.Helper()
	registry := resfitRegistry()
	registry["Noop"] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return noop{"Noop"}, nil }
	registry["Noop2"] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return noop{"Noop2"}, nil }
	registry[noderesources.Name] = frameworkruntime.FactoryAdapter(feature.Features{}, noderesources.NewFit)
	profile := &config.KubeSchedulerProfile{
		SchedulerName: "bench",
		Plugins: &config.Plugins{
			QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
			Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
		},
	}
	switch {
	case name == "Noop":
		profile.Plugins.Score.Enabled = []config.Plugin{{Name: "Noop", Weight: 1}}
	case name == "Noop×2": // the floor of a profile with two score plugins
		profile.Plugins.Score.Enabled = []config.Plugin{{Name: "Noop", Weight: 1}, {Name: "Noop2", Weight: 1}}
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
