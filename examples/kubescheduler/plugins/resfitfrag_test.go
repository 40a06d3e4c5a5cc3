package plugins

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
	"github.com/resfit/resfit/scoring"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// fragClassesJSON are the workload's classes the ResfitFrag profile and
// configuration share.
const fragClassesJSON = `[{"cpu": 4, "gpus": 1, "weight": 3}, {"cpu": 8, "gpus": 2, "weight": 2}, {"cpu": 2, "weight": 1}]`

// ResfitFrag in kube-scheduler is five plugins: resfit's FGD at weight
// 101, ResourceStrategyFit at weight 1 running resfit's PackLeastUsed (until
// an end is known, or 30% of the GPUs are in use, balanced) over
// cpu and GPU (0..100) and the proportional reserve as a filter (with
// NodeResourcesFit and DeviceShare), and the lifetime term:
// ResfitLifetime for declared ends at 10 and ResfitLearnedLifetime for
// learned ones at 1000 (ResfitFrag's defaults), and the node size
// (ResfitNodeSize at 1, once an end is known). Both read the GPUs from their device
// views, so a pod's share of a GPU counts as the share (a plugin of
// kube-scheduler's own would count the whole GPU its nvidia.com/gpu: 1
// says). On random clusters and pods, sharing pods
// among them, kube-scheduler's weighted total of a node is ResfitFrag's
// total from kubectl resfit explain, to the unit (FGD's 0..100 at 101,
// PackLeastUsed's at 1, the lifetime term's at 10 and 1000, the node
// size's at 1), and the nodes it
// rejects are the ones explain rejects. The pods run since drawn times
// and declare how long they run, or not; both read their ends at one time.
func TestResfitFragProfileIsExactInFramework(t *testing.T) {
	const cores = 2.5
	cfg, err := resfitconfig.Load([]byte(fmt.Sprintf(`{"plugins": [{"name": "ResfitFrag", "args": {"classes": %s, "coresPerIdleGPU": %v}}]}`, fragClassesJSON, cores)), resfitconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	was := clock
	clock = func() time.Time { return now }
	defer func() { clock = was }()
	rapid.Check(t, func(rt *rapid.T) {
		c := drawCluster(rt)
		p := drawPod(rt, "pending", "")
		drawEnds(rt, now, append(slices.Clone(c.Pods), p))
		c.Now = now
		snapshot := cache.NewSnapshot(c.Pods, c.Nodes)
		registry := resfitRegistry()
		unknown := func(js string) runtime.Object {
			return &runtime.Unknown{Raw: []byte(js), ContentType: runtime.ContentTypeJSON}
		}
		profile := &config.KubeSchedulerProfile{
			SchedulerName: "resfitfrag",
			Plugins: &config.Plugins{
				QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
				Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
				PreFilter: config.PluginSet{Enabled: []config.Plugin{{Name: ResourceStrategyFitName}, {Name: FGDName}}},
				Filter:    config.PluginSet{Enabled: []config.Plugin{{Name: ResourceStrategyFitName}, {Name: FGDName}}},
				PreScore:  config.PluginSet{Enabled: []config.Plugin{{Name: FGDName}, {Name: ResourceStrategyFitName}, {Name: LifetimeName}, {Name: LearnedLifetimeName}, {Name: NodeSizeName}}},
				Score: config.PluginSet{Enabled: []config.Plugin{
					{Name: FGDName, Weight: 101}, {Name: ResourceStrategyFitName, Weight: 1}, {Name: LifetimeName, Weight: resfitconfig.DefaultLifetimeWeight},
					{Name: LearnedLifetimeName, Weight: resfitconfig.DefaultLearnedLifetimeWeight}, {Name: NodeSizeName, Weight: resfitconfig.DefaultNodeSizeWeight}}},
			},
			PluginConfig: []config.PluginConfig{
				{Name: FGDName, Args: unknown(`{"classes": ` + fragClassesJSON + `}`)},
				{Name: LifetimeName, Args: unknown(`{"ends": "declared"}`)},
				{Name: LearnedLifetimeName, Args: unknown(`{}`)},
				{Name: NodeSizeName, Args: unknown(`{}`)},
				{Name: ResourceStrategyFitName, Args: unknown(fmt.Sprintf(`{"plugins": [
				  {"name": "PackLeastUsed", "args": {"resources": [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}], "untilEndsKnown": "NodeResourcesBalancedAllocation"}},
				  {"name": "resource-strategy-fit", "scores": false,
				   "args": {"sra": {"policy": "proportional", "resources": "nvidia.com/gpu", "proportional": {"nvidia.com/gpu.cpu": %v, "nvidia.com/gpu.memory": 0}}}}]}`, cores))},
			},
		}
		fw, err := frameworkruntime.NewFramework(context.Background(), registry, profile, frameworkruntime.WithSnapshotSharedLister(snapshot))
		if err != nil {
			rt.Fatal(err)
		}
		infos, err := snapshot.NodeInfos().List()
		if err != nil {
			rt.Fatal(err)
		}
		kube := outcome(t, fw, infos, p)
		e, err := resfitctl.Explain(c, cfg, "resfitfrag", p)
		if err != nil {
			rt.Fatal(err)
		}
		agrees(rt, p.Name, kube, e, func(n resfitctl.NodeExplanation) int64 {
			// kube-scheduler weighs each plugin's score, rounded to a whole
			// one (explain's are weighted already)
			var total int64
			for name, w := range map[string]float64{"FGD": 101, "PackLeastUsed": 1, "Lifetime": resfitconfig.DefaultLifetimeWeight,
				"LearnedLifetime": resfitconfig.DefaultLearnedLifetimeWeight, scoring.SRASize: resfitconfig.DefaultNodeSizeWeight} {
				total += int64(w) * int64(math.Round(n.Scores[name]/w))
			}
			return total
		})
	})
}

// drawEnds has each pod declare how long it runs, or not, and each bound
// one start before now, or not yet (a scheduler assumed it there).
func drawEnds(rt *rapid.T, now time.Time, pods []*v1.Pod) {
	for _, p := range pods {
		if rapid.Bool().Draw(rt, p.Name+" declares") {
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations[planning.RunsForAnnotation] = fmt.Sprint(rapid.IntRange(1, 1200).Draw(rt, p.Name+" runs for"), "m")
		}
		if ago := rapid.IntRange(-1, 600).Draw(rt, p.Name+" started, minutes ago"); p.Spec.NodeName != "" && ago >= 0 {
			kubetest.Running(p, now.Add(-time.Duration(ago)*time.Minute))
		}
	}
}
