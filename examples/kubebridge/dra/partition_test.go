package dra

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/resource"
)

// devicesOn is what a pod's one claim takes on a node, as "device
// memory=…" for a share, "-" where it does not fit.
func devicesOn(t dratest.TB, d *Reading, pod *v1.Pod, node string) string {
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
	objects := Objects{Slices: dratest.NVIDIAMIGSlices("node-a", 1, 0), Classes: dratest.NVIDIAClasses()}
	objects.Claims = append(objects.Claims, dratest.HeldClaim("mig-held", dratest.OnDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[2], 0))))
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
		objects.Claims = append(objects.Claims, dratest.Claim("want-"+name, request))
	}
	d, err := Read(objects)
	if err != nil {
		t.Fatal(err)
	}
	for name, devices := range want {
		if got := devicesOn(t, d, dratest.ClaimPod("p-"+name, "want-"+name), "node-a"); got != devices {
			t.Errorf("%s: takes %s, want %s", name, got, devices)
		}
	}
	// Without the allocated partition the whole GPU fits, and it is gone
	// once it is allocated: every placement consumes some of its counters.
	free, err := Read(Objects{Slices: objects.Slices, Classes: objects.Classes, Claims: objects.Claims[1:]})
	if err != nil {
		t.Fatal(err)
	}
	if got := devicesOn(t, free, dratest.ClaimPod("p", "want-whole"), "node-a"); got != "gpu-0" {
		t.Errorf("the whole GPU on a free A100: %s", got)
	}
	after, err := free.Allocate(dratest.ClaimPod("p", "want-whole"), "node-a")
	if err != nil {
		t.Fatal(err)
	}
	if got := devicesOn(t, after, dratest.ClaimPod("q", "want-1g.10gb"), "node-a"); got != "-" {
		t.Errorf("a 1g.10gb beside an allocated whole GPU: %s", got)
	}
}

// A pool whose slices are not all published (its counters' slice
// missing) has no device the allocator uses: nothing fits there, and its
// classes are not simple (a node's amounts do not decide).
func TestIncompletePoolHasNothingToGive(t *testing.T) {
	slices := dratest.NVIDIAMIGSlices("node-a", 1, 0)
	d, err := Read(Objects{Slices: slices[1:], Classes: dratest.NVIDIAClasses(),
		Claims: []*resourcev1.ResourceClaim{dratest.Claim("gpu", dratest.Exactly("r", "gpu.nvidia.com", 1)), dratest.Claim("mig", dratest.MIGRequest("r", "1g.10gb"))}})
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []string{"gpu", "mig"} {
		if got := devicesOn(t, d, dratest.ClaimPod("p", claim), "node-a"); got != "-" {
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
		r := dratest.OnDevice("node-a", device)
		uid := types.UID(id)
		r.ShareID, r.ConsumedCapacity = &uid, map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse(memory)}
		return r
	}
	objects := Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-a", 2, 0)}, Classes: dratest.NVIDIAClasses(),
		Claims: []*resourcev1.ResourceClaim{dratest.HeldClaim("a", share("gpu-0", "40Gi", "s1")), dratest.HeldClaim("b", share("gpu-0", "20Gi", "s2"))}}
	want := map[string]string{"10Gi": "gpu-0 memory=10Gi", "30Gi": "gpu-1 memory=30Gi", "default": "gpu-1 memory=80Gi", "90Gi": "-"}
	for name := range want {
		request := dratest.Exactly("r", "gpu.nvidia.com", 1)
		if name != "default" {
			request = dratest.ShareRequest("r", name)
		}
		objects.Claims = append(objects.Claims, dratest.Claim("share-"+name, request))
	}
	d, err := Read(objects)
	if err != nil {
		t.Fatal(err)
	}
	for name, devices := range want {
		if got := devicesOn(t, d, dratest.ClaimPod("p-"+name, "share-"+name), "node-a"); got != devices {
			t.Errorf("%s: takes %s, want %s", name, got, devices)
		}
	}
	if c := d.Classes()[0]; c.Name != "gpu.nvidia.com" || c.Simple {
		t.Errorf("the class of shareable GPUs: %+v, want gpu.nvidia.com not simple", c)
	}
	// Two 10Gi shares placed one after the other both fit gpu-0's 20Gi.
	after, err := d.Allocate(dratest.ClaimPod("p", "share-10Gi"), "node-a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := Read(Objects{Slices: objects.Slices, Classes: objects.Classes, Claims: append(claimsOf(after), dratest.Claim("more", dratest.ShareRequest("r", "10Gi")))})
	if err != nil {
		t.Fatal(err)
	}
	if got := devicesOn(t, again, dratest.ClaimPod("q", "more"), "node-a"); got != "gpu-0 memory=10Gi" {
		t.Errorf("a second 10Gi share: %s", got)
	}
	if got := devicesOn(t, again, dratest.ClaimPod("q", "share-10Gi"), "node-a"); got != "" {
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
			claims := []*resourcev1.ResourceClaim{dratest.HeldClaim("held", dratest.OnDevice("node-b", "gpu-0"))}
			c.break_(slices, claims)
			_, err := Read(Objects{Slices: slices, Classes: dratest.NVIDIAClasses(), Claims: claims})
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
	mig := Objects{Slices: dratest.NVIDIAMIGSlices("node-a", 2, 0), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
		dratest.HeldClaim("mig-held", dratest.OnDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[0], 0))),
		dratest.Claim("whole", dratest.Exactly("r", "gpu.nvidia.com", 1)), dratest.Claim("part", dratest.MIGRequest("r", "3g.40gb")),
	}}
	d, err := Read(mig)
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
	if a, u := d.CanonicalAmounts("node-a", 0); a != 2000 || u != 143 {
		t.Errorf("A100s: %d of %d thousandths used, want 143 of 2000", u, a)
	}
	if a, u := d.CanonicalAmounts("node-a", 1); a != 2 || u != 1 {
		t.Errorf("A100s' MIG class: %d of %d used, want 1 of 2", u, a)
	}
	// nvidia.com/gpu counts in thousandths, mig.nvidia.com's implicit
	// resource in whole units; a GPU is one unit to both classes. The whole
	// A100 is 1000 of nvidia.com/gpu and the one unit of the MIG class; a
	// 3g.40gb is half the GPU (40 of its 80Gi, its largest share) in
	// nvidia.com/gpu, and none of a whole MIG unit.
	for claim, want := range map[string]string{"whole": "[1000 1]", "part": "[500 0]"} {
		take, ok, err := d.Fit("node-a", dratest.ClaimPod("p", claim))
		if err != nil || !ok || fmt.Sprint(take) != want {
			t.Errorf("%s takes %v (%v, %v), want %s", claim, take, ok, err, want)
		}
	}

	uid := types.UID("s1")
	share := dratest.OnDevice("node-b", "gpu-0")
	share.ShareID, share.ConsumedCapacity = &uid, map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse("20Gi")}
	shared := Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIAShareableSlice("node-b", 2, 0)}, Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{
		dratest.HeldClaim("share-held", share), dratest.Claim("whole", dratest.Exactly("r", "gpu.nvidia.com", 1)), dratest.Claim("part", dratest.ShareRequest("r", "10Gi")),
	}}
	if d, err = Read(shared); err != nil {
		t.Fatal(err)
	}
	if a, u := d.Amounts("node-b", "gpu.nvidia.com"); a != 2 || u != 1 {
		t.Errorf("shareable GPUs: %d of %d used, want 1 of 2", u, a)
	}
	// In nvidia.com/gpu's thousandths, the row holds what is used of each:
	// 20Gi of gpu-0's 80Gi, 250.
	if a, u := d.CanonicalAmounts("node-b", 0); a != 2000 || u != 250 {
		t.Errorf("shareable GPUs: %d of %d thousandths used, want 250 of 2000", u, a)
	}
	// A 10Gi share takes an eighth of an H100's 80Gi: 125 thousandths.
	for claim, want := range map[string]string{"whole": "[1000 0]", "part": "[125 0]"} {
		take, ok, err := d.Fit("node-b", dratest.ClaimPod("p", claim))
		if err != nil || !ok || fmt.Sprint(take) != want {
			t.Errorf("%s takes %v (%v, %v), want %s", claim, take, ok, err, want)
		}
	}
}

// A reader that reads again after a claim was allocated on one node keeps
// the other nodes' allocators and what they gave, and asks again on the
// node that changed: what it says equals a fresh reading's, node by node.
func TestReadAgainKeepsUnchangedNodesAllocations(t *testing.T) {
	slices := append(dratest.NVIDIAMIGSlices("node-a", 1, 0), dratest.NVIDIAMIGSlices("node-b", 1, 0)...)
	pending := dratest.Claim("want", dratest.MIGRequest("r", "4g.40gb"))
	claims := []*resourcev1.ResourceClaim{pending}
	classes := dratest.NVIDIAClasses()
	var r Reader
	d, err := r.Read(Objects{Slices: slices, Classes: classes, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"node-a", "node-b"} {
		if got := devicesOn(t, d, dratest.ClaimPod("p", "want"), node); got != "gpu-0-mig-4g40gb-5-0" {
			t.Fatalf("%s first: %s", node, got)
		}
	}
	// A 1g.10gb at slice 0 is allocated on node-a: the 4g.40gb's one
	// placement is gone there.
	claims = append(claims, dratest.HeldClaim("held", dratest.OnDevice("node-a", dratest.MIGDeviceName(0, dratest.A100MIG[0], 0))))
	again, err := r.Read(Objects{Slices: slices, Classes: classes, Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	if changed, same := again.ChangedNodes(d); !same || fmt.Sprint(changed) != "[node-a]" {
		t.Fatalf("changed %v (same devices %v)", changed, same)
	}
	fresh, err := Read(Objects{Slices: slices, Classes: dratest.NVIDIAClasses(), Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{"node-a": "-", "node-b": "gpu-0-mig-4g40gb-5-0"} {
		got, fromScratch := devicesOn(t, again, dratest.ClaimPod("p", "want"), node), devicesOn(t, fresh, dratest.ClaimPod("p", "want"), node)
		if got != want || fromScratch != want {
			t.Errorf("%s after: %s (a fresh reading: %s), want %s", node, got, fromScratch, want)
		}
	}
	if again.alloc.nodes["node-b"] != d.alloc.nodes["node-b"] || again.alloc.nodes["node-a"] == d.alloc.nodes["node-a"] {
		t.Error("node-b's allocator was not kept, or node-a's was")
	}
}

// A Reader told of claims taken and given back, partitions of MIG GPUs
// and shares of shareable ones among them, works out what they consume
// from the last reading's usage (usageFrom) as Read works it out from
// every claim: the same counters, capacities and whole devices, and the
// same device view.
func TestReaderUsageMatchesReadDRA(t *testing.T) {
	slices := append(dratest.NVIDIAMIGSlices("node-a", 2, 0), dratest.NVIDIAShareableSlice("node-b", 2, 0), dratest.NVIDIASlice("node-c", "NVIDIA H100 80GB HBM3", 8, 0))
	classes := dratest.NVIDIAClasses()
	share := func(device, memory, id string) resourcev1.DeviceRequestAllocationResult {
		r := dratest.OnDevice("node-b", device)
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
				result = dratest.OnDevice("node-a", dratest.MIGDeviceName((i+v)%2, p, p.Starts[(i+v)%len(p.Starts)]))
			case 2:
				result = share(fmt.Sprint("gpu-", (i+v)%2), fmt.Sprint(10*(i+v+1), "Gi"), fmt.Sprint("s", i, v))
			default: // a whole GPU of its own
				result = dratest.OnDevice("node-c", fmt.Sprint("gpu-", i/4*2+v))
			}
			pool = append(pool, dratest.HeldClaim(fmt.Sprint("c", i), result))
		}
	}
	usageOf := func(d *Reading) string {
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
		var r Reader
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
			var got *Reading
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
				got, err = r.Read(Objects{Slices: slices, Classes: classes, Claims: claims})
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := Read(Objects{Slices: slices, Classes: classes, Claims: claims})
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
		d, err := Read(Objects{Slices: []*resourcev1.ResourceSlice{s}, Classes: dratest.NVIDIAClasses()})
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
		if a, u := d.CanonicalAmounts("node-a", 0); a != thousandths || u != 0 {
			t.Errorf("pool of %d slices, 1 listed: %d of %d thousandths used, want 0 of %d", count, u, a, thousandths)
		}
		if u := d.NodeUnits("node-a", resource.GPU); fmt.Sprint(u.Left) != view && !(view == "[]" && u.Left == nil) {
			t.Errorf("pool of %d slices, 1 listed: device view %v, want %s", count, u.Left, view)
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
	d, err := Read(Objects{Slices: slices, Classes: dratest.NVIDIAClasses()})
	if err != nil {
		t.Fatal(err)
	}
	u := d.NodeUnits("node-a", resource.GPU)
	want := "node node-a: 1152 devices of nvidia.com/gpu in its ResourceSlices, more than the 1024 resfit reads of a node: the first 1024 are counted"
	if len(u.Left) != resource.MaxDevicesPerNode || u.Err == nil || u.Err.Error() != want {
		t.Errorf("%d devices, error %v; want 1024 and %q", len(u.Left), u.Err, want)
	}
	big := dratest.NVIDIASlice("node-b", "H100", 129, 0)
	if _, err := Read(Objects{Slices: []*resourcev1.ResourceSlice{big}, Classes: dratest.NVIDIAClasses()}); err == nil ||
		err.Error() != "resourceslice node-b-gpu.nvidia.com-0: spec.devices: 129 devices, more than the API's 128" {
		t.Errorf("a slice of 129 devices: %v", err)
	}
}

// A claim asking one class twice, for 1 GPU and for 2, is given three
// GPUs by kube's allocator, and its take counts them: 3000 thousandths of
// nvidia.com/gpu.
func TestTwoRequestsOfOneClassTakeThree(t *testing.T) {
	claim := dratest.Claim("pair", dratest.Exactly("one", "gpu.nvidia.com", 1), dratest.Exactly("two", "gpu.nvidia.com", 2))
	d, err := Read(Objects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "H100", 4, 0)},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{claim}})
	if err != nil {
		t.Fatal(err)
	}
	pod := dratest.ClaimPod("p", "pair")
	if got := devicesOn(t, d, pod, "node-a"); got != "gpu-0,gpu-1,gpu-2" {
		t.Errorf("kube's allocator gives %s on node-a, want three GPUs", got)
	}
	demand, err := d.DemandOf(pod)
	if err != nil {
		t.Fatal(err)
	}
	gpus := slices.IndexFunc(d.Classes(), func(c Class) bool { return c.Resource == resource.GPU })
	if take, _, ok, err := demand.Take("node-a"); err != nil || !ok || take[gpus] != 3000 {
		t.Errorf("take on node-a %v, %v, %v; want 3000 of %s", take, ok, err, resource.GPU)
	}
	var none Demand // a pod without claims: nothing, anywhere
	if take, _, ok, err := none.Take("node-a"); err != nil || !ok || take != nil {
		t.Errorf("the zero demand takes %v, %v, %v; want nothing, ok", take, ok, err)
	}
}
