package plugins

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
)

// partitionBenchCluster is a generated cluster whose nodes (64 cores,
// 256Gi) alternate: two A100s with dynamic MIG, one or two MIG partitions
// of random profiles allocated to the node's running pod; or two
// shareable H100s, shares of random sizes allocated to it. The objects
// hold the slices, the chart's classes, the claims, and the benchmarked
// pods' claims, not allocated: a 3g.40gb (mig-claim) and a 10Gi share of
// an H100 (share-claim).
func partitionBenchCluster(n int) ([]*v1.Node, []*v1.Pod, []runtime.Object) {
	r := rand.New(rand.NewPCG(3, uint64(n)))
	var nodes []*v1.Node
	var pods []*v1.Pod
	var objects []runtime.Object
	for _, c := range dratest.NVIDIAClasses() {
		objects = append(objects, c)
	}
	for i := range n {
		name, n, load := loadedNode(r, i)
		nodes = append(nodes, n)
		claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gpus-" + name, UID: types.UID("gpus-" + name)},
			Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", 1))}
		claim.Status.Allocation = &resourcev1.AllocationResult{}
		result := func(device string) resourcev1.DeviceRequestAllocationResult {
			return resourcev1.DeviceRequestAllocationResult{Request: "gpus", Driver: "gpu.nvidia.com", Pool: name, Device: device}
		}
		if i%2 == 0 {
			for _, s := range dratest.NVIDIAMIGSlices(name, 2, 0) {
				objects = append(objects, s)
			}
			// One or two partitions that do not overlap: gpu-0's, and
			// maybe gpu-1's.
			for g := range r.IntN(2) + 1 {
				p := dratest.A100MIG[r.IntN(len(dratest.A100MIG)-1)]
				start := p.Starts[r.IntN(len(p.Starts))]
				claim.Status.Allocation.Devices.Results = append(claim.Status.Allocation.Devices.Results, result(dratest.MIGDeviceName(g, p, start)))
			}
		} else {
			objects = append(objects, dratest.NVIDIAShareableSlice(name, 2, 0))
			for k := range r.IntN(3) + 1 {
				res := result(fmt.Sprint("gpu-", r.IntN(2)))
				res.ShareID = ptr.To(types.UID(fmt.Sprintf("%s-share-%d", name, k)))
				res.ConsumedCapacity = map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse(fmt.Sprint(r.IntN(20)+1, "Gi"))}
				claim.Status.Allocation.Devices.Results = append(claim.Status.Allocation.Devices.Results, res)
			}
		}
		holds(load, claim)
		objects = append(objects, claim)
		pods = append(pods, load)
	}
	share := dratest.ShareRequest("gpu", "10Gi")
	share.Exactly.Selectors = append(share.Exactly.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{
		Expression: "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}})
	objects = append(objects,
		&resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mig-claim", UID: "mig-claim"},
			Spec: dratest.ClaimSpec(dratest.MIGRequest("gpu", "3g.40gb"))},
		&resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "share-claim", UID: "share-claim"},
			Spec: dratest.ClaimSpec(share)})
	return nodes, pods, objects
}

// fgdOverParts are FGD's arguments over the A100's MIG profiles and 10Gi
// and 40Gi shares of an H100's memory, alike.
const fgdOverParts = `{"classes": [{"gpus": 1, "gpuShare": 143, "partition": "1g.10gb"}, {"gpus": 1, "gpuShare": 286, "partition": "2g.20gb"},
	{"gpus": 1, "gpuShare": 500, "partition": "3g.40gb"}, {"gpus": 1, "gpuShare": 572, "partition": "4g.40gb"},
	{"gpus": 1, "gpuShare": 1000, "partition": "7g.80gb"}, {"gpus": 1, "gpuShare": 125, "partition": "memory=10Gi"},
	{"gpus": 1, "gpuShare": 500, "partition": "memory=40Gi"}]}`

// BenchmarkFrameworkCyclePartitions is BenchmarkFrameworkCycleDRA on
// partitioned and shared GPUs (partitionBenchCluster): a scheduling
// cycle of a pod with a 3g.40gb claim, and of one with a 10Gi share, on
// 1000 and 5000 nodes, with kube-scheduler's own SharedDRAManager. The
// floor is DynamicResources beside a plugin that does nothing at
// ResourceStrategyFit's points; ResourceStrategyFit (GPUs MostAllocated)
// beside DynamicResources is what a profile deploys, and so is FGD over the
// MIG profiles and shares (fgdOverParts). ns/node per cycle.
func BenchmarkFrameworkCyclePartitions(b *testing.B) {
	quietKlog()
	for _, n := range []int{1000, 5000} {
		nodes, pods, objects := partitionBenchCluster(n)
		e := newDRABench(b, nodes, pods, objects)
		ctx, snapshot, infos, m, factory, client := e.ctx, e.snapshot, e.infos, e.m, e.factory, e.client
		for _, prof := range []struct {
			name    string
			plugins []string
		}{
			{"DynamicResources+Noop", []string{dynamicresources.Name, "Noop"}},
			{"DynamicResources+ResourceStrategyFit", []string{dynamicresources.Name, ResourceStrategyFitName}},
			{"DynamicResources+FGD", []string{dynamicresources.Name, FGDName}},
		} {
			fw := draBenchFramework(b, ctx, snapshot, prof.plugins, m, factory, client)
			for _, claim := range []string{"mig-claim", "share-claim"} {
				p := pod("train-"+claim, "", resources("cpu", "8", "memory", "32Gi"))
				p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claim)}}
				b.Run(fmt.Sprintf("%s/%s/nodes=%d", prof.name, claim, n), func(b *testing.B) {
					measureCycles(b, n, draCycle(b, ctx, fw, p, infos))
				})
			}
		}
		e.cancel()
	}
}
