package resfitctl

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
)

// plainPlan is a report's moves and outcome in one line.
func plainPlan(r *DefragReport) string {
	var moves []string
	for _, m := range r.Moves {
		moves = append(moves, fmt.Sprintf("%s %s→%s frees %v GPUs %v takes %v", kubebridge.PodName(m.Pod), m.From, m.To, m.Frees, m.FreesGPUs, m.TakesGPUs))
	}
	var then []string
	for _, p := range r.Then {
		then = append(then, kubebridge.PodName(p.Pod)+" on "+p.Node)
	}
	return fmt.Sprintf("found %v minimal %v bound %d; %s; then %v; %s", r.Found, r.Minimal, r.Bound, strings.Join(moves, "; "), then, r.Reason)
}

// The defrag example worked by hand (testdata/defrag-cluster.json,
// examplecluster.DefragCluster). train/job-2 asks for 4 GPUs, 8 cores and
// 16Gi; gpu-a has 2 GPUs free (job-0 holds GPUs 0-5), gpu-b 3 (infer-1
// holds GPU 0, notebook-0 GPU 1, job-3 GPUs 2-4; the view places a node's
// pods in name order, each on the tightest GPUs, the lowest first). No
// move at all lets it in: at least one is needed. gpu-a would need job-0
// (6 GPUs) gone, which fits nowhere; gpu-b needs one GPU more, the fewest
// of any node, so it is tried first, its pods in order: infer-1, whose
// budget (infer/infer) allows no disruption, then notebook-0, which frees
// GPU 1. The scheduler would put notebook-0 (1 GPU, 2 cores) on gpu-a, the
// only other node with a GPU, on GPU 6 (GPUs 6 and 7 are whole, the lower
// first). job-2 then fits gpu-b (GPUs 1, 5, 6, 7): one move, the fewest.
// Without the budget infer-1 moves instead, freeing GPU 0.
func TestDefragWorked(t *testing.T) {
	c, cfg := readTestdata(t, "defrag-cluster.json", "rsf.yaml")
	job2, err := c.FindPod("train/job-2", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{For: []*v1.Pod{job2}})
	if err != nil {
		t.Fatal(err)
	}
	want := "found true minimal true bound 1; notebook/notebook-0 gpu-b→gpu-a frees map[cpu:2 memory:8Gi nvidia.com/gpu:1] GPUs [1] takes [6]; then [train/job-2 on gpu-b]; "
	if got := plainPlan(r); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := fmt.Sprint(r.Unmovable, r.Budgets); got != "[{DaemonSetPod a DaemonSet's pod 2} {SystemCritical system-critical or in kube-system 1}] [{infer/infer 0 0}]" {
		t.Errorf("unmovable and budgets: %s", got)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	table := `Plan: room for train/job-2 under rsf.yaml: 1 move, the fewest (none would do with fewer).

MOVE  POD                  FROM   TO             FREES ON FROM
1     notebook/notebook-0  gpu-b  gpu-a (GPU 6)  cpu 2, memory 8Gi, nvidia.com/gpu 1 (GPU 1)

Then train/job-2 goes to gpu-b.

3 pods may not move: a DaemonSet's pod (2); system-critical or in kube-system (1).
PodDisruptionBudget infer/infer allows 0 disruptions; the plan uses 0.
kubectl resfit defrag plans; it evicts nothing.
`
	if diff := cmp.Diff(table, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	c.Budgets = nil
	r, err = Defrag(c, cfg, "rsf.yaml", DefragOptions{For: []*v1.Pod{job2}})
	if err != nil {
		t.Fatal(err)
	}
	want = "found true minimal true bound 1; infer/infer-1 gpu-b→gpu-a frees map[cpu:4 memory:16Gi nvidia.com/gpu:1] GPUs [0] takes [6]; then [train/job-2 on gpu-b]; "
	if got := plainPlan(r); got != want {
		t.Errorf("without the budget:\ngot  %s\nwant %s", got, want)
	}
}

// A gang and a pod no plan can let in, on the same cluster.
//   - Pod group train/pair: a 4-GPU pod and a 1-GPU pod, placed in order.
//     The 4-GPU pod needs notebook-0 moved to gpu-a, as above; the 1-GPU
//     pod then takes gpu-a's last GPU: one move.
//   - A 7-GPU pod: gpu-a would need job-0 gone, gpu-b job-3 and a 1-GPU
//     pod; job-0 and job-3 fit nowhere else, the only movable pods are
//     job-0, job-3, notebook-0 and api-0, few enough for every sequence of
//     up to 3 moves to be tried: none, so at least 4 are needed.
//   - A pod that runs already, or with --max-moves 0 and no GPUs, is told.
func TestDefragGangAndNone(t *testing.T) {
	c, cfg := readTestdata(t, "defrag-cluster.json", "rsf.yaml")
	member := func(name, gpus string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: name, Annotations: map[string]string{"scheduling.k8s.io/group-name": "pair"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{Requests: kubetest.Resources("cpu", "2", "memory", "4Gi", GPU, gpus)}}}}}
		return p
	}
	c.Pods = append(c.Pods, member("pair-0", "4"), member("pair-1", "1"))
	gang, err := c.FindGroup("pair", "train")
	if err != nil || len(gang) != 2 {
		t.Fatalf("group: %v %v", gang, err)
	}
	r, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{For: gang, Group: "train/pair"})
	if err != nil {
		t.Fatal(err)
	}
	want := "found true minimal true bound 1; notebook/notebook-0 gpu-b→gpu-a frees map[cpu:2 memory:8Gi nvidia.com/gpu:1] GPUs [1] takes [6]; then [train/pair-0 on gpu-b train/pair-1 on gpu-a]; "
	if got := plainPlan(r); got != want {
		t.Errorf("gang:\ngot  %s\nwant %s", got, want)
	}
	big := member("big", "7")
	big.Annotations = nil
	r, err = Defrag(c, cfg, "rsf.yaml", DefragOptions{For: []*v1.Pod{big}})
	if err != nil {
		t.Fatal(err)
	}
	want = "found false minimal false bound 4; ; then []; no plan of at most 3 moves exists: it needs at least 4 moves"
	if got := plainPlan(r); got != want {
		t.Errorf("7 GPUs:\ngot  %s\nwant %s", got, want)
	}
	job0, _ := c.FindPod("train/job-0", "")
	if _, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{For: []*v1.Pod{job0}}); err == nil || !strings.Contains(err.Error(), "runs on gpu-a already") {
		t.Errorf("a running pod: %v", err)
	}
	if _, err := c.FindGroup("solo", "train"); err == nil || !strings.HasPrefix(err.Error(), "pod group train/solo has no pending pods") {
		t.Errorf("an empty group: %v", err)
	}
	// A budget whose selector does not parse is an error naming it.
	c.Budgets = append(c.Budgets, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "api"},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Sometimes"}}}}})
	if _, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{For: []*v1.Pod{big}}); err == nil || !strings.Contains(err.Error(), "PodDisruptionBudget web/api: spec.selector") {
		t.Errorf("a bad budget: %v", err)
	}
}

// Without --for: the pending job-2 lets the moves that free GPU aim at
// it. The move that most lowers the GPU the workload cannot use is
// notebook-0's to gpu-a, after which job-2 fits gpu-b; GiveBack keeps
// that one move (none after it lets a pod in) and places job-2 there. The
// cluster's GPUs fragmented for its pod classes fall from 22.22% to
// 4.86% (whatif's measure).
func TestDefragFreesGPU(t *testing.T) {
	c, cfg := readTestdata(t, "defrag-cluster.json", "rsf.yaml")
	r, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Moves) != 1 || kubebridge.PodName(r.Moves[0].Pod) != "notebook/notebook-0" || !slices.Equal(r.Moves[0].FreesGPUs, []int{1}) ||
		len(r.Moves[0].LetsIn) != 1 || kubebridge.PodName(r.Moves[0].LetsIn[0].Pod) != "train/job-2" || r.Moves[0].LetsIn[0].Node != "gpu-b" || r.Pending != 1 || r.MaxMoves != DefaultFreeMoves {
		t.Errorf("%+v", r)
	}
	if got := percent(r.GPUFragmentedBefore) + " " + percent(r.GPUFragmentedAfter); got != "22.22% 4.86%" {
		t.Errorf("fragmented %s", got)
	}
	// No pending pod: the moves only lower the fragmented GPU. The
	// workload's classes are the running pods': two of 1 GPU, one of 3,
	// one of 6, four without GPUs (weights 2/8, 1/8, 1/8, 4/8). Before,
	// gpu-a's 2 idle GPUs are fragment to the 3- and 6-GPU classes and
	// gpu-b's 3 to the 6-GPU class: (2+2)/8 + 3/8 = 7/8 of a GPU, plus
	// every idle GPU to the CPU classes, 4/8 × 5: 3.375 GPUs of 16,
	// 21.09%. With notebook-0 on gpu-a (1 idle there, 4 on gpu-b): (1+1)/8
	// + 4/8 + 4/8 × 5 = 3.25, 20.31%: lowered by 0.125. No second move
	// lowers it further.
	c.Pods = slices.DeleteFunc(c.Pods, func(p *v1.Pod) bool { return p.Name == "job-2" })
	r, err = Defrag(c, cfg, "rsf.yaml", DefragOptions{MaxMoves: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Moves) != 1 || kubebridge.PodName(r.Moves[0].Pod) != "notebook/notebook-0" || *r.Moves[0].Lowered != 0.125 || r.Pending != 0 {
		t.Errorf("%s %+v", plainPlan(r), r.Moves)
	}
	if got := percent(r.GPUFragmentedBefore) + " " + percent(r.GPUFragmentedAfter); got != "21.09% 20.31%" {
		t.Errorf("fragmented %s", got)
	}
}
