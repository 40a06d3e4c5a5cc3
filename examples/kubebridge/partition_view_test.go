package kubebridge

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// A class that selects a GPU and its partitions alike (every device of
// NVIDIA's driver, as nvidia.com/gpu) counts each GPU once, as its
// counter set: two A100s with dynamic MIG, a 1g.10gb allocated on gpu-0,
// are 2000 thousandths with 143 used (as the whole-GPU class counts them),
// two devices in the device view, and a plain GPU beside them (no counter
// set: a unit of its own) is one more.
func TestAUnitCountsOnceInAClassOfItsParts(t *testing.T) {
	slices := dratest.NVIDIAMIGSlices("node-a", 2, 0)
	plain := dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 1, 0)
	plain.Spec.Pool.Name, plain.Spec.Devices[0].Name = "node-a-plain", "gpu-plain"
	d, err := dra.Read(dra.Objects{
		Slices:  append(slices, plain),
		Classes: []*resourcev1.DeviceClass{dratest.DeviceClass("any.nvidia.com", "device.driver == 'gpu.nvidia.com'", "nvidia.com/gpu")},
		Claims:  []*resourcev1.ResourceClaim{dratest.HeldClaim("mig-held", dratest.OnDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[0], 0)))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, u := d.CanonicalAmounts("node-a", 0); a != 3000 || u != 143 {
		t.Errorf("%d of %d thousandths used, want 143 of 3000", u, a)
	}
	view, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	row, _ := view.AddNode(0)
	if err := NodeDevices(d, view, row, kubetest.Node("node-a"), nil); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(view.Free(row)); got != "[857 1000 1000]" {
		t.Errorf("device view %s, want [857 1000 1000]", got)
	}
}

// The device view of DRA GPUs holds each unit with what is left of it:
// two A100s with dynamic MIG, a 3g.40gb allocated on gpu-0 (of its
// counters, 42 of 98 multiprocessors, 3 of 7 copy engines, 2 of 5
// decoders and 40 of 80Gi of memory: half the memory left, its scarcest,
// 500 of 1000; its memory slices are slots, which do not count); then two shareable
// H100s, shares of 20Gi and 40Gi allocated on gpu-0 (a quarter of its
// 80Gi left, 250).
func TestDeviceViewHoldsWhatIsLeft(t *testing.T) {
	for _, c := range []struct {
		name  string
		slice []*resourcev1.ResourceSlice
		held  []resourcev1.DeviceRequestAllocationResult
		free  string
	}{
		{"mig", dratest.NVIDIAMIGSlices("node-a", 2, 0), []resourcev1.DeviceRequestAllocationResult{dratest.OnDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[2], 0))}, "[500 1000]"},
		{"shares", []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-a", 2, 0)}, func() []resourcev1.DeviceRequestAllocationResult {
			var out []resourcev1.DeviceRequestAllocationResult
			for i, m := range []string{"20Gi", "40Gi"} {
				r := dratest.OnDevice("node-a", "gpu-0")
				r.ShareID = new(types.UID(fmt.Sprint("s", i)))
				r.ConsumedCapacity = map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse(m)}
				out = append(out, r)
			}
			return out
		}(), "[250 1000]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var claims []*resourcev1.ResourceClaim
			for i, r := range c.held {
				claims = append(claims, dratest.HeldClaim(fmt.Sprint("held-", i), r))
			}
			d, err := dra.Read(dra.Objects{Slices: c.slice, Classes: dratest.NVIDIAClasses(), Claims: claims})
			if err != nil {
				t.Fatal(err)
			}
			view, err := resource.NewDevices(resource.GPU, 1000)
			if err != nil {
				t.Fatal(err)
			}
			row, err := view.AddNode(0)
			if err != nil {
				t.Fatal(err)
			}
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
			if err := NodeDevices(d, view, row, node, nil); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(view.Free(row)); got != c.free {
				t.Errorf("free %s, want %s", got, c.free)
			}
		})
	}
}

// A claim asking one class twice, for 1 GPU and for 2, takes three GPUs,
// as kube's allocator gives them (TestTwoRequestsOfOneClassTakeThree):
// the pod's task asks 3000 thousandths of
// nvidia.com/gpu, on the node and before one is chosen (its nominal
// task), more than a node of two GPUs has.
func TestTwoRequestsOfOneClassAdd(t *testing.T) {
	claim := dratest.Claim("pair", dratest.Exactly("one", "gpu.nvidia.com", 1), dratest.Exactly("two", "gpu.nvidia.com", 2))
	d, err := dra.Read(dra.Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "H100", 4, 0), dratest.NVIDIASlice("node-b", "H100", 2, 0)},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{claim}})
	if err != nil {
		t.Fatal(err)
	}
	pod := dratest.ClaimPod("p", "pair")
	schema, err := SchemaFor(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	slot, ok := schema.Slot(resource.GPU)
	if !ok {
		t.Fatalf("no %s in %v", resource.GPU, schema.Names())
	}
	pt, err := NewPodTask(d, schema, pod, scoring.TaskOptions{Devices: resource.GPU})
	if err != nil {
		t.Fatal(err)
	}
	if pt.Task.Requests[slot] != 3000 {
		t.Errorf("nominal task asks %d of %s, want 3000", pt.Task.Requests[slot], resource.GPU)
	}
	if task := taskOn(t, d, pod, "node-a"); task == nil || task.Requests[slot] != 3000 || task.Devices.Count != 3 {
		t.Errorf("task on node-a: %+v, want 3000 of %s in 3 devices", task, resource.GPU)
	}
	if a, _ := d.Amounts("node-b", "gpu.nvidia.com"); a >= 3 {
		t.Errorf("node-b has %d GPUs, want fewer than the pod's 3", a)
	}
	if _, ok, err := d.Fit("node-b", pod); ok || err != nil {
		t.Errorf("the pod fits node-b of 2 GPUs (%v)", err)
	}
}

// A pod whose claim is allocated already may run only on the nodes the
// allocation's nodeSelector selects, as kube-scheduler's DynamicResources
// filters it: kube's allocator writes the node of a node's devices by name
// (shared, on node-a's gpu-0). The selector decides where it and the
// devices disagree (moved: node-a's gpu-1, selecting node-b); without one
// the claim binds the pod nowhere (loose). A selector by labels is matched
// against the nodes the host gives (node-a is in rack r1); without them it
// is left to the scheduler.
func TestAllocatedClaimBindsThePod(t *testing.T) {
	nodeName := func(names ...string) *v1.NodeSelector {
		return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: names}}}}}
	}
	elsewhere := dratest.HeldClaim("elsewhere", dratest.OnDevice(dratest.FabricPool, "link-0"))
	elsewhere.Status.Allocation.NodeSelector = nodeName("node-b")
	byLabel := dratest.HeldClaim("by-label", dratest.OnDevice(dratest.FabricPool, "link-1"))
	byLabel.Status.Allocation.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "rack", Operator: v1.NodeSelectorOpIn, Values: []string{"r1"}}}}}}
	moved := dratest.HeldClaim("moved", dratest.OnDevice("node-a", "gpu-1"))
	moved.Status.Allocation.NodeSelector = nodeName("node-b")
	loose := dratest.HeldClaim("loose", dratest.OnDevice("node-a", "gpu-2"))
	loose.Status.Allocation.NodeSelector = nil
	rack := kubetest.Node("node-a")
	rack.Labels = map[string]string{"rack": "r1"}
	for _, nodes := range [][]*v1.Node{nil, {rack, kubetest.Node("node-b")}} {
		d, err := dra.Read(dra.Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "H100", 4, 0), dratest.NVIDIASlice("node-b", "H100", 2, 0)},
			Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
				dratest.HeldClaim("shared", dratest.OnDevice("node-a", "gpu-0")), elsewhere, byLabel, moved, loose,
				dratest.Claim("more", dratest.Exactly("r", "gpu.nvidia.com", 1)),
			}, Nodes: nodes})
		if err != nil {
			t.Fatal(err)
		}
		twoClaims := dratest.ClaimPod("p", "shared")
		twoClaims.Spec.ResourceClaims = append(twoClaims.Spec.ResourceClaims, v1.PodResourceClaim{Name: "more", ResourceClaimName: new("more")})
		both := dratest.ClaimPod("q", "shared")
		both.Spec.ResourceClaims = append(both.Spec.ResourceClaims, v1.PodResourceClaim{Name: "elsewhere", ResourceClaimName: new("elsewhere")})
		labelled := "node-a node-b"
		if nodes != nil {
			labelled = "node-a"
		}
		for _, c := range []struct {
			pod  *v1.Pod
			want string
		}{
			{dratest.ClaimPod("p", "shared"), "node-a"},
			{twoClaims, "node-a"},
			{dratest.ClaimPod("p", "elsewhere"), "node-b"},
			{both, ""},
			{dratest.ClaimPod("p", "by-label"), labelled},
			{dratest.ClaimPod("p", "moved"), "node-b"},
			{dratest.ClaimPod("p", "loose"), "node-a node-b"},
		} {
			schema, err := SchemaFor(d, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			pt, err := NewPodTask(d, schema, c.pod, scoring.TaskOptions{Devices: resource.GPU})
			if err != nil {
				t.Fatal(err)
			}
			var on []string
			for _, node := range []string{"node-a", "node-b"} {
				if _, ok, err := pt.On(node); err != nil {
					t.Fatal(err)
				} else if ok {
					on = append(on, node)
				}
			}
			if got := strings.Join(on, " "); got != c.want {
				t.Errorf("nodes given %v: %s naming %v: on %q, want %q", nodes != nil, c.pod.Name, c.pod.Spec.ResourceClaims, got, c.want)
			}
			if pinned := c.want != "node-a node-b"; pinned && (pt.Uniform() || pt.FiltersNothing(true)) {
				t.Errorf("%s: uniform %v though its claims bind it", c.pod.Name, pt.Uniform())
			}
		}
	}
}

// A claim asking a GPU with admin access beside one for itself needs two
// devices, as kube's allocator gives them (one claim does not get one
// device twice), yet takes only the one from the node (admin access takes
// nothing from others, and may take a device in use): on node-a, gpu-0
// held by another claim, the pod's task asks one GPU; on node-b, of one
// GPU, it does not fit, though the node's amounts leave that GPU free.
func TestAdminAccessNeedsADeviceOfItsOwn(t *testing.T) {
	admin := dratest.Exactly("admin", "gpu.nvidia.com", 1)
	admin.Exactly.AdminAccess = new(true)
	d, err := dra.Read(dra.Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "H100", 2, 0), dratest.NVIDIASlice("node-b", "H100", 1, 0)},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
			dratest.HeldClaim("other", dratest.OnDevice("node-a", "gpu-0")),
			dratest.Claim("watch", admin, dratest.Exactly("gpu", "gpu.nvidia.com", 1)),
		}})
	if err != nil {
		t.Fatal(err)
	}
	pod := dratest.ClaimPod("p", "watch")
	schema, err := SchemaFor(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	slot, _ := schema.Slot(resource.GPU)
	pt, err := NewPodTask(d, schema, pod, scoring.TaskOptions{Devices: resource.GPU})
	if err != nil || pt.Uniform() {
		t.Fatalf("task %+v, %v: want one that depends on the node", pt, err)
	}
	if task, ok, err := pt.On("node-a"); err != nil || !ok || task.Requests[slot] != 1000 {
		t.Errorf("on node-a: %+v, %v, %v; want 1000 of %s", task, ok, err, resource.GPU)
	}
	if _, ok, err := pt.On("node-b"); err != nil || ok {
		t.Errorf("on node-b of one GPU: fits %v (%v)", ok, err)
	}
}
