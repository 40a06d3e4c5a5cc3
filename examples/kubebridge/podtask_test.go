package kubebridge

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/lifetime"
)

// AppendFeasible and AppendTotals copy every row as Feasible and Total
// read it, over more rows than a word holds, for results of one task per
// node (uniform results are checked on a snapshot above).
func TestPodScoresCopies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 200).Draw(t, "rows")
		ps := PodScores{varied: make([]podResult, n)}
		for row := range ps.varied {
			if rapid.Bool().Draw(t, "feasible") {
				ps.varied[row] = podResult{feasible: true, total: float64(rapid.IntRange(0, 1000).Draw(t, "total"))}
			}
		}
		prefix := rapid.IntRange(0, 2).Draw(t, "prefix")
		bits := ps.AppendFeasible(make([]uint64, prefix))
		totals := ps.AppendTotals(make([]float64, prefix))
		if len(bits) != prefix+(n+63)/64 || len(totals) != prefix+n {
			t.Fatalf("%d rows: %d words, %d totals after a prefix of %d", n, len(bits), len(totals), prefix)
		}
		for row := range n {
			if bits[prefix+row/64]>>(row%64)&1 == 1 != ps.Feasible(row) || totals[prefix+row] != ps.Total(row) {
				t.Fatalf("row %d: bit %v total %v; Feasible %v Total %v", row, bits[prefix+row/64]>>(row%64)&1, totals[prefix+row], ps.Feasible(row), ps.Total(row))
			}
		}
		if r := n % 64; r != 0 && bits[len(bits)-1]>>r != 0 {
			t.Fatalf("bits past the %d rows are set: %x", n, bits[len(bits)-1])
		}
	})
}

// FiltersNothing holds for a pod that asks for no devices and whose task
// is the same on every node, under filters that are DeviceShare alone;
// not for one that asks for devices, nor for one whose claims take
// different devices on different nodes (a node may be unable to satisfy
// them), nor under other filters.
func TestFiltersNothing(t *testing.T) {
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	var d *dra.Reading
	cpuPod, err := NewPodTask(d, schema, kubetest.Pod("cpu-pod", "", "cpu", "4"), scoring.TaskOptions{Devices: "nvidia.com/gpu"})
	if err != nil {
		t.Fatal(err)
	}
	gpuPod, err := NewPodTask(d, schema, kubetest.Pod("gpu-pod", "", "cpu", "4", "nvidia.com/gpu", "1"), scoring.TaskOptions{Devices: "nvidia.com/gpu"})
	if err != nil {
		t.Fatal(err)
	}
	// A claim for all of a node's GPUs takes what the node has: its task
	// asks for no device, and varies by node.
	all := dratest.Exactly("gpus", "gpu.nvidia.com", 0)
	all.Exactly.AllocationMode, all.Exactly.Count = resourcev1.DeviceAllocationModeAll, 0
	withAll, err := dra.Read(dra.Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{dratest.Claim("all", all)}})
	if err != nil {
		t.Fatal(err)
	}
	varied, err := NewPodTask(withAll, schema, dratest.ClaimPod("all-gpus", "all"), scoring.TaskOptions{Devices: "nvidia.com/gpu"})
	if err != nil || varied.Uniform() || varied.Task.Devices.Count != 0 {
		t.Fatalf("a claim for all GPUs: uniform %v, %+v, %v", varied.Uniform(), varied.Task.Devices, err)
	}
	for _, c := range []struct {
		name            string
		pt              *PodTask
		onlyDeviceShare bool
		want            bool
	}{
		{"cpu pod, DeviceShare alone", cpuPod, true, true},
		{"cpu pod, other filters", cpuPod, false, false},
		{"gpu pod, DeviceShare alone", gpuPod, true, false},
		{"claims that vary by node", varied, true, false},
	} {
		if got := c.pt.FiltersNothing(c.onlyDeviceShare); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// SetEnds says when the pod ends and whether that was learned, on its
// task: learned of pods like it, or guessed from how long it has run, is
// learned; declared is not.
func TestSetEndsSaysWhetherLearned(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", resource.GPU)
	pt, err := NewPodTask(nil, schema, kubetest.Pod("p", "", "cpu", "1", resource.GPU, "1"), scoring.TaskOptions{Devices: resource.GPU})
	if err != nil {
		t.Fatal(err)
	}
	for src, learned := range map[lifetime.Source]bool{lifetime.Declared: false, lifetime.Learned: true, lifetime.Lindy: true, lifetime.Unknown: false} {
		pt.SetEnds(100, src)
		if pt.Task.Ends != 100 || pt.Task.EndsLearned != learned {
			t.Errorf("%v: ends %v, learned %v; want 100, %v", src, pt.Task.Ends, pt.Task.EndsLearned, learned)
		}
	}
}
