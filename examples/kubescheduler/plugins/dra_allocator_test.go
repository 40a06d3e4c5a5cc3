package plugins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/cache"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// kubeAllocatorFeatures are the allocator's features kube-scheduler runs
// with under its feature gates (v1.37.2's defaults here), as its
// DynamicResources plugin turns them into the allocator's.
func kubeAllocatorFeatures() structured.Features {
	return dynamicresources.AllocatorFeatures(feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
}

// draCase is a cluster of DRA devices as v1.37 publishes them, with
// claims allocated on it, and a pod whose one claim is not allocated yet.
type draCase struct {
	nodes   []string
	slices  []*resourcev1.ResourceSlice
	claims  []*resourcev1.ResourceClaim // allocated
	pending []*resourcev1.ResourceClaim // the pod's, in its order
	pod     *v1.Pod
	fills   []int // Gi left on the shared GPUs that hold shares
}

// drawSharePolicy draws a shareable GPU's memory request policy other than
// NVIDIA's (nil: NVIDIA's, steps of 1Mi from 1Mi): valid values, a range
// in steps of 5Gi from 1Gi, or a range without steps.
func drawSharePolicy(t *rapid.T, node string) *resourcev1.CapacityRequestPolicy {
	gi := func(n int) *kres.Quantity { return new(kres.MustParse(strconv.Itoa(n) + "Gi")) }
	switch rapid.IntRange(0, 5).Draw(t, node+" policy") {
	case 0:
		return &resourcev1.CapacityRequestPolicy{Default: gi(80), ValidValues: []kres.Quantity{*gi(10), *gi(20), *gi(40), *gi(80)}}
	case 1:
		return &resourcev1.CapacityRequestPolicy{Default: gi(80), ValidRange: &resourcev1.CapacityRequestPolicyRange{Min: gi(1), Max: gi(80), Step: gi(5)}}
	case 2:
		return &resourcev1.CapacityRequestPolicy{Default: gi(40), ValidRange: &resourcev1.CapacityRequestPolicyRange{Min: gi(8)}}
	}
	return nil
}

// drawDRACase draws a cluster of one to three nodes, each with one pool
// of NVIDIA's: A100s with dynamic MIG (partitionable devices, a counter
// set per GPU; now and then a pool missing one of its two slices),
// shareable H100s (consumable capacity: memory with NVIDIA's request
// policy or another, drawSharePolicy),
// or plain GPUs (now and then a pool missing a slice); claims holding
// random devices of them (MIG placements that fit together, whole GPUs,
// shares with the memory they consumed); and a pod with one or two
// pending claims (drawPendingClaim), or asking for nvidia.com/gpu, the
// extended resource of class gpu.nvidia.com (KEP-5004: on shareable GPUs
// a share of the policy's default, on MIG GPUs a whole GPU over shared
// counters), from a container and an init container or a sidecar before
// it, alone or beside claims.
func drawDRACase(t *rapid.T) draCase {
	var c draCase
	var allocated int
	hold := func(results ...resourcev1.DeviceRequestAllocationResult) {
		claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("held-%d", allocated), UID: types.UID(fmt.Sprintf("uid-held-%d", allocated))},
			Spec: dratest.ClaimSpec(dratest.Exactly("r", "gpu.nvidia.com", int64(len(results))))}
		claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}
		c.claims = append(c.claims, claim)
		allocated++
	}
	result := func(pool, device string) resourcev1.DeviceRequestAllocationResult {
		return resourcev1.DeviceRequestAllocationResult{Request: "r", Driver: "gpu.nvidia.com", Pool: pool, Device: device}
	}
	for n := range rapid.IntRange(1, 3).Draw(t, "nodes") {
		name := fmt.Sprintf("node-%d", n)
		c.nodes = append(c.nodes, name)
		switch rapid.SampledFrom([]string{"mig", "shared", "plain", "two sets"}).Draw(t, name) {
		case "mig":
			pool := dratest.NVIDIAMIGSlices(name, rapid.IntRange(1, 2).Draw(t, name+" gpus"), 0)
			if rapid.IntRange(0, 5).Draw(t, name+" incomplete") == 0 {
				pool = pool[:1] // its devices' slice missing
			}
			c.slices = append(c.slices, pool...)
			devices := pool[len(pool)-1].Spec.Devices
			if len(devices) == 0 {
				devices = dratest.NVIDIAMIGSlices(name, 1, 0)[1].Spec.Devices
			}
			holdFitting(t, name, pool[0].Spec.SharedCounters, devices, func(dev string) { hold(result(name, dev)) })
		case "two sets":
			// Devices over two counter sets (KEP-4815 allows a device to
			// consume from several): a GPU of each set, half of one, and
			// one spanning both, which takes half of each.
			pool := dratest.TwoCounterSetSlices(name)
			c.slices = append(c.slices, pool...)
			holdFitting(t, name, pool[0].Spec.SharedCounters, pool[1].Spec.Devices, func(dev string) { hold(result(name, dev)) })
		case "shared":
			s := dratest.NVIDIAShareableSlice(name, rapid.IntRange(1, 2).Draw(t, name+" gpus"), 0)
			policy := drawSharePolicy(t, name)
			for i := range s.Spec.Devices {
				if policy != nil {
					s.Spec.Devices[i].Capacity["memory"] = resourcev1.DeviceCapacity{Value: kres.MustParse("80Gi"), RequestPolicy: policy}
				}
			}
			c.slices = append(c.slices, s)
			held := map[string]int{} // Gi held on each device
			for i := range rapid.IntRange(0, 4).Draw(t, name+" shares") {
				dev := rapid.SampledFrom(s.Spec.Devices).Draw(t, "device").Name
				r := result(name, dev)
				share := types.UID(fmt.Sprintf("%s-share-%d", name, i))
				r.ShareID = &share
				gi := rapid.IntRange(1, 80).Draw(t, "memory")
				held[dev] += gi
				r.ConsumedCapacity = map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse(strconv.Itoa(gi) + "Gi")}
				hold(r)
			}
			for _, gi := range held {
				if gi < 80 {
					c.fills = append(c.fills, 80-gi) // a share that exactly fills what is left
				}
			}
		default:
			s := dratest.NVIDIASlice(name, "NVIDIA A100-SXM4-80GB", rapid.IntRange(1, 4).Draw(t, name+" gpus"), 0)
			if rapid.IntRange(0, 5).Draw(t, name+" incomplete") == 0 {
				s.Spec.Pool.ResourceSliceCount = 2 // its other slice missing
			}
			c.slices = append(c.slices, s)
			for _, dev := range s.Spec.Devices {
				if rapid.Bool().Draw(t, dev.Name+" held") {
					hold(result(name, dev.Name))
				}
			}
		}
	}
	if rapid.IntRange(0, 4).Draw(t, "pool for every node") == 0 {
		// A pool that names no node: GPUs any node reaches (spec.allNodes).
		s := dratest.NVIDIASlice("fabric", "NVIDIA A100-SXM4-80GB", rapid.IntRange(1, 2).Draw(t, "fabric gpus"), 0)
		s.Spec.NodeName, s.Spec.AllNodes = nil, new(true)
		c.slices = append(c.slices, s)
		if rapid.Bool().Draw(t, "fabric held") {
			hold(result("fabric", "gpu-0"))
		}
	}
	profile := func() string { return rapid.SampledFrom(dratest.A100MIG).Draw(t, "profile").Name }
	c.pending = append(c.pending, drawPendingClaim(t, "pending", profile, c.fills))
	if rapid.IntRange(0, 3).Draw(t, "second claim") == 0 {
		c.pending = append(c.pending, drawPendingClaim(t, "pending-2", profile, c.fills))
	}
	c.pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"}}
	if rapid.IntRange(0, 2).Draw(t, "extended resource") == 0 {
		// nvidia.com/gpu, the extended resource of class gpu.nvidia.com
		// (KEP-5004), beside the claims or alone: a container's, and now
		// and then an init container's before it, or one of its sidecar's.
		gpus := func(n int) v1.ResourceRequirements {
			return v1.ResourceRequirements{Requests: v1.ResourceList{"cpu": kres.MustParse("1"), "nvidia.com/gpu": *kres.NewQuantity(int64(n), kres.DecimalSI)}}
		}
		c.pod.Spec.Containers = []v1.Container{{Name: "main", Resources: gpus(rapid.IntRange(1, 2).Draw(t, "main gpus"))}}
		switch rapid.IntRange(0, 3).Draw(t, "init container") {
		case 0:
			c.pod.Spec.InitContainers = []v1.Container{{Name: "init", Resources: gpus(rapid.IntRange(1, 3).Draw(t, "init gpus"))}}
		case 1:
			always := v1.ContainerRestartPolicyAlways
			c.pod.Spec.InitContainers = []v1.Container{{Name: "sidecar", RestartPolicy: &always, Resources: gpus(1)}}
		}
		if rapid.Bool().Draw(t, "claims too") {
			c.pending = nil
		}
	}
	for i, claim := range c.pending {
		c.pod.Spec.ResourceClaims = append(c.pod.Spec.ResourceClaims, v1.PodResourceClaim{Name: fmt.Sprint("c", i), ResourceClaimName: &claim.Name})
	}
	return c
}

// holdFitting holds some of the devices, drawn, that fit together as the
// allocator gives them: each within what the others leave of the
// counters it consumes.
func holdFitting(t *rapid.T, node string, sets []resourcev1.CounterSet, devices []resourcev1.Device, hold func(device string)) {
	left := map[string]map[string]int64{}
	for _, set := range sets {
		left[set.Name] = map[string]int64{}
		for n, c := range set.Counters {
			left[set.Name][n] = c.Value.Value()
		}
	}
	for range rapid.IntRange(0, 3).Draw(t, node+" held") {
		dev := rapid.SampledFrom(devices).Draw(t, "device")
		fits := true
		for _, cc := range dev.ConsumesCounters {
			for n, c := range cc.Counters {
				fits = fits && left[cc.CounterSet][n] >= c.Value.Value()
			}
		}
		if !fits {
			continue
		}
		for _, cc := range dev.ConsumesCounters {
			for n, c := range cc.Counters {
				left[cc.CounterSet][n] -= c.Value.Value()
			}
		}
		hold(dev.Name)
	}
}

// drawPendingClaim draws a claim not allocated yet: whole GPUs, a MIG
// profile, a share of memory (now and then exactly what a shared GPU has
// left, fills), every GPU of a node, every MIG device of a profile
// (allocationMode All over partitions), a profile from a list
// of alternatives, two MIG devices at once, two requests of one class, or
// a request with admin access beside one for a GPU.
func drawPendingClaim(t *rapid.T, name string, profile func() string, fills []int) *resourcev1.ResourceClaim {
	var requests []resourcev1.DeviceRequest
	switch rapid.SampledFrom([]string{"gpus", "mig", "share", "all", "all mig", "first", "two", "twice", "admin"}).Draw(t, name) {
	case "twice":
		requests = append(requests, dratest.Exactly("one", "gpu.nvidia.com", 1), dratest.Exactly("more", "gpu.nvidia.com", int64(rapid.IntRange(1, 2).Draw(t, "count"))))
	case "admin":
		admin := dratest.Exactly("admin", "gpu.nvidia.com", 1)
		admin.Exactly.AdminAccess = new(true)
		requests = append(requests, admin, dratest.Exactly("gpu", "gpu.nvidia.com", 1))
	case "gpus":
		requests = append(requests, dratest.Exactly("gpus", "gpu.nvidia.com", int64(rapid.IntRange(1, 3).Draw(t, "count"))))
	case "mig":
		requests = append(requests, dratest.MIGRequest("mig", profile()))
	case "share":
		gi := rapid.IntRange(1, 90).Draw(t, "memory")
		if len(fills) > 0 && rapid.Bool().Draw(t, "fill") {
			gi = rapid.SampledFrom(fills).Draw(t, "fill memory")
		}
		requests = append(requests, dratest.ShareRequest("share", strconv.Itoa(gi)+"Gi"))
	case "all":
		requests = append(requests, resourcev1.DeviceRequest{Name: "all", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeAll}})
	case "all mig":
		// Every MIG device of a profile: on a GPU with partitions, more
		// of them than fit at once.
		m := dratest.MIGRequest("all", profile()).Exactly
		m.AllocationMode, m.Count = resourcev1.DeviceAllocationModeAll, 0
		requests = append(requests, resourcev1.DeviceRequest{Name: "all", Exactly: m})
	case "first":
		var subs []resourcev1.DeviceSubRequest
		for i := range rapid.IntRange(1, 3).Draw(t, "alternatives") {
			m := dratest.MIGRequest("x", profile()).Exactly
			subs = append(subs, resourcev1.DeviceSubRequest{Name: fmt.Sprintf("alt-%d", i), DeviceClassName: m.DeviceClassName,
				Selectors: m.Selectors, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1})
		}
		requests = append(requests, resourcev1.DeviceRequest{Name: "first", FirstAvailable: subs})
	default:
		requests = append(requests, dratest.MIGRequest("a", profile()), dratest.MIGRequest("b", profile()))
	}
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: dratest.ClaimSpec(requests...)}
}

// pick is an allocation result as compared: each device by request,
// driver, pool and name, and the capacity a share consumes (its share ID
// is random, made by the allocator: only whether it has one).
func pick(r *resourcev1.AllocationResult) string {
	if r == nil {
		return "-"
	}
	var out []string
	for _, d := range r.Devices.Results {
		s := fmt.Sprintf("%s:%s/%s/%s", d.Request, d.Driver, d.Pool, d.Device)
		if d.ShareID != nil {
			s += " share"
		}
		for _, name := range slices.Sorted(func(yield func(resourcev1.QualifiedName) bool) {
			for n := range d.ConsumedCapacity {
				if !yield(n) {
					return
				}
			}
		}) {
			q := d.ConsumedCapacity[name]
			s += fmt.Sprintf(" %s=%s", name, q.String())
		}
		out = append(out, s)
	}
	return fmt.Sprint(out)
}

// kubeAllocations are what kube-scheduler's allocator gives the pending
// claim on each node, as its DynamicResources plugin runs it: on the
// state its own claim tracker gathers (kube's SharedDRAManager over
// informers of the objects), the slices with device taint rules applied,
// its features.
func kubeAllocations(t *testing.T, c draCase) map[string]string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var objects []runtime.Object
	for _, p := range c.pending {
		objects = append(objects, p)
	}
	for _, s := range c.slices {
		objects = append(objects, s)
	}
	for _, cl := range c.claims {
		objects = append(objects, cl)
	}
	for _, cl := range dratest.NVIDIAClasses() {
		objects = append(objects, cl)
	}
	m, _ := draManager(t, ctx, objects...)
	// The tracker counts a claim's devices when its informer's handler
	// has run, which may be after the claim is listed: gather until the
	// state holds every allocated device (or the tracker, in the middle
	// of an update, says so), as kube-scheduler's next cycle would.
	whole, shares := map[string]bool{}, 0
	for _, cl := range c.claims {
		for _, r := range cl.Status.Allocation.Devices.Results {
			if r.ShareID != nil {
				shares++
			} else {
				whole[r.Pool+"/"+r.Device] = true
			}
		}
	}
	var state *structured.AllocatedState
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var err error
		state, err = m.ResourceClaims().GatherAllocatedState()
		if err == nil && len(state.AllocatedDevices) == len(whole) && len(state.AllocatedSharedDeviceIDs) == shares {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the claim tracker never held the %d devices and %d shares allocated: %v", len(whole), shares, err)
		}
	}
	listed, err := m.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		t.Fatal(err)
	}
	features := kubeAllocatorFeatures()
	allocator, err := structured.NewAllocator(ctx, features, *state, m.DeviceClasses(), listed,
		cel.NewCache(10, cel.Features{EnableConsumableCapacity: features.ConsumableCapacity}))
	if err != nil {
		t.Fatal(err)
	}
	toAllocate := c.pending
	if ext := kubeExtendedClaim(c.pod); ext != nil {
		toAllocate = append(slices.Clone(c.pending), ext) // last, as kube-scheduler's claim store holds it
	}
	out := map[string]string{}
	for _, name := range c.nodes {
		results, err := allocator.Allocate(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, toAllocate)
		switch {
		case err != nil && !errors.Is(err, structured.ErrFailedAllocationOnNode):
			// Not the node's failure: kube-scheduler's filter fails the
			// scheduling cycle (a request for all devices of a pool that is
			// being updated, say).
			out[name] = "error"
		case len(results) == len(toAllocate):
			var each []string
			for i := range results {
				each = append(each, pick(&results[i]))
			}
			out[name] = strings.Join(each, " + ")
		default:
			out[name] = pick(nil)
		}
	}
	return out
}

// kubeExtendedClaim is the claim kube-scheduler's DynamicResources plugin
// allocates for the pod's nvidia.com/gpu (its Filter, on a node that
// reports no nvidia.com/gpu of its own, as none here does), as v1.37.2's
// createRequestsAndMappings writes it for the pods drawn: a request for
// each long-lived container (a sidecar or a container) that asks, named
// by the container's index among init containers and containers and
// the resource's index among its sorted requests; an init container
// that runs to completion asks only for what the containers after it
// do not cover. nil when the pod asks for none.
func kubeExtendedClaim(pod *v1.Pod) *resourcev1.ResourceClaim {
	containers := slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)
	counts := make([]int64, len(containers))
	for i, ct := range containers {
		q := ct.Resources.Requests["nvidia.com/gpu"]
		counts[i] = q.Value()
	}
	request := func(i int, n int64) resourcev1.DeviceRequest {
		// "cpu" sorts before "nvidia.com/gpu": the resource's index is 1.
		return resourcev1.DeviceRequest{Name: fmt.Sprintf("container-%d-request-1", i), Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: n}}
	}
	var requests []resourcev1.DeviceRequest
	for i, ct := range containers {
		shortLived := i < len(pod.Spec.InitContainers) && ct.RestartPolicy == nil
		if counts[i] == 0 {
			continue
		}
		if !shortLived {
			requests = append(requests, request(i, counts[i]))
			continue
		}
		var after int64
		for j := i + 1; j < len(containers); j++ {
			if j >= len(pod.Spec.InitContainers) || containers[j].RestartPolicy != nil {
				after += counts[j]
			}
		}
		if after < counts[i] {
			requests = append(requests, request(i, counts[i]-after))
		}
	}
	if len(requests) == 0 {
		return nil
	}
	slices.SortFunc(requests, func(a, b resourcev1.DeviceRequest) int { return strings.Compare(a.Name, b.Name) })
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: "special", UID: "uid-special"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}}}
}

// resfitAllocations are what resfit says the pending claim takes on each
// node (kubebridge's DRA, read from the objects as every host reads them,
// with the features given).
func resfitAllocations(t *testing.T, c draCase, features *structured.Features) map[string]string {
	r := dra.Reader{Features: features}
	d, err := r.Read(dra.Objects{Slices: c.slices, Classes: dratest.NVIDIAClasses(), Claims: append(slices.Clone(c.claims), c.pending...)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range c.nodes {
		claims, ok, err := d.Allocation(c.pod, name)
		switch {
		case err != nil:
			out[name] = "error"
		case !ok:
			out[name] = pick(nil)
			// A node that cannot satisfy the claims is said why.
			if why, err := d.Unsatisfied(c.pod, name); err != nil || why == "" {
				out[name] = fmt.Sprintf("unexplained (%q, %v)", why, err)
			}
		default:
			var each []string
			for i := range claims {
				each = append(each, pick(&claims[i].Result))
			}
			out[name] = strings.Join(each, " + ")
		}
	}
	return out
}

// On clusters of partitionable GPUs (dynamic MIG: counter sets, whole
// GPUs and placements, pools missing a slice), shareable GPUs
// (consumable capacity, shares allocated with the memory they consumed)
// and plain ones, resfit says a pending claim fits a node exactly where
// kube-scheduler's own allocator, on the state kube's claim tracker
// gathers, finds devices for it, and the devices (and the capacity a
// share takes) it predicts are the ones the allocator picks — under
// kube-scheduler's features, and under kubebridge's defaults, which every
// host without kube-scheduler's gates uses; a pod's nvidia.com/gpu is the
// claim kube-scheduler makes for it (kubeExtendedClaim). resfit's own
// reading is held to the allocator too: on each node, the task its hosts
// filter (PodTask.On) fits the node's row where the allocator finds
// devices. CI draws rapid's default 100 clusters (1.5 s); the full run
// draws 10000 (about 2 minutes):
//
//	go test ./plugins -run TestDRAAllocationIsKubeAllocators -rapid.checks=10000
func TestDRAAllocationIsKubeAllocators(t *testing.T) {
	defaults := dra.DefaultAllocatorFeatures()
	kube := kubeAllocatorFeatures()
	rapid.Check(t, func(rt *rapid.T) {
		c := drawDRACase(rt)
		want := kubeAllocations(t, c)
		for _, features := range []*structured.Features{&kube, &defaults} {
			if got := resfitAllocations(t, c, features); fmt.Sprint(got) != fmt.Sprint(want) {
				rt.Fatalf("resfit (features %+v) allocates %v\nkube's allocator %v", *features, got, want)
			}
		}
		// resfit's own reading, where it does not ask the allocator: a
		// pod whose task is the same on every node (whole devices of a
		// simple class) fits a node by the node's amounts alone, as the
		// hosts' filters read them; it fits where the allocator finds
		// devices.
		for node, fits := range uniformFits(t, c) {
			if allocated := want[node] != "-" && want[node] != "error"; fits != allocated {
				rt.Fatalf("on %s, resfit's amounts say the pod fits: %v; kube's allocator gives %s", node, fits, want[node])
			}
		}
		// Every pod: the task resfit's hosts filter on each node (what its
		// claims take there, PodTask.On) is within what the node's row
		// leaves free, where the allocator finds devices.
		for node, fits := range taskFits(t, c) {
			if allocated := want[node] != "-" && want[node] != "error"; fits != allocated {
				rt.Fatalf("on %s, resfit's task says the pod fits: %v; kube's allocator gives %s", node, fits, want[node])
			}
		}
	})
}

// taskFits says on which nodes the pod's task there (PodTask.On) is
// satisfiable and its every request within what the node's row in a
// snapshot of the cluster leaves free, as the hosts' NodeResourcesFit
// filter reads them.
func taskFits(t *testing.T, c draCase) map[string]bool {
	d, err := dra.Read(dra.Objects{Slices: c.slices, Classes: dratest.NVIDIAClasses(), Claims: append(slices.Clone(c.claims), c.pending...)})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*v1.Node
	for _, name := range c.nodes {
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{"cpu": kres.MustParse("64"), "memory": kres.MustParse("512Gi"), "pods": kres.MustParse("110")}}})
	}
	snap, err := cache.New(nodes, nil, cache.Options{DRA: d})
	if err != nil {
		t.Fatal(err)
	}
	pt, err := kubebridge.NewPodTask(d, snap.Schema(), c.pod, scoring.TaskOptions{Devices: resource.GPU})
	if err != nil {
		t.Fatal(err)
	}
	table, out := snap.Table(), map[string]bool{}
	for row := range table.Len() {
		task, ok, err := pt.On(table.Name(row))
		ok = ok && err == nil // an error: kube-scheduler's filter fails the cycle ("error")
		alloc, used := table.Allocatable(row), table.Used(row)
		for i := 0; ok && i < len(task.Requests); i++ {
			ok = task.Requests[i] == 0 || used[i]+task.Requests[i] <= alloc[i]
		}
		out[table.Name(row)] = ok
	}
	return out
}

// uniformFits says, for a pod whose task is uniform (kubebridge.PodTask),
// on which nodes its nvidia.com/gpu request is within what the node's
// amounts leave free (DRA.Amounts, whole GPUs); nil for another pod.
func uniformFits(t *testing.T, c draCase) map[string]bool {
	d, err := dra.Read(dra.Objects{Slices: c.slices, Classes: dratest.NVIDIAClasses(), Claims: append(slices.Clone(c.claims), c.pending...)})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := kubebridge.SchemaFor(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := kubebridge.NewPodTask(d, schema, c.pod, scoring.TaskOptions{Devices: resource.GPU})
	if err != nil || !pt.Uniform() {
		return nil
	}
	slot, _ := schema.Slot(resource.GPU)
	out := map[string]bool{}
	for _, node := range c.nodes {
		a, u := d.Amounts(node, "gpu.nvidia.com")
		out[node] = (a-u)*1000 >= pt.Task.Requests[slot]
	}
	return out
}
