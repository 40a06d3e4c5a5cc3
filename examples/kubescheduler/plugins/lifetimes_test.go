package plugins

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/scoring/lifetime"
)

// running is a pod that started on a node at started, declaring that it
// runs for runsFor ("" for nothing declared).
func running(name, nodeName string, started time.Time, runsFor string, req v1.ResourceList) *v1.Pod {
	p := pod(name, nodeName, req)
	start := metav1.NewTime(started)
	p.Status.StartTime, p.Status.Phase = &start, v1.PodRunning
	if runsFor != "" {
		p.Annotations = map[string]string{planning.RunsForAnnotation: runsFor}
	}
	return p
}

// withFullNodes adds n 8-GPU nodes whose GPUs a pod holds, where no
// 1-GPU pod fits: with them, at most a fifth of the 8-GPU nodes are
// whole, and the lifetime term scores (lifetime.WholeShare).
func withFullNodes(nodes []*v1.Node, pods []*v1.Pod, n int, now time.Time) ([]*v1.Node, []*v1.Pod) {
	for i := range n {
		name := fmt.Sprint("full-", i)
		nodes = append(nodes, node(name, resources("cpu", "64", "memory", "256Gi", gpu, "8")))
		pods = append(pods, running(name+"-pod", name, now, "10h", resources("cpu", "8", "memory", "32Gi", gpu, "8")))
	}
	return nodes, pods
}

// TestLifetimeInFramework: ResfitLifetime in the real framework scores a
// node by how likely the pod is to end before the node empties anyway
// (lifetime.Score, rounded): its pods' declared ends read from the
// NodeInfos, the pod's own from its annotation; an empty node 0. A pod
// whose runs-for does not read is followed as one that declares nothing
// (nothing learned, so as long again as it has run), not an error. Beside FGD (101) and
// ResourceStrategyFit's PackLeastUsed (1), at 300, it turns the choice
// ResfitFrag's tie-break would make (the emptying node) to the node that
// stays busy.
func TestLifetimeInFramework(t *testing.T) {
	now := time.Now()
	gpus := resources("cpu", "64", "memory", "256Gi", gpu, "8")
	one := func() v1.ResourceList { return resources("cpu", "4", "memory", "16Gi", gpu, "1") }
	nodes := []*v1.Node{node("soon", gpus.DeepCopy()), node("late", gpus.DeepCopy()), node("empty", gpus.DeepCopy())}
	pods := []*v1.Pod{
		running("short", "soon", now, "1h", one()),
		running("short-2", "soon", now, "1h", one()),
		running("long", "late", now, "10h", one()),
	}
	nodes, pods = withFullNodes(nodes, pods, 2, now)
	pending := running("pending", "", now, "2h", one())
	pending.Status = v1.PodStatus{}

	fw, infos := newFramework(t, nodes, pods, enabled{LifetimeName, 1, `{}`})
	totals, _ := score(t, fw, infos, pending)
	// rest 2h: soon 100·1/(1+2) = 33.3, late 100·10/12 = 83.3, empty 0;
	// the full nodes, where the pod does not fit, 0.
	want := map[string]int64{"soon": 33, "late": 83, "empty": 0, "full-0": 0, "full-1": 0}
	if fmt.Sprint(totals) != fmt.Sprint(want) {
		t.Errorf("ResfitLifetime: %v, want %v", totals, want)
	}
	// NodeInfos the cycle did not read (their nodes copied, as a node
	// changed since): each worked out alone, on the same model and time.
	state := framework.NewCycleState()
	if s := fw.RunPreScorePlugins(context.Background(), state, pending, infos); !s.IsSuccess() {
		t.Fatal(s.AsError())
	}
	copied := make([]fwk.NodeInfo, len(infos))
	for i, info := range infos {
		c := info.Snapshot()
		c.SetNode(info.Node().DeepCopy())
		copied[i] = c
	}
	before := singleEvaluations.Load()
	scores, s := fw.RunScorePlugins(context.Background(), state, pending, copied)
	if !s.IsSuccess() {
		t.Fatal(s.AsError())
	}
	alone := map[string]int64{}
	for _, n := range scores {
		alone[n.Name] = n.TotalScore
	}
	if fmt.Sprint(alone) != fmt.Sprint(want) || singleEvaluations.Load()-before != int64(len(infos)) {
		t.Errorf("worked out alone (%d of %d): %v, want %v", singleEvaluations.Load()-before, len(infos), alone, want)
	}

	frag := []enabled{
		{FGDName, 101, `{"classes": ` + fragClassesJSON + `}`},
		{ResourceStrategyFitName, 1, `{"plugins": [{"name": "PackLeastUsed"}]}`},
	}
	fw, infos = newFramework(t, nodes, pods, frag...)
	if _, best := score(t, fw, infos, pending); best != "soon" {
		t.Errorf("ResfitFrag without the term places the pod on %s, want soon (the fuller node)", best)
	}
	fw, infos = newFramework(t, nodes, pods, append(frag, enabled{LifetimeName, 300, `{}`})...)
	if _, best := score(t, fw, infos, pending); best != "late" {
		t.Errorf("ResfitFrag with the term places the pod on %s, want late", best)
	}

	// Declared and learned ends weighed apart: ResfitLifetime follows
	// the declared ones (ends: declared), ResfitLearnedLifetime the
	// learned ones, and adds nothing for this pod, which declares its
	// end: its PreScore returns Skip, and the framework calls no Score of
	// it.
	fw, infos = newFramework(t, nodes, pods, enabled{LifetimeName, 1, `{"ends": "declared"}`}, enabled{LearnedLifetimeName, 2, `{}`})
	if totals, _ := score(t, fw, infos, pending); fmt.Sprint(totals) != fmt.Sprint(want) {
		t.Errorf("ResfitLifetime (declared) ×1 and ResfitLearnedLifetime ×2: %v, want the declared scores %v", totals, want)
	}
	if got := skipped(t, fw, infos, pending); !slices.Equal(got, []string{LearnedLifetimeName}) {
		t.Errorf("skipped at PreScore: %v, want [%s]", got, LearnedLifetimeName)
	}

	bad := running("bad", "empty", now.Add(-10*time.Hour), "soon", one())
	fw, infos = newFramework(t, nodes, append(pods, bad), enabled{LifetimeName, 1, `{}`})
	if totals, _ := score(t, fw, infos, pending); totals["empty"] != 83 {
		t.Errorf("a node whose pod's runs-for does not read, started 10 h ago: %d, want 83 (10 h more against 2 h)", totals["empty"])
	}
}

// TestLifetimeLearnsFromPodsThatEnd: the profile learns from the pods
// that leave the scheduler's informer (deleted, or finished: the
// scheduler's informer does not list finished pods), by their controller
// and shape; a pod that never started teaches nothing. Once enough of a
// shape ended, a pod of that shape declaring nothing is expected to run
// as long, and scored so.
func TestLifetimeLearnsFromPodsThatEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Now()
	gpus := resources("cpu", "64", "memory", "256Gi", gpu, "8")
	one := func() v1.ResourceList { return resources("cpu", "2", "memory", "8Gi", gpu, "1") }
	nodes := []*v1.Node{node("busy", gpus.DeepCopy()), node("empty", gpus.DeepCopy())}
	nodes, pods := withFullNodes(nodes, []*v1.Pod{running("long", "busy", now, "10h", one())}, 3, now)
	client := fake.NewClientset()
	const ended = lifetime.DefaultMinSamples
	for i := range ended + 1 {
		p := running(fmt.Sprintf("done-%d", i), "busy", now.Add(-30*time.Minute), "", one())
		if i == ended {
			p.Status.StartTime = nil // never started
		}
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	fw := newFrameworkWith(t, ctx, cache.NewSnapshot(pods, nodes), []frameworkruntime.Option{frameworkruntime.WithInformerFactory(factory)}, enabled{LifetimeName, 1, `{}`})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	pr, ok := profiles.m[profileKey{fw, true}]
	if !ok || pr.nodes.ends == nil {
		t.Fatal("the profile follows no lifetimes")
	}
	pending := pod("pending", "", one())
	infos, _ := fw.SnapshotSharedLister().NodeInfos().List()
	if totals, _ := score(t, fw, infos, pending); totals["busy"] != 0 || totals["empty"] != 0 {
		t.Errorf("nothing learned, nothing declared: %v, want 0 everywhere", totals)
	}
	if got := skipped(t, fw, infos, pending); !slices.Equal(got, []string{LifetimeName}) {
		t.Errorf("nothing learned, nothing declared: skipped at PreScore %v, want [%s]", got, LifetimeName)
	}
	names := make([]string, ended+1)
	for i := range names {
		names[i] = fmt.Sprintf("done-%d", i)
	}
	listed := factory.Core().V1().Pods().Lister()
	if err := kubetest.DeletePods(ctx, client, "default", names, func() (int, error) {
		pods, err := listed.List(labels.Everything())
		return len(pods), err
	}); err != nil {
		t.Fatal(err)
	}
	key := planning.LifetimeKeys(pending)[0]
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return pr.nodes.ends.model.Seen(key) >= ended, nil
	}); err != nil {
		t.Fatalf("learned %d lifetimes of %q, want %d", pr.nodes.ends.model.Seen(key), key, ended)
	}
	if rest, src := pr.nodes.ends.model.Remaining([]string{key}, 0); src != lifetime.Learned || rest < 1800 || rest > 1810 {
		t.Errorf("learned: %v s (%v), want about 1800 (the pods ran half an hour); the pod that never started is not one", rest, src)
	}
	// rest 30 min, busy empties in 10 h: 100·600/630 = 95.2.
	if totals, _ := score(t, fw, infos, pending); totals["busy"] != 95 || totals["empty"] != 0 {
		t.Errorf("learned half an hour: %v, want busy 95, empty 0", totals)
	}
	if got := skipped(t, fw, infos, pending); len(got) != 0 {
		t.Errorf("learned half an hour: skipped at PreScore %v, want none", got)
	}
}

// The profile's one lifetime model learns with the options its plugins'
// configurations ask for, merged: a plugin that asks for none leaves them
// to the others, whichever kube-scheduler builds first; two that ask for
// options that do not go together fail the profile, naming both.
func TestProfileModelOptions(t *testing.T) {
	nodes := []*v1.Node{node("gpu-a", resources("cpu", "64", "memory", "256Gi", gpu, "8"))}
	fw, _ := newFramework(t, nodes, nil, enabled{LifetimeName, 1, `{"ends": "declared", "model": {"minSamples": 4}}`}, enabled{LearnedLifetimeName, 1, `{}`})
	pr, ok := profiles.m[profileKey{fw, true}]
	if !ok || pr.nodes.ends == nil {
		t.Fatal("the profile follows no lifetimes")
	}
	if got, want := pr.nodes.ends.model.Options(), (lifetime.ModelOptions{MinSamples: 4}).Resolved(); got != want {
		t.Errorf("the profile's model learns with %+v, want %+v", got, want)
	}
	_, err := frameworkruntime.NewFramework(context.Background(), resfitRegistry(),
		newProfile(enabled{LifetimeName, 1, `{"ends": "declared", "model": {"minSamples": 4}}`}, enabled{LearnedLifetimeName, 1, `{"model": {"minSamples": 8}}`}),
		frameworkruntime.WithSnapshotSharedLister(cache.NewSnapshot(nil, nodes)))
	if err == nil || !strings.Contains(err.Error(), "minSamples: 4 and 8") && !strings.Contains(err.Error(), "minSamples: 8 and 4") {
		t.Errorf("two plugins asking for 4 and 8 lifetimes: %v, want an error naming both", err)
	}

	// Built one after the other: the model is made again for the first
	// plugin that asks for options, and a third that asks otherwise is
	// refused, naming the plugin it clashes with.
	pr = &profile{}
	for _, c := range []struct {
		plugin string
		opts   lifetime.ModelOptions
		want   string
	}{
		{"A", lifetime.ModelOptions{}, ""},
		{"B", lifetime.ModelOptions{MinSamples: 4}, ""},
		{"C", lifetime.ModelOptions{Quantile: 0.9}, ""},
		{"D", lifetime.ModelOptions{MinSamples: 8}, "the profile's lifetime model: the options asked do not go together with B's: minSamples: 4 and 8: one model learns with one minSamples"},
		{"E", lifetime.ModelOptions{Window: 2}, "the profile's lifetime model: the options asked do not go together with B's: minSamples: must be in [1, window = 2], got 4"},
	} {
		err := pr.followLifetimes(nil, c.plugin, c.opts)
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("%s asks for %+v: %v, want %q", c.plugin, c.opts, err, c.want)
		}
	}
	if got, want := pr.nodes.ends.model.Options(), (lifetime.ModelOptions{MinSamples: 4, Quantile: 0.9}).Resolved(); got != want {
		t.Errorf("the profile's model learns with %+v, want %+v", got, want)
	}
}
