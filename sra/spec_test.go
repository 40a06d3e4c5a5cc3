package sra

import (
	"testing"

	"github.com/resfit/resfit/resource"
)

const (
	t4  = "nvidia.com/t4"
	a10 = "nvidia.com/a10"
	gpu = "nvidia.com/gpu"
)

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

// volcano-resource-strategy-fit.md, "retention": sra.resources t4 and a10,
// each weight 1, sra.retention.weight 2; three tasks on three nodes.
func TestRetentionSpecTable(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, t4, a10)
	r, err := NewRetention(s, 2, []Weighted{{t4, 1}, {a10, 1}})
	if err != nil {
		t.Fatal(err)
	}
	tasks := map[string][]int64{
		"cpu-task-0": vec(t, s, map[string]string{"cpu": "2", "memory": "4Gi"}),
		"gpu-task-0": vec(t, s, map[string]string{"cpu": "2", "memory": "4Gi", t4: "2"}),
		"gpu-task-1": vec(t, s, map[string]string{"cpu": "2", "memory": "4Gi", t4: "1", a10: "2"}),
	}
	nodes := map[string][]int64{
		"node1": vec(t, s, map[string]string{"cpu": "32", "memory": "64Gi"}),
		"node2": vec(t, s, map[string]string{"cpu": "16", "memory": "32Gi", t4: "10"}),
		"node3": vec(t, s, map[string]string{"cpu": "16", "memory": "32Gi", t4: "5", a10: "10"}),
	}
	table := []struct {
		task, node string
		want       float64
	}{
		{"cpu-task-0", "node1", 200}, // no scarce resources
		{"cpu-task-0", "node2", 100}, // has t4
		{"cpu-task-0", "node3", 0},   // has t4 and a10
		{"gpu-task-0", "node1", 0},   // lacks t4
		{"gpu-task-0", "node2", 100}, // has t4, not a10
		{"gpu-task-0", "node3", 0},   // has a10 too
		{"gpu-task-1", "node1", 0},   // lacks t4, a10
		{"gpu-task-1", "node2", 0},   // lacks a10
		{"gpu-task-1", "node3", 0},   // has both: nothing it does not need is absent
	}
	for _, row := range table {
		if got := r.ScoreNode(tasks[row.task], nodes[row.node]); got != row.want {
			t.Errorf("%s on %s = %v, want %v", row.task, row.node, got, row.want)
		}
	}
}

// volcano-resource-strategy-fit.md, "proportional": nvidia.com/gpu with cpu
// 8 and memory 8 per GPU; a node of 74 cpu, 128G memory, 8 GPUs. The first
// 8-cpu, 8G pod leaves 66 cpu, 120G (≥ 64, 64G): it passes. The second
// would leave 58 cpu < 8 GPUs × 8: it is filtered.
func TestProportionalSpecExample(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, gpu)
	p, err := NewProportional(s, []Ratio{{Resource: gpu, CPU: 8, Memory: 8}})
	if err != nil {
		t.Fatal(err)
	}
	alloc := vec(t, s, map[string]string{"cpu": "74", "memory": "128G", gpu: "8"})
	pod := vec(t, s, map[string]string{"cpu": "8", "memory": "8G"})
	if ok, f := p.CheckNode(pod, alloc, make([]int64, 3)); !ok {
		t.Fatalf("single-1000-0 filtered: %s", f.Explain(s))
	}
	afterFirst := pod // used = the first pod
	ok, f := p.CheckNode(pod, alloc, afterFirst)
	if ok {
		t.Fatal("single-1000-1 passed")
	}
	want := "proportional of resource nvidia.com/gpu check failed: idle cpu 66 - request 8 < 8 GPUs x 8"
	if got := f.Explain(s); got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	// A task that requests the primary resource always passes.
	gpuPod := vec(t, s, map[string]string{"cpu": "70", gpu: "1"})
	if ok, _ := p.CheckNode(gpuPod, alloc, afterFirst); !ok {
		t.Error("a GPU task was filtered")
	}
	// Memory: 120G idle − 60G requested = 60G < 64G.
	memPod := vec(t, s, map[string]string{"cpu": "1", "memory": "60G"})
	ok, f = p.CheckNode(memPod, alloc, afterFirst)
	if want := "proportional of resource nvidia.com/gpu check failed: idle memory 120G - request 60G < 8 GPUs x 8G"; ok || f.Explain(s) != want {
		t.Errorf("memory: ok %v, reason %q, want %q", ok, f.Explain(s), want)
	}
	// Equality passes: 66 − 2 = 64 = 8 × 8.
	if ok, _ := p.CheckNode(vec(t, s, map[string]string{"cpu": "2"}), alloc, afterFirst); !ok {
		t.Error("equality was filtered")
	}
}

// koordinator-noderesourcesfitplus-sra.md, CPU example: ScarceResourceAvoidance
// (nvidia.com/gpu), plugin weight 2, gives the GPU node 166 and CPU nodes
// 200. 166 = 2 × 83 = 2 × (6−1)·100/6: the GPU node has six resource types
// the CPU pod does not request, one of them scarce. In the GPU example both
// nodes get 200: a pod that requests the GPU leaves no scarce type over.
func TestAvoidanceKoordinatorExamples(t *testing.T) {
	s := mustSchema(t, resource.CPU, resource.Memory, resource.EphemeralStorage, resource.Pods,
		"hugepages-1Gi", "hugepages-2Mi", gpu, "koordinator.sh/gpu-core", "koordinator.sh/gpu-memory-ratio")
	a, err := NewAvoidance(s, []string{gpu})
	if err != nil {
		t.Fatal(err)
	}
	gpuNode := vec(t, s, map[string]string{"cpu": "96", "memory": "512Gi", "ephemeral-storage": "1Ti", "pods": "110",
		"hugepages-1Gi": "1Gi", "hugepages-2Mi": "1Gi", gpu: "8", "koordinator.sh/gpu-core": "800", "koordinator.sh/gpu-memory-ratio": "800"})
	cpuNode := vec(t, s, map[string]string{"cpu": "64", "memory": "256Gi", "ephemeral-storage": "1Ti", "pods": "110"})
	cpuPod := vec(t, s, map[string]string{"cpu": "100", "memory": "100"})
	gpuPod := vec(t, s, map[string]string{"cpu": "100", "memory": "100", gpu: "2"})
	for _, c := range []struct {
		name      string
		req, node []int64
		want      int64
	}{
		{"cpu pod, GPU node", cpuPod, gpuNode, 83},
		{"cpu pod, CPU node", cpuPod, cpuNode, 100},
		{"gpu pod, GPU node", gpuPod, gpuNode, 100},
	} {
		if got := a.ScoreNode(c.req, c.node); got != c.want {
			t.Errorf("%s = %d, want %d (×2 = %d)", c.name, got, c.want, 2*c.want)
		}
	}
}

func TestSplitProportionKeyOnLastDot(t *testing.T) {
	for _, c := range []struct{ in, primary, secondary string }{
		{"nvidia.com/gpu.cpu", "nvidia.com/gpu", "cpu"},
		{"nvidia.com/v100-sxm2-16gb.memory", "nvidia.com/v100-sxm2-16gb", "memory"},
	} {
		p, s, ok := SplitProportionKey(c.in)
		if !ok || p != c.primary || s != c.secondary {
			t.Errorf("SplitProportionKey(%q) = %q, %q, %v", c.in, p, s, ok)
		}
	}
	for _, bad := range []string{"cpu", "nvidia.com/gpu.", ".cpu", "nvidia.com/gpu.disk"} {
		if _, _, ok := SplitProportionKey(bad); ok {
			t.Errorf("SplitProportionKey(%q) accepted", bad)
		}
	}
}

func TestConstructorsReject(t *testing.T) {
	s := mustSchema(t, resource.CPU, gpu)
	if _, err := NewRetention(s, -1, nil); err == nil {
		t.Error("negative retention weight accepted")
	}
	if _, err := NewRetention(s, 1, []Weighted{{gpu, -1}}); err == nil {
		t.Error("negative resource weight accepted")
	}
	if _, err := NewRetention(s, 1, []Weighted{{gpu, 1}, {gpu, 2}}); err == nil {
		t.Error("duplicate accepted")
	}
	if _, err := NewProportional(s, []Ratio{{Resource: gpu, CPU: -1}}); err == nil {
		t.Error("negative ratio accepted")
	}
	if _, err := NewAvoidance(s, []string{"not a name"}); err == nil {
		t.Error("bad name accepted")
	}
	if err := (&Retention{}).ScoreNodes([]int64{1, 2}, []int64{1}, make([]float64, 1)); err == nil {
		t.Error("bad matrix accepted")
	}
}
