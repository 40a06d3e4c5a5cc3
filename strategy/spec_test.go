package strategy

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/resfit/resfit/resource"
)

const gpu = "nvidia.com/gpu"

func mustSchema(t testing.TB, names ...string) *resource.Schema {
	t.Helper()
	s, err := resource.NewSchema(names...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func vec(t testing.TB, s *resource.Schema, q map[string]string) []int64 {
	t.Helper()
	v, err := s.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// volcano-resource-strategy-fit.md, "ResourceStrategyFit": GPU MostAllocated
// weight 2, cpu LeastAllocated weight 1, resourceStrategyFitWeight 10;
// MostAllocated is requested/allocatable, LeastAllocated
// (allocatable−requested)/allocatable, and
// finalScoreNode = Σ(weight·resource)/Σweight, times 100 × 10.
func TestVolcanoResourceStrategyFitDocFormula(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, gpu)
	fit, err := NewVolcanoFit(s, []Resource{
		{Name: gpu, Type: MostAllocated, Weight: 2},
		{Name: resource.CPU, Type: LeastAllocated, Weight: 1},
	}, DefaultVolcanoPluginWeight)
	if err != nil {
		t.Fatal(err)
	}
	task := vec(t, s, map[string]string{"cpu": "2", "memory": "4Gi", gpu: "1"})
	tests := []struct {
		name        string
		alloc, used map[string]string
		want        float64
	}{
		// gpu (1+3)/8·2 = 1; cpu (16−2−6)/16·1 = 0.5; (1+0.5)/3 × 1000 = 500.
		{"gpu node partly used", map[string]string{"cpu": "16", "memory": "64Gi", gpu: "8"},
			map[string]string{"cpu": "6", gpu: "3"}, 500},
		// gpu absent: 0 with its weight 2 counted; cpu 30/32 = 0.9375; /3 × 1000.
		{"cpu node: gpu absent, weight counts", map[string]string{"cpu": "32", "memory": "64Gi"},
			nil, 312.5},
		// gpu 8 used of 8: 9 > 8 zeroes the whole node.
		{"request over allocatable zeroes node", map[string]string{"cpu": "16", "memory": "64Gi", gpu: "8"},
			map[string]string{gpu: "8"}, 0},
		// memory is not configured, so its overflow does not matter.
		{"unconfigured resource ignored", map[string]string{"cpu": "16", "memory": "1Gi", gpu: "8"},
			map[string]string{"memory": "1Gi", "cpu": "6", gpu: "3"}, 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fit.ScoreNode(task, nil, vec(t, s, tc.alloc), vec(t, s, tc.used))
			if got != tc.want {
				t.Errorf("score = %v, want %v", got, tc.want)
			}
		})
	}
}

// The KEP's worked example (kep-requested-to-capacity-ratio-extended-resources.md,
// "Examples"): request foo 2, memory 256MB, cpu 2; weights foo 5, memory 1,
// cpu 3; shape {0,0},{100,10}.
//
// The KEP computes on the old 0..10 scale and is not self-consistent: it
// scores cpu 3/8 as rawScoringFunction(37.5) = 4, but the code truncates the
// utilisation to 37 first, giving 3, so its Node 1 total of 6 does not follow
// from its own rule ((7·5+5·1+3·3)/9 = 5.4 → 5). kube-scheduler v1.37 scales
// the shape to 0..100 and scores Node 1 60 and Node 2 69 (the KEP: 6 and 7).
// Both agree that Node 2 ranks first.
func TestKEPRequestedToCapacityRatioNodes(t *testing.T) {
	const foo = "intel.com/foo"
	s := mustSchema(t, resource.CPU, resource.Memory, foo)
	rs := []Resource{{Name: foo, Weight: 5}, {Name: resource.Memory, Weight: 1}, {Name: resource.CPU, Weight: 3}}
	shape := []ShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}
	r, err := NewRequestedToCapacityRatio(s, rs, shape)
	if err != nil {
		t.Fatal(err)
	}
	req := vec(t, s, map[string]string{foo: "2", "memory": "256Mi", "cpu": "2"})
	node1Alloc := vec(t, s, map[string]string{foo: "4", "memory": "1Gi", "cpu": "8"})
	node1Used := vec(t, s, map[string]string{foo: "1", "memory": "256Mi", "cpu": "1"})
	node2Alloc := vec(t, s, map[string]string{foo: "8", "memory": "1Gi", "cpu": "8"})
	node2Used := vec(t, s, map[string]string{foo: "2", "memory": "512Mi", "cpu": "6"})

	// Per-resource steps on the KEP's old 0..10 scale, as the code computes them.
	old := func(requested, capacity int64) int64 { return brokenLinear(shape, requested*100/capacity) }
	for _, c := range []struct {
		name                string
		requested, capacity int64
		want                int64
	}{
		{"node1 foo (2+1)/4 → 75 → 7", 3, 4, 7},
		{"node1 memory 512/1024 → 50 → 5", 512, 1024, 5},
		{"node1 cpu 3/8 → 37 → 3 (KEP says 4)", 3, 8, 3},
		{"node2 foo 4/8 → 50 → 5", 4, 8, 5},
		{"node2 memory 768/1024 → 75 → 7", 768, 1024, 7},
		{"node2 cpu 8/8 → 100 → 10", 8, 8, 10},
	} {
		if got := old(c.requested, c.capacity); got != c.want {
			t.Errorf("%s: got %d", c.name, got)
		}
	}

	if got := r.ScoreNode(req, node1Alloc, node1Used); got != 60 {
		t.Errorf("Node 1 = %v, want 60 ((75·5+50·1+37·3)/9 = 59.6, rounded)", got)
	}
	if got := r.ScoreNode(req, node2Alloc, node2Used); got != 69 {
		t.Errorf("Node 2 = %v, want 69 ((50·5+75·1+100·3)/9 = 69.4, rounded)", got)
	}
}

// kube-scheduler's RequestedToCapacityRatio drops a resource whose shape
// score is 0, weight and all, and rounds the mean.
func TestRequestedToCapacityRatioDropsZeroScores(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory)
	r, err := NewRequestedToCapacityRatio(s, []Resource{{Name: resource.CPU, Weight: 1}, {Name: resource.Memory, Weight: 3}},
		[]ShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}) // spreading shape
	if err != nil {
		t.Fatal(err)
	}
	// memory full → shape score 0 → dropped with its weight 3; cpu 25% → 75.
	got := r.ScoreNode([]int64{1000, 1 << 30}, []int64{4000, 1 << 30}, []int64{0, 0})
	if got != 75 {
		t.Errorf("score = %v, want 75", got)
	}
}

// Koordinator's "Adapt to native plugins": NodeResourcesFitPlus with
// MostAllocated (or LeastAllocated) for every resource, cpu weight 2 and
// memory weight 1, behaves as kube-scheduler's NodeResourcesFit with the
// same single strategy and weights. With non-zero requests (which both use
// for the amounts) every pod requests cpu and memory, and the two give the
// same score on every node, hence the same ranking.
func TestKoordinatorAdaptsToNativePlugins(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory)
	for _, typ := range []Type{MostAllocated, LeastAllocated} {
		plus, err := NewKoordinatorFit(s, []Resource{{Name: "cpu", Type: typ, Weight: 2}, {Name: "memory", Type: typ, Weight: 1}})
		if err != nil {
			t.Fatal(err)
		}
		native, err := NewKubeFit(s, typ, []Resource{{Name: "cpu", Weight: 2}, {Name: "memory", Weight: 1}})
		if err != nil {
			t.Fatal(err)
		}
		req := []int64{resource.DefaultMilliCPURequest, resource.DefaultMemoryRequest}
		nodes := [][2][]int64{
			{{4000, 8 << 30}, {1000, 2 << 30}},
			{{64000, 256 << 30}, {63000, 10 << 30}},
			{{2000, 1 << 30}, {2500, 0}}, // overcommitted cpu
			{{96000, 512 << 30}, {0, 0}},
		}
		for i, n := range nodes {
			p, k := plus.ScoreNode(req, req, n[0], n[1]), native.ScoreNode(req, n[0], n[1])
			if p != k {
				t.Errorf("%v node %d: NodeResourcesFitPlus %v, NodeResourcesFit %v", typ, i, p, k)
			}
		}
	}
}

// The same numbers as kube-scheduler's own MostAllocated/LeastAllocated,
// written out: cpu 3000m of 4000m requested → Most 75, Least 25; memory 5Gi
// of 10Gi → 50; weights 1 and 1 → Most (75+50)/2 = 62, Least (25+50)/2 = 37.
func TestKubeFitMostAndLeast(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, gpu)
	rs := []Resource{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: gpu, Weight: 5}}
	most, _ := NewKubeFit(s, MostAllocated, rs)
	least, _ := NewKubeFit(s, LeastAllocated, rs)
	req := []int64{1000, 2 << 30, 0} // no gpu requested: gpu is skipped with its weight
	alloc := []int64{4000, 10 << 30, 8000}
	used := []int64{2000, 3 << 30, 4000}
	if got := most.ScoreNode(req, alloc, used); got != 62 {
		t.Errorf("MostAllocated = %v, want 62", got)
	}
	if got := least.ScoreNode(req, alloc, used); got != 37 {
		t.Errorf("LeastAllocated = %v, want 37", got)
	}
	// Requesting 2 GPUs of 8 (4 used): gpu Most 75 with weight 5 → (75+50+375)/7 = 71.
	if got := most.ScoreNode([]int64{1000, 2 << 30, 2000}, alloc, used); got != 71 {
		t.Errorf("MostAllocated with gpu = %v, want 71", got)
	}
	// A node with no resource left to score (all allocatable 0) scores 0.
	if got := most.ScoreNode(req, []int64{0, 0, 0}, []int64{0, 0, 0}); got != 0 {
		t.Errorf("empty node = %v, want 0", got)
	}
}

// kube-scheduler v1.37's BalancedAllocation scores the improvement in
// balance: cpu 1/4 → 2/4 and memory 2/4 → 2/4 make the fractions equal
// (with pod 100, without 87), so 50 + (50+100−87)/2 = 81.
func TestBalancedAllocationImprovement(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory)
	b, err := NewBalancedAllocation(s, []string{"cpu", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	alloc := []int64{4000, 4 << 30}
	if got := b.ScoreNode([]int64{1000, 0}, alloc, []int64{1000, 2 << 30}); got != 81 {
		t.Errorf("balancing placement = %v, want 81", got)
	}
	// The reverse: from balanced 2/4, 2/4 to 3/4, 2/4 → with 87, without 100 → 50+37/2 = 68.
	if got := b.ScoreNode([]int64{1000, 0}, alloc, []int64{2000, 2 << 30}); got != 68 {
		t.Errorf("unbalancing placement = %v, want 68", got)
	}
	if got := b.ScoreNode([]int64{0, 0}, alloc, []int64{2000, 2 << 30}); got != 0 {
		t.Errorf("best-effort task = %v, want 0 (plugin skipped)", got)
	}
}

// Koordinator scores 100 when the task requests none of the configured
// resources, and counts an absent resource's weight.
func TestKoordinatorFitEdges(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, gpu)
	f, _ := NewKoordinatorFit(s, []Resource{{Name: gpu, Type: MostAllocated, Weight: 2}, {Name: "cpu", Type: LeastAllocated, Weight: 1}})
	if got := f.ScoreNode([]int64{0, 1 << 30, 0}, []int64{100, 1 << 30, 0}, []int64{4000, 8 << 30, 0}, []int64{0, 0, 0}); got != 100 {
		t.Errorf("no configured resource requested = %v, want 100", got)
	}
	// gpu requested but absent: 0 with weight 2; cpu (4000−1000)/4000 → 75: 75/3 = 25.
	if got := f.ScoreNode([]int64{1000, 0, 1000}, []int64{1000, 0, 1000}, []int64{4000, 8 << 30, 0}, []int64{0, 0, 0}); got != 25 {
		t.Errorf("absent gpu = %v, want 25", got)
	}
}

func TestVolcanoWildcardsAndOverride(t *testing.T) {
	const a100, t4 = "nvidia.com/a100", "example.com/t4"
	s := mustSchema(t, resource.CPU, resource.Memory, a100, t4)
	f, err := NewVolcanoFit(s, []Resource{
		{Name: "nvidia.*", Type: LeastAllocated, Weight: 9},
		{Name: "nvidia.com/*", Type: MostAllocated, Weight: 1}, // longer prefix wins for a100
		{Name: "cpu", Type: LeastAllocated, Weight: 1},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	alloc := []int64{4000, 8 << 30, 4000, 4000}
	used := []int64{0, 0, 1000, 0}
	req := []int64{1000, 0, 1000, 1000} // t4 matches nothing and is skipped
	// a100 Most (1+1)/4 = 0.5 ·1; cpu Least 3/4 ·1 → 1.25/2 × 100 = 62.5.
	if got := f.ScoreNode(req, nil, alloc, used); got != 62.5 {
		t.Errorf("wildcard score = %v, want 62.5", got)
	}
	o, err := ParseVolcanoAnnotations(s, "MostAllocated", `{"cpu": 1, "example.com/t4": 3}`)
	if err != nil {
		t.Fatal(err)
	}
	// Override: cpu Most 1/4 ·1, t4 Most 1/4 ·3 → 1/4 × 100 = 25 (a100 not listed).
	if got := f.ScoreNode(req, o, alloc, used); got != 25 {
		t.Errorf("override score = %v, want 25", got)
	}
	if got := f.ScoreNode(req, ZeroOverride(), alloc, used); got != 0 {
		t.Errorf("zero override = %v", got)
	}
	for _, bad := range [][2]string{{"Balanced", `{"cpu":1}`}, {"MostAllocated", ""}, {"MostAllocated", "{"}, {"MostAllocated", `{"cpu":-1}`}} {
		if _, err := ParseVolcanoAnnotations(s, bad[0], bad[1]); err == nil {
			t.Errorf("annotations %q accepted", bad)
		}
	}
	for _, bad := range []string{"*", "nvidia.com/*/x", "nvidia*com*"} {
		if _, err := NewVolcanoFit(s, []Resource{{Name: bad, Type: MostAllocated, Weight: 1}}, 1); err == nil {
			t.Errorf("wildcard %q accepted", bad)
		}
	}
}

// Volcano binpack: cpu and memory always weighted (default 1), extended
// resources as listed; (Σ used·w/alloc)/Σw × 100 × binpack.weight.
func TestBinpack(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, gpu)
	b, err := NewBinpack(s, 10, 5, 1, map[string]int64{gpu: 2, "cpu": 99})
	if err != nil {
		t.Fatal(err)
	}
	// cpu (2+2)/8·5 = 2.5; memory (4+4)/16·1 = 0.5; gpu (1+1)/4·2 = 1 → 4/8 × 1000 = 500.
	got := b.ScoreNode([]int64{2000, 4 << 30, 1000}, nil, []int64{8000, 16 << 30, 4000}, []int64{2000, 4 << 30, 1000})
	if got != 500 {
		t.Errorf("binpack = %v, want 500", got)
	}
}

func TestConstructorsReject(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory)
	if _, err := NewKubeFit(s, 0, nil); err == nil {
		t.Error("KubeFit without type accepted")
	}
	if _, err := NewKubeFit(s, MostAllocated, []Resource{{Name: "cpu", Weight: 0}}); err == nil {
		t.Error("weight 0 accepted")
	}
	if _, err := NewKoordinatorFit(s, []Resource{{Name: "cpu", Weight: 1}}); err == nil {
		t.Error("missing type accepted")
	}
	if _, err := NewKubeFit(s, MostAllocated, []Resource{{Name: "cpu", Weight: 1}, {Name: "cpu", Weight: 2}}); err == nil {
		t.Error("duplicate accepted")
	}
	for _, shape := range [][]ShapePoint{nil, {{50, 1}, {50, 2}}, {{-1, 0}}, {{0, 11}}, {{101, 0}}} {
		if _, err := NewRequestedToCapacityRatio(s, []Resource{{Name: "cpu", Weight: 1}}, shape); err == nil {
			t.Errorf("shape %v accepted", shape)
		}
	}
	if _, err := NewVolcanoFit(s, nil, -1); err == nil {
		t.Error("negative plugin weight accepted")
	}
	if err := (&KubeFit{}).ScoreNodes([]int64{1, 2}, resource.Rows{Stride: 2, Allocatable: []int64{1}, Used: []int64{1}}, make([]float64, 1)); err == nil {
		t.Error("mismatched matrices accepted")
	}
}

// The edge cases every scorer defines: a node with nothing allocatable, a
// task that requests nothing, a resource the node lacks.
func TestEdgeCasesAreDefined(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, gpu)
	rs := []Resource{{Name: "cpu", Type: LeastAllocated, Weight: 1}, {Name: gpu, Type: MostAllocated, Weight: 2}}
	kube, _ := NewKubeFit(s, MostAllocated, rs)
	koord, _ := NewKoordinatorFit(s, rs)
	volc, _ := NewVolcanoFit(s, rs, 10)
	rtcr, _ := NewRequestedToCapacityRatio(s, rs, []ShapePoint{{0, 0}, {100, 10}})
	bal, _ := NewBalancedAllocation(s, []string{"cpu", "memory"})
	scorers := []struct {
		name string
		f    func(req, alloc, used []int64) float64
	}{
		{"kube", kube.ScoreNode},
		{"koordinator", func(req, alloc, used []int64) float64 { return koord.ScoreNode(req, req, alloc, used) }},
		{"volcano", func(req, alloc, used []int64) float64 { return volc.ScoreNode(req, nil, alloc, used) }},
		{"rtcr", rtcr.ScoreNode},
		{"balanced", bal.ScoreNode},
	}
	zero := []int64{0, 0, 0}
	cpuNode := []int64{8000, 8 << 30, 0}
	cases := []struct {
		name           string
		req, alloc     []int64
		kube, koord    float64
		volcano, rtcr  float64
		balancedResult float64
	}{
		// Nothing allocatable: kube skips every resource (0); Koordinator and
		// Volcano score each requested resource 0 with its weight (0); the
		// fit filter is what rejects such a node. BalancedAllocation has no
		// fraction either way: 50 + (50+100−100)/2 = 75.
		{"zero allocatable", []int64{1000, 1 << 30, 1000}, zero, 0, 0, 0, 0, 75},
		// Nothing requested: kube still scores cpu (not scalar) at used+0;
		// Koordinator has no requested resource (100); Volcano sums nothing
		// (0); BalancedAllocation skips a best-effort task (0).
		{"zero requests", zero, cpuNode, 0, 100, 0, 0, 0},
		// A GPU task on a CPU node: kube and RTCR skip gpu (allocatable 0),
		// Koordinator and Volcano count gpu as 0 with weight 2.
		// cpu: Least (8−1)/8 → kube 87 under MostAllocated is 12;
		// Koordinator (87·1 + 0·2)/3 = 29; Volcano 0.875/3 × 1000;
		// BalancedAllocation fractions 1/8 and 0 → 93, from 100: 50 + 43/2 = 71.
		{"absent resource", []int64{1000, 0, 1000}, cpuNode, 12, 29, 875.0 / 3, 12, 71},
	}
	for _, tc := range cases {
		want := []float64{tc.kube, tc.koord, tc.volcano, tc.rtcr, tc.balancedResult}
		for i, sc := range scorers {
			if got := sc.f(tc.req, tc.alloc, zero); math.Abs(got-want[i]) > 1e-9 {
				t.Errorf("%s, %s: %v, want %v", tc.name, sc.name, got, want[i])
			}
		}
	}
}

// The outside review's example: NodeResourcesFitPlus with nvidia.com/gpu
// Most/2, cpu Least/1, memory Least/1 on an empty node of 96 cpu, 512Gi
// and 8 GPUs. A pod asking only for 2 GPUs requests cpu and memory only
// through the non-zero defaults, so they are not scored: 2×100/8 × 2 / 2
// = 25 (it was 62 when the non-zero request chose the resources). A pod
// asking only for a resource no argument names scores 100 (weight sum 0).
func TestKoordinatorScoresOnlyRequestedResources(t *testing.T) {
	const other = "example.com/fpga"
	s := mustSchema(t, resource.CPU, resource.Memory, gpu, other)
	f, err := NewKoordinatorFit(s, []Resource{
		{Name: gpu, Type: MostAllocated, Weight: 2},
		{Name: resource.CPU, Type: LeastAllocated, Weight: 1},
		{Name: resource.Memory, Type: LeastAllocated, Weight: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	alloc := vec(t, s, map[string]string{"cpu": "96", "memory": "512Gi", gpu: "8", other: "4"})
	used := make([]int64, 4)
	defaults := []int64{resource.DefaultMilliCPURequest, resource.DefaultMemoryRequest, 0, 0}
	gpuOnly := vec(t, s, map[string]string{gpu: "2"})
	if got := f.ScoreNode(gpuOnly, addVectors(gpuOnly, defaults), alloc, used); got != 25 {
		t.Errorf("GPU-only pod = %v, want 25", got)
	}
	otherOnly := vec(t, s, map[string]string{other: "1"})
	if got := f.ScoreNode(otherOnly, addVectors(otherOnly, defaults), alloc, used); got != 100 {
		t.Errorf("pod asking only for an unconfigured resource = %v, want 100", got)
	}
	// A request set to 0 is not a request either.
	if got := f.ScoreNode(make([]int64, 4), defaults, alloc, used); got != 100 {
		t.Errorf("pod asking for nothing = %v, want 100", got)
	}
}

func addVectors(a, b []int64) []int64 {
	out := make([]int64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

// Koordinator's TestPlugin_Score (noderesourcefitplus): testNode1 (96 cpu,
// 512Gi, 8 GPUs) already runs a pod of 16 cpu, 32Gi and 4 GPUs; testNode2
// has the same plus 8 xx.xx/xx and runs nothing. The pod asks for 16 cpu,
// 32Gi, 2 GPUs and 10Gi of ephemeral storage (not configured, so not
// scored). Upstream asserts only node1 > node2; the digits:
//
//	node1: gpu 6/8 → 75 ×2; cpu (96−32)/96 → 66; memory (512−64)/512 → 87: 303/4 = 75
//	node2: gpu 2/8 → 25 ×2; cpu (96−16)/96 → 83; memory (512−32)/512 → 93: 226/4 = 56
func TestKoordinatorPluginScore(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, resource.EphemeralStorage, gpu, "xx.xx/xx")
	f, err := NewKoordinatorFit(s, []Resource{
		{Name: gpu, Type: MostAllocated, Weight: 2},
		{Name: resource.CPU, Type: LeastAllocated, Weight: 1},
		{Name: resource.Memory, Type: LeastAllocated, Weight: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	node1 := vec(t, s, map[string]string{"cpu": "96", "memory": "512Gi", gpu: "8", "ephemeral-storage": "100Gi"})
	node2 := vec(t, s, map[string]string{"cpu": "96", "memory": "512Gi", gpu: "8", "xx.xx/xx": "8", "ephemeral-storage": "100Gi"})
	used1 := vec(t, s, map[string]string{"cpu": "16", "memory": "32Gi", gpu: "4"})
	pod := vec(t, s, map[string]string{"cpu": "16", "memory": "32Gi", gpu: "2", "ephemeral-storage": "10Gi"})
	if got := f.ScoreNode(pod, pod, node1, used1); got != 75 {
		t.Errorf("testNode1 = %v, want 75", got)
	}
	if got := f.ScoreNode(pod, pod, node2, make([]int64, 5)); got != 56 {
		t.Errorf("testNode2 = %v, want 56", got)
	}
}

// kube-scheduler refuses to score with no resources ("resources not
// found"); so do the constructors, instead of building a scorer that
// scores 0 everywhere.
func TestConstructorsRefuseNoResources(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory)
	if _, err := NewKubeFit(s, MostAllocated, nil); err == nil || !strings.Contains(err.Error(), "resources not found") {
		t.Errorf("NewKubeFit: %v", err)
	}
	if _, err := NewRequestedToCapacityRatio(s, nil, []ShapePoint{{0, 0}, {100, 10}}); err == nil {
		t.Error("NewRequestedToCapacityRatio without resources accepted")
	}
	if _, err := NewBalancedAllocation(s, nil); err == nil {
		t.Error("NewBalancedAllocation without resources accepted")
	}
	if _, err := NewKoordinatorFit(s, nil); err == nil {
		t.Error("NewKoordinatorFit without resources accepted")
	}
}

// Every weight has the bound resource.MaxWeight; above it a constructor
// fails, so no weighted sum can wrap int64 (a weight of 10^17 once gave a
// total of −84).
func TestWeightsAboveMaxWeightAreRejected(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory)
	big := []Resource{{Name: "cpu", Type: MostAllocated, Weight: resource.MaxWeight + 1}}
	if _, err := NewKubeFit(s, MostAllocated, big); err == nil || !strings.Contains(err.Error(), "[1, 1000000]") {
		t.Errorf("NewKubeFit: %v", err)
	}
	if _, err := NewKoordinatorFit(s, []Resource{{Name: "cpu", Type: MostAllocated, Weight: 1e17}}); err == nil {
		t.Error("NewKoordinatorFit accepted a weight of 1e17")
	}
	if _, err := NewVolcanoFit(s, []Resource{{Name: "cpu", Type: MostAllocated, Weight: 1 << 62}}, 10); err == nil {
		t.Error("NewVolcanoFit accepted a weight of 2^62")
	}
	if _, err := NewVolcanoFit(s, nil, resource.MaxWeight+1); err == nil {
		t.Error("NewVolcanoFit accepted a plugin weight above MaxWeight")
	}
	if _, err := NewBinpack(s, 1, math.MaxInt64, 1, nil); err == nil {
		t.Error("NewBinpack accepted binpack.cpu = MaxInt64")
	}
	at, err := NewKoordinatorFit(s, []Resource{{Name: "cpu", Type: MostAllocated, Weight: resource.MaxWeight}, {Name: "memory", Type: LeastAllocated, Weight: resource.MaxWeight}})
	if err != nil {
		t.Fatal(err)
	}
	if got := at.ScoreNode([]int64{1000, 1}, []int64{1000, 1}, []int64{4000, 8}, []int64{3000, 0}); got != (100+87)/2 {
		t.Errorf("at MaxWeight = %v, want %d", got, (100+87)/2)
	}
}

// A pod's author writes the annotations: a weight above MaxWeight (one
// pod's 2^62 once scored 5e21 against a maximum of 1000) makes the pair
// unusable, as bad JSON does.
func TestAnnotationWeightsAboveBoundAreUnusable(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory)
	for _, weights := range []string{
		`{"cpu": 4611686018427387904, "memory": 4611686018427387904}`,
		`{"cpu": 1000001}`,
		`{"cpu": 1e30}`,
		`{"cpu": 1.5}`,
		`{"cpu": -1}`,
	} {
		if o, err := ParseVolcanoAnnotations(s, "MostAllocated", weights); err == nil {
			t.Errorf("%s: accepted as %+v", weights, o)
		}
	}
	if _, err := ParseVolcanoAnnotations(s, "MostAllocated", `{"cpu": 1000000, "memory": 0}`); err != nil {
		t.Errorf("weights at the bounds: %v", err)
	}
}

// ScoreNodes reports a request that does not fit the scorer's schema;
// ScoreNode, the per-node kernel, panics with a message that says so.
func TestMismatchedVectors(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, gpu)
	f, _ := NewKubeFit(s, MostAllocated, []Resource{{Name: gpu, Weight: 1}})
	rows := resource.Rows{Stride: 2, Allocatable: []int64{1, 1}, Used: []int64{0, 0}}
	if err := f.ScoreNodes([]int64{1, 1}, rows, make([]float64, 1)); err == nil || !strings.Contains(err.Error(), "schema of 3") {
		t.Errorf("ScoreNodes with a 2-amount request: %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "KubeFit.ScoreNode") {
			t.Errorf("ScoreNode recovered %v", r)
		}
	}()
	f.ScoreNode([]int64{1, 1, 1}, []int64{1, 1}, []int64{0, 0, 0})
}
