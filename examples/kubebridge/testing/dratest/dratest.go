// Package dratest makes Dynamic Resource Allocation objects shaped as
// NVIDIA's DRA driver (gpu.nvidia.com) and its Helm chart write them, for
// the tests of every host.
package dratest

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NVIDIASlice is a ResourceSlice as NVIDIA's DRA driver (gpu.nvidia.com)
// publishes a node's GPUs: one pool per node named after it, devices
// gpu-0… with the driver's attributes and their memory as capacity.
func NVIDIASlice(node, product string, gpus int, generation int64) *resourcev1.ResourceSlice {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu.nvidia.com-" + fmt.Sprint(generation)},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "gpu.nvidia.com",
			NodeName: &node,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: generation, ResourceSliceCount: 1},
		},
	}
	for i := range gpus {
		index := int64(i)
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type":                  str("gpu"),
				"productName":           str(product),
				"uuid":                  str(fmt.Sprintf("GPU-%s-%d", node, i)),
				"architecture":          str("Hopper"),
				"brand":                 str("Nvidia"),
				"index":                 {IntValue: &index},
				"cudaComputeCapability": {VersionValue: new("9.0.0")},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: kres.MustParse("80Gi")}},
		})
	}
	return s
}

// MIGDevice is a MIG device as the driver publishes it beside the GPUs.
func MIGDevice(name string) resourcev1.Device {
	mig, product := "mig", "NVIDIA H100 80GB HBM3"
	return resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		"type": {StringValue: &mig}, "productName": {StringValue: &product},
	}, Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: kres.MustParse("10Gi")}}}
}

func DeviceClass(name, expression string, extended string) *resourcev1.DeviceClass {
	c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expression}}}}}
	if extended != "" {
		c.Spec.ExtendedResourceName = &extended
	}
	return c
}

// NVIDIAClasses are the DeviceClasses NVIDIA's Helm chart installs for
// whole GPUs (with KEP-5004's extended resource) and MIG devices.
func NVIDIAClasses() []*resourcev1.DeviceClass {
	return []*resourcev1.DeviceClass{
		DeviceClass("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", "nvidia.com/gpu"),
		DeviceClass("mig.nvidia.com", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", ""),
	}
}

// AllocatedClaim is a claim for as many GPUs as devices, allocated: it
// holds those devices of a pool.
func AllocatedClaim(namespace, name, pool string, devices ...string) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ClaimSpec(Exactly("gpus", "gpu.nvidia.com", int64(len(devices))))}
	c.Status.Allocation = &resourcev1.AllocationResult{NodeSelector: NodeOf(pool)}
	for _, d := range devices {
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourcev1.DeviceRequestAllocationResult{Request: "gpus", Driver: "gpu.nvidia.com", Pool: pool, Device: d})
	}
	return c
}

// ClaimSpec is a claim's (or a template's) spec with these requests.
func ClaimSpec(requests ...resourcev1.DeviceRequest) resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}}
}

// Exactly is a request for count devices of a class, each selected by the
// CEL selectors too.
func Exactly(name, class string, count int64, selectors ...string) resourcev1.DeviceRequest {
	r := resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class,
		AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}} // the mode as the API defaults it
	for _, s := range selectors {
		r.Exactly.Selectors = append(r.Exactly.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: s}})
	}
	return r
}

// MIGProfile is a MIG profile of a GPU as NVIDIA's driver publishes its
// dynamic MIG devices (KEP-4815's partitionable devices): one device per
// placement, named gpu-<minor>-mig-<profile without dots>-<GI profile
// ID>-<placement start>, consuming the profile's capacities and its
// memory slices from the GPU's counter set.
type MIGProfile struct {
	Name            string // as nvidia-smi names it: 3g.40gb
	ID              int    // the GPU instance profile ID
	Slices          int    // memory slices it takes
	Multiprocessors int64
	CopyEngines     int64
	Decoders        int64
	Memory          string // a quantity: the profile's nominal memory
	Starts          []int  // its placements' first memory slice
}

// A100MIG are the MIG profiles of an A100 80GB (seven compute slices of
// 14 multiprocessors, eight memory slices), with their placements, as
// NVIDIA documents them; memory is each profile's nominal size.
var A100MIG = []MIGProfile{
	{Name: "1g.10gb", ID: 19, Slices: 1, Multiprocessors: 14, CopyEngines: 1, Decoders: 0, Memory: "10Gi", Starts: []int{0, 1, 2, 3, 4, 5, 6}},
	{Name: "2g.20gb", ID: 14, Slices: 2, Multiprocessors: 28, CopyEngines: 2, Decoders: 1, Memory: "20Gi", Starts: []int{0, 2, 4}},
	{Name: "3g.40gb", ID: 9, Slices: 4, Multiprocessors: 42, CopyEngines: 3, Decoders: 2, Memory: "40Gi", Starts: []int{0, 4}},
	{Name: "4g.40gb", ID: 5, Slices: 4, Multiprocessors: 56, CopyEngines: 4, Decoders: 2, Memory: "40Gi", Starts: []int{0}},
	{Name: "7g.80gb", ID: 0, Slices: 8, Multiprocessors: 98, CopyEngines: 7, Decoders: 5, Memory: "80Gi", Starts: []int{0}},
}

// migCounters are what a device of a profile at a placement consumes (or,
// for the whole GPU, 7g.80gb at 0, what its counter set holds): the
// profile's capacities as counters (the driver's names), and one counter
// of 1 per memory slice it covers.
func migCounters(p MIGProfile, start int) map[string]resourcev1.Counter {
	n := func(v int64) resourcev1.Counter {
		return resourcev1.Counter{Value: *kres.NewQuantity(v, kres.DecimalSI)}
	}
	c := map[string]resourcev1.Counter{
		"multiprocessors": n(p.Multiprocessors), "copy-engines": n(p.CopyEngines), "decoders": n(p.Decoders),
		"memory": {Value: kres.MustParse(p.Memory)},
	}
	for i := start; i < start+p.Slices; i++ {
		c[fmt.Sprintf("memory-slice-%d", i)] = n(1)
	}
	return c
}

// migCapacity is a profile's capacities as a device publishes them.
func migCapacity(p MIGProfile) map[resourcev1.QualifiedName]resourcev1.DeviceCapacity {
	n := func(v int64) resourcev1.DeviceCapacity {
		return resourcev1.DeviceCapacity{Value: *kres.NewQuantity(v, kres.DecimalSI)}
	}
	return map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
		"multiprocessors": n(p.Multiprocessors), "copyEngines": n(p.CopyEngines), "decoders": n(p.Decoders),
		"memory": {Value: kres.MustParse(p.Memory)},
	}
}

// MIGDeviceName is the name the driver gives a dynamic MIG device.
func MIGDeviceName(gpu int, p MIGProfile, start int) string {
	return fmt.Sprintf("gpu-%d-mig-%s-%d-%d", gpu, strings.ReplaceAll(p.Name, ".", ""), p.ID, start)
}

// NVIDIAMIGSlices are the ResourceSlices NVIDIA's DRA driver publishes for
// a node's A100s with dynamic MIG: a pool named after the node of two
// slices, one with the shared counters (a counter set per GPU,
// gpu-<minor>-counter-set) and one with the devices (per GPU the whole
// GPU, consuming all of its counter set, then every MIG placement of
// every profile, each consuming its share). A device of a pool whose
// counters some allocated device has taken cannot be allocated.
func NVIDIAMIGSlices(node string, gpus int, generation int64) []*resourcev1.ResourceSlice {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
	pool := resourcev1.ResourcePool{Name: node, Generation: generation, ResourceSliceCount: 2}
	meta := func(part string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: fmt.Sprintf("%s-gpu.nvidia.com-%s-%d", node, part, generation)}
	}
	counters := &resourcev1.ResourceSlice{ObjectMeta: meta("counters"),
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: &node, Pool: pool}}
	devices := &resourcev1.ResourceSlice{ObjectMeta: meta("devices"),
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: &node, Pool: pool}}
	whole := A100MIG[len(A100MIG)-1]
	for g := range gpus {
		set := fmt.Sprintf("gpu-%d-counter-set", g)
		uuid := fmt.Sprintf("GPU-%s-%d", node, g)
		counters.Spec.SharedCounters = append(counters.Spec.SharedCounters, resourcev1.CounterSet{Name: set, Counters: migCounters(whole, 0)})
		index := int64(g)
		devices.Spec.Devices = append(devices.Spec.Devices, resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", g),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type": str("gpu"), "productName": str("NVIDIA A100-SXM4-80GB"), "uuid": str(uuid),
				"architecture": str("Ampere"), "brand": str("Nvidia"), "index": {IntValue: &index},
				"cudaComputeCapability": {VersionValue: new("8.0.0")},
			},
			Capacity:         migCapacity(whole),
			ConsumesCounters: []resourcev1.DeviceCounterConsumption{{CounterSet: set, Counters: migCounters(whole, 0)}},
		})
		for _, p := range A100MIG {
			for _, start := range p.Starts {
				devices.Spec.Devices = append(devices.Spec.Devices, resourcev1.Device{
					Name: MIGDeviceName(g, p, start),
					Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
						"type": str("mig"), "profile": str(p.Name), "parentUUID": str(uuid),
						"productName": str("NVIDIA A100-SXM4-80GB"), "architecture": str("Ampere"), "brand": str("Nvidia"),
					},
					Capacity:         migCapacity(p),
					ConsumesCounters: []resourcev1.DeviceCounterConsumption{{CounterSet: set, Counters: migCounters(p, start)}},
				})
			}
		}
	}
	return []*resourcev1.ResourceSlice{counters, devices}
}

// NVIDIAShareableSlice is a ResourceSlice as NVIDIA's DRA driver publishes
// a node's GPUs with consumable shares of their memory (KEP-5075, the
// driver's "memory" mode): each GPU allows multiple allocations, and a
// claim takes the memory it requests (by default the whole 80Gi, at least
// and in steps of 1Mi).
func NVIDIAShareableSlice(node string, gpus int, generation int64) *resourcev1.ResourceSlice {
	s := NVIDIASlice(node, "NVIDIA H100 80GB HBM3", gpus, generation)
	s.Name = node + "-gpu.nvidia.com-shared-" + fmt.Sprint(generation)
	for i := range s.Spec.Devices {
		memory, step := kres.MustParse("80Gi"), kres.MustParse("1Mi")
		s.Spec.Devices[i].AllowMultipleAllocations = new(true)
		s.Spec.Devices[i].Capacity["memory"] = resourcev1.DeviceCapacity{Value: memory, RequestPolicy: &resourcev1.CapacityRequestPolicy{
			Default:    new(memory.DeepCopy()),
			ValidRange: &resourcev1.CapacityRequestPolicyRange{Min: new(step.DeepCopy()), Max: new(memory.DeepCopy()), Step: new(step.DeepCopy())},
		}}
	}
	return s
}

// MIGRequest is a request for one MIG device of a profile.
func MIGRequest(name, profile string) resourcev1.DeviceRequest {
	return Exactly(name, "mig.nvidia.com", 1, fmt.Sprintf("device.attributes['gpu.nvidia.com'].profile == '%s'", profile))
}

// ShareRequest is a request for a share of one GPU's memory (a quantity).
func ShareRequest(name, memory string) resourcev1.DeviceRequest {
	r := Exactly(name, "gpu.nvidia.com", 1)
	r.Exactly.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse(memory)}}
	return r
}

// TwoCounterSetSlices are a node's pool of devices over two counter sets,
// a and b, of 4 units of memory each, in two slices (the API allows a
// slice sharedCounters or devices, not both): gpu-a and gpu-b take all of
// theirs, half-a (a MIG device) half of a, and span half of each
// (KEP-4815 lets a device consume from several sets).
func TwoCounterSetSlices(node string) []*resourcev1.ResourceSlice {
	counters := func(n int64) map[string]resourcev1.Counter {
		return map[string]resourcev1.Counter{"memory": {Value: *kres.NewQuantity(n, kres.DecimalSI)}}
	}
	device := func(name, typ string, consumes ...resourcev1.DeviceCounterConsumption) resourcev1.Device {
		return resourcev1.Device{Name: name, ConsumesCounters: consumes, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type": {StringValue: new(typ)}, "productName": {StringValue: new("NVIDIA A100-SXM4-80GB")}}}
	}
	of := func(set string, n int64) resourcev1.DeviceCounterConsumption {
		return resourcev1.DeviceCounterConsumption{CounterSet: set, Counters: counters(n)}
	}
	pool := resourcev1.ResourcePool{Name: node, ResourceSliceCount: 2}
	return []*resourcev1.ResourceSlice{{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-counters"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: new(node), Pool: pool,
			SharedCounters: []resourcev1.CounterSet{{Name: "a", Counters: counters(4)}, {Name: "b", Counters: counters(4)}}},
	}, {
		ObjectMeta: metav1.ObjectMeta{Name: node + "-devices"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: new(node), Pool: pool,
			Devices: []resourcev1.Device{
				device("gpu-a", "gpu", of("a", 4)), device("gpu-b", "gpu", of("b", 4)),
				device("half-a", "mig", of("a", 2)), device("span", "gpu", of("a", 2), of("b", 2)),
			}},
	}}
}

// TB is what a test helper needs of a *testing.T or a *rapid.T.
type TB interface {
	Helper()
	Fatal(args ...any)
}
