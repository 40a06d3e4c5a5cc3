package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
	resfitconfig "github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/frag"
)

const gpu = "nvidia.com/gpu"

func resources(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
	}
	return l
}

func node(name string, alloc v1.ResourceList) *v1.Node {
	alloc[v1.ResourcePods] = kres.MustParse("110")
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc}}
}

func pod(name, nodeName string, req v1.ResourceList) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec:       v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req}}}},
	}
}

type enabled struct {
	name   string
	weight int32
	args   string // JSON
}

// newFramework is kube-scheduler's real framework runtime with a profile
// that enables the given plugins, their args passed as kube-scheduler
// passes an out-of-tree plugin's args: *runtime.Unknown with JSON.
func newFramework(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, plugins ...enabled) (framework.Framework, []fwk.NodeInfo) {
	t.Helper()
	snapshot := cache.NewSnapshot(pods, nodes)
	fw := newFrameworkOn(t, context.Background(), snapshot, plugins...)
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	return fw, infos
}

// score runs PreScore and Score in the framework and returns the total by
// node and the best node.
func score(t *testing.T, fw framework.Framework, infos []fwk.NodeInfo, p *v1.Pod) (map[string]int64, string) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	if s := fw.RunPreScorePlugins(ctx, state, p, infos); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s.AsError())
	}
	scores, s := fw.RunScorePlugins(ctx, state, p, infos)
	if !s.IsSuccess() {
		t.Fatalf("Score: %v", s.AsError())
	}
	totals := map[string]int64{}
	best, bestScore := "", int64(-1)
	for _, n := range scores {
		totals[n.Name] = n.TotalScore
		if n.TotalScore > bestScore || n.TotalScore == bestScore && n.Name < best {
			best, bestScore = n.Name, n.TotalScore
		}
	}
	return totals, best
}

// skipped is the plugins whose PreScore returned Skip for p: those the
// framework calls no Score of in the cycle.
func skipped(t *testing.T, fw framework.Framework, infos []fwk.NodeInfo, p *v1.Pod) []string {
	t.Helper()
	state := framework.NewCycleState()
	if s := fw.RunPreScorePlugins(context.Background(), state, p, infos); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s.AsError())
	}
	return sets.List(state.GetSkipScorePlugins())
}

var koordinatorPlugins = []enabled{
	{NodeResourcesFitPlusName, 2, `{"resources": {"nvidia.com/gpu": {"type": "MostAllocated", "weight": 2},
	  "cpu": {"type": "LeastAllocated", "weight": 1}, "memory": {"type": "LeastAllocated", "weight": 1}}}`},
	{ScarceResourceAvoidanceName, 2, `{"resources": ["nvidia.com/gpu"]}`},
}

// koordinator-noderesourcesfitplus-sra.md's configuration (both plugins,
// weight 2) in the real framework: a GPU pod prefers the GPU node with 6 of
// 8 GPUs used; a CPU pod prefers a CPU-only node.
func TestKoordinatorOutcomesInFramework(t *testing.T) {
	nodes := []*v1.Node{
		node("gpu-full", resources("cpu", "256", "memory", "1Ti", gpu, "8")),
		node("gpu-empty", resources("cpu", "256", "memory", "1Ti", gpu, "8")),
		node("cpu-idle", resources("cpu", "256", "memory", "1Ti")),
	}
	pods := []*v1.Pod{
		pod("load-1", "gpu-full", resources("cpu", "48", "memory", "215Gi", gpu, "6")),
		pod("load-2", "gpu-empty", resources("cpu", "56", "memory", "51Gi")),
		pod("load-3", "cpu-idle", resources("cpu", "76", "memory", "204Gi")),
	}
	fw, infos := newFramework(t, nodes, pods, koordinatorPlugins...)
	totals, best := score(t, fw, infos, pod("gpu-pod", "", resources("cpu", "100", "memory", "100", gpu, "2")))
	if best != "gpu-full" {
		t.Errorf("GPU pod: best %s, totals %v", best, totals)
	}
	// NodeResourcesFitPlus on gpu-full: gpu (6+2)/8 → 100·2, cpu (256−148)/256 → 42,
	// memory → 78: (200+42+78)/4 = 80; ×2 = 160. ScarceResourceAvoidance: 100 ×2.
	if totals["gpu-full"] != 360 {
		t.Errorf("gpu-full total %d, want 160 + 200", totals["gpu-full"])
	}
	totals, best = score(t, fw, infos, pod("cpu-pod", "", resources("cpu", "100", "memory", "100")))
	if best != "cpu-idle" {
		t.Errorf("CPU pod: best %s, totals %v", best, totals)
	}
}

// ResourceStrategyFit with resfit's configuration: the sra proportional
// filter keeps a CPU pod off a GPU node whose free GPUs would lose their
// cpu share, in the framework's PreFilter and Filter.
func TestResourceStrategyFitFilterInFramework(t *testing.T) {
	nodes := []*v1.Node{
		node("gpu", resources("cpu", "74", "memory", "128G", gpu, "8")),
		node("cpu", resources("cpu", "16", "memory", "64G")),
	}
	pods := []*v1.Pod{pod("single-1000-0", "gpu", resources("cpu", "8", "memory", "8G"))}
	args := `{"plugins": [{"name": "resource-strategy-fit", "args": {"resources": {"nvidia.com/gpu": {"type": "MostAllocated", "weight": 2}, "cpu": {"type": "LeastAllocated", "weight": 1}},
	  "sra": {"policy": "proportional", "resources": "nvidia.com/gpu", "proportional": {"nvidia.com/gpu.cpu": 8, "nvidia.com/gpu.memory": 8}}}}]}`
	fw, infos := newFramework(t, nodes, pods, enabled{ResourceStrategyFitName, 1, args})
	ctx := context.Background()
	state := framework.NewCycleState()
	p := pod("single-1000-1", "", resources("cpu", "8", "memory", "8G"))
	if _, s, _ := fw.RunPreFilterPlugins(ctx, state, p); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s.AsError())
	}
	s := fw.RunFilterPlugins(ctx, state, p, infos[indexOf(infos, "gpu")])
	want := "proportional of resource nvidia.com/gpu check failed: idle cpu 66 - request 8 < 8 GPUs x 8"
	if s.IsSuccess() || s.Message() != want {
		t.Errorf("gpu node: %v, want Unschedulable %q", s, want)
	}
	if s := fw.RunFilterPlugins(ctx, state, p, infos[indexOf(infos, "cpu")]); !s.IsSuccess() {
		t.Errorf("cpu node filtered: %v", s)
	}
	// A GPU pod is not held back by the proportional rule.
	g := pod("train", "", resources("cpu", "60", gpu, "1"))
	state = framework.NewCycleState()
	fw.RunPreFilterPlugins(ctx, state, g)
	if s := fw.RunFilterPlugins(ctx, state, g, infos[indexOf(infos, "gpu")]); !s.IsSuccess() {
		t.Errorf("GPU pod filtered: %v", s)
	}
}

func indexOf(infos []fwk.NodeInfo, name string) int {
	for i, n := range infos {
		if n.Node().Name == name {
			return i
		}
	}
	return -1
}

func TestBadArgsAreErrors(t *testing.T) {
	ctx := context.Background()
	bad := &runtime.Unknown{Raw: []byte(`{"resources": {"cpu": {"type": "MostAllocated", "weight": -1}}}`)}
	if _, err := NewNodeResourcesFitPlus(ctx, bad, nil); err == nil || err.Error() != `NodeResourcesFitPlus args: resources["cpu"].weight: must be > 0, got -1` {
		t.Errorf("got %v", err)
	}
	if _, err := NewScarceResourceAvoidance(ctx, &runtime.Unknown{Raw: []byte(`{"resources": "x"}`)}, nil); err == nil {
		t.Error("bad resources accepted")
	}
	if _, err := NewResourceStrategyFit(ctx, &runtime.Unknown{Raw: []byte(`{"plugins": [{"name": "nope"}]}`)}, nil); err == nil {
		t.Error("unknown plugin accepted")
	}
}

// NodeResourcesFitPlus in the real framework scores what Koordinator
// scores: a pod asking only for GPUs is scored on GPUs alone (2×100/8 =
// 25 on an empty 8-GPU node), and a pod with a sidecar before a larger init
// container is summed by Koordinator's rule (5 cores, where kube's rule
// gives 6).
func TestNodeResourcesFitPlusFollowsKoordinatorInFramework(t *testing.T) {
	nodes := []*v1.Node{
		node("gpu-96", resources("cpu", "96", "memory", "512Gi", gpu, "8")),
		node("gpu-10", resources("cpu", "10", "memory", "64Gi", gpu, "8")),
	}
	fw, infos := newFramework(t, nodes, nil, koordinatorPlugins[0])
	totals, _ := score(t, fw, infos, pod("gpu-only", "", resources(gpu, "2")))
	if totals["gpu-96"] != 25*2 {
		t.Errorf("GPU-only pod on gpu-96: %d, want 25 × plugin weight 2", totals["gpu-96"])
	}
	always := v1.ContainerRestartPolicyAlways
	p := pod("sidecar", "", resources("cpu", "2", gpu, "1"))
	p.Spec.InitContainers = []v1.Container{
		{Name: "sidecar", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: resources("cpu", "1")}},
		{Name: "init", Resources: v1.ResourceRequirements{Requests: resources("cpu", "5")}},
	}
	// gpu-10: gpu 1/8 → 12 ×2; cpu Least (10−5)/10 → 50 (kube's 6 cores
	// would give 40); memory is not requested: (24+50)/3 = 24.
	totals, _ = score(t, fw, infos, p)
	if totals["gpu-10"] != 24*2 {
		t.Errorf("sidecar pod on gpu-10: %d, want 24 × plugin weight 2", totals["gpu-10"])
	}
}

// In kube-scheduler's framework, ResourceStrategyFit keeps a pod that
// accepts only some GPU models (HAMi's nvidia.com/use-gputype, resfit's
// resfit.io/gpu-models) off nodes of other models, with the reason, and
// scores the nodes it accepts as it would without the annotation; a pod
// without GPUs is not held to them. MostAllocated over cpu, memory and
// GPU, each in whole percent as kube-scheduler computes them: 4 of 64
// cores 6, 200Mi of 256Gi 0, 1 of 8 GPUs 12, mean 6; a pod without GPUs
// skips the GPU: (6 + 0) / 2 = 3. The FGD plugin keeps the pods off the
// same nodes.
func TestGPUModelsInFramework(t *testing.T) {
	labelled := func(name, model string) *v1.Node {
		n := node(name, resources("cpu", "64", "memory", "256Gi", gpu, "8"))
		n.Labels = map[string]string{"nvidia.com/gpu.product": model}
		return n
	}
	nodes := []*v1.Node{labelled("a100", "NVIDIA-A100-SXM4-80GB"), labelled("t4", "Tesla-T4"), node("cpu", resources("cpu", "64", "memory", "256Gi"))}
	fw, infos := newFramework(t, nodes, nil, enabled{ResourceStrategyFitName, 1, mostAllocated})
	fgd, fgdInfos := newFramework(t, nodes, nil, enabled{FGDName, 1, `{"classes": [{"cpu": 4, "gpus": 1, "weight": 1}]}`})
	annotated := func(p *v1.Pod, key, value string) *v1.Pod {
		p.Annotations = map[string]string{key: value}
		return p
	}
	for _, c := range []struct {
		pod  *v1.Pod
		want map[string]string // node → score, or its rejection's start
	}{
		{annotated(pod("wants-a100", "", resources("cpu", "4", gpu, "1")), "nvidia.com/use-gputype", "a100"),
			map[string]string{"a100": "6", "t4": "rejected: nvidia.com/gpu model Tesla-T4 is not one the task accepts (NVIDIA-A100-SXM4-80GB)", "cpu": "rejected: nvidia.com/gpu model unknown; the task accepts only NVIDIA-A100-SXM4-80GB"}},
		{annotated(pod("wants-t4", "", resources("cpu", "4", gpu, "1")), "resfit.io/gpu-models", "Tesla-T4"),
			map[string]string{"a100": "rejected: nvidia.com/gpu model NVIDIA-A100-SXM4-80GB is not one the task accepts (Tesla-T4)", "t4": "6", "cpu": "rejected: nvidia.com/gpu model unknown; the task accepts only Tesla-T4"}},
		{pod("any-gpu", "", resources("cpu", "4", gpu, "1")), map[string]string{"a100": "6", "t4": "6", "cpu": "rejected: Insufficient nvidia.com/gpu devices: 0 of 0 have 1 free, 1 needed"}},
		{annotated(pod("cpu-only", "", resources("cpu", "4")), "nvidia.com/use-gputype", "a100"), map[string]string{"a100": "3", "t4": "3", "cpu": "3"}},
	} {
		got := outcome(t, fw, infos, c.pod)
		for name, want := range c.want {
			if got[name] != want {
				t.Errorf("%s on %s: %q, want %q", c.pod.Name, name, got[name], want)
			}
		}
		// The FGD plugin rejects the same nodes for the same reasons.
		got = outcome(t, fgd, fgdInfos, c.pod)
		for name, want := range c.want {
			if rejected := strings.HasPrefix(want, "rejected: "); rejected != strings.HasPrefix(got[name], "rejected: ") || rejected && got[name] != want {
				t.Errorf("FGD: %s on %s: %q, want %q", c.pod.Name, name, got[name], want)
			}
		}
	}
}

// A GPU-sharing pod is scored against the device view the cluster's pods
// describe. Nodes x and y each register two T4s with HAMi (20 virtual
// GPUs allocatable) and run two pods with half a GPU each; HAMi wrote
// that x's both sit on its first GPU ([0, 1000] free) and y's one on each
// ([500, 500]): a tightest-first guess would make the nodes alike. FGD
// over the classes {half a GPU, ½} and {one GPU, ½}, worked by hand:
//
//   - a pod with half a GPU: x goes from fragmentation 0 to 250 (its last
//     half GPU is a fragment for the whole-GPU class): Δ −250,
//     int(sigmoid(−0.25) × 100) = 43; y from 500 (no whole GPU free) to
//     250: Δ 250, 56. FGD sends it to y, which it mends.
//   - a pod with a whole GPU fits only x (Δ 0: 50); y's GPUs have half
//     free each, so DeviceShare rejects it.
//
// kubectl resfit explain gives the same numbers on the same objects.
func TestSharingPodScoredOnTheDeviceViewPodsDescribe(t *testing.T) {
	register := func(name string) *v1.Node {
		n := node(name, resources("cpu", "64", "memory", "256Gi", gpu, "20"))
		n.Annotations = map[string]string{"hami.io/node-nvidia-register": fmt.Sprintf(
			`[{"id":"GPU-%s0","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true},{"id":"GPU-%s1","index":1,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true}]`, name, name)}
		return n
	}
	half := func(name, on, device string) *v1.Pod {
		p := pod(name, on, resources("cpu", "1", gpu, "1", "nvidia.com/gpucores", "50"))
		p.Annotations = map[string]string{"hami.io/vgpu-devices-allocated": device + ",NVIDIA,7680,50:;"}
		return p
	}
	nodes := []*v1.Node{register("x"), register("y")}
	pods := []*v1.Pod{half("x-1", "x", "GPU-x0"), half("x-2", "x", "GPU-x0"), half("y-1", "y", "GPU-y0"), half("y-2", "y", "GPU-y1")}
	const classes = `[{"cpu": 1, "gpus": 1, "gpuShare": 500, "weight": 1}, {"cpu": 1, "gpus": 1, "weight": 1}]`
	fw, infos := newFramework(t, nodes, pods, enabled{FGDName, 1, `{"classes": ` + classes + `}`})
	cfg, err := resfitconfig.Load([]byte(`{"plugins": [{"name": "FGD", "args": {"classes": `+classes+`}}]}`), resfitconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cluster := &resfitctl.Snapshot{Source: "the test", Nodes: nodes, Pods: pods}
	for _, c := range []struct {
		pod  *v1.Pod
		want map[string]string
	}{
		{pod("half", "", resources("cpu", "1", gpu, "1", "nvidia.com/gpucores", "50")), map[string]string{"x": "43", "y": "56"}},
		{pod("whole", "", resources("cpu", "1", gpu, "1")), map[string]string{"x": "50", "y": "rejected: Insufficient nvidia.com/gpu devices: 0 of 2 have 1 free, 1 needed"}},
	} {
		got := outcome(t, fw, infos, c.pod)
		e, err := resfitctl.Explain(cluster, cfg, "fgd", c.pod)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range e.Nodes {
			want := c.want[n.Name]
			if got[n.Name] != want {
				t.Errorf("%s on %s: kube-scheduler %q, want %q", c.pod.Name, n.Name, got[n.Name], want)
			}
			if explained := fmt.Sprint(n.Total); n.Feasible != !strings.HasPrefix(want, "rejected") || n.Feasible && explained != want {
				t.Errorf("%s on %s: explain %s (feasible %t), want %q", c.pod.Name, n.Name, explained, n.Feasible, want)
			}
		}
	}
}

// ResourceStrategyFit shows each pod it reserves a node for to a
// configuration that learns FGD's classes.
func TestReserveTeachesALearningFGD(t *testing.T) {
	ctx := context.Background()
	nodes := []*v1.Node{node("gpu", resources("cpu", "64", "memory", "256Gi", gpu, "8"))}
	snapshot := cache.NewSnapshot(nil, nodes)
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewResourceStrategyFit(ctx, &runtime.Unknown{Raw: []byte(`{"plugins": [{"name": "FGD", "args": {"learn": {"refresh": 1}}}]}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*Plugin)
	for i := range 3 {
		state := framework.NewCycleState()
		pod := pod(fmt.Sprint("p", i), "", resources("cpu", "4", gpu, "1"))
		if _, s := p.PreFilter(ctx, state, pod, infos); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		if s := p.Reserve(ctx, state, pod, "gpu"); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
	}
	var learned int64 = -1
	for _, s := range p.scorer.pipe.Scorers() {
		if f, ok := s.Scorer.(*frag.Scorer); ok && f.Learned() != nil {
			learned = f.Learned().Observed()
		}
	}
	if learned != 3 {
		t.Errorf("FGD learned from %d pods, want the 3 reserved", learned)
	}
}

// A pod that asks for no devices, under filters that are DeviceShare
// alone, passes every node whatever the nodes hold: PreFilter returns Skip
// and the framework calls no Filter of the plugin. A pod that asks for a
// GPU is filtered: the node whose GPUs are all taken is rejected.
func TestPreFilterSkipsWhatFiltersNothing(t *testing.T) {
	nodes := []*v1.Node{
		node("gpu-full", resources("cpu", "64", "memory", "256Gi", gpu, "8")),
		node("cpu", resources("cpu", "64", "memory", "256Gi")),
	}
	pods := []*v1.Pod{pod("load", "gpu-full", resources("cpu", "8", "memory", "8Gi", gpu, "8"))}
	snapshot := cache.NewSnapshot(pods, nodes)
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var p *Plugin // the framework's, to ask its Filter what it would have said
	registry := resfitRegistry()
	registry[ResourceStrategyFitName] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl, err := NewResourceStrategyFit(ctx, args, h)
		p, _ = pl.(*Plugin)
		return pl, err
	}
	fw, err := frameworkruntime.NewFramework(ctx, registry, newProfile(enabled{ResourceStrategyFitName, 1, mostAllocated}),
		frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		t.Fatal(err)
	}
	full := infos[indexOf(infos, "gpu-full")]

	cpuPod := pod("cpu-pod", "", resources("cpu", "4", "memory", "4Gi"))
	state := framework.NewCycleState()
	fw.RunPreFilterPlugins(ctx, state, cpuPod)
	if !state.GetSkipFilterPlugins().Has(ResourceStrategyFitName) {
		t.Fatalf("the CPU pod's PreFilter did not return Skip (skipped: %v)", state.GetSkipFilterPlugins())
	}
	// What the skipped Filter would have said: every node passes, with
	// another pod's GPUs added to it too (nominated pods).
	nominated := full.Snapshot().(*framework.NodeInfo)
	nominated.AddPod(pod("nominated", "gpu-full", resources("cpu", "1", gpu, "1")))
	for _, info := range append(infos, nominated) {
		if s := p.Filter(ctx, state, cpuPod, info); !s.IsSuccess() {
			t.Errorf("the CPU pod on %s: %v", info.Node().Name, s)
		}
	}
	// Scores are still there for PreScore and Score.
	if s := fw.RunPreScorePlugins(ctx, state, cpuPod, infos); !s.IsSuccess() {
		t.Fatal(s.AsError())
	}
	if _, s := fw.RunScorePlugins(ctx, state, cpuPod, infos); !s.IsSuccess() {
		t.Fatal(s.AsError())
	}

	gpuPod := pod("gpu-pod", "", resources("cpu", "4", gpu, "1"))
	state = framework.NewCycleState()
	fw.RunPreFilterPlugins(ctx, state, gpuPod)
	if state.GetSkipFilterPlugins().Has(ResourceStrategyFitName) {
		t.Fatal("the GPU pod's PreFilter returned Skip")
	}
	if s := fw.RunFilterPlugins(ctx, state, gpuPod, full); s.IsSuccess() {
		t.Error("the GPU pod passed the node whose GPUs are all taken")
	}
}
