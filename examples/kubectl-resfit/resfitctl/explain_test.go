package resfitctl

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/frag"
)

// testdata reads the shipped example: the snapshot and a configuration.
func testdata(t *testing.T, configFile string) (*Snapshot, *config.Config) {
	t.Helper()
	return readTestdata(t, "cluster.json", configFile)
}

// readTestdata reads a shipped snapshot and configuration.
func readTestdata(t *testing.T, snapshot, configFile string) (*Snapshot, *config.Config) {
	t.Helper()
	c, err := ReadSnapshot(filepath.Join("..", "testdata", snapshot))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(filepath.Join("..", "testdata", configFile), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

// node finds a node's line in an explanation.
func node(t *testing.T, e *Explanation, name string) NodeExplanation {
	t.Helper()
	for _, n := range e.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s in the explanation", name)
	return NodeExplanation{}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func order(e *Explanation) []string {
	var names []string
	for _, n := range e.Nodes {
		names = append(names, n.Name)
	}
	return names
}

// rsf.yaml is Volcano's resource-strategy-fit: nvidia.com/gpu MostAllocated
// weight 2, cpu LeastAllocated weight 1, plugin weight 10; a node scores
// 100·10·(2·gpuUsedAfter/gpus + 1·cpuFreeAfter/cpus)/3 over the resources the
// pod asks for.
func TestExplainGPUJobUnderResourceStrategyFit(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	pod, err := c.FindPod("train/job-1", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf.yaml", pod) // 4 cores, 16Gi, 2 GPUs
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"gpu-a", "gpu-b", "cpu-a", "cpu-b"}; !cmp.Equal(order(e), want) {
		t.Errorf("order %v, want %v", order(e), want)
	}
	// gpu-a runs job-0 (8 cores, 6 GPUs): gpu (6+2)/8 = 1, cpu (32-12)/32 = 0.625.
	// gpu-b is empty: gpu 2/8 = 0.25, cpu 28/32 = 0.875.
	for name, want := range map[string]float64{
		"gpu-a": 1000 * (2*1 + 0.625) / 3,    // 875
		"gpu-b": 1000 * (2*0.25 + 0.875) / 3, // 458.33
	} {
		n := node(t, e, name)
		if !n.Feasible || !near(n.Total, want) || !near(n.Scores["resource-strategy-fit"], want) || n.Reason != "" {
			t.Errorf("%s: %+v, want feasible with total %v", name, n, want)
		}
	}
	for _, name := range []string{"cpu-a", "cpu-b"} {
		n := node(t, e, name)
		if want := "NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0"; n.Feasible || n.Reason != want || n.Total != 0 {
			t.Errorf("%s: %+v, want rejected: %s", name, n, want)
		}
	}
	if e.MaxScore != 1000 || e.Feasible != 2 || e.Rejected != 2 || e.BoundTo != "" {
		t.Errorf("max %v, %d feasible, %d rejected, bound to %q; want 1000, 2, 2, none", e.MaxScore, e.Feasible, e.Rejected, e.BoundTo)
	}
	if want := map[string]string{"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2"}; !cmp.Equal(e.Requests, want) {
		t.Errorf("requests %v, want %v", e.Requests, want)
	}
}

// With sra retention (weight 10 over 100) a pod that asks for no GPU gets
// 1000 more on a node without GPUs: the CPU pod goes to a CPU node although
// resource-strategy-fit alone spreads it onto the emptier GPU node. The
// finished pod on cpu-b uses nothing.
func TestExplainCPUPodUnderRetention(t *testing.T) {
	c, cfg := testdata(t, "rsf-sra.yaml")
	pod, err := c.FindPod("api-1", "web")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf-sra.yaml", pod) // 4 cores, 8Gi
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeExplanation{
		// cpu free after: cpu-b 12/16, cpu-a (8 used) 4/16, gpu-b 28/32, gpu-a (8 used) 20/32.
		{Name: "cpu-b", Feasible: true, Total: 1750, Scores: map[string]float64{"resource-strategy-fit": 750, "sra.retention": 1000}},
		{Name: "cpu-a", Feasible: true, Total: 1250, Scores: map[string]float64{"resource-strategy-fit": 250, "sra.retention": 1000}},
		{Name: "gpu-b", Feasible: true, Total: 875, Scores: map[string]float64{"resource-strategy-fit": 875, "sra.retention": 0}},
		{Name: "gpu-a", Feasible: true, Total: 625, Scores: map[string]float64{"resource-strategy-fit": 625, "sra.retention": 0}},
	}
	if diff := cmp.Diff(want, e.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if e.MaxScore != 2000 || !cmp.Equal(e.Plugins, []string{"resource-strategy-fit", "sra.retention"}) {
		t.Errorf("max %v plugins %v, want 2000 [resource-strategy-fit sra.retention]", e.MaxScore, e.Plugins)
	}
}

// A pod that runs is scored as before it was placed: job-0 (8 cores, 6
// GPUs) on an empty GPU node scores 1000·(2·6/8 + 24/32)/3 = 750 on both,
// and the tie goes to the first name.
func TestExplainBoundPodIsScoredAsBeforePlacement(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	pod, err := c.FindPod("train/job-0", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf.yaml", pod)
	if err != nil {
		t.Fatal(err)
	}
	if e.BoundTo != "gpu-a" || node(t, e, "gpu-a").Total != 750 || node(t, e, "gpu-b").Total != 750 || e.Nodes[0].Name != "gpu-a" {
		t.Errorf("bound to %q, nodes %+v; want gpu-a, gpu-a and gpu-b at 750", e.BoundTo, e.Nodes)
	}
	var b strings.Builder
	if err := e.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "It runs on gpu-a; it is scored as before it was placed there.") {
		t.Errorf("the table does not say where the pod runs:\n%s", b.String())
	}
}

// A node whose GPU-sharing registration cannot be read has no GPUs here,
// and explain says why among its warnings.
func TestExplainWarnsOfUnreadableRegistration(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	for i, n := range c.Nodes {
		if n.Name == "gpu-b" {
			broken := n.DeepCopy()
			broken.Annotations = map[string]string{"hami.io/node-nvidia-register": "GPU-0,10,15360,100,T4,0"}
			c.Nodes[i] = broken
		}
	}
	pods, err := ReadPods(filepath.Join("..", "testdata", "pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf.yaml", pods[0])
	if err != nil {
		t.Fatal(err)
	}
	want := "node gpu-b: annotation hami.io/node-nvidia-register: no device ends with ':'; it has no nvidia.com/gpu here"
	if !slices.Contains(e.Warnings, want) || node(t, e, "gpu-b").Feasible {
		t.Errorf("warnings %q, gpu-b %+v", e.Warnings, node(t, e, "gpu-b"))
	}
}

// A pod from a file (research/notebook: 2 cores, 8Gi, 1 GPU), not in the
// cluster: gpu-a 1000·(2·7/8 + 22/32)/3 = 812.5, gpu-b 1000·(2/8 + 30/32)/3.
func TestExplainPodFromFile(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	pods, err := ReadPods(filepath.Join("..", "testdata", "pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf.yaml", pods[0])
	if err != nil {
		t.Fatal(err)
	}
	if e.Pod != "research/notebook" || !near(node(t, e, "gpu-a").Total, 812.5) || !near(node(t, e, "gpu-b").Total, 1000*(2.0/8+30.0/32)/3) {
		t.Errorf("%s: %+v", e.Pod, e.Nodes)
	}
}

// The JSON form has the fields the issue names, best first, and reads back.
func TestExplainJSON(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	pod, _ := c.FindPod("train/job-1", "")
	e, err := Explain(c, cfg, "rsf.yaml", pod)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := e.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got struct {
		MaxScore float64 `json:"maxScore"`
		Nodes    []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.MaxScore != 1000 || len(got.Nodes) != 4 {
		t.Fatalf("maxScore %v, %d nodes; want 1000, 4:\n%s", got.MaxScore, len(got.Nodes), buf.String())
	}
	first, last := got.Nodes[0], got.Nodes[3]
	want := map[string]any{"name": "gpu-a", "feasible": true, "total": 875.0, "scores": map[string]any{"resource-strategy-fit": 875.0}, "reason": ""}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("nodes[0] (-want +got):\n%s", diff)
	}
	want = map[string]any{"name": "cpu-b", "feasible": false, "total": 0.0, "scores": map[string]any{}, "reason": "NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0"}
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("nodes[3] (-want +got):\n%s", diff)
	}
}

// The table gives the maximum, rounds to two decimals and lists rejected
// nodes with their reason; --top keeps the best n of each kind and says how
// many there are.
func TestExplainTable(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	pod, _ := c.FindPod("train/job-1", "")
	e, err := Explain(c, cfg, "rsf.yaml", pod)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := e.Top(1).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := `Pod train/job-1, requesting cpu 4, memory 16Gi, nvidia.com/gpu 2, under rsf.yaml: scores run from 0 to 1000.

RANK  NODE   TOTAL  resource-strategy-fit
1     gpu-a  875    875

Rejected:
  cpu-a: NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0

2 feasible and 2 rejected nodes in all; --top 0 shows every one.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := e.Top(0).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2     gpu-b  458.33  458.33") || strings.Contains(b.String(), "--top 0") {
		t.Errorf("the full table lacks gpu-b at 458.33 or still says --top:\n%s", b.String())
	}
}

func TestRounded(t *testing.T) {
	for v, want := range map[float64]string{875: "875", 458.3333333: "458.33", 812.5: "812.5", 0: "0", 0.004: "0", 99.999: "100"} {
		if got := Rounded(v); got != want {
			t.Errorf("Rounded(%v) = %q, want %q", v, got, want)
		}
	}
}

// ResfitFrag over the example's two GPU job shapes (4 cores × 2 GPUs and
// 8 × 4, equally often), worked by hand for train/job-1 (4 cores, 2 GPUs):
//
//	gpu-a: 2 GPUs idle, which the 4-GPU shape cannot use: fragment
//	       ½ × 2000 = 1000 before, 0 after job-1 takes both; FGD
//	       ⌊100 × sigmoid(1000/1000)⌋ = 73
//	gpu-b: 8 GPUs idle, both shapes fit before and after: fragment 0,
//	       FGD ⌊100 × sigmoid(0)⌋ = 50
//	packing tie-breaker (PackLeastUsed, cpu and GPU, with job-1 on the
//	       node): gpu-a min(⌊100 × 12/32⌋, ⌊100 × 8/8⌋) = 37,
//	       gpu-b min(⌊100 × 4/32⌋, ⌊100 × 2/8⌋) = 12
//	the lifetime term (declared ends at 10, learned at 1000): nothing
//	       says when job-1 ends, so it adds nothing under either: 0
//	       (gpu-a runs job-0, whose end nothing says either; gpu-b is
//	       empty)
//	the node size (weight 1): it counts once an end is known, and none
//	       is (job-0 has no start time to guess one from): 0
//	totals 101 × 73 + 37 = 7410 and 101 × 50 + 12 = 5062, of 101 × 100
//	       + 100 + 10 × 100 + 1000 × 100 + 100 = 111300
//
// The CPU nodes have no GPU for the job.
func TestExplainResfitFrag(t *testing.T) {
	c, cfg := testdata(t, "resfitfrag.yaml")
	pod, err := c.FindPod("train/job-1", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "resfitfrag.yaml", pod)
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxScore != 111300 || !cmp.Equal(e.Plugins, []string{"FGD", "PackLeastUsed", "Lifetime", "LearnedLifetime", "sra.size"}) {
		t.Errorf("max %v, plugins %v", e.MaxScore, e.Plugins)
	}
	for _, want := range []NodeExplanation{
		{Name: "gpu-a", Feasible: true, Total: 7410, Scores: map[string]float64{"FGD": 7373, "PackLeastUsed": 37, "Lifetime": 0, "LearnedLifetime": 0, "sra.size": 0},
			Empties: "not known: nothing says when its pod ends"},
		{Name: "gpu-b", Feasible: true, Total: 5062, Scores: map[string]float64{"FGD": 5050, "PackLeastUsed": 12, "Lifetime": 0, "LearnedLifetime": 0, "sra.size": 0}, Empties: "empty"},
	} {
		if got := node(t, e, want.Name); !cmp.Equal(got, want) {
			t.Errorf("%s: %+v, want %+v", want.Name, got, want)
		}
	}
	if got := order(e); !cmp.Equal(got, []string{"gpu-a", "gpu-b", "cpu-a", "cpu-b"}) {
		t.Errorf("order %v", got)
	}
	if r := node(t, e, "cpu-a").Reason; !strings.HasPrefix(r, "NodeResourcesFit: insufficient nvidia.com/gpu") {
		t.Errorf("cpu-a: %s", r)
	}
}

// A configuration that learns FGD's classes has seen the cluster's running
// pods (job-0 and api-0; done-0 has finished), and whatif shows it each
// pod it places.
func TestSceneTeachesALearningFGD(t *testing.T) {
	c, _ := testdata(t, "rsf.yaml")
	cfg, err := config.Load([]byte(`plugins: [{name: ResfitFrag, args: {learn: {}}}]`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := newScene(c, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	learned := func(pipe *scoring.Pipeline) int64 {
		for _, s := range pipe.Scorers() {
			if f, ok := s.Scorer.(*frag.Scorer); ok {
				return f.Learned().Observed()
			}
		}
		return -1
	}
	if n := learned(sc.Pipeline()); n != 2 {
		t.Errorf("learned from %d running pods, want 2", n)
	}
	r, err := WhatIf(c, []NamedConfig{{"learning", cfg}}, nil, WhatIfOptions{})
	if err != nil || r.Outcomes[0].Placed != 4 {
		t.Fatalf("whatif: %+v, %v", r, err)
	}
}

// The second scheduler's own ConfigMap (a KubeSchedulerConfiguration whose
// profile runs ResfitFrag as resfit's plugins, FGD learning its classes)
// explains as kube-scheduler scores it: a column per plugin, each 0..100
// times its weight, their sum the total, of 101×100 + 100 + 10×100 +
// 1000×100 + 100. Having placed no pod, FGD has learned no class and scores
// every node 50 (⌊100 × sigmoid(0)⌋), and the tie-breaker decides. A pod
// sharing a GPU in the cluster is seen otherwise by kube-scheduler's own
// NodeResourcesFit filter, and explain says so.
func TestExplainReadsTheSchedulersConfigMap(t *testing.T) {
	c, _ := testdata(t, "rsf.yaml")
	cfg, err := LoadConfig(filepath.Join("..", "..", "kubescheduler", "manifests", "configmap.yaml"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := ReadPods(filepath.Join("..", "testdata", "pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "configmap.yaml", pods[0])
	if err != nil {
		t.Fatal(err)
	}
	weights := map[string]float64{"FGD": 101, "ResourceStrategyFit": 1, "ResfitLifetime": config.DefaultLifetimeWeight,
		"ResfitLearnedLifetime": config.DefaultLearnedLifetimeWeight, "ResfitNodeSize": config.DefaultNodeSizeWeight}
	if !slices.Equal(e.Plugins, []string{"FGD", "ResourceStrategyFit", "ResfitLifetime", "ResfitLearnedLifetime", "ResfitNodeSize"}) || e.MaxScore != 111300 || e.Feasible == 0 {
		t.Fatalf("plugins %v, max %v, %d feasible", e.Plugins, e.MaxScore, e.Feasible)
	}
	for _, n := range e.Nodes {
		if !n.Feasible {
			continue
		}
		sum := 0.0
		for name, v := range n.Scores {
			if w := weights[name]; v < 0 || v > 100*w || v != math.Round(v/w)*w {
				t.Errorf("%s: %s scores %v, not a 0..100 score times %v", n.Name, name, v, w)
			}
			sum += v
		}
		if n.Total != sum || n.Scores["FGD"] != 5050 {
			t.Errorf("%s: total %v of %v, FGD %v; want their sum, FGD 101 × 50", n.Name, n.Total, n.Scores, n.Scores["FGD"])
		}
	}
	for _, w := range e.Warnings {
		if strings.Contains(w, "share GPUs") {
			t.Errorf("a warning of sharing pods where none shares: %s", w)
		}
	}
	sharing := pods[0].DeepCopy()
	sharing.Name, sharing.Spec.NodeName = "sharing", "gpu-a"
	sharing.Spec.Containers[0].Resources.Requests[resource.HAMiCoresResource] = kres.MustParse("30")
	c.Pods = append(c.Pods, sharing)
	if e, err = Explain(c, cfg, "configmap.yaml", pods[0]); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(e.Warnings, sharingUnderKubeFit) {
		t.Errorf("no warning of sharing pods: %q", e.Warnings)
	}
}

// A pod that has finished is said to have run, not to run: it uses nothing
// on its node now.
func TestExplainFinishedPod(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	p, err := c.FindPod("batch/done-0", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := e.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if want := "It ran on cpu-b and has finished (Succeeded): it uses nothing there now;"; e.Finished != "Succeeded" || !strings.Contains(b.String(), want) || strings.Contains(b.String(), "It runs on") {
		t.Errorf("finished %q:\n%s\nwant %q", e.Finished, b.String(), want)
	}
}

// A pod whose Volcano scoring annotations are there but unusable scores 0
// on every node under resource-strategy-fit, as Volcano does: explain and
// whatif say so, naming the annotation; under a configuration that does
// not read them, nothing is said.
func TestUnusableVolcanoAnnotationsAreSaid(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	pod, err := c.FindPod("train/job-1", "")
	if err != nil {
		t.Fatal(err)
	}
	pod = pod.DeepCopy()
	pod.Annotations = map[string]string{"volcano.sh/resource-strategy-scoring-type": "MostAllocated", "volcano.sh/resource-strategy-weight": `{"nvidia.com/gpu": -2}`}
	want := `pod train/job-1: annotation volcano.sh/resource-strategy-weight: "nvidia.com/gpu": weight must be in [0, 1000000], got -2: resource-strategy-fit scores it 0 on every node, as Volcano does`
	e, err := Explain(c, cfg, "rsf.yaml", pod)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(e.Warnings, want) || node(t, e, "gpu-a").Total != 0 || !node(t, e, "gpu-a").Feasible {
		t.Errorf("warnings %q, gpu-a %+v; want %q and a feasible 0", e.Warnings, node(t, e, "gpu-a"), want)
	}
	o, err := WhatIf(c, []NamedConfig{{Name: "rsf.yaml", Config: cfg}}, []*v1.Pod{pod}, WhatIfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(o.Outcomes[0].Warnings, want) {
		t.Errorf("whatif warnings %q, want %q", o.Outcomes[0].Warnings, want)
	}
	_, frag := testdata(t, "resfitfrag.yaml")
	if e, err := Explain(c, frag, "resfitfrag.yaml", pod); err != nil || slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.Contains(w, "annotation") }) {
		t.Errorf("a configuration that does not read the annotations: %q, %v", e.Warnings, err)
	}
}
