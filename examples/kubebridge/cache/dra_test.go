package cache

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

// gpuStrategy is a resource-strategy-fit configuration scoring GPUs by the
// given type (weight 2) and spreading cpu (LeastAllocated, weight 1).
func gpuStrategy(t *testing.T, schema *resource.Schema, gpuType string) *scoring.Pipeline {
	t.Helper()
	cfg, err := config.Load([]byte(fmt.Sprintf(`
plugins:
- name: resource-strategy-fit
  args:
    resources:
      nvidia.com/gpu: {type: %s, weight: 2}
      cpu: {type: LeastAllocated, weight: 1}
`, gpuType)), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := cfg.BuildFor(schema, config.Host{})
	if err != nil {
		t.Fatal(err)
	}
	return pipe
}

// The cluster in a snapshot: two nodes of 8 NVIDIA GPUs published
// through DRA (no device plugin: the nodes report no nvidia.com/gpu), a
// filler pod on node-a whose pre-created claim holds 6 of its GPUs. The
// rows hold the class's devices as nvidia.com/gpu (KEP-5004's name), the
// device view each GPU with its productName; a pod with a 1-GPU claim and
// a pod asking nvidia.com/gpu: 1 score the same — packing onto node-a
// (gpu 7/8 × 2 + cpu 55/64 free, over 3 weights: 869.8, against node-b's
// 1/8 × 2 + 63/64: 411.5), spreading onto node-b (gpu 7/8 free × 2 + cpu
// 63/64: 911.5, against node-a's 1/8 × 2 + 55/64: 369.8); a pod whose claim
// accepts only A100s fits node-b alone.
func TestCacheWithDRA(t *testing.T) {
	name := func(s string) *string { return &s }
	a100 := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "one-a100"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"))}
	d, err := dra.Read(dra.Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Claims: dratest.TrainClaims(a100), Templates: dratest.TrainTemplates()})
	if err != nil {
		t.Fatal(err)
	}
	filler := kubetest.Pod("filler", "node-a", "cpu", "8")
	filler.Namespace = "train"
	filler.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: name("six-gpus")}}
	claimed := kubetest.Pod("claimed", "", "cpu", "1")
	claimed.Namespace = "train"
	claimed.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: name("one-gpu")}}
	extended := kubetest.Pod("extended", "", "cpu", "1", kubetest.GPU, "1")
	onlyA100 := kubetest.Pod("only-a100", "", "cpu", "1")
	onlyA100.Namespace = "train"
	onlyA100.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: name("one-a100")}}
	nodes := []*v1.Node{kubetest.Node("node-a", "cpu", "64", "memory", "512Gi", "pods", "110"), kubetest.Node("node-b", "cpu", "64", "memory", "512Gi", "pods", "110")}
	s, err := New(nodes, []*v1.Pod{filler, claimed, extended, onlyA100}, Options{DRA: d})
	if err != nil {
		t.Fatal(err)
	}
	schema := s.Schema()
	slot, ok := schema.Slot(kubetest.GPU)
	mig, hasMIG := schema.Slot(dra.ImplicitResourcePrefix + "mig.nvidia.com")
	if !ok || !hasMIG {
		t.Fatalf("schema %v lacks the classes' resources", schema.Names())
	}
	for _, c := range []struct {
		node        string
		alloc, used int64
		migs        int64 // MIG devices, whole (an implicit name is not an extended resource)
		free        []int64
		model       string
	}{
		{"node-a", 8000, 6000, 1, []int64{0, 0, 0, 0, 0, 0, 1000, 1000}, "NVIDIA-H100-80GB-HBM3"},
		{"node-b", 8000, 0, 0, []int64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, "NVIDIA-A100-SXM4-80GB"},
	} {
		row, _ := s.Row(c.node)
		if a, u := s.Table().Allocatable(row)[slot], s.Table().Used(row)[slot]; a != c.alloc || u != c.used {
			t.Errorf("%s: nvidia.com/gpu %d allocatable, %d used; want %d, %d", c.node, a, u, c.alloc, c.used)
		}
		if a := s.Table().Allocatable(row)[mig]; a != c.migs {
			t.Errorf("%s: %d MIG devices, want %d", c.node, a, c.migs)
		}
		if free := s.Devices().Free(row); fmt.Sprint(free) != fmt.Sprint(c.free) || s.Devices().Model(row) != c.model {
			t.Errorf("%s: devices %v of %q; want %v of %q", c.node, free, s.Devices().Model(row), c.free, c.model)
		}
	}
	opts := scoring.TaskOptions{Devices: kubetest.GPU, Models: s.Models()}
	scores := func(p *v1.Pod, gpuType string) string {
		pipe := gpuStrategy(t, schema, gpuType)
		pt, err := kubebridge.NewPodTask(s.DRA(), schema, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, n := range []string{"node-a", "node-b"} {
			task, ok, err := pt.On(n)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				out += n + " - "
				continue
			}
			row, _ := s.Row(n)
			batch := pipe.NewBatch(s.Table().Len())
			if err := pipe.Score(task, s.Table(), batch); err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%s %.1f ", n, batch.Total(row))
		}
		return out
	}
	// A placer's scores of each pod, read row by row, as a bitset of the
	// feasible rows and as a copy of the totals.
	pl, err := scoring.NewPlacer(gpuStrategy(t, schema, "MostAllocated"), s.Table(), scoring.PlacerOptions{Devices: s.Devices()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*v1.Pod{claimed, extended, onlyA100} {
		pt, err := kubebridge.NewPodTask(s.DRA(), schema, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		var ps kubebridge.PodScores
		if err := pt.Score(pl, s.Table(), &ps); err != nil {
			t.Fatal(err)
		}
		bits, totals := ps.AppendFeasible([]uint64{7}), ps.AppendTotals([]float64{-1})
		if ps.Len() != s.Table().Len() || len(bits) != 2 || bits[0] != 7 || len(totals) != ps.Len()+1 || totals[0] != -1 {
			t.Fatalf("%s: %d rows, bits %v, totals %v", p.Name, ps.Len(), bits, totals)
		}
		for row := range ps.Len() {
			if bits[1]>>row&1 == 1 != ps.Feasible(row) || totals[1+row] != ps.Total(row) {
				t.Errorf("%s row %d: bit %d, total %v; Feasible %v, Total %v", p.Name, row, bits[1]>>row&1, totals[1+row], ps.Feasible(row), ps.Total(row))
			}
		}
		if p == onlyA100 && (pt.Uniform() || ps.Feasible(0) == ps.Feasible(1)) || p == extended && !pt.Uniform() {
			t.Errorf("%s: uniform %v, feasible %v %v", p.Name, pt.Uniform(), ps.Feasible(0), ps.Feasible(1))
		}
		if pt.FiltersNothing(true) { // each asks for a GPU
			t.Errorf("%s: filters nothing", p.Name)
		}
	}
	for _, c := range []struct {
		pod         *v1.Pod
		most, least string
	}{
		{claimed, "node-a 869.8 node-b 411.5 ", "node-a 369.8 node-b 911.5 "},
		{extended, "node-a 869.8 node-b 411.5 ", "node-a 369.8 node-b 911.5 "},
		{onlyA100, "node-a - node-b 411.5 ", "node-a - node-b 911.5 "},
	} {
		if got := scores(c.pod, "MostAllocated"); got != c.most {
			t.Errorf("%s, MostAllocated: %s; want %s", c.pod.Name, got, c.most)
		}
		if got := scores(c.pod, "LeastAllocated"); got != c.least {
			t.Errorf("%s, LeastAllocated: %s; want %s", c.pod.Name, got, c.least)
		}
	}
	pt, err := kubebridge.NewPodTask(s.DRA(), schema, claimed, opts)
	if err != nil || !pt.Uniform() || pt.Task.Requests[slot] != 1000 || pt.Task.Devices != (resource.DeviceRequest{Count: 1, Each: 1000}) {
		t.Errorf("the 1-GPU claim's task: %+v, %v", pt, err)
	}

	// Assumed on node-b, the pod's claim holds gpu-0 there, in the same
	// table; forgotten, it holds nothing.
	table, row := s.Table(), 0
	if err := s.Assume(claimed, "node-b"); err != nil {
		t.Fatal(err)
	}
	row, _ = s.Row("node-b")
	if u, free := s.Table().Used(row)[slot], s.Devices().Free(row); s.Table() != table || u != 1000 || free[0] != 0 {
		t.Errorf("node-b with the pod assumed: %d used, devices %v (same table: %v)", u, free, s.Table() == table)
	}
	if err := s.Forget(claimed); err != nil {
		t.Fatal(err)
	}
	if u, free := s.Table().Used(row)[slot], s.Devices().Free(row); u != 0 || free[0] != 1000 {
		t.Errorf("node-b with the pod forgotten: %d used, devices %v", u, free)
	}
	if _, err := s.DRA().Allocate(claimed, "node-b"); err != nil {
		t.Errorf("the forgotten pod's claim is still allocated: %v", err)
	}

	// A pod bound with nvidia.com/gpu: 1 uses what its claim holds, which
	// DRA says: nothing until the claim is allocated, then gpu-0.
	bound := extended.DeepCopy()
	bound.Spec.NodeName = "node-b"
	if err := s.UpdatePod(bound); err != nil {
		t.Fatal(err)
	}
	row, _ = s.Row("node-b")
	if u := s.Table().Used(row)[slot]; u != 0 {
		t.Errorf("node-b uses %d nvidia.com/gpu before the claim is allocated", u)
	}
	held, err := dra.Read(dra.Objects{
		Slices:  dratest.TrainSlices(),
		Classes: dratest.NVIDIAClasses(),
		Claims:  append(dratest.TrainClaims(a100), dratest.AllocatedClaim("default", "extended-gpu", "node-b", "gpu-0")),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetDRA(held); err != nil {
		t.Fatal(err)
	}
	row, _ = s.Row("node-b")
	if u, free := s.Table().Used(row)[slot], s.Devices().Free(row); u != 1000 || free[0] != 0 || free[1] != 1000 {
		t.Errorf("node-b after the allocation: %d used, devices %v", u, free)
	}
}

// A GPU of a pool offered to every node (spec.allNodes) is in no node's
// amounts, so a claim the allocator gives one takes nothing of the
// node's: node-0's two A100s stay free for the pod's task there, and the
// pod fits node-0 by its row as the allocator says it does.
func TestPoolForEveryNodeTakesNothingOfTheNode(t *testing.T) {
	fabric := dratest.NVIDIASlice("fabric", "NVIDIA H100 80GB HBM3", 1, 0)
	fabric.Spec.NodeName, fabric.Spec.AllNodes = nil, new(true)
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "h100"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1, `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`))}
	d, err := dra.Read(dra.Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-0", "NVIDIA A100-SXM4-80GB", 2, 0), fabric},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{claim}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New([]*v1.Node{kubetest.Node("node-0", "cpu", "64", "memory", "512Gi", "pods", "110")}, nil, Options{DRA: d})
	if err != nil {
		t.Fatal(err)
	}
	p := dratest.PodWithClaims("p", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: new("h100")})
	pt, err := kubebridge.NewPodTask(d, s.Schema(), p, scoring.TaskOptions{Devices: kubetest.GPU})
	if err != nil {
		t.Fatal(err)
	}
	task, ok, err := pt.On("node-0")
	slot, _ := s.Schema().Slot(kubetest.GPU)
	if err != nil || !ok || task.Requests[slot] != 0 || task.Devices.Count != 0 {
		t.Errorf("on node-0: %v, %v; takes %d of nvidia.com/gpu, devices %+v", ok, err, task.Requests[slot], task.Devices)
	}
}

// A device that consumes from two counter sets uses both: with span
// (half of set a, half of set b) held, neither gpu-a nor gpu-b is wholly
// free, and the node's row holds half of each GPU as used.
func TestDeviceOverTwoCounterSetsUsesBoth(t *testing.T) {
	held := dratest.AllocatedClaim("train", "span", "node-0", "span")
	d, err := dra.Read(dra.Objects{Slices: dratest.TwoCounterSetSlices("node-0"), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{held}})
	if err != nil {
		t.Fatal(err)
	}
	if a, u := d.Amounts("node-0", "gpu.nvidia.com"); a != 2 || u != 2 {
		t.Errorf("Amounts: %d allocatable, %d used; want 2, 2", a, u)
	}
	s, err := New([]*v1.Node{kubetest.Node("node-0", "cpu", "64", "memory", "512Gi", "pods", "110")}, nil, Options{DRA: d})
	if err != nil {
		t.Fatal(err)
	}
	slot, _ := s.Schema().Slot(kubetest.GPU)
	if a, u := s.Table().Allocatable(0)[slot], s.Table().Used(0)[slot]; a != 2000 || u != 1000 {
		t.Errorf("row: %d allocatable, %d used; want 2000, 1000", a, u)
	}
}
