package kubebridge

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/dratest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// claimPod is a pod in namespace ns naming one claim.
func claimPod(name, claim string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1.PodSpec{ResourceClaims: []v1.PodResourceClaim{{Name: "c", ResourceClaimName: &claim}}}}
}

// pendingClaim is a claim in namespace ns with these requests.
func newClaim(name string, requests ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: dratest.ClaimSpec(requests...)}
}

// held is an allocated claim holding these results.
func held(name string, results ...resourcev1.DeviceRequestAllocationResult) *resourcev1.ResourceClaim {
	c := newClaim(name, dratest.Exactly("r", "gpu.nvidia.com", 1))
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}
	return c
}

func onDevice(pool, device string) resourcev1.DeviceRequestAllocationResult {
	return resourcev1.DeviceRequestAllocationResult{Request: "r", Driver: "gpu.nvidia.com", Pool: pool, Device: device}
}

// devicesOn is what a pod's one claim takes on a node, as "device
// memory=…" for a share, "-" where it does not fit.
func devicesOn(t fataler, d *DRA, pod *v1.Pod, node string) string {
	t.Helper()
	claims, ok, err := d.Allocation(pod, node)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "-"
	}
	if len(claims) == 0 {
		return "" // allocated already: it asks for nothing
	}
	var out []string
	for _, r := range claims[0].Result.Devices.Results {
		s := r.Device
		if q, ok := r.ConsumedCapacity["memory"]; ok {
			s += " memory=" + q.String()
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// KEP-4815 on dynamic MIG as NVIDIA's driver publishes it: one A100 whose
// 3g.40gb at memory slices 0–3 is allocated. The whole GPU no longer
// fits (its counter set is partly consumed), nor does a 4g.40gb (its one
// placement overlaps the allocated one) or a 7g.80gb; a 3g.40gb takes the
// other placement (slices 4–7), a 1g.10gb the first free slice (4), and a
// 2g.20gb the placement at 4.
func TestDynamicMIGCountersAsKubesAllocator(t *testing.T) {
	objects := DRAObjects{Slices: dratest.NVIDIAMIGSlices("node-a", 1, 0), Classes: dratest.NVIDIAClasses()}
	objects.Claims = append(objects.Claims, held("mig-held", onDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[2], 0))))
	want := map[string]string{
		"whole":   "-",
		"7g.80gb": "-",
		"4g.40gb": "-",
		"3g.40gb": "gpu-0-mig-3g40gb-9-4",
		"2g.20gb": "gpu-0-mig-2g20gb-14-4",
		"1g.10gb": "gpu-0-mig-1g10gb-19-4",
	}
	for name := range want {
		request := dratest.Exactly("r", "gpu.nvidia.com", 1)
		if name != "whole" {
			request = dratest.MIGRequest("r", name)
		}
		objects.Claims = append(objects.Claims, newClaim("want-"+name, request))
	}
	d, err := ReadDRA(objects)
	if err != nil {
		t.Fatal(err)
	}
	for name, devices := range want {
		if got := devicesOn(t, d, claimPod("p-"+name, "want-"+name), "node-a"); got != devices {
			t.Errorf("%s: takes %s, want %s", name, got, devices)
		}
	}
	// Without the allocated partition the whole GPU fits, and it is gone
	// once it is allocated: every placement consumes some of its counters.
	free, err := ReadDRA(DRAObjects{Slices: objects.Slices, Classes: objects.Classes, Claims: objects.Claims[1:]})
	if err != nil {
		t.Fatal(err)
	}
	if got := devicesOn(t, free, claimPod("p", "want-whole"), "node-a"); got != "gpu-0" {
		t.Errorf("the whole GPU on a free A100: %s", got)
	}
	after, err := free.Allocate(claimPod("p", "want-whole"), "node-a")
	if err != nil {
		t.Fatal(err)
	}
	if got := devicesOn(t, after, claimPod("q", "want-1g.10gb"), "node-a"); got != "-" {
		t.Errorf("a 1g.10gb beside an allocated whole GPU: %s", got)
	}
}

// A pool whose slices are not all published (its counters' slice
// missing) has no device the allocator uses: nothing fits there, and its
// classes are not simple (a node's amounts do not decide).
func TestIncompletePoolHasNothingToGive(t *testing.T) {
	slices := dratest.NVIDIAMIGSlices("node-a", 1, 0)
	d, err := ReadDRA(DRAObjects{Slices: slices[1:], Classes: dratest.NVIDIAClasses(),
		Claims: []*resourcev1.ResourceClaim{newClaim("gpu", dratest.Exactly("r", "gpu.nvidia.com", 1)), newClaim("mig", dratest.MIGRequest("r", "1g.10gb"))}})
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []string{"gpu", "mig"} {
		if got := devicesOn(t, d, claimPod("p", claim), "node-a"); got != "-" {
			t.Errorf("%s in an incomplete pool: takes %s", claim, got)
		}
	}
	for _, c := range d.Classes() {
		if c.Simple {
			t.Errorf("class %s of an incomplete pool of partitions is simple", c.Name)
		}
	}
}

// KEP-5075 on shareable GPUs as NVIDIA's driver publishes them (memory
// shares, 1Mi steps, the whole 80Gi by default): gpu-0 has shares of 60Gi
// allocated, gpu-1 none. A 10Gi share fits gpu-0's 20Gi left and takes
// it; a 30Gi share does not, and goes to gpu-1; a request without a
// capacity takes the policy's default, the whole 80Gi, which only gpu-1
// has; a 90Gi share fits nowhere.
func TestShareableGPUCapacityAsKubesAllocator(t *testing.T) {
	share := func(device, memory, id string) resourcev1.DeviceRequestAllocationResult {
		r := onDevice("node-a", device)
		uid := types.UID(id)
		r.ShareID, r.ConsumedCapacity = &uid, map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse(memory)}
		return r
	}
	objects := DRAObjects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-a", 2, 0)}, Classes: dratest.NVIDIAClasses(),
		Claims: []*resourcev1.ResourceClaim{held("a", share("gpu-0", "40Gi", "s1")), held("b", share("gpu-0", "20Gi", "s2"))}}
	want := map[string]string{"10Gi": "gpu-0 memory=10Gi", "30Gi": "gpu-1 memory=30Gi", "default": "gpu-1 memory=80Gi", "90Gi": "-"}
	for name := range want {
		request := dratest.Exactly("r", "gpu.nvidia.com", 1)
		if name != "default" {
			request = dratest.ShareRequest("r", name)
		}
		objects.Claims = append(objects.Claims, newClaim("share-"+name, request))
	}
	d, err := ReadDRA(objects)
	if err != nil {
		t.Fatal(err)
	}
	for name, devices := range want {
		if got := devicesOn(t, d, claimPod("p-"+name, "share-"+name), "node-a"); got != devices {
			t.Errorf("%s: takes %s, want %s", name, got, devices)
		}
	}
	if c := d.Classes()[0]; c.Name != "gpu.nvidia.com" || c.Simple {
		t.Errorf("the class of shareable GPUs: %+v, want gpu.nvidia.com not simple", c)
	}
	// Two 10Gi shares placed one after the other both fit gpu-0's 20Gi.
	after, err := d.Allocate(claimPod("p", "share-10Gi"), "node-a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := ReadDRA(DRAObjects{Slices: objects.Slices, Classes: objects.Classes, Claims: append(claimsOf(after), newClaim("more", dratest.ShareRequest("r", "10Gi")))})
	if err != nil {
		t.Fatal(err)
	}
	if got := devicesOn(t, again, claimPod("q", "more"), "node-a"); got != "gpu-0 memory=10Gi" {
		t.Errorf("a second 10Gi share: %s", got)
	}
	if got := devicesOn(t, again, claimPod("q", "share-10Gi"), "node-a"); got != "" {
		t.Errorf("the placed claim asks again: %q", got)
	}
}

// Counters, capacities and request policies that are malformed are
// errors naming the slice or claim and the field.
func TestMalformedPartitionsAndCapacity(t *testing.T) {
	negative := kres.MustParse("-1")
	for _, c := range []struct {
		name   string
		break_ func(slices []*resourcev1.ResourceSlice, claims []*resourcev1.ResourceClaim)
		want   string
	}{
		{"negative counter", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[0].Spec.SharedCounters[0].Counters["memory"] = resourcev1.Counter{Value: negative}
		}, "resourceslice node-a-gpu.nvidia.com-counters-0: spec.sharedCounters[0].counters[memory].value: -1 is negative"},
		{"unknown counter set", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[1].Spec.Devices[3].ConsumesCounters[0].CounterSet = "gpu-9-counter-set"
		}, `resourceslice node-a-gpu.nvidia.com-devices-0: spec.devices[3].consumesCounters[0].counterSet: no counter set "gpu-9-counter-set" in pool node-a`},
		{"unknown counter", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[1].Spec.Devices[1].ConsumesCounters[0].Counters["tensor-cores"] = resourcev1.Counter{Value: kres.MustParse("1")}
		}, `resourceslice node-a-gpu.nvidia.com-devices-0: spec.devices[1].consumesCounters[0].counters[tensor-cores]: counter set "gpu-0-counter-set" has no such counter`},
		{"negative consumption", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[1].Spec.Devices[1].ConsumesCounters[0].Counters["memory"] = resourcev1.Counter{Value: negative}
		}, "resourceslice node-a-gpu.nvidia.com-devices-0: spec.devices[1].consumesCounters[0].counters[memory].value: -1 is negative"},
		{"counter set twice", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[0].Spec.SharedCounters = append(s[0].Spec.SharedCounters, s[0].Spec.SharedCounters[0])
		}, `resourceslice node-a-gpu.nvidia.com-counters-0: spec.sharedCounters[1].name: counter set "gpu-0-counter-set" is resourceslice node-a-gpu.nvidia.com-counters-0's too`},
		{"negative capacity", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[2].Spec.Devices[0].Capacity["memory"] = resourcev1.DeviceCapacity{Value: negative}
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[0].capacity[memory].value: -1 is negative"},
		{"default above capacity", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			p := s[2].Spec.Devices[0].Capacity["memory"]
			p.RequestPolicy.Default = new(kres.MustParse("81Gi"))
			s[2].Spec.Devices[0].Capacity["memory"] = p
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[0].capacity[memory].requestPolicy.default: 81Gi is not within 0 and the capacity's value 80Gi"},
		{"zero step", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[2].Spec.Devices[1].Capacity["memory"].RequestPolicy.ValidRange.Step = new(kres.MustParse("0"))
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[1].capacity[memory].requestPolicy.validRange.step: 0 is not positive"},
		{"min above max", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			s[2].Spec.Devices[1].Capacity["memory"].RequestPolicy.ValidRange.Min = new(kres.MustParse("80Gi"))
			s[2].Spec.Devices[1].Capacity["memory"].RequestPolicy.ValidRange.Max = new(kres.MustParse("1Gi"))
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[1].capacity[memory].requestPolicy.validRange: min 80Gi is above max 1Gi"},
		{"default not valid", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			p := s[2].Spec.Devices[1].Capacity["memory"]
			p.RequestPolicy.ValidRange, p.RequestPolicy.ValidValues = nil, []kres.Quantity{kres.MustParse("10Gi"), kres.MustParse("20Gi")}
			s[2].Spec.Devices[1].Capacity["memory"] = p
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[1].capacity[memory].requestPolicy.default: 80Gi is not one of validValues"},
		{"valid values out of order", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			p := s[2].Spec.Devices[1].Capacity["memory"]
			p.RequestPolicy.ValidRange, p.RequestPolicy.ValidValues = nil, []kres.Quantity{kres.MustParse("80Gi"), kres.MustParse("10Gi"), kres.MustParse("30Gi")}
			s[2].Spec.Devices[1].Capacity["memory"] = p
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[1].capacity[memory].requestPolicy.validValues[1]: 10Gi after 80Gi: values must be strictly ascending"},
		{"valid value twice", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			p := s[2].Spec.Devices[1].Capacity["memory"]
			p.RequestPolicy.ValidRange, p.RequestPolicy.ValidValues = nil, []kres.Quantity{kres.MustParse("10Gi"), kres.MustParse("10240Mi"), kres.MustParse("80Gi")}
			s[2].Spec.Devices[1].Capacity["memory"] = p
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[1].capacity[memory].requestPolicy.validValues[1]: 10Gi after 10Gi: values must be strictly ascending"},
		{"eleven valid values", func(s []*resourcev1.ResourceSlice, _ []*resourcev1.ResourceClaim) {
			p := s[2].Spec.Devices[1].Capacity["memory"]
			p.RequestPolicy.ValidRange, p.RequestPolicy.ValidValues = nil, nil
			for g := 70; g <= 80; g++ {
				p.RequestPolicy.ValidValues = append(p.RequestPolicy.ValidValues, kres.MustParse(fmt.Sprintf("%dGi", g)))
			}
			s[2].Spec.Devices[1].Capacity["memory"] = p
		}, "resourceslice node-b-gpu.nvidia.com-shared-0: spec.devices[1].capacity[memory].requestPolicy.validValues: 11 values, more than the API's 10"},
		{"negative consumed capacity", func(_ []*resourcev1.ResourceSlice, c []*resourcev1.ResourceClaim) {
			c[0].Status.Allocation.Devices.Results[0].ConsumedCapacity = map[resourcev1.QualifiedName]kres.Quantity{"memory": negative}
		}, "resourceclaim ns/held: status.allocation.devices.results[0].consumedCapacity[memory]: -1 is negative"},
		{"empty share ID", func(_ []*resourcev1.ResourceSlice, c []*resourcev1.ResourceClaim) {
			c[0].Status.Allocation.Devices.Results[0].ShareID = new(types.UID(""))
		}, "resourceclaim ns/held: status.allocation.devices.results[0].shareID: empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			slices := append(dratest.NVIDIAMIGSlices("node-a", 1, 0), dratest.NVIDIAShareableSlice("node-b", 2, 0))
			claims := []*resourcev1.ResourceClaim{held("held", onDevice("node-b", "gpu-0"))}
			c.break_(slices, claims)
			_, err := ReadDRA(DRAObjects{Slices: slices, Classes: dratest.NVIDIAClasses(), Claims: claims})
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %s", err, c.want)
			}
		})
	}
}

// A node's amounts count whole units, a GPU with partitions once (its
// counter set), taken when any part of it is; a claim takes a unit
// only when it takes a device whole: two A100s with dynamic MIG, a
// 1g.10gb allocated on gpu-0; then two shareable H100s, a 20Gi share
// allocated on gpu-0.
func TestAmountsCountWholeUnits(t *testing.T) {
	mig := DRAObjects{Slices: dratest.NVIDIAMIGSlices("node-a", 2, 0), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
		held("mig-held", onDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[0], 0))),
		newClaim("whole", dratest.Exactly("r", "gpu.nvidia.com", 1)), newClaim("part", dratest.MIGRequest("r", "3g.40gb")),
	}}
	d, err := ReadDRA(mig)
	if err != nil {
		t.Fatal(err)
	}
	for class, want := range map[string][2]int64{"gpu.nvidia.com": {2, 1}, "mig.nvidia.com": {2, 1}} {
		if a, u := d.Amounts("node-a", class); a != want[0] || u != want[1] {
			t.Errorf("%s: %d of %d used, want %d of %d", class, u, a, want[1], want[0])
		}
	}
	// In nvidia.com/gpu's thousandths: of gpu-0, what its 1g.10gb takes of
	// its scarcest counter (14 of 98 multiprocessors, 1 of 7 copy engines:
	// 1/7 used, 857 left, floored), 143; mig.nvidia.com's implicit
	// resource counts whole units.
	if a, u := d.canonicalAmounts("node-a", 0); a != 2000 || u != 143 {
		t.Errorf("A100s: %d of %d thousandths used, want 143 of 2000", u, a)
	}
	if a, u := d.canonicalAmounts("node-a", 1); a != 2 || u != 1 {
		t.Errorf("A100s' MIG class: %d of %d used, want 1 of 2", u, a)
	}
	// nvidia.com/gpu counts in thousandths, mig.nvidia.com's implicit
	// resource in whole units; a GPU is one unit to both classes. The whole
	// A100 is 1000 of nvidia.com/gpu and the one unit of the MIG class; a
	// 3g.40gb is half the GPU (40 of its 80Gi, its largest share) in
	// nvidia.com/gpu, and none of a whole MIG unit.
	for claim, want := range map[string]string{"whole": "[1000 1]", "part": "[500 0]"} {
		take, ok, err := d.Fit("node-a", claimPod("p", claim))
		if err != nil || !ok || fmt.Sprint(take) != want {
			t.Errorf("%s takes %v (%v, %v), want %s", claim, take, ok, err, want)
		}
	}

	uid := types.UID("s1")
	share := onDevice("node-b", "gpu-0")
	share.ShareID, share.ConsumedCapacity = &uid, map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse("20Gi")}
	shared := DRAObjects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-b", 2, 0)}, Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
		held("share-held", share), newClaim("whole", dratest.Exactly("r", "gpu.nvidia.com", 1)), newClaim("part", dratest.ShareRequest("r", "10Gi")),
	}}
	if d, err = ReadDRA(shared); err != nil {
		t.Fatal(err)
	}
	if a, u := d.Amounts("node-b", "gpu.nvidia.com"); a != 2 || u != 1 {
		t.Errorf("shareable GPUs: %d of %d used, want 1 of 2", u, a)
	}
	// In nvidia.com/gpu's thousandths, the row holds what is used of each:
	// 20Gi of gpu-0's 80Gi, 250.
	if a, u := d.canonicalAmounts("node-b", 0); a != 2000 || u != 250 {
		t.Errorf("shareable GPUs: %d of %d thousandths used, want 250 of 2000", u, a)
	}
	// A 10Gi share takes an eighth of an H100's 80Gi: 125 thousandths.
	for claim, want := range map[string]string{"whole": "[1000 0]", "part": "[125 0]"} {
		take, ok, err := d.Fit("node-b", claimPod("p", claim))
		if err != nil || !ok || fmt.Sprint(take) != want {
			t.Errorf("%s takes %v (%v, %v), want %s", claim, take, ok, err, want)
		}
	}
}

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
	d, err := ReadDRA(DRAObjects{
		Slices:  append(slices, plain),
		Classes: []*resourcev1.DeviceClass{dratest.DeviceClass("any.nvidia.com", "device.driver == 'gpu.nvidia.com'", "nvidia.com/gpu")},
		Claims:  []*resourcev1.ResourceClaim{held("mig-held", onDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[0], 0)))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, u := d.canonicalAmounts("node-a", 0); a != 3000 || u != 143 {
		t.Errorf("%d of %d thousandths used, want 143 of 3000", u, a)
	}
	view, err := resource.NewDevices("nvidia.com/gpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	row, _ := view.AddNode(0)
	if err := NodeDevices(d, view, row, node("node-a"), nil); err != nil {
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
		{"mig", dratest.NVIDIAMIGSlices("node-a", 2, 0), []resourcev1.DeviceRequestAllocationResult{onDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[2], 0))}, "[500 1000]"},
		{"shares", []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-a", 2, 0)}, func() []resourcev1.DeviceRequestAllocationResult {
			var out []resourcev1.DeviceRequestAllocationResult
			for i, m := range []string{"20Gi", "40Gi"} {
				r := onDevice("node-a", "gpu-0")
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
				claims = append(claims, held(fmt.Sprint("held-", i), r))
			}
			d, err := ReadDRA(DRAObjects{Slices: c.slice, Classes: dratest.NVIDIAClasses(), Claims: claims})
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

// A reader that reads again after a claim was allocated on one node keeps
// the other nodes' allocators and what they gave, and asks again on the
// node that changed: what it says equals a fresh reading's, node by node.
func TestReadAgainKeepsUnchangedNodesAllocations(t *testing.T) {
	slices := append(dratest.NVIDIAMIGSlices("node-a", 1, 0), dratest.NVIDIAMIGSlices("node-b", 1, 0)...)
	pending := newClaim("want", dratest.MIGRequest("r", "4g.40gb"))
	claims := []*resourcev1.ResourceClaim{pending}
	classes := dratest.NVIDIAClasses()
	var r DRAReader
	d, err := r.Read(DRAObjects{Slices: slices, Classes: classes, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"node-a", "node-b"} {
		if got := devicesOn(t, d, claimPod("p", "want"), node); got != "gpu-0-mig-4g40gb-5-0" {
			t.Fatalf("%s first: %s", node, got)
		}
	}
	// A 1g.10gb at slice 0 is allocated on node-a: the 4g.40gb's one
	// placement is gone there.
	claims = append(claims, held("held", onDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[0], 0))))
	again, err := r.Read(DRAObjects{Slices: slices, Classes: classes, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	if changed, same := again.ChangedNodes(d); !same || fmt.Sprint(changed) != "[node-a]" {
		t.Fatalf("changed %v (same devices %v)", changed, same)
	}
	fresh, err := ReadDRA(DRAObjects{Slices: slices, Classes: dratest.NVIDIAClasses(), Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{"node-a": "-", "node-b": "gpu-0-mig-4g40gb-5-0"} {
		got, fromScratch := devicesOn(t, again, claimPod("p", "want"), node), devicesOn(t, fresh, claimPod("p", "want"), node)
		if got != want || fromScratch != want {
			t.Errorf("%s after: %s (a fresh reading: %s), want %s", node, got, fromScratch, want)
		}
	}
	if again.alloc.nodes["node-b"] != d.alloc.nodes["node-b"] || again.alloc.nodes["node-a"] == d.alloc.nodes["node-a"] {
		t.Error("node-b's allocator was not kept, or node-a's was")
	}
}

// A DRAReader told of claims taken and given back, partitions of MIG GPUs
// and shares of shareable ones among them, works out what they consume
// from the last reading's usage (usageFrom) as ReadDRA works it out from
// every claim: the same counters, capacities and whole devices, and the
// same device view.
func TestReaderUsageMatchesReadDRA(t *testing.T) {
	slices := append(dratest.NVIDIAMIGSlices("node-a", 2, 0), dratest.NVIDIAShareableSlice("node-b", 2, 0), dratest.NVIDIASlice("node-c", "NVIDIA H100 80GB HBM3", 8, 0))
	classes := dratest.NVIDIAClasses()
	share := func(device, memory, id string) resourcev1.DeviceRequestAllocationResult {
		r := onDevice("node-b", device)
		uid := types.UID(id)
		r.ShareID, r.ConsumedCapacity = &uid, map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse(memory)}
		return r
	}
	var pool []*resourcev1.ResourceClaim // two objects per key: a claim changed
	for i := range 12 {
		for v := range 2 {
			var result resourcev1.DeviceRequestAllocationResult
			switch p := dratest.A100MIG[(i+v)%len(dratest.A100MIG)]; i % 4 {
			case 0, 1:
				result = onDevice("node-a", dratest.MIGDeviceName((i+v)%2, p, p.Starts[(i+v)%len(p.Starts)]))
			case 2:
				result = share(fmt.Sprint("gpu-", (i+v)%2), fmt.Sprint(10*(i+v+1), "Gi"), fmt.Sprint("s", i, v))
			default: // a whole GPU of its own
				result = onDevice("node-c", fmt.Sprint("gpu-", i/4*2+v))
			}
			pool = append(pool, held(fmt.Sprint("c", i), result))
		}
	}
	usageOf := func(d *DRA) string {
		u := d.usage()
		var lines []string
		for id := range u.whole.all() {
			lines = append(lines, fmt.Sprint("whole ", id))
		}
		for id, m := range u.capacity.all() {
			for name, q := range m {
				if q.Sign() != 0 {
					lines = append(lines, fmt.Sprint("capacity ", id, " ", name, " ", q.RatString()))
				}
			}
		}
		for unit, m := range u.counters.all() {
			for name, q := range m {
				if q.Sign() != 0 {
					lines = append(lines, fmt.Sprint("counter ", unit, " ", name, " ", q.RatString()))
				}
			}
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	rapid.Check(t, func(t *rapid.T) {
		var r DRAReader
		var listed []*resourcev1.ResourceClaim
		for step := range rapid.IntRange(1, 8).Draw(t, "readings") {
			var claims []*resourcev1.ResourceClaim
			for i := 0; i < len(pool); i += 2 {
				switch rapid.IntRange(0, 2).Draw(t, fmt.Sprint("claim ", i/2)) {
				case 1:
					claims = append(claims, pool[i])
				case 2:
					claims = append(claims, pool[i+1])
				}
			}
			var got *DRA
			var err error
			if step > 0 && rapid.Bool().Draw(t, "told") {
				changes := map[string]*resourcev1.ResourceClaim{}
				for _, c := range listed {
					changes["ns/"+c.Name] = nil
				}
				for _, c := range claims {
					changes["ns/"+c.Name] = c
				}
				got, err = r.ReadClaims(changes, nil)
			} else {
				got, err = r.Read(DRAObjects{Slices: slices, Classes: classes, Claims: claims})
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := ReadDRA(DRAObjects{Slices: slices, Classes: classes, Claims: claims})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := draFingerprint(got), draFingerprint(want); g != w {
				t.Fatalf("reading %d:\n%s\nwant\n%s", step, g, w)
			}
			if g, w := usageOf(got), usageOf(want); g != w {
				t.Fatalf("reading %d: usage\n%s\nwant\n%s", step, g, w)
			}
			for _, node := range []string{"node-a", "node-b", "node-c"} {
				for _, dev := range want.Devices(node) {
					if g, w := got.unitLeft(&dev, got.sets), want.unitLeft(&dev, want.sets); g.Cmp(w) != 0 {
						t.Fatalf("reading %d: %s has %s left, want %s", step, dev.ID, g.RatString(), w.RatString())
					}
				}
				ga, gu := got.Amounts(node, "gpu.nvidia.com")
				wa, wu := want.Amounts(node, "gpu.nvidia.com")
				if ga != wa || gu != wu {
					t.Fatalf("reading %d: %s has %d of %d used, want %d of %d", step, node, gu, ga, wu, wa)
				}
			}
			listed = claims
		}
	})
}

// A pool of plain GPUs that says it has two slices, with one listed: kube's
// allocator takes none of its devices, so the node has no GPU to count,
// in whole units, in nvidia.com/gpu's thousandths or in its device view;
// the same slice saying it is the pool's only one gives 2 GPUs.
func TestIncompletePoolCountsNoCapacity(t *testing.T) {
	for _, count := range []int64{2, 1} {
		s := dratest.NVIDIASlice("node-a", "H100", 2, 0)
		s.Spec.Pool.ResourceSliceCount = count
		d, err := ReadDRA(DRAObjects{Slices: []*resourcev1.ResourceSlice{s}, Classes: dratest.NVIDIAClasses()})
		if err != nil {
			t.Fatal(err)
		}
		units, thousandths, view := int64(0), int64(0), "[]"
		if count == 1 {
			units, thousandths, view = 2, 2000, "[1/1 1/1]" // each GPU wholly free
		}
		if a, u := d.Amounts("node-a", "gpu.nvidia.com"); a != units || u != 0 {
			t.Errorf("pool of %d slices, 1 listed: %d of %d GPUs used, want 0 of %d", count, u, a, units)
		}
		if a, u := d.canonicalAmounts("node-a", 0); a != thousandths || u != 0 {
			t.Errorf("pool of %d slices, 1 listed: %d of %d thousandths used, want 0 of %d", count, u, a, thousandths)
		}
		if nd := d.draNodeDevices("node-a", resource.GPU); fmt.Sprint(nd.left) != view && !(view == "[]" && nd.left == nil) {
			t.Errorf("pool of %d slices, 1 listed: device view %v, want %s", count, nd.left, view)
		}
	}
}

// A claim asking one class twice, for 1 GPU and for 2, takes three GPUs,
// as kube's allocator gives them: the pod's task asks 3000 thousandths of
// nvidia.com/gpu, on the node and before one is chosen (its nominal
// task), more than a node of two GPUs has.
func TestTwoRequestsOfOneClassAdd(t *testing.T) {
	claim := newClaim("pair", dratest.Exactly("one", "gpu.nvidia.com", 1), dratest.Exactly("two", "gpu.nvidia.com", 2))
	d, err := ReadDRA(DRAObjects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "H100", 4, 0), dratest.NVIDIASlice("node-b", "H100", 2, 0)},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{claim}})
	if err != nil {
		t.Fatal(err)
	}
	pod := claimPod("p", "pair")
	if got := devicesOn(t, d, pod, "node-a"); got != "gpu-0,gpu-1,gpu-2" {
		t.Errorf("kube's allocator gives %s on node-a, want three GPUs", got)
	}
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

// A pending pod naming a claim allocated already (another pod's, shared)
// goes only where that claim's devices are: on node-a, where the claim
// holds gpu-0, and on no other node, as kube-scheduler's DynamicResources
// filters it. A claim whose devices are on no node (a pool offered to
// many) binds the pod by its allocation's nodeSelector, read by name; one
// that selects by labels is left to the scheduler.
func TestAllocatedClaimBindsThePod(t *testing.T) {
	nodeName := func(names ...string) *v1.NodeSelector {
		return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: names}}}}}
	}
	elsewhere := held("elsewhere", onDevice("fabric", "link-0"))
	elsewhere.Status.Allocation.NodeSelector = nodeName("node-b")
	byLabel := held("by-label", onDevice("fabric", "link-1"))
	byLabel.Status.Allocation.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "rack", Operator: v1.NodeSelectorOpIn, Values: []string{"r1"}}}}}}
	d, err := ReadDRA(DRAObjects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "H100", 2, 0), dratest.NVIDIASlice("node-b", "H100", 2, 0)},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
			held("shared", onDevice("node-a", "gpu-0")), elsewhere, byLabel,
			newClaim("more", dratest.Exactly("r", "gpu.nvidia.com", 1)),
		}})
	if err != nil {
		t.Fatal(err)
	}
	twoClaims := claimPod("p", "shared")
	twoClaims.Spec.ResourceClaims = append(twoClaims.Spec.ResourceClaims, v1.PodResourceClaim{Name: "more", ResourceClaimName: new("more")})
	both := claimPod("q", "shared")
	both.Spec.ResourceClaims = append(both.Spec.ResourceClaims, v1.PodResourceClaim{Name: "elsewhere", ResourceClaimName: new("elsewhere")})
	for _, c := range []struct {
		pod  *v1.Pod
		want string
	}{
		{claimPod("p", "shared"), "node-a"},
		{twoClaims, "node-a"},
		{claimPod("p", "elsewhere"), "node-b"},
		{both, ""},
		{claimPod("p", "by-label"), "node-a node-b"},
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
			t.Errorf("%s naming %v: on %q, want %q", c.pod.Name, c.pod.Spec.ResourceClaims, got, c.want)
		}
		if pinned := c.want != "node-a node-b"; pinned && (pt.Uniform() || pt.FiltersNothing(true)) {
			t.Errorf("%s: uniform %v though its claims bind it", c.pod.Name, pt.Uniform())
		}
	}
}

// A node with more GPUs in its ResourceSlices than resfit reads of a node
// (resource.MaxDevicesPerNode) has the first of them read, and an error
// saying so that the hosts show as a warning (Scene.Warnings); a slice
// with more devices than the API allows is an error naming it.
func TestDevicesPastWhatIsRead(t *testing.T) {
	var slices []*resourcev1.ResourceSlice
	for i := range 9 { // 9 × 128 = 1152 GPUs
		s := dratest.NVIDIASlice("node-a", "H100", 128, 0)
		s.Name = fmt.Sprintf("node-a-%d", i)
		s.Spec.Pool.ResourceSliceCount = 9
		for j := range s.Spec.Devices {
			s.Spec.Devices[j].Name = fmt.Sprintf("gpu-%d", i*128+j)
		}
		slices = append(slices, s)
	}
	d, err := ReadDRA(DRAObjects{Slices: slices, Classes: dratest.NVIDIAClasses()})
	if err != nil {
		t.Fatal(err)
	}
	nd := d.draNodeDevices("node-a", resource.GPU)
	want := "node node-a: 1152 devices of nvidia.com/gpu in its ResourceSlices, more than the 1024 resfit reads of a node: the first 1024 are counted"
	if nd.count != resource.MaxDevicesPerNode || nd.err == nil || nd.err.Error() != want {
		t.Errorf("%d devices, error %v; want 1024 and %q", nd.count, nd.err, want)
	}
	big := dratest.NVIDIASlice("node-b", "H100", 129, 0)
	if _, err := ReadDRA(DRAObjects{Slices: []*resourcev1.ResourceSlice{big}, Classes: dratest.NVIDIAClasses()}); err == nil ||
		err.Error() != "resourceslice node-b-gpu.nvidia.com-0: spec.devices: 129 devices, more than the API's 128" {
		t.Errorf("a slice of 129 devices: %v", err)
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
	d, err := ReadDRA(DRAObjects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "H100", 2, 0), dratest.NVIDIASlice("node-b", "H100", 1, 0)},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
			held("other", onDevice("node-a", "gpu-0")),
			newClaim("watch", admin, dratest.Exactly("gpu", "gpu.nvidia.com", 1)),
		}})
	if err != nil {
		t.Fatal(err)
	}
	pod := claimPod("p", "watch")
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
