package dratest

import (
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ClaimPod is a pod in namespace ns naming one claim.
func ClaimPod(name, claim string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1.PodSpec{ResourceClaims: []v1.PodResourceClaim{{Name: "c", ResourceClaimName: &claim}}}}
}

// PodWithClaims is a pod in namespace train naming these claims.
func PodWithClaims(name string, claims ...v1.PodResourceClaim) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: name}, Spec: v1.PodSpec{ResourceClaims: claims}}
}

// Claim is a claim in namespace ns with these requests, not allocated.
func Claim(name string, requests ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: ClaimSpec(requests...)}
}

// HeldClaim is a claim in namespace ns for one gpu.nvidia.com device
// (request r), allocated these results.
func HeldClaim(name string, results ...resourcev1.DeviceRequestAllocationResult) *resourcev1.ResourceClaim {
	c := Claim(name, Exactly("r", "gpu.nvidia.com", 1))
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}
	if len(results) > 0 {
		c.Status.Allocation.NodeSelector = NodeOf(results[0].Pool)
	}
	return c
}

// FabricPool is the pool of devices offered to many nodes in this
// package's clusters; every other pool is a node's, named after it
// (NVIDIASlice).
const FabricPool = "fabric"

// NodeOf is the nodeSelector kube's allocator writes in an allocation of
// a pool's devices: for a node's pool, the node by name (matchFields
// metadata.name In); nil for FabricPool, whose devices a test gives the
// selector it needs.
func NodeOf(pool string) *v1.NodeSelector {
	if pool == FabricPool || pool == "" {
		return nil
	}
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{pool}}}}}}
}

// OnDevice is an allocation result of request r: a gpu.nvidia.com device
// of a pool.
func OnDevice(pool, device string) resourcev1.DeviceRequestAllocationResult {
	return resourcev1.DeviceRequestAllocationResult{Request: "r", Driver: "gpu.nvidia.com", Pool: pool, Device: device}
}

// TrainSlices are a cluster's slices: 8 H100s and a MIG device on node-a,
// 8 A100s on node-b.
func TrainSlices() []*resourcev1.ResourceSlice {
	a := NVIDIASlice("node-a", "NVIDIA H100 80GB HBM3", 8, 0)
	a.Spec.Devices = append(a.Spec.Devices, MIGDevice("gpu-7-mig-1g10gb-0"))
	return []*resourcev1.ResourceSlice{a, NVIDIASlice("node-b", "NVIDIA A100-SXM4-80GB", 8, 0)}
}

// TrainClaims are the claims of namespace train over TrainSlices, then
// more: six-gpus holds node-a's gpu-0 to gpu-5 (2 of its GPUs are free),
// one-gpu asks for a GPU, and p-gpus-x7k2 (made from TrainTemplates'
// template, as a pod's claim) for 3.
func TrainClaims(more ...*resourcev1.ResourceClaim) []*resourcev1.ResourceClaim {
	one := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "one-gpu"}, Spec: ClaimSpec(Exactly("gpu", "gpu.nvidia.com", 1))}
	generated := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "p-gpus-x7k2"}, Spec: ClaimSpec(Exactly("gpus", "gpu.nvidia.com", 3))}
	return append([]*resourcev1.ResourceClaim{
		AllocatedClaim("train", "six-gpus", "node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5"), one, generated,
	}, more...)
}

// TrainTemplates are the claim templates of namespace train: two-gpus
// asks for 2 GPUs.
func TrainTemplates() []*resourcev1.ResourceClaimTemplate {
	template := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "two-gpus"}}
	template.Spec.Spec = ClaimSpec(Exactly("gpus", "gpu.nvidia.com", 2))
	return []*resourcev1.ResourceClaimTemplate{template}
}
