package kubebridge

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// migView reads a node's DRA devices into a device view.
func migView(t dratest.TB, d *dra.Reading, node string) *resource.Devices {
	t.Helper()
	view, err := resource.NewDevices(resource.GPU, 1000)
	if err != nil {
		t.Fatal(err)
	}
	row, _ := view.AddNode(0)
	if err := NodeDevices(d, view, row, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, nil); err != nil {
		t.Fatal(err)
	}
	return view
}

// An A100 with dynamic MIG is a layout in the device view: its counter
// set's 12 counters, its 14 MIG devices the parts (the whole GPU, which
// has no profile, is none), and what the claims leave of the counters:
// with a 1g.10gb at slice 0 on gpu-0, 857 of gpu-0 is free (84 of 98
// multiprocessors, 6 of 7 copy engines, its scarcest counters),
// a 3g.40gb fits both GPUs but a 7g.80gb gpu-1 alone. A pod claiming a
// 3g.40gb is a task of that partition, half an A100.
func TestMIGLayoutInTheDeviceView(t *testing.T) {
	claims := []*resourcev1.ResourceClaim{dratest.HeldClaim("held", dratest.OnDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[0], 0))),
		dratest.Claim("want", dratest.MIGRequest("r", "3g.40gb"))}
	d, err := dra.Read(dra.Objects{Slices: dratest.NVIDIAMIGSlices("node-a", 2, 0), Classes: dratest.NVIDIAClasses(), Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	view := migView(t, d, "node-a")
	if got := view.Free(0); !slices.Equal(got, []int64{857, 1000}) {
		t.Errorf("free %v", got)
	}
	units := view.Partitioned(0)
	if len(units) != 2 || units[0].Device != 0 || units[1].Device != 1 || units[0].Layout != units[1].Layout {
		t.Fatalf("partitioned %v (the two A100s share one layout)", units)
	}
	l := units[0].Layout
	if len(l.Counters()) != 12 || l.Parts() != 14 || fmt.Sprint(l.Types()) != "[1g.10gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb]" {
		t.Errorf("layout: %d counters, %d parts, types %v", len(l.Counters()), l.Parts(), l.Types())
	}
	if !view.FitsPart(0, "3g.40gb", 2) || !view.FitsPart(0, "7g.80gb", 1) || view.FitsPart(0, "7g.80gb", 2) {
		t.Error("fits part")
	}
	if task := taskOn(t, d, dratest.ClaimPod("p", "want"), "node-a"); task == nil || task.Partition != "3g.40gb" || task.Devices != (resource.DeviceRequest{Count: 1, Each: 500}) {
		t.Fatalf("task on node-a: %+v", task)
	}
}

// A slice that names its partition type attribute (KEP-4815's
// partitionTypeAttribute) types its parts by it: NVIDIA's "type" makes
// the whole GPU a part of type "gpu" and every MIG device a "mig". A
// counter consumed in fractions is counted in the unit that makes it
// whole; one that no int64 can count leaves the GPU without a layout,
// measured by its free amount alone.
func TestLayoutTypesAndUnits(t *testing.T) {
	read := func(edit func(counters, devices *resourcev1.ResourceSlice)) *resource.Devices {
		t.Helper()
		s := dratest.NVIDIAMIGSlices("node-a", 1, 0)
		edit(s[0], s[1])
		d, err := dra.Read(dra.Objects{Slices: s, Classes: dratest.NVIDIAClasses()})
		if err != nil {
			t.Fatal(err)
		}
		return migView(t, d, "node-a")
	}
	typed := read(func(_, devices *resourcev1.ResourceSlice) {
		devices.Spec.PartitionTypeAttribute = new(resourcev1.FullyQualifiedName("gpu.nvidia.com/type"))
	})
	if units := typed.Partitioned(0); len(units) != 1 || fmt.Sprint(units[0].Layout.Types()) != "[gpu mig]" {
		t.Errorf("typed by the slice's attribute: %v", units)
	}
	half := read(func(_, devices *resourcev1.ResourceSlice) {
		devices.Spec.Devices[1].ConsumesCounters[0].Counters["decoders"] = resourcev1.Counter{Value: kres.MustParse("500m")}
	})
	if units := half.Partitioned(0); len(units) != 1 || units[0].Layout.Counters()[1] != 10 || half.Free(0)[0] != 1000 {
		t.Errorf("decoders in halves: %v, free %v", units, half.Free(0))
	}
	huge := read(func(counters, devices *resourcev1.ResourceSlice) {
		counters.Spec.SharedCounters[0].Counters["memory"] = resourcev1.Counter{Value: kres.MustParse("1E")}
		for i := range devices.Spec.Devices {
			devices.Spec.Devices[i].ConsumesCounters[0].Counters["memory"] = resourcev1.Counter{Value: kres.MustParse("1E")}
		}
	})
	if units := huge.Partitioned(0); units != nil || len(huge.Free(0)) != 1 {
		t.Errorf("a counter beyond an int64's layout: %v, free %v", units, huge.Free(0))
	}
}

// Shareable H100s (KEP-5075, memory in 1Mi steps) are share layouts of
// their capacities: with 60Gi of gpu-0's memory shared out, a pod's 10Gi
// share is a task of type "memory=10Gi" (what the allocator has it
// consume), which fits gpu-0's 20Gi left; a 30Gi share only gpu-1.
func TestShareLayoutInTheDeviceView(t *testing.T) {
	share := dratest.OnDevice("node-a", "gpu-0")
	share.ShareID = new(types.UID("s0"))
	share.ConsumedCapacity = map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse("60Gi")}
	claims := []*resourcev1.ResourceClaim{dratest.HeldClaim("held", share), dratest.Claim("want", dratest.ShareRequest("r", "10Gi"))}
	d, err := dra.Read(dra.Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-a", 2, 0)}, Classes: dratest.NVIDIAClasses(), Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	view := migView(t, d, "node-a")
	units := view.Partitioned(0)
	if len(units) != 2 || !view.FitsPart(0, "memory=10Gi", 2) || view.FitsPart(0, "memory=30Gi", 2) || !view.FitsPart(0, "memory=30Gi", 1) {
		t.Fatalf("partitioned %v", units)
	}
	if got := view.Free(0); !slices.Equal(got, []int64{250, 1000}) {
		t.Errorf("free %v", got)
	}
	if task := taskOn(t, d, dratest.ClaimPod("p", "want"), "node-a"); task == nil || task.Partition != "memory=10Gi" || task.Devices != (resource.DeviceRequest{Count: 1, Each: 125}) {
		t.Fatalf("task on node-a: %+v", task)
	}
}

// taskOn is a pod's task on a node (PodTask.On) over the schema of DRA's
// classes, with the view nvidia.com/gpu; nil where its claims do not fit.
func taskOn(t dratest.TB, d *dra.Reading, pod *v1.Pod, node string) *scoring.Task {
	t.Helper()
	schema, err := SchemaFor(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := NewPodTask(d, schema, pod, scoring.TaskOptions{Devices: resource.GPU})
	if err != nil {
		t.Fatal(err)
	}
	task, ok, err := pt.On(node)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	return task
}
