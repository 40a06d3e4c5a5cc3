// Package dratest makes Dynamic Resource Allocation objects shaped as
// NVIDIA's DRA driver (gpu.nvidia.com) and its Helm chart write them, for
// the tests of every host.
package dratest

import (
	"fmt"

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
	c.Status.Allocation = &resourcev1.AllocationResult{}
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
