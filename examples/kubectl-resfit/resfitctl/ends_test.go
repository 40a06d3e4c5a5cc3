package resfitctl

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/lifetime"
)

// TestExplainSaysWhenNodesEmpty: under ResfitFrag, explain says when the
// pod is expected to end and, for each node, when it empties and from
// what, and scores the lifetime term by it (the declared ends' weight,
// 10, rounded here; the learned ends' term adds nothing for a pod that
// declares its end):
//
//	the pod declares 2 h (resfit.io/runs-for)
//	gpu-a: short started 30 min ago declaring 1 h; etl-0, 10 min into a
//	       Job whose 256 finished pods (as many as the model needs) each
//	       ran 40 min, is learned to have
//	       30 min left (the median of what ran longer than 10 min, less
//	       10): empties in 30 min: 100 × 0.5/(0.5 + 2) = 20, × 10 = 200
//	gpu-b: old, 5 h old, nothing declared or learned: as long again,
//	       5 h: 100 × 5/7 = 71.43, × 10 = 714.29
//	gpu-c: empty: 0
//
// (gpu-d and gpu-e each run a pod that declares 10 h: one 8-GPU node in
// five is whole, so whole nodes are scarce and the term scores.)
func TestExplainSaysWhenNodesEmpty(t *testing.T) {
	now := time.Now()
	start := func(p *v1.Pod, ago time.Duration) *v1.Pod { return kubetest.Running(p, now.Add(-ago)) }
	gpu := []string{"cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8", "pods", "110"}
	c := &Snapshot{Source: "test", Nodes: []*v1.Node{kubetest.Node("gpu-a", gpu...), kubetest.Node("gpu-b", gpu...), kubetest.Node("gpu-c", gpu...),
		kubetest.Node("gpu-d", gpu...), kubetest.Node("gpu-e", gpu...)}}
	one := []string{"cpu", "2", "memory", "8Gi", "nvidia.com/gpu", "1"}
	for _, n := range []string{"gpu-d", "gpu-e"} {
		keeper := start(kubetest.Pod("keeper-"+n, n, one...), time.Hour)
		keeper.Annotations = map[string]string{planning.RunsForAnnotation: "10h"}
		c.Pods = append(c.Pods, keeper)
	}
	short := start(kubetest.Pod("short", "gpu-a", one...), 30*time.Minute)
	short.Annotations = map[string]string{planning.RunsForAnnotation: "1h"}
	c.Pods = append(c.Pods, short, kubetest.OfJob(start(kubetest.Pod("etl-0", "gpu-a", one...), 10*time.Minute), "etl"),
		start(kubetest.Pod("old", "gpu-b", one...), 5*time.Hour))
	for i := range lifetime.DefaultMinSamples {
		c.Pods = append(c.Pods, kubetest.OfJob(kubetest.Succeeded(kubetest.Pod(fmt.Sprintf("etl-done-%d", i), "gpu-c", one...), now.Add(-3*time.Hour), 40*time.Minute), "etl"))
	}
	pending := kubetest.Pod("pending", "", one...)
	pending.Annotations = map[string]string{planning.RunsForAnnotation: "2h"}
	cfg, err := config.Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}]}}]`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "test", pending)
	if err != nil {
		t.Fatal(err)
	}
	if e.PodEnd != "it is expected to end in 2h00m, as it declares" {
		t.Errorf("pod end %q", e.PodEnd)
	}
	for _, want := range []struct {
		node, empties string
		score         float64
	}{
		{"gpu-a", "in 30m: declared by 1, learned for 1", 200},
		{"gpu-b", "in 5h00m: as long again as run for 1", 714.29},
		{"gpu-c", "empty", 0},
	} {
		n := node(t, e, want.node)
		if n.Empties != want.empties || math.Abs(n.Scores["Lifetime"]-want.score) > 0.01 || n.Scores["LearnedLifetime"] != 0 {
			t.Errorf("%s: empties %q, lifetime term %v, learned ends' %v; want %q, %v, 0", want.node, n.Empties, n.Scores["Lifetime"], n.Scores["LearnedLifetime"], want.empties, want.score)
		}
	}
	var b strings.Builder
	if err := e.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"When pods end: it is expected to end in 2h00m, as it declares.", "EMPTIES", "in 30m: declared by 1, learned for 1"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("the table lacks %q:\n%s", line, b.String())
		}
	}
}

// TestExplainSaysWhenTheTermWaits: with two of three 8-GPU nodes wholly
// free, more than a fifth, the lifetime term waits (lifetime.WholeShare):
// explain says so beside the pod's end, and the term scores every node 0,
// the one whose pod ends in an hour too. A pod that declares nothing is
// not told the term waits: for it, the term adds nothing anyway. No pod
// has ended and 4% of the GPUs are in use, so the node size waits too.
func TestExplainSaysWhenTheTermWaits(t *testing.T) {
	now := time.Now()
	gpu := []string{"cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8", "pods", "110"}
	c := &Snapshot{Source: "test", Now: now, Nodes: []*v1.Node{kubetest.Node("gpu-a", gpu...), kubetest.Node("gpu-b", gpu...), kubetest.Node("gpu-c", gpu...)}}
	one := []string{"cpu", "2", "memory", "8Gi", "nvidia.com/gpu", "1"}
	busy := kubetest.Running(kubetest.Pod("busy", "gpu-a", one...), now.Add(-time.Hour))
	busy.Annotations = map[string]string{planning.RunsForAnnotation: "2h"}
	c.Pods = append(c.Pods, busy)
	cfg, err := config.Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}]}}]`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pending := kubetest.Pod("pending", "", one...)
	pending.Annotations = map[string]string{planning.RunsForAnnotation: "30m"}
	e, err := Explain(c, cfg, "test", pending)
	if err != nil {
		t.Fatal(err)
	}
	want := "it is expected to end in 30m, as it declares; the lifetime term waits while whole nodes abound (2 of the 3 nodes with 8 devices have all of them free, more than a fifth) and scores every node 0; " +
		"no pod has been seen to end and 4% of the GPUs are in use: the sra.size column scores 0 until one ends or 50% are in use"
	if e.PodEnd != want {
		t.Errorf("pod end %q\nwant       %q", e.PodEnd, want)
	}
	for _, n := range e.Nodes {
		if s, ok := n.Scores["Lifetime"]; !ok || s != 0 {
			t.Errorf("%s: lifetime term %v (scored: %v), want 0", n.Name, s, ok)
		}
	}
	if e, err = Explain(c, cfg, "test", kubetest.Pod("pending", "", one...)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.PodEnd, "waits") {
		t.Errorf("a pod whose end is not known is told the term waits: %q", e.PodEnd)
	}
}

// TestExplainSaysTheTieBreakerBalances: on three 8-GPU nodes where one pod
// runs that has not started yet (a scheduler assumed it there) and
// declares nothing, nothing is known of when any pod ends and 1 of the 24
// GPUs is in use: explain says the packing tie-breaker balances for now,
// and its column is NodeResourcesBalancedAllocation's score. Once the pod
// has run for a while (its end is guessed from its age), it packs, and
// explain says nothing of it.
func TestExplainSaysTheTieBreakerBalances(t *testing.T) {
	now := time.Now()
	cfg, err := config.Load([]byte(`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}]}}]`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, started := range []bool{false, true} {
		c, pending, e := explainOneBusy(t, cfg, now, started, true)
		note := "nothing is known of when any pod ends and 4% of the GPUs are in use, under 30%: the PackLeastUsed column scores as NodeResourcesBalancedAllocation until one or the other"
		if got := strings.Contains(e.PodEnd, note); got == started {
			t.Errorf("pod %s: explain says %q", map[bool]string{false: "not started", true: "started"}[started], e.PodEnd)
		}
		// The column is the balanced or the packing tie-breaker's, as
		// ResfitFrag configured with one or the other scores it.
		ref, err := config.Load([]byte(map[bool]string{
			false: `plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], tieBreaker: {type: NodeResourcesBalancedAllocation}}}]`,
			true:  `plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}], tieBreaker: {untilEndsKnown: PackLeastUsed}}}]`}[started]), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Explain(c, ref, "reference", pending)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"gpu-a", "gpu-b"} {
			got, want := node(t, e, n).Scores["PackLeastUsed"], node(t, r, n).Scores[map[bool]string{false: "NodeResourcesBalancedAllocation", true: "PackLeastUsed"}[started]]
			if got != want || (n == "gpu-a" && !started && got == 12) {
				t.Errorf("started %v: %s's tie-breaker scores %v, the reference %v", started, n, got, want)
			}
		}
	}
}

// In a kube-scheduler profile the parts that wait for ends sit inside
// resfit's plugins: explain names each by the plugin's column, the plugin
// alone where it runs the part alone. Once the pod has run for a while
// the tie-breaker packs, and the node size waits for a pod to end (or
// half of the GPUs in use); once one has, explain says nothing of either.
func TestExplainNamesTheWaitingPartsOfKubePlugins(t *testing.T) {
	now := time.Now()
	cfg, err := config.Load([]byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter:
      enabled: [{name: ResourceStrategyFit}]
    score:
      disabled: [{name: "*"}]
      enabled: [{name: ResourceStrategyFit}, {name: ResfitNodeSize}]
  pluginConfig:
  - name: ResourceStrategyFit
    args: {plugins: [{name: PackLeastUsed, args: {untilEndsKnown: NodeResourcesBalancedAllocation}}, {name: NodeResourcesFit}]}`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		started, ended bool
		want           string
	}{
		{false, false, nothingSaid + "; nothing is known of when any pod ends and 4% of the GPUs are in use, under 30%: the PackLeastUsed part of the ResourceStrategyFit column scores as NodeResourcesBalancedAllocation until one or the other; " +
			"and the ResfitNodeSize column scores 0 until an end is known"},
		{true, false, nothingSaid + "; no pod has been seen to end and 4% of the GPUs are in use: the ResfitNodeSize column scores 0 until one ends or 50% are in use"},
		{true, true, strings.Replace(nothingSaid, "how long 0 of", "how long 1 of", 1)},
	} {
		_, _, e := explainOneBusy(t, cfg, now, c.started, c.ended)
		if e.PodEnd != c.want {
			t.Errorf("started %v, a pod ended %v: explain says %q\nwant %q", c.started, c.ended, e.PodEnd, c.want)
		}
	}
}

// nothingSaid is what explain says of a pod that says nothing of its end,
// where the model has learned too few of pods like it to predict: none.
const nothingSaid = "nothing says when it ends (no deadline, no resfit.io/runs-for, and the lifetime model has learned how long 0 of the pods like it ran, of the 256 it predicts from, model: {minSamples}): the lifetime term adds nothing"

// explainOneBusy explains, under cfg, a pending pod of 1 GPU on three
// nodes of 8 GPUs, one pod of its shape on gpu-a that has run an hour
// (started) or not started yet (a scheduler assumed it there), declaring
// nothing, and (ended) one on gpu-b that ran an hour and finished; it
// returns the cluster and the pod too.
func explainOneBusy(t *testing.T, cfg *config.Config, now time.Time, started, ended bool) (*Snapshot, *v1.Pod, *Explanation) {
	t.Helper()
	gpu := []string{"cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8", "pods", "110"}
	one := []string{"cpu", "2", "memory", "8Gi", "nvidia.com/gpu", "1"}
	c := &Snapshot{Source: "test", Now: now, Nodes: []*v1.Node{kubetest.Node("gpu-a", gpu...), kubetest.Node("gpu-b", gpu...), kubetest.Node("gpu-c", gpu...)}}
	busy := kubetest.Pod("busy", "gpu-a", one...)
	if started {
		busy = kubetest.Running(busy, now.Add(-time.Hour))
	}
	c.Pods = append(c.Pods, busy)
	if ended {
		c.Pods = append(c.Pods, kubetest.Succeeded(kubetest.Pod("done", "gpu-b", one...), now.Add(-2*time.Hour), time.Hour))
	}
	pending := kubetest.Pod("pending", "", one...)
	e, err := Explain(c, cfg, "test", pending)
	if err != nil {
		t.Fatal(err)
	}
	return c, pending, e
}

func TestDurationText(t *testing.T) {
	for s, want := range map[float64]string{-5: "under a minute", 29: "under a minute", 31: "1m", 45 * 60: "45m", 3*3600 + 600: "3h10m", 47 * 3600: "47h00m", 4*86400 + 6*3600 + 59: "4d6h"} {
		if got := durationText(s); got != want {
			t.Errorf("durationText(%v) = %q, want %q", s, got, want)
		}
	}
}

// A configuration that has the lifetime model predict from fewer ended
// pods (lifetime: {model: {minSamples: 1}}) makes the one pod like it that
// ran an hour and ended enough: explain expects the pod to run an hour,
// where by default it says the model has 1 of the 256 it needs.
func TestExplainReadsTheConfiguredModel(t *testing.T) {
	now := time.Now()
	for doc, want := range map[string]string{
		`plugins: [{name: ResfitLifetime, args: {model: {minSamples: 1}}}]`: "it is expected to end in 1h00m, as pods like it ran; the lifetime term waits while whole nodes abound (2 of the 3 nodes with 8 devices have all of them free, more than a fifth) and scores every node 0",
		`plugins: [{name: ResfitLifetime}]`:                                 strings.Replace(nothingSaid, "how long 0 of", "how long 1 of", 1),
	} {
		cfg, err := config.Load([]byte(doc), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, e := explainOneBusy(t, cfg, now, true, true); e.PodEnd != want {
			t.Errorf("%s: explain says %q\nwant %q", doc, e.PodEnd, want)
		}
	}
}
