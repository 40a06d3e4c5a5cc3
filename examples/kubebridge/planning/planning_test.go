package planning

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/defrag"
)

// The queue order, as kube-scheduler's PrioritySort and its tie-breaks
// give it: priority (none is 0), then creation, then namespace/name.
func TestQueueOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(start.Add(time.Duration(s) * time.Second)) }
	prio := func(p int32) *int32 { return &p }
	pod := func(name string, p *int32, created metav1.Time) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: created}, Spec: v1.PodSpec{Priority: p}}
	}
	pods := []*v1.Pod{
		pod("late-low", prio(0), at(9)),
		pod("no-priority", nil, at(1)),
		pod("early-low", prio(0), at(0)),
		pod("high", prio(1000), at(50)),
		pod("b-same", prio(5), at(3)),
		pod("a-same", prio(5), at(3)),
		pod("negative", prio(-1), at(0)),
	}
	QueueOrder(pods)
	var got []string
	for _, p := range pods {
		got = append(got, p.Name)
	}
	if want := []string{"high", "a-same", "b-same", "early-low", "no-priority", "late-low", "negative"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

const packGPUsConfig = `
plugins:
- name: NodeResourcesFit
  args: {scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}}
- name: resource-strategy-fit
  args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}}}
`

// planningScene is two nodes of 4 GPUs, each running a 2-GPU pod of a
// ReplicaSet (web-0 on gpu-a, web-1 on gpu-b), and a pending 4-GPU pod.
func planningScene(t *testing.T) (*Scene, []*v1.Pod) {
	t.Helper()
	nodes := []*v1.Node{kubetest.Node("gpu-a", "cpu", "16", "memory", "64Gi", "pods", "110", kubetest.GPU, "4"), kubetest.Node("gpu-b", "cpu", "16", "memory", "64Gi", "pods", "110", kubetest.GPU, "4")}
	web0 := owned(kubetest.Pod("web-0", "gpu-a", "cpu", "2", kubetest.GPU, "2"), "ReplicaSet")
	web1 := owned(kubetest.Pod("web-1", "gpu-b", "cpu", "2", kubetest.GPU, "2"), "ReplicaSet")
	web0.Labels, web1.Labels = map[string]string{"app": "web"}, map[string]string{"app": "web"}
	pods := []*v1.Pod{web0, web1, kubetest.Pod("train", "", "cpu", "4", kubetest.GPU, "4")}
	return packScene(t, nodes, pods, cache.Options{Devices: kubetest.GPU}), pods
}

// packScene is the scene of the nodes and pods under packGPUsConfig.
func packScene(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, opts cache.Options) *Scene {
	t.Helper()
	snap, err := cache.New(nodes, pods, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load([]byte(packGPUsConfig), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := NewScene(snap, cfg, pods)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// The planners' cluster as the host layer builds it: the running pods,
// movable by Movable or by the Movability given, in their budget's group.
// The pending 4-GPU pod needs one move: web-0 joins web-1 on gpu-b (GPUs
// packed; the nodes tie for the first pod off), and the pod takes gpu-a. A round places it and gives the pod
// back; a budget that allows no disruption, or a Movability that refuses
// the ReplicaSet's pods, leaves no plan, the reason counted.
func TestPlanning(t *testing.T) {
	sc, pods := planningScene(t)
	pl, err := New(sc, pods, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pl.Cluster().Pods); n != 2 || len(pl.Unmovable()) != 0 {
		t.Fatalf("%d pods, unmovable %v; want the 2 running pods, all movable", n, pl.Unmovable())
	}
	plan, order, err := pl.MakeRoom(pods[2:], defrag.Options{MaxMoves: 2})
	if err != nil {
		t.Fatal(err)
	}
	table := pl.Cluster().Table
	if !plan.Found || len(plan.Moves) != 1 || pl.Pod(plan.Moves[0].Pod).Name != "web-0" || table.Name(plan.Moves[0].To) != "gpu-b" ||
		table.Name(plan.Row) != "gpu-a" || order[0].Name != "train" {
		t.Fatalf("plan %+v", plan)
	}
	round, moves, err := pl.Round(pods[2:], defrag.Round{Mode: defrag.RoundMakeRoom, Moves: 1})
	if err != nil {
		t.Fatal(err)
	}
	placed := round.Placed()
	if len(moves) != 1 || len(placed) != 1 || pl.Pod(placed[0].Pod).Name != "train" || table.Name(placed[0].Row) != "gpu-a" ||
		kubebridge.PodName(moves[0].Pod) != "default/web-0" || moves[0].To != "gpu-b" || moves[0].Lowered != nil ||
		len(moves[0].LetsIn) != 1 || moves[0].LetsIn[0].Pod.Name != "train" || moves[0].LetsIn[0].Node != "gpu-a" {
		t.Fatalf("round %+v, moves %+v", round, moves)
	}

	sc, pods = planningScene(t)
	none := budget("web", "default", 0, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	pl, err = New(sc, pods, Options{Budgets: []*policyv1.PodDisruptionBudget{none}})
	if err != nil {
		t.Fatal(err)
	}
	if plan, _, err := pl.MakeRoom(pods[2:], defrag.Options{MaxMoves: 2}); err != nil || plan.Found {
		t.Fatalf("with a budget that allows nothing: plan %+v, %v", plan, err)
	}
	refuse := func(p *v1.Pod) (bool, string) { return false, "the evictor's filter refuses it" }
	pl, err = New(sc, pods, Options{Movable: refuse})
	if err != nil {
		t.Fatal(err)
	}
	if got := pl.Unmovable()["the evictor's filter refuses it"]; got != 2 {
		t.Fatalf("unmovable %v", pl.Unmovable())
	}
	if plan, _, err := pl.MakeRoom(pods[2:], defrag.Options{MaxMoves: 2}); err != nil || plan.Found {
		t.Fatalf("with nothing movable: plan %+v, %v", plan, err)
	}

	// Limits: each pod's moves count against its node's, its namespace's
	// and its workload's budget.
	pl, err = New(sc, pods, Options{Limits: Limits{PerNode: 1, PerNamespace: 3, PerWorkload: 2}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node/gpu-a", "namespace/default", "workload/default/ReplicaSet/web-0-owner"}
	if got := pl.Cluster().Pods[0].Limits; !slices.Equal(got, want) {
		t.Errorf("web-0's limits %v, want %v", got, want)
	}
	if b := pl.Budgets(); b["node/gpu-b"] != 1 || b["namespace/default"] != 3 || b["workload/default/ReplicaSet/web-1-owner"] != 2 {
		t.Errorf("budgets %v", b)
	}
	if _, err := New(sc, pods, Options{Limits: Limits{PerNode: -1}}); err == nil {
		t.Error("a negative limit: no error")
	}
}

// A pod group's pending pods are a gang, settled and planned for whole, on
// planningScene's two 4-GPU nodes with 2 GPUs free on each: pair-0 (1
// GPU) would fit alone, pair-1 (3 GPUs) fits nowhere, so both wait and
// neither is assumed; solo (no GPU) fits and is placed. A round of one move
// then takes one web pod to the other's node, after which the pair goes
// to the node it left, both placed after that move.
func TestPlanningGang(t *testing.T) {
	sc, pods := planningScene(t)
	pods = pods[:2]
	group := "pair"
	for _, name := range []string{"pair-0", "pair-1"} {
		p := kubetest.Pod(name, "", "cpu", "1", kubetest.GPU, map[string]string{"pair-0": "1", "pair-1": "3"}[name])
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		pods = append(pods, p)
	}
	solo := kubetest.Pod("solo", "", "cpu", "1")
	pending := []*v1.Pod{pods[3], solo, pods[2]}
	pl, err := New(sc, pods[:2], Options{})
	if err != nil {
		t.Fatal(err)
	}
	settled, err := pl.SettlePending(pending)
	if err != nil {
		t.Fatal(err)
	}
	if len(settled.Fit) != 1 || settled.Fit[0].Pod != solo || len(settled.Waiting) != 2 || settled.Waiting[0].Name != "pair-0" || settled.Waiting[1].Name != "pair-1" {
		t.Fatalf("settled: fit %v, waiting %v", settled.Fit, settled.Waiting)
	}
	table := pl.Cluster().Table
	slot, _ := sc.cache.Schema().Slot(kubetest.GPU)
	if used := table.Used(0)[slot] + table.Used(1)[slot]; used != 4000 {
		t.Fatalf("GPU used after settling: %d, want web's 4 (none of the pair's)", used)
	}
	round, moves, err := pl.Round(settled.Waiting, defrag.Round{Mode: defrag.RoundMakeRoom, Moves: 1})
	if err != nil {
		t.Fatal(err)
	}
	var placed []string
	for _, p := range round.Placed() {
		placed = append(placed, pl.Pod(p.Pod).Name+" on "+table.Name(p.Row))
	}
	if len(moves) != 1 || len(round.Fit) != 0 || !slices.Equal(placed, []string{"pair-0 on " + moves[0].From, "pair-1 on " + moves[0].From}) ||
		len(moves[0].LetsIn) != 2 || moves[0].LetsIn[1].Pod.Name != "pair-1" {
		t.Fatalf("round: moves %+v, placed %v", moves, placed)
	}
}

// The defrag example with its GPUs through DRA
// (examplecluster.DRADefragCluster): a pod whose claim is its own, made
// from a template, may move, holding the devices its claim holds, and the
// plan is the example's: notebook-0 leaves gpu-b's gpu-4 for gpu-a's
// gpu-6 (the first free, as kube's allocator takes them), and job-2 then
// fits gpu-b. A claim the pod shares keeps it where it is.
func TestPlanningDRADefragExample(t *testing.T) {
	nodes, pods, budgets, objects := examplecluster.DRADefragCluster()
	var o dra.Objects
	for _, obj := range objects {
		switch x := obj.(type) {
		case *resourcev1.ResourceSlice:
			o.Slices = append(o.Slices, x)
		case *resourcev1.DeviceClass:
			o.Classes = append(o.Classes, x)
		case *resourcev1.ResourceClaim:
			o.Claims = append(o.Claims, x)
		case *resourcev1.ResourceClaimTemplate:
			o.Templates = append(o.Templates, x)
		}
	}
	d, err := dra.Read(o)
	if err != nil {
		t.Fatal(err)
	}
	sc := packScene(t, nodes, pods, cache.Options{DRA: d})
	pl, err := New(sc, pods, Options{Budgets: budgets})
	if err != nil {
		t.Fatal(err)
	}
	var job2 *v1.Pod
	for _, p := range pods {
		if p.Name == "job-2" {
			job2 = p
		}
	}
	for i, p := range pl.Cluster().Pods {
		if want := map[string][]int{"notebook-0": {4}, "infer-1": {3}, "job-3": {0, 1, 2}}[pl.Pod(i).Name]; want != nil && (!slices.Equal(p.Holds, want) || !p.Movable) {
			t.Errorf("%s: holds %v, movable %v; want %v, movable", pl.Pod(i).Name, p.Holds, p.Movable, want)
		}
	}
	plan, _, err := pl.MakeRoom([]*v1.Pod{job2}, defrag.Options{MaxMoves: 2})
	if err != nil {
		t.Fatal(err)
	}
	table := pl.Cluster().Table
	if !plan.Found || len(plan.Moves) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	m := plan.Moves[0]
	if got := fmt.Sprintf("%s %s→%s %v, then %s", pl.Pod(m.Pod).Name, table.Name(m.From), table.Name(m.To), m.Holds, table.Name(plan.Row)); got != "notebook-0 gpu-b→gpu-a [6], then gpu-b" {
		t.Errorf("plan: %s", got)
	}

	// A claim the pod shares: it stays.
	shared := "notebook-0-gpus-x7k2p"
	for _, p := range pods {
		if p.Name == "notebook-0" {
			p.Spec.ResourceClaims[0].ResourceClaimTemplateName, p.Spec.ResourceClaims[0].ResourceClaimName = nil, &shared
		}
	}
	pl, err = New(sc, pods, Options{Budgets: budgets})
	if err != nil {
		t.Fatal(err)
	}
	if got := pl.Unmovable()["it shares a DRA resource claim"]; got != 1 {
		t.Errorf("unmovable %v", pl.Unmovable())
	}
}

// The reasons pods may not move have stable identifiers beside their
// text, for programs reading a plan (TestMovable checks that every text
// Movable gives has one).
func TestUnmovableReasonsHaveIdentifiers(t *testing.T) {
	got := UnmovableCounts(map[string]int{"a DaemonSet's pod": 2, "no controller to recreate it": 1, "a host's own": 3})
	want := []UnmovableCount{{"DaemonSetPod", "a DaemonSet's pod", 2}, {"NoController", "no controller to recreate it", 1}, {"Other", "a host's own", 3}}
	if !slices.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
}
