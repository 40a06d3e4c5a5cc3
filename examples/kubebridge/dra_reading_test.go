package kubebridge

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

	"github.com/resfit/resfit/examples/kubebridge/dratest"
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
	d := draCluster(t, a100)
	filler := pod("filler", "node-a", "cpu", "8")
	filler.Namespace = "train"
	filler.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: name("six-gpus")}}
	claimed := pod("claimed", "", "cpu", "1")
	claimed.Namespace = "train"
	claimed.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: name("one-gpu")}}
	extended := pod("extended", "", "cpu", "1", gpu, "1")
	onlyA100 := pod("only-a100", "", "cpu", "1")
	onlyA100.Namespace = "train"
	onlyA100.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: name("one-a100")}}
	nodes := []*v1.Node{node("node-a", "cpu", "64", "memory", "512Gi", "pods", "110"), node("node-b", "cpu", "64", "memory", "512Gi", "pods", "110")}
	s, err := NewCache(nodes, []*v1.Pod{filler, claimed, extended, onlyA100}, Options{DRA: d})
	if err != nil {
		t.Fatal(err)
	}
	schema := s.Schema()
	slot, ok := schema.Slot(gpu)
	mig, hasMIG := schema.Slot(ImplicitResourcePrefix + "mig.nvidia.com")
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
	opts := scoring.TaskOptions{Devices: gpu, Models: s.Models()}
	scores := func(p *v1.Pod, gpuType string) string {
		pipe := gpuStrategy(t, schema, gpuType)
		pt, err := NewPodTask(s.DRA(), schema, p, opts)
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
		pt, err := NewPodTask(s.DRA(), schema, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		var ps PodScores
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
	pt, err := NewPodTask(s.DRA(), schema, claimed, opts)
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
	held, err := ReadDRA(DRAObjects{
		Slices:  draSlices(),
		Classes: dratest.NVIDIAClasses(),
		Claims:  append(claimsOf(d), dratest.AllocatedClaim("default", "extended-gpu", "node-b", "gpu-0")),
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

// claimsOf are the claims a DRA read.
func claimsOf(d *DRA) []*resourcev1.ResourceClaim {
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
	p := podWithClaims("p", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: name("one-gpu")},
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
	if r, err := after.ClaimRequests(podWithClaims("q", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: name("one-gpu")})); err != nil || len(r) != 0 {
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
	filler := podWithClaims("filler", v1.PodResourceClaim{Name: "gpus", ResourceClaimName: name("six-gpus")})
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
func draFingerprint(d *DRA) string {
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

// A DRAReader reading one set of objects after another, or told only
// which claims changed (ReadClaims), says what ReadDRA says of each,
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
		var r DRAReader
		var last *DRA
		var lastObjects DRAObjects
		for range rapid.IntRange(1, 6).Draw(t, "reads") {
			o := DRAObjects{Classes: classes}
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
			var got *DRA
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
			want, err := ReadDRA(o)
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
	o := DRAObjects{Classes: dratest.NVIDIAClasses(), Slices: draSlices(),
		Claims: []*resourcev1.ResourceClaim{dratest.AllocatedClaim("train", "six-gpus", "node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5")}}
	var r DRAReader
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
	objects := DRAObjects{Slices: draSlices(), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{one}}
	var pending *resourcev1.AllocationResult
	listers := DRAListers{
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
	var r DRAReader
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
	var r DRAReader
	if _, err := r.ReadClaims(nil, nil); err == nil {
		t.Error("ReadClaims before any reading: no error")
	}
	one := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "one-gpu", UID: "uid-one"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1))}
	last, err := r.Read(DRAObjects{Slices: draSlices(), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{one}})
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
	d, err := ReadDRA(DRAObjects{Slices: draSlices(), Classes: dratest.NVIDIAClasses(), Claims: claims})
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
	var d *DRA
	cpuPod, err := NewPodTask(d, schema, pod("cpu-pod", "", "cpu", "4"), scoring.TaskOptions{Devices: "nvidia.com/gpu"})
	if err != nil {
		t.Fatal(err)
	}
	gpuPod, err := NewPodTask(d, schema, pod("gpu-pod", "", "cpu", "4", "nvidia.com/gpu", "1"), scoring.TaskOptions{Devices: "nvidia.com/gpu"})
	if err != nil {
		t.Fatal(err)
	}
	varied := &PodTask{Task: cpuPod.Task, base: cpuPod.Task, schema: schema} // demand not uniform
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

// A GPU of a pool offered to every node (spec.allNodes) is in no node's
// amounts, so a claim the allocator gives one takes nothing of the
// node's: node-0's two A100s stay free for the pod's task there, and the
// pod fits node-0 by its row as the allocator says it does.
func TestPoolForEveryNodeTakesNothingOfTheNode(t *testing.T) {
	fabric := dratest.NVIDIASlice("fabric", "NVIDIA H100 80GB HBM3", 1, 0)
	fabric.Spec.NodeName, fabric.Spec.AllNodes = nil, new(true)
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "h100"},
		Spec: dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 1, `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`))}
	d, err := ReadDRA(DRAObjects{Slices: []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-0", "NVIDIA A100-SXM4-80GB", 2, 0), fabric},
		Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{claim}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewCache([]*v1.Node{node("node-0", "cpu", "64", "memory", "512Gi", "pods", "110")}, nil, Options{DRA: d})
	if err != nil {
		t.Fatal(err)
	}
	p := podWithClaims("p", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: new("h100")})
	pt, err := NewPodTask(d, s.Schema(), p, scoring.TaskOptions{Devices: gpu})
	if err != nil {
		t.Fatal(err)
	}
	task, ok, err := pt.On("node-0")
	slot, _ := s.Schema().Slot(gpu)
	if err != nil || !ok || task.Requests[slot] != 0 || task.Devices.Count != 0 {
		t.Errorf("on node-0: %v, %v; takes %d of nvidia.com/gpu, devices %+v", ok, err, task.Requests[slot], task.Devices)
	}
}

// A device that consumes from two counter sets uses both: with span
// (half of set a, half of set b) held, neither gpu-a nor gpu-b is wholly
// free, and the node's row holds half of each GPU as used.
func TestDeviceOverTwoCounterSetsUsesBoth(t *testing.T) {
	held := dratest.AllocatedClaim("train", "span", "node-0", "span")
	d, err := ReadDRA(DRAObjects{Slices: dratest.TwoCounterSetSlices("node-0"), Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{held}})
	if err != nil {
		t.Fatal(err)
	}
	if a, u := d.Amounts("node-0", "gpu.nvidia.com"); a != 2 || u != 2 {
		t.Errorf("Amounts: %d allocatable, %d used; want 2, 2", a, u)
	}
	s, err := NewCache([]*v1.Node{node("node-0", "cpu", "64", "memory", "512Gi", "pods", "110")}, nil, Options{DRA: d})
	if err != nil {
		t.Fatal(err)
	}
	slot, _ := s.Schema().Slot(gpu)
	if a, u := s.Table().Allocatable(0)[slot], s.Table().Used(0)[slot]; a != 2000 || u != 1000 {
		t.Errorf("row: %d allocatable, %d used; want 2000, 1000", a, u)
	}
}
