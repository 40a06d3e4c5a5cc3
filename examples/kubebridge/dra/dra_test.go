package dra

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
)

// Two nodes of 8 NVIDIA GPUs each, as the driver publishes them, one with
// a MIG device beside them and an older generation of its pool left over;
// a claim holding 6 GPUs of the first. Each class counts what it selects,
// named as KEP-5004 names it.
func TestReadDRANVIDIA(t *testing.T) {
	a := dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 2)
	a.Spec.Devices = append(a.Spec.Devices, dratest.MIGDevice("gpu-0-mig-1g10gb-0"))
	stale := dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 4, 1) // generation 1: replaced
	b := dratest.NVIDIASlice("node-b", "NVIDIA A100-SXM4-80GB", 8, 1)
	claims := []*resourcev1.ResourceClaim{
		dratest.AllocatedClaim("train", "six-gpus", "node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5"),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "pending"}}, // not allocated
	}
	d, err := Read(Objects{Slices: []*resourcev1.ResourceSlice{stale, a, b}, Classes: dratest.NVIDIAClasses(), Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	classes := d.Classes()
	if len(classes) != 2 || classes[0].Resource != "nvidia.com/gpu" || !classes[0].Extended ||
		classes[1].Resource != "deviceclass.resource.kubernetes.io/mig.nvidia.com" || classes[1].Extended {
		t.Errorf("classes %+v", classes)
	}
	for _, c := range []struct {
		node, class       string
		allocatable, used int64
	}{
		{"node-a", "gpu.nvidia.com", 8, 6},
		{"node-a", "mig.nvidia.com", 1, 0},
		{"node-b", "gpu.nvidia.com", 8, 0},
		{"node-b", "mig.nvidia.com", 0, 0},
		{"node-c", "gpu.nvidia.com", 0, 0},
	} {
		if alloc, used := d.Amounts(c.node, c.class); alloc != c.allocatable || used != c.used {
			t.Errorf("%s %s: %d allocatable, %d used; want %d, %d", c.node, c.class, alloc, used, c.allocatable, c.used)
		}
	}
	devices := d.Devices("node-a")
	if len(devices) != 9 || devices[0].Model != "NVIDIA-H100-80GB-HBM3" || d.Devices("node-b")[0].Model != "NVIDIA-A100-SXM4-80GB" {
		t.Errorf("node-a's devices %+v", devices)
	}
	if held := d.HeldBy(DeviceID{"gpu.nvidia.com", "node-a", "gpu-5"}); held != "train/six-gpus" {
		t.Errorf("gpu-5 held by %q", held)
	}
	if got := strings.Join(d.Nodes(), ","); got != "node-a,node-b" {
		t.Errorf("nodes %s", got)
	}
}

// Objects a driver or a user wrote wrong are errors naming the object and
// the field.
func TestReadDRAErrors(t *testing.T) {
	empty := ""
	for _, c := range []struct {
		name    string
		slices  func() []*resourcev1.ResourceSlice
		classes []*resourcev1.DeviceClass
		claims  []*resourcev1.ResourceClaim
		want    string
	}{
		{name: "no driver", slices: func() []*resourcev1.ResourceSlice {
			s := dratest.NVIDIASlice("n", "X", 1, 0)
			s.Spec.Driver = ""
			return []*resourcev1.ResourceSlice{s}
		}, want: "resourceslice n-gpu.nvidia.com-0: spec.driver: empty"},
		{name: "no pool", slices: func() []*resourcev1.ResourceSlice {
			s := dratest.NVIDIASlice("n", "X", 1, 0)
			s.Spec.Pool.Name = ""
			return []*resourcev1.ResourceSlice{s}
		}, want: "resourceslice n-gpu.nvidia.com-0: spec.pool.name: empty"},
		{name: "negative generation", slices: func() []*resourcev1.ResourceSlice {
			return []*resourcev1.ResourceSlice{dratest.NVIDIASlice("n", "X", 1, -3)}
		}, want: "spec.pool.generation: -3 is negative"},
		{name: "unnamed device", slices: func() []*resourcev1.ResourceSlice {
			s := dratest.NVIDIASlice("n", "X", 2, 0)
			s.Spec.Devices[1].Name = ""
			return []*resourcev1.ResourceSlice{s}
		}, want: "resourceslice n-gpu.nvidia.com-0: spec.devices[1].name: empty"},
		{name: "device twice", slices: func() []*resourcev1.ResourceSlice {
			s, t := dratest.NVIDIASlice("n", "X", 2, 0), dratest.NVIDIASlice("n", "X", 1, 0)
			t.Name = "other"
			return []*resourcev1.ResourceSlice{s, t}
		}, want: "resourceslice other: spec.devices[0].name: device gpu.nvidia.com/n/gpu-0 is published by resourceslice n-gpu.nvidia.com-0 too"},
		{name: "counters beside devices", slices: func() []*resourcev1.ResourceSlice {
			pool := dratest.TwoCounterSetSlices("n")
			pool[1].Spec.SharedCounters = pool[0].Spec.SharedCounters
			return pool[1:]
		}, want: "resourceslice n-devices: spec: both sharedCounters and devices; the API allows one of them in a slice"},
		{name: "nine counter sets", slices: func() []*resourcev1.ResourceSlice {
			pool := dratest.TwoCounterSetSlices("n")
			for i := range 7 {
				pool[0].Spec.SharedCounters = append(pool[0].Spec.SharedCounters, resourcev1.CounterSet{Name: fmt.Sprint("set-", i), Counters: pool[0].Spec.SharedCounters[0].Counters})
			}
			return pool
		}, want: "resourceslice n-counters: spec.sharedCounters: 9 counter sets, more than the API's 8"},
		{name: "bad CEL", classes: []*resourcev1.DeviceClass{dratest.DeviceClass("broken", "device.driver ==", "")},
			want: "deviceclass broken: spec.selectors[0].cel.expression:"},
		{name: "CEL not boolean", classes: []*resourcev1.DeviceClass{dratest.DeviceClass("number", "1 + 1", "")},
			want: "deviceclass number: spec.selectors[0].cel.expression:"},
		{name: "no CEL", classes: []*resourcev1.DeviceClass{{ObjectMeta: metav1.ObjectMeta{Name: "bare"}, Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{}}}}},
			want: "deviceclass bare: spec.selectors[0]: no cel selector"},
		{name: "bad extended resource", classes: []*resourcev1.DeviceClass{dratest.DeviceClass("c", "true", "gpu")},
			want: `deviceclass c: spec.extendedResourceName: "gpu" is not an extended resource name`},
		{name: "empty extended resource", classes: []*resourcev1.DeviceClass{{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: &empty}}},
			want: `deviceclass c: spec.extendedResourceName: "" is not`},
		{name: "extended resource twice", classes: []*resourcev1.DeviceClass{dratest.DeviceClass("a", "true", "x.io/gpu"), dratest.DeviceClass("b", "true", "x.io/gpu")},
			want: "deviceclass b: spec.extendedResourceName: x.io/gpu is deviceclass a's too"},
		{name: "class twice", classes: []*resourcev1.DeviceClass{dratest.DeviceClass("a", "true", ""), dratest.DeviceClass("a", "false", "")},
			want: "deviceclass a: metadata.name: listed twice"},
		{name: "unnamed class", classes: []*resourcev1.DeviceClass{{}}, want: "deviceclass: metadata.name: empty"},
		{name: "result without device", claims: []*resourcev1.ResourceClaim{dratest.AllocatedClaim("ns", "c", "p", "d0", "")},
			want: "resourceclaim ns/c: status.allocation.devices.results[1].device: empty"},
		{name: "result without pool", claims: []*resourcev1.ResourceClaim{dratest.AllocatedClaim("ns", "c", "", "d0")},
			want: "resourceclaim ns/c: status.allocation.devices.results[0].pool: empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var slices []*resourcev1.ResourceSlice
			if c.slices != nil {
				slices = c.slices()
			}
			_, err := Read(Objects{Slices: slices, Classes: c.classes, Claims: c.claims})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// A device held with admin access is not taken; a device two claims
// share counts once; a selector that fails on a device at runtime does not
// select it; devices offered to many nodes count on none, devices placed
// one by one count on theirs.
func TestReadDRAEdges(t *testing.T) {
	yes := true
	shared := dratest.NVIDIASlice("n", "X", 3, 0)
	shared.Spec.Devices[0].AllowMultipleAllocations = &yes
	network := dratest.NVIDIASlice("n", "X", 2, 0)
	network.Name, network.Spec.NodeName, network.Spec.AllNodes, network.Spec.Pool.Name = "network", nil, &yes, "network"
	perDevice := dratest.NVIDIASlice("n", "X", 2, 0)
	other := "m"
	perDevice.Name, perDevice.Spec.NodeName, perDevice.Spec.PerDeviceNodeSelection, perDevice.Spec.Pool.Name = "per-device", nil, &yes, "per-device"
	perDevice.Spec.Devices[0].NodeName = &other
	admin := dratest.AllocatedClaim("ns", "admin", "n", "gpu-1")
	admin.Status.Allocation.Devices.Results[0].AdminAccess = &yes
	classes := append(dratest.NVIDIAClasses(),
		// a runtime error: an int attribute compared as a string
		dratest.DeviceClass("fails", "device.attributes['gpu.nvidia.com'].index.startsWith('1')", ""))
	d, err := Read(Objects{Slices: []*resourcev1.ResourceSlice{shared, network, perDevice}, Classes: classes,
		Claims: []*resourcev1.ResourceClaim{dratest.AllocatedClaim("ns", "one", "n", "gpu-0"), dratest.AllocatedClaim("ns", "two", "n", "gpu-0"), admin}})
	if err != nil {
		t.Fatal(err)
	}
	if alloc, used := d.Amounts("n", "gpu.nvidia.com"); alloc != 3 || used != 1 {
		t.Errorf("n: %d allocatable, %d used; want 3, 1", alloc, used)
	}
	if alloc, _ := d.Amounts("m", "gpu.nvidia.com"); alloc != 1 {
		t.Errorf("m: %d allocatable, want 1 (per-device node selection)", alloc)
	}
	if alloc, _ := d.Amounts("n", "fails"); alloc != 0 {
		t.Errorf("a failing selector selected %d devices", alloc)
	}
	if d.HeldBy(DeviceID{"gpu.nvidia.com", "n", "gpu-0"}) != "ns/one" || d.HeldBy(DeviceID{"gpu.nvidia.com", "n", "gpu-1"}) != "" {
		t.Errorf("held: gpu-0 by %q, gpu-1 by %q", d.HeldBy(DeviceID{"gpu.nvidia.com", "n", "gpu-0"}), d.HeldBy(DeviceID{"gpu.nvidia.com", "n", "gpu-1"}))
	}
}

// On random pools, generations and claims, a node's amounts are those of
// counting the newest generation's devices one by one.
func TestReadDRAProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var list []*resourcev1.ResourceSlice
		newest := map[string]int64{}
		sizes := map[string]int{}
		for i := range rapid.IntRange(0, 6).Draw(rt, "slices") {
			node := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(rt, "node")
			gen := rapid.Int64Range(0, 3).Draw(rt, "generation")
			gpus := rapid.IntRange(0, 8).Draw(rt, "gpus")
			if g, ok := newest[node]; ok && g == gen {
				continue // one slice per pool and generation
			}
			s := dratest.NVIDIASlice(node, "X", gpus, gen)
			s.Name = fmt.Sprintf("s%d", i)
			list = append(list, s)
			if g, ok := newest[node]; !ok || gen > g {
				newest[node], sizes[node] = gen, gpus
			}
		}
		held := map[string]int{}
		var claims []*resourcev1.ResourceClaim
		for node, n := range sizes {
			k := rapid.IntRange(0, n).Draw(rt, "held on "+node)
			var devices []string
			for i := range k {
				devices = append(devices, fmt.Sprintf("gpu-%d", i))
			}
			if k > 0 {
				claims = append(claims, dratest.AllocatedClaim("ns", node, node, devices...))
			}
			held[node] = k
		}
		d, err := Read(Objects{Slices: list, Classes: dratest.NVIDIAClasses(), Claims: claims})
		if err != nil {
			rt.Fatal(err)
		}
		for _, node := range []string{"a", "b", "c"} {
			alloc, used := d.Amounts(node, "gpu.nvidia.com")
			if alloc != int64(sizes[node]) || used != int64(held[node]) {
				rt.Fatalf("%s: %d allocatable, %d used; want %d, %d", node, alloc, used, sizes[node], held[node])
			}
		}
	})
}

// draObjects is what FuzzReadDRA decodes: the three lists as JSON.
type draObjects struct {
	Slices    []*resourcev1.ResourceSlice         `json:"slices"`
	Classes   []*resourcev1.DeviceClass           `json:"classes"`
	Claims    []*resourcev1.ResourceClaim         `json:"claims"`
	Templates []*resourcev1.ResourceClaimTemplate `json:"templates"`
	Pods      []*v1.Pod                           `json:"pods"`
}

// Whatever the objects say, Read and a pod's demand do not panic, and
// what they read holds: no node uses more of a class than it has, and a
// pod that fits a node takes no more than the node has free.
func FuzzReadDRA(f *testing.F) {
	seed, err := json.Marshal(draObjects{
		Slices:  []*resourcev1.ResourceSlice{dratest.NVIDIASlice("a", "NVIDIA H100", 2, 1)},
		Classes: dratest.NVIDIAClasses(),
		Claims:  []*resourcev1.ResourceClaim{dratest.AllocatedClaim("ns", "c", "a", "gpu-1", "gpu-7")},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	// Partitionable and shareable GPUs, a partition and a share allocated,
	// pods asking for a profile and for a share.
	uid := types.UID("s")
	share := dratest.AllocatedClaim("ns", "share", "b", "gpu-0")
	share.Status.Allocation.Devices.Results[0].ShareID = &uid
	share.Status.Allocation.Devices.Results[0].ConsumedCapacity = map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse("30Gi")}
	mig := dratest.AllocatedClaim("ns", "mig", "a", dratest.MIGDeviceName(0, dratest.A100MIG[1], 2))
	profile := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "profile"}, Spec: dratest.ClaimSpec(dratest.MIGRequest("r", "3g.40gb"))}
	part := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "part"}, Spec: dratest.ClaimSpec(dratest.ShareRequest("r", "50Gi"))}
	claim := func(pod, name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: pod}, Spec: v1.PodSpec{ResourceClaims: []v1.PodResourceClaim{{Name: "c", ResourceClaimName: &name}}}}
	}
	if seed, err = json.Marshal(draObjects{
		Slices:  append(dratest.NVIDIAMIGSlices("a", 1, 0), dratest.NVIDIAShareableSlice("b", 2, 0)),
		Classes: dratest.NVIDIAClasses(),
		Claims:  []*resourcev1.ResourceClaim{share, mig, profile, part},
		Pods:    []*v1.Pod{claim("p", "profile"), claim("q", "part")},
	}); err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"slices":[{"metadata":{"name":"s"},"spec":{"driver":"d","pool":{"name":"p"},"nodeName":"n","devices":[{"name":"x"},{"name":"y"}]}}],"classes":[{"metadata":{"name":"c"}}],"claims":[{"metadata":{"namespace":"ns","name":"k"},"spec":{"devices":{"requests":[{"name":"r","firstAvailable":[{"name":"a","deviceClassName":"c","count":3},{"name":"b","deviceClassName":"c","allocationMode":"All"}]}]}}}],"pods":[{"metadata":{"namespace":"ns","name":"p"},"spec":{"resourceClaims":[{"name":"k","resourceClaimName":"k"}]}}]}`))
	f.Add([]byte(`{"slices":[{"metadata":{"name":"s"},"spec":{"driver":"d","pool":{"name":"p","generation":1},"nodeName":"n","devices":[{"name":"x","attributes":{"productName":{"string":"A B"}}}]}}],"classes":[{"metadata":{"name":"c"},"spec":{"selectors":[{"cel":{"expression":"device.attributes['d'].productName == 'A B'"}}]}}]}`))
	f.Add([]byte(`{"classes":[{"metadata":{"name":"c"},"spec":{"selectors":[{"cel":{"expression":"device.capacity['x'].memory.compareTo(quantity('1Gi')) > 0"}}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var objects draObjects
		if json.Unmarshal(data, &objects) != nil {
			return
		}
		d, err := Read(Objects{Slices: objects.Slices, Classes: objects.Classes, Claims: objects.Claims, Templates: objects.Templates})
		if err != nil {
			return
		}
		for _, node := range d.Nodes() {
			for i, c := range d.Classes() {
				if alloc, used := d.Amounts(node, c.Name); used < 0 || used > alloc {
					t.Fatalf("%s %s: %d used of %d", node, c.Name, used, alloc)
				}
				if alloc, used := d.CanonicalAmounts(node, i); used < 0 || used > alloc {
					t.Fatalf("%s %s: %d used of %d in canonical units", node, c.Name, used, alloc)
				}
			}
		}
		for _, p := range objects.Pods {
			if p == nil {
				continue
			}
			if _, err := d.ClaimRequests(p); err != nil {
				continue
			}
			for _, node := range d.Nodes() {
				take, ok, err := d.Fit(node, p)
				if err != nil || !ok {
					continue
				}
				for i, c := range d.Classes() {
					alloc, _ := d.CanonicalAmounts(node, i)
					if take[i] < 0 || take[i] > alloc {
						t.Fatalf("pod %s on %s takes %d of %s's %d", p.Name, node, take[i], c.Name, alloc)
					}
				}
			}
		}
	})
}

// draCluster is a reading of TrainSlices, TrainClaims and TrainTemplates
// (dratest), with more claims: node-a (H100s) has 2 GPUs free and a MIG
// device, node-b (A100s) 8 GPUs.
func draCluster(t *testing.T, more ...*resourcev1.ResourceClaim) *Reading {
	t.Helper()
	d, err := Read(Objects{Slices: dratest.TrainSlices(), Classes: dratest.NVIDIAClasses(), Claims: dratest.TrainClaims(more...), Templates: dratest.TrainTemplates()})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A pod's demand: a claim it names, a template's claim once made (and the
// template before), nothing for an allocated claim; on a node, each
// request by its first alternative the node can satisfy, All taking every
// device and only when all are free.
func TestDRAPodRequestsAndFit(t *testing.T) {
	name := func(s string) *string { return &s }
	h100 := "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
	either := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "either"}, Spec: dratest.ClaimSpec(resourcev1.DeviceRequest{
		Name: "gpus", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "h100", DeviceClassName: "gpu.nvidia.com", Count: 2, Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: h100}}}},
			{Name: "any", DeviceClassName: "gpu.nvidia.com", Count: 4},
		}})}
	all := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "all"}, Spec: dratest.ClaimSpec(resourcev1.DeviceRequest{
		Name: "node", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeAll}})}
	d := draCluster(t, either, all)
	for _, c := range []struct {
		pod          *v1.Pod
		requests     string
		nodeA, nodeB string // GPUs taken, "-" where it does not fit
	}{
		{dratest.PodWithClaims("named", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: name("one-gpu")}), "train/one-gpu:gpu", "1", "1"},
		{dratest.PodWithClaims("allocated", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: name("six-gpus")}), "", "0", "0"},
		{dratest.PodWithClaims("template", v1.PodResourceClaim{Name: "gpus", ResourceClaimTemplateName: name("two-gpus")}), "train/two-gpus:gpus", "2", "2"},
		{func() *v1.Pod {
			p := dratest.PodWithClaims("p", v1.PodResourceClaim{Name: "gpus", ResourceClaimTemplateName: name("two-gpus")})
			p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpus", ResourceClaimName: name("p-gpus-x7k2")}}
			return p
		}(), "train/p-gpus-x7k2:gpus", "-", "3"},
		{dratest.PodWithClaims("two", v1.PodResourceClaim{Name: "a", ResourceClaimName: name("one-gpu")}, v1.PodResourceClaim{Name: "b", ResourceClaimTemplateName: name("two-gpus")}),
			"train/one-gpu:gpu train/two-gpus:gpus", "-", "3"},
		{dratest.PodWithClaims("either", v1.PodResourceClaim{Name: "gpus", ResourceClaimName: name("either")}), "train/either:gpus", "2", "4"},
		{dratest.PodWithClaims("all", v1.PodResourceClaim{Name: "node", ResourceClaimName: name("all")}), "train/all:node", "-", "8"},
	} {
		reqs, err := d.ClaimRequests(c.pod)
		if err != nil {
			t.Fatalf("%s: %v", c.pod.Name, err)
		}
		var got []string
		for _, r := range reqs {
			got = append(got, r.Claim+":"+r.Name)
		}
		if strings.Join(got, " ") != c.requests {
			t.Errorf("%s: requests %v, want %s", c.pod.Name, got, c.requests)
		}
		for node, want := range map[string]string{"node-a": c.nodeA, "node-b": c.nodeB} {
			take, ok, err := d.Fit(node, c.pod)
			if err != nil {
				t.Fatalf("%s on %s: %v", c.pod.Name, node, err)
			}
			got := "-"
			if ok {
				got = fmt.Sprint(take[0] / 1000) // gpu.nvidia.com, the first class, in nvidia.com/gpu's thousandths
				if take[1] != 0 {
					t.Errorf("%s on %s took %d MIG devices", c.pod.Name, node, take[1])
				}
			}
			if got != want {
				t.Errorf("%s on %s: takes %s GPUs, want %s", c.pod.Name, node, got, want)
			}
		}
	}
}

// A pod's claims that cannot be read are errors naming the pod or the
// claim and the field.
func TestDRAPodRequestErrors(t *testing.T) {
	name := func(s string) *string { return &s }
	bad := func(claim string, r resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: claim}, Spec: dratest.ClaimSpec(r)}
	}
	mode := dratest.Exactly("r", "gpu.nvidia.com", 1)
	mode.Exactly.AllocationMode = "Some"
	both := dratest.Exactly("r", "gpu.nvidia.com", 1)
	both.FirstAvailable = []resourcev1.DeviceSubRequest{{Name: "x", DeviceClassName: "gpu.nvidia.com"}}
	d := draCluster(t,
		bad("unknown-class", dratest.Exactly("r", "tpu.example.com", 1)),
		bad("bad-mode", mode),
		bad("negative", dratest.Exactly("r", "gpu.nvidia.com", -2)),
		bad("bad-selector", dratest.Exactly("r", "gpu.nvidia.com", 1, "device.attributes[")),
		bad("both", both),
		bad("sub-class", resourcev1.DeviceRequest{Name: "r", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "a", DeviceClassName: "gpu.nvidia.com"}, {Name: "b", DeviceClassName: "nope"}}}),
	)
	for _, c := range []struct {
		claim v1.PodResourceClaim
		want  string
	}{
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("missing")}, "pod train/p: spec.resourceClaims[0].resourceClaimName: no resourceclaim train/missing"},
		{v1.PodResourceClaim{Name: "c", ResourceClaimTemplateName: name("missing")}, "pod train/p: spec.resourceClaims[0].resourceClaimTemplateName: no resourceclaimtemplate train/missing"},
		{v1.PodResourceClaim{Name: "c"}, "pod train/p: spec.resourceClaims[0]: neither resourceClaimName nor resourceClaimTemplateName"},
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("one-gpu"), ResourceClaimTemplateName: name("two-gpus")}, "both resourceClaimName and resourceClaimTemplateName"},
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("unknown-class")}, `resourceclaim train/unknown-class: spec.devices.requests[0].exactly.deviceClassName: no deviceclass "tpu.example.com"`},
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("bad-mode")}, `resourceclaim train/bad-mode: spec.devices.requests[0].exactly.allocationMode: "Some" is neither ExactCount nor All`},
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("negative")}, "resourceclaim train/negative: spec.devices.requests[0].exactly.count: -2 is negative"},
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("bad-selector")}, "resourceclaim train/bad-selector: spec.devices.requests[0].exactly.selectors[0].cel.expression:"},
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("both")}, "resourceclaim train/both: spec.devices.requests[0]: exactly one of exactly and firstAvailable"},
		{v1.PodResourceClaim{Name: "c", ResourceClaimName: name("sub-class")}, `resourceclaim train/sub-class: spec.devices.requests[0].firstAvailable[1].deviceClassName: no deviceclass "nope"`},
	} {
		_, err := d.ClaimRequests(dratest.PodWithClaims("p", c.claim))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// A device class whose selector fails at runtime — here by passing the
// cost limit kube-scheduler's allocator evaluates selectors under — selects
// no device, and ClassErrors says which class, which selector and
// expression, on which device, and why, as the allocator reports it. It is
// evaluated on one device only; the other classes are read as usual, and a
// reader that reads again keeps the error.
func TestFailingClassSelectorIsReported(t *testing.T) {
	const costly = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, " +
		"[1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))"
	classes := append(dratest.NVIDIAClasses(), dratest.DeviceClass("costly.example.com", costly, ""),
		dratest.DeviceClass("broken.example.com", "device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'", ""))
	slices := []*resourcev1.ResourceSlice{dratest.NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 1), dratest.NVIDIASlice("node-b", "NVIDIA H100 80GB HBM3", 8, 1)}
	var r Reader
	for range 2 {
		d, err := r.Read(Objects{Slices: slices, Classes: classes})
		if err != nil {
			t.Fatal(err)
		}
		errs := d.ClassErrors()
		if len(errs) != 2 {
			t.Fatalf("class errors %v", errs)
		}
		for i, want := range []string{
			`deviceclass broken.example.com: spec.selectors[0].cel.expression "device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'" on device gpu.nvidia.com/node-a/gpu-0: CEL runtime error: `,
			`deviceclass costly.example.com: spec.selectors[0].cel.expression "[1,2,3`,
		} {
			if !strings.HasPrefix(errs[i].Error(), want) || !strings.HasSuffix(errs[i].Error(), "; the class selects no device") {
				t.Errorf("error %d: %v\nwant it to start %q", i, errs[i], want)
			}
		}
		if !strings.Contains(errs[1].Error(), "cost limit") {
			t.Errorf("the costly class's error does not name the cost limit: %v", errs[1])
		}
		for _, node := range []string{"node-a", "node-b"} {
			for _, dev := range d.Devices(node) {
				if len(dev.Classes) != 1 || d.Classes()[dev.Classes[0]].Name != "gpu.nvidia.com" {
					t.Errorf("%s: classes %v", dev.ID, dev.Classes)
				}
			}
		}
	}
}

// The allocator's search for a pod's claims on a node is bounded in time,
// as kube-scheduler's DynamicResources filterTimeout bounds it: a claim
// for two of a node's 256 GPUs that must share a UUID, which no two do,
// makes the allocator try every pair (32,640, each first GPU a new step
// of its search, where it looks at the clock), and ends in an error for
// the pod there, naming the node and the bound. The search takes about
// 100 ms (1 s under the race detector): far more than the 1 ms bound,
// far less than the default 10 s.
func TestAllocationTimesOut(t *testing.T) {
	var slices []*resourcev1.ResourceSlice
	for i := range 2 {
		s := dratest.NVIDIASlice("node-0", "NVIDIA A100-SXM4-80GB", 128, 0)
		s.Name = fmt.Sprintf("node-0-%d", i)
		s.Spec.Pool.ResourceSliceCount = 2
		for j := range s.Spec.Devices {
			s.Spec.Devices[j].Name = fmt.Sprintf("gpu-%d-%d", i, j)
			s.Spec.Devices[j].Attributes["uuid"] = resourcev1.DeviceAttribute{StringValue: new(fmt.Sprintf("GPU-%d-%d", i, j))}
		}
		slices = append(slices, s)
	}
	spec := dratest.ClaimSpec(dratest.Exactly("gpu", "gpu.nvidia.com", 2))
	spec.Devices.Constraints = []resourcev1.DeviceConstraint{{MatchAttribute: new(resourcev1.FullyQualifiedName("gpu.nvidia.com/uuid"))}}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "c"}, Spec: spec}
	p := dratest.PodWithClaims("p", v1.PodResourceClaim{Name: "gpu", ResourceClaimName: new("c")})
	for _, c := range []struct {
		timeout time.Duration
		want    string
	}{
		{time.Millisecond, "node node-0: timed out trying to allocate devices (after 1ms, kube-scheduler's DynamicResources filterTimeout)"},
		{0, ""}, // the default, 10s: the search ends, finding no device
	} {
		r := Reader{FilterTimeout: c.timeout}
		d, err := r.Read(Objects{Slices: slices, Classes: dratest.NVIDIAClasses(), Claims: []*resourcev1.ResourceClaim{claim}})
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := d.Allocation(p, "node-0")
		if got := fmt.Sprint(err); ok || (c.want == "" && err != nil) || (c.want != "" && !strings.Contains(got, c.want)) {
			t.Errorf("timeout %v: fits %v, error %v; want %q", c.timeout, ok, err, c.want)
		}
	}
}
