package dra

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
)

// claimsOf are the claims a DRA read.
func claimsOf(d *Reading) []*resourcev1.ResourceClaim {
	var out []*resourcev1.ResourceClaim
	for _, c := range d.claims.all() {
		out = append(out, c)
	}
	return out
}

// Allocating a pod's claims on a node holds the devices Fit chooses there
// in a new reading, and the pod asks for nothing more; the reading it came
// from is unchanged.
func TestDRAAllocate(t *testing.T) {
	name := func(s string) *string { return &s }
	d := draCluster(t)
	p := dratest.PodWithClaims("p", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: name("one-gpu")},
		v1.PodResourceClaim{Name: "gpus", ResourceClaimTemplateName: name("two-gpus")})
	after, err := d.Allocate(p, "node-b")
	if err != nil {
		t.Fatal(err)
	}
	if a, u := after.Amounts("node-b", "gpu.nvidia.com"); a != 8 || u != 3 {
		t.Errorf("node-b after: %d of %d used, want 3 of 8", u, a)
	}
	if a, u := d.Amounts("node-b", "gpu.nvidia.com"); a != 8 || u != 0 {
		t.Errorf("node-b before: %d of %d used, want 0 of 8", u, a)
	}
	// The template's claim, not made by the cluster yet, is held as made
	// for the pod (madeClaimKey: namespace/pod/claim).
	for device, claim := range map[string]string{"gpu-0": "train/one-gpu", "gpu-1": "train/p/gpus", "gpu-2": "train/p/gpus", "gpu-3": ""} {
		if held := after.HeldBy(DeviceID{"gpu.nvidia.com", "node-b", device}); held != claim {
			t.Errorf("%s held by %q, want %q", device, held, claim)
		}
	}
	if r, err := after.ClaimRequests(dratest.PodWithClaims("q", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: name("one-gpu")})); err != nil || len(r) != 0 {
		t.Errorf("the allocated claim still asks %v (%v)", r, err)
	}
	if r, err := after.ClaimRequests(p); err != nil || len(r) != 0 {
		t.Errorf("the placed pod still asks %v (%v)", r, err)
	}
	if r, err := after.Unallocate(p).ClaimRequests(p); err != nil || len(r) != 2 {
		t.Errorf("the pod unallocated asks %v (%v), want its two claims' requests", r, err)
	}
	if _, err := d.Allocate(p, "node-a"); err == nil || !strings.Contains(err.Error(), "cannot be satisfied on node node-a") {
		t.Errorf("allocating 3 GPUs where 2 are free: %v", err)
	}

	// The filler's claim unallocated frees node-a's 6 GPUs, and the
	// filler asks for them again; a claim reserved for another pod stays.
	filler := dratest.PodWithClaims("filler", v1.PodResourceClaim{Name: "gpus", ResourceClaimName: name("six-gpus")})
	if a, u := d.Unallocate(filler).Amounts("node-a", "gpu.nvidia.com"); a != 8 || u != 0 {
		t.Errorf("node-a without the filler's claim: %d of %d used, want 0 of 8", u, a)
	}
	if r, err := d.Unallocate(filler).ClaimRequests(filler); err != nil || len(r) != 1 || r[0].Alternatives[0].Count != 6 {
		t.Errorf("the filler asks %+v (%v), want its 6 GPUs", r, err)
	}
	shared := d.claims.at("train/six-gpus").DeepCopy()
	shared.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "other", UID: "uid-other"}}
	d.claims.set("train/six-gpus", shared)
	if _, u := d.Unallocate(filler).Amounts("node-a", "gpu.nvidia.com"); u != 6 {
		t.Errorf("a claim reserved for another pod was freed: %d used", u)
	}
}

// draFingerprint is everything a reading says of nodes a, b and c.
func draFingerprint(d *Reading) string {
	var b strings.Builder
	for _, c := range d.Classes() {
		fmt.Fprintf(&b, "class %s %s;", c.Name, c.Resource)
	}
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		for _, dev := range d.Devices(n) {
			fmt.Fprintf(&b, "%s %v %v %s held by %q;", n, dev.ID, dev.Classes, dev.Model, d.HeldBy(dev.ID))
		}
	}
	return b.String()
}

// A Reader reading one set of objects after another, or told only
// which claims changed (ReadClaims), says what Read says of each,
// whatever it reuses; a reading that keeps the classes and slices shares
// them, and ChangedNodes names the nodes whose allocations changed.
func TestDRAReaderMatchesReadDRA(t *testing.T) {
	classes := dratest.NVIDIAClasses()
	otherClasses := dratest.NVIDIAClasses() // the same, as new objects
	otherClasses[0].Spec.ExtendedResourceName = nil
	slicesA := []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 1), dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 4, 2)}
	sliceB := dratest.NVIDIASlice("node-b", "NVIDIA A100-SXM4-80GB", 8, 0)
	claims := []*resourcev1.ResourceClaim{
		dratest.AllocatedClaim("train", "a", "node-a", "gpu-0", "gpu-1"),
		dratest.AllocatedClaim("train", "b", "node-b", "gpu-3"),
		dratest.AllocatedClaim("train", "c", "node-a", "gpu-6"),
		dratest.AllocatedClaim("train", "b", "node-b", "gpu-4"), // b again, changed
		dratest.AllocatedClaim("train", "d", "node-a", "gpu-0"), // shares a's gpu-0
		{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "e"}, Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))},
	}
	rapid.Check(t, func(t *rapid.T) {
		var r Reader
		var last *Reading
		var lastObjects Objects
		for range rapid.IntRange(1, 6).Draw(t, "reads") {
			o := Objects{Classes: classes}
			if rapid.Bool().Draw(t, "other classes") {
				o.Classes = otherClasses
			}
			for i, s := range slicesA {
				if rapid.Bool().Draw(t, fmt.Sprint("slice a", i)) {
					o.Slices = append(o.Slices, s)
				}
			}
			if rapid.Bool().Draw(t, "slice b") {
				o.Slices = append(o.Slices, sliceB)
			}
			o.Slices = rapid.Permutation(o.Slices).Draw(t, "slice order")
			keys := map[string]bool{}
			for i, c := range claims {
				if rapid.Bool().Draw(t, fmt.Sprint("claim ", i)) && !keys[c.Name] { // one object per claim, as listed
					keys[c.Name] = true
					o.Claims = append(o.Claims, c)
				}
			}
			o.Claims = rapid.Permutation(o.Claims).Draw(t, "order")
			var got *Reading
			var err error
			if last != nil && rapid.Bool().Draw(t, "claims alone") {
				o.Classes, o.Slices = lastObjects.Classes, lastObjects.Slices
				changes := map[string]*resourcev1.ResourceClaim{}
				for _, c := range lastObjects.Claims {
					changes[c.Namespace+"/"+c.Name] = nil
				}
				for _, c := range o.Claims {
					changes[c.Namespace+"/"+c.Name] = c
				}
				for _, c := range o.Claims {
					if slices.Contains(lastObjects.Claims, c) && rapid.Bool().Draw(t, "leave out unchanged") {
						delete(changes, c.Namespace+"/"+c.Name)
					}
				}
				got, err = r.ReadClaims(changes, nil)
			} else {
				got, err = r.Read(o)
			}
			if err != nil {
				t.Fatal(err)
			}
			lastObjects = o
			want, err := Read(o)
			if err != nil {
				t.Fatal(err)
			}
			if draFingerprint(got) != draFingerprint(want) {
				t.Fatalf("reader:\n%s\nReadDRA:\n%s", draFingerprint(got), draFingerprint(want))
			}
			if nodes, same := got.ChangedNodes(last); same {
				for _, n := range []string{"node-a", "node-b"} {
					changed := false
					for _, dev := range got.Devices(n) {
						changed = changed || got.HeldBy(dev.ID) != last.HeldBy(dev.ID)
					}
					if changed != slices.Contains(nodes, n) {
						t.Fatalf("changed nodes %v; %s changed: %v", nodes, n, changed)
					}
				}
			}
			last = got
		}
	})
}

// Reading the same objects again shares the classes and devices; a claim
// allocated since changes its node alone; a new slice object reads the
// devices again.
func TestDRAReaderReuses(t *testing.T) {
	o := Objects{Classes: dratest.NVIDIAClasses(), Slices: dratest.TrainSlices(),
		Claims: []*resourcev1.ResourceClaim{dratest.AllocatedClaim("train", "six-gpus", "node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5")}}
	var r Reader
	first, err := r.Read(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Claims = append(o.Claims, dratest.AllocatedClaim("train", "one", "node-b", "gpu-0"))
	second, err := r.Read(o)
	if err != nil {
		t.Fatal(err)
	}
	if nodes, same := second.ChangedNodes(first); !same || !slices.Equal(nodes, []string{"node-b"}) {
		t.Errorf("changed %v (same devices %v), want node-b", nodes, same)
	}
	o.Slices = append(o.Slices[:1], dratest.NVIDIASlice("node-b", "NVIDIA A100-SXM4-80GB", 8, 0))
	third, err := r.Read(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, same := third.ChangedNodes(second); same {
		t.Error("a new slice object kept the devices")
	}
}

// A claim a scheduler holds allocated in memory reads as the same object
// while its pending allocation stays, so that the reading after sees no
// change; a new pending allocation, or none, changes its node.
func TestReadFromKeepsPendingClaims(t *testing.T) {
	one := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "one-gpu", UID: "uid-one"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))}
	objects := Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{one}}
	var pending *resourcev1.AllocationResult
	listers := Listers{
		Slices:  func() ([]*resourcev1.ResourceSlice, error) { return objects.Slices, nil },
		Classes: func() ([]*resourcev1.DeviceClass, error) { return objects.Classes, nil },
		Claims:  func() ([]*resourcev1.ResourceClaim, error) { return objects.Claims, nil },
		Pending: func(uid types.UID) *resourcev1.AllocationResult {
			if uid == one.UID {
				return pending
			}
			return nil
		},
	}
	var r Reader
	last, err := r.ReadFrom(listers)
	if err != nil {
		t.Fatal(err)
	}
	onB := dratest.AllocatedClaim("train", "one-gpu", "node-b", "gpu-7").Status.Allocation
	onA := dratest.AllocatedClaim("train", "one-gpu", "node-a", "gpu-7").Status.Allocation
	for i, step := range []struct {
		pending *resourcev1.AllocationResult
		changed []string
	}{
		{onB, []string{"node-b"}},
		{onB, nil}, // the same pending allocation: the same claim object
		{onA, []string{"node-a", "node-b"}},
		{nil, []string{"node-a"}},
	} {
		pending = step.pending
		d, err := r.ReadFrom(listers)
		if err != nil {
			t.Fatal(err)
		}
		if changed, same := d.ChangedNodes(last); !same || !slices.Equal(changed, step.changed) {
			t.Errorf("step %d: changed %v (same devices %v), want %v", i, changed, same, step.changed)
		}
		last = d
	}
	if one.Status.Allocation != nil {
		t.Error("the listed claim changed")
	}
}

// ReadClaims reads a claim pending allocation as allocated, as the same
// object while the allocation stays; it needs a reading to start from, and
// a claim given under another key is an error naming both.
func TestReadClaimsPendingAndErrors(t *testing.T) {
	var r Reader
	if _, err := r.ReadClaims(nil, nil); err == nil {
		t.Error("ReadClaims before any reading: no error")
	}
	one := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "one-gpu", UID: "uid-one"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))}
	last, err := r.Read(Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{one}})
	if err != nil {
		t.Fatal(err)
	}
	onB := dratest.AllocatedClaim("train", "one-gpu", "node-b", "gpu-7").Status.Allocation
	pending := func(uid types.UID) *resourcev1.AllocationResult {
		if uid == one.UID {
			return onB
		}
		return nil
	}
	for i, want := range [][]string{{"node-b"}, nil} {
		d, err := r.ReadClaims(map[string]*resourcev1.ResourceClaim{"train/one-gpu": one}, pending)
		if err != nil {
			t.Fatal(err)
		}
		if changed, same := d.ChangedNodes(last); !same || !slices.Equal(changed, want) {
			t.Errorf("reading %d: changed %v (same devices %v), want %v", i, changed, same, want)
		}
		last = d
	}
	if d, err := r.ReadClaims(map[string]*resourcev1.ResourceClaim{"train/one-gpu": one}, nil); err != nil || d.HeldBy(DeviceID{"gpu.nvidia.com", "node-b", "gpu-7"}) != "" {
		t.Errorf("without its pending allocation the claim holds gpu-7 still (%v)", err)
	}
	_, err = r.ReadClaims(map[string]*resourcev1.ResourceClaim{"train/other": one}, nil)
	if err == nil || !strings.Contains(err.Error(), "resourceclaim train/one-gpu: given as train/other") {
		t.Errorf("a claim under another key: %v", err)
	}
}

// A claim a scheduler has allocated in memory reads as allocated; the
// listed claims are not changed.
func TestWithPendingAllocations(t *testing.T) {
	one := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "one-gpu", UID: "uid-one"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))}
	held := dratest.AllocatedClaim("train", "six-gpus", "node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5")
	listed := []*resourcev1.ResourceClaim{held, one}
	pending := dratest.AllocatedClaim("train", "one-gpu", "node-b", "gpu-7").Status.Allocation
	claims := WithPendingAllocations(listed, func(uid types.UID) *resourcev1.AllocationResult {
		if uid == "uid-one" {
			return pending
		}
		return nil
	})
	d, err := Read(Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	if _, u := d.Amounts("node-b", "gpu.nvidia.com"); u != 1 || d.HeldBy(DeviceID{"gpu.nvidia.com", "node-b", "gpu-7"}) != "train/one-gpu" {
		t.Errorf("node-b: %d used", u)
	}
	if listed[1] != one || one.Status.Allocation != nil || claims[0] != held {
		t.Error("the listed claims changed")
	}
}

// A share of a unit counts in thousandths of nvidia.com/gpu rounded up,
// but a part short of the whole stays short of it: 81839Mi of an 80Gi
// GPU (kube's allocator gives it as a share, rapid found) is 999, not the
// whole device; a resource counted whole counts a part as none.
func TestInUnitsKeepsAPartShortOfTheWhole(t *testing.T) {
	for _, c := range []struct {
		resource string
		share    *big.Rat
		want     int64
	}{
		{"nvidia.com/gpu", big.NewRat(81839, 81920), 999},
		{"nvidia.com/gpu", big.NewRat(1, 81920), 1},
		{"nvidia.com/gpu", big.NewRat(1, 2), 500},
		{"nvidia.com/gpu", big.NewRat(1, 1), 1000},
		{"gpu.nvidia.com", big.NewRat(81839, 81920), 0},
		{"gpu.nvidia.com", big.NewRat(1, 1), 1},
	} {
		if got := inUnits(c.resource, c.share); got != c.want {
			t.Errorf("inUnits(%s, %s) = %d, want %d", c.resource, c.share.RatString(), got, c.want)
		}
	}
}
