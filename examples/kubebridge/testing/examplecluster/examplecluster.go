// Package examplecluster makes the small cluster of kubectl-resfit's worked
// example (its README) and of the hosts' tests: kubectl-resfit's on
// snapshot files and against a real kube-apiserver, the descheduler's
// end to end; the same objects each way. kubectl-resfit's
// testdata/cluster.json is its output.
package examplecluster

import (
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
)

// Start is when the example cluster's first pod was created; the others
// follow a second apart, in the order listed.
var Start = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// Cluster is the cluster of the README's worked example and the
// tests: two GPU nodes (32 cores, 128Gi, 8 GPUs) and two CPU nodes (16
// cores, 64Gi); a training job on 6 of gpu-a's GPUs, a web pod on cpu-a, a
// finished batch pod on cpu-b (it uses nothing); and four pending pods, two
// GPU jobs at priority 100 and two web pods at priority 0.
func Cluster() ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	for _, n := range []struct {
		name  string
		alloc v1.ResourceList
	}{
		{"cpu-a", kubetest.Resources("cpu", "16", "memory", "64Gi", "pods", "110")},
		{"cpu-b", kubetest.Resources("cpu", "16", "memory", "64Gi", "pods", "110")},
		{"gpu-a", kubetest.Resources("cpu", "32", "memory", "128Gi", "pods", "110", kubetest.GPU, "8")},
		{"gpu-b", kubetest.Resources("cpu", "32", "memory", "128Gi", "pods", "110", kubetest.GPU, "8")},
	} {
		nodes = append(nodes, &v1.Node{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: n.name, CreationTimestamp: metav1.NewTime(Start.Add(-time.Hour))},
			Status:     v1.NodeStatus{Capacity: n.alloc, Allocatable: n.alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		})
	}
	priority := func(p int32) (*int32, string) {
		if p == TrainingPriority {
			return &p, TrainingPriorityClass
		}
		return &p, ""
	}
	var pods []*v1.Pod
	for i, p := range []struct {
		ns, name, node string
		phase          v1.PodPhase
		priority       int32
		req            v1.ResourceList
	}{
		{"train", "job-0", "gpu-a", v1.PodRunning, 100, kubetest.Resources("cpu", "8", "memory", "32Gi", kubetest.GPU, "6")},
		{"web", "api-0", "cpu-a", v1.PodRunning, 0, kubetest.Resources("cpu", "8", "memory", "16Gi")},
		{"batch", "done-0", "cpu-b", v1.PodSucceeded, 0, kubetest.Resources("cpu", "12", "memory", "8Gi")},
		{"train", "job-1", "", v1.PodPending, 100, kubetest.Resources("cpu", "4", "memory", "16Gi", kubetest.GPU, "2")},
		{"web", "api-1", "", v1.PodPending, 0, kubetest.Resources("cpu", "4", "memory", "8Gi")},
		{"web", "api-2", "", v1.PodPending, 0, kubetest.Resources("cpu", "12", "memory", "8Gi")},
		{"train", "job-2", "", v1.PodPending, 100, kubetest.Resources("cpu", "8", "memory", "16Gi", kubetest.GPU, "4")},
	} {
		prio, class := priority(p.priority)
		pods = append(pods, &v1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, CreationTimestamp: metav1.NewTime(Start.Add(time.Duration(i) * time.Second))},
			Spec: v1.PodSpec{NodeName: p.node, Priority: prio, PriorityClassName: class, Containers: []v1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: p.req, Limits: p.req},
			}}},
			Status: v1.PodStatus{Phase: p.phase},
		})
	}
	return nodes, pods
}

// The GPU jobs' PriorityClass: an apiserver accepts a pod's priority only
// with the class that gives it.
const (
	TrainingPriorityClass       = "training"
	TrainingPriority      int32 = 100
)

// SnapshotJSON writes nodes and pods, then other objects (with their
// kinds set), as `kubectl get nodes,pods,... -A -o json` does: a v1 List of
// the objects, each with its kind (objects read through a typed client
// have none; they are copied, not changed).
func SnapshotJSON(nodes []*v1.Node, pods []*v1.Pod, more ...runtime.Object) []byte {
	l := v1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, n := range nodes {
		n = n.DeepCopy()
		n.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
		l.Items = append(l.Items, runtime.RawExtension{Object: n})
	}
	for _, p := range pods {
		p = p.DeepCopy()
		p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		l.Items = append(l.Items, runtime.RawExtension{Object: p})
	}
	for _, o := range more {
		l.Items = append(l.Items, runtime.RawExtension{Object: o})
	}
	data, err := json.MarshalIndent(l, "", "    ")
	if err != nil {
		panic(fmt.Sprintf("a List of nodes and pods does not encode: %v", err))
	}
	return append(data, '\n')
}

// DRACluster is the example cluster with its GPUs published through
// Dynamic Resource Allocation instead of a device plugin: gpu-a's 8 H100s
// and gpu-b's 8 A100s in ResourceSlices as NVIDIA's DRA driver writes
// them, the chart's DeviceClasses (gpu.nvidia.com names nvidia.com/gpu),
// and the GPU jobs asking through claims: job-0's allocated on gpu-a's
// first 6 GPUs, job-1's for 2 GPUs and job-2's for 4 H100s pending. The
// GPU nodes report no nvidia.com/gpu themselves, and the GPU jobs' pods ask
// for none. objects are the DRA objects, in snapshot order.
func DRACluster() (nodes []*v1.Node, pods []*v1.Pod, objects []runtime.Object) {
	nodes, pods = Cluster()
	for _, n := range nodes {
		delete(n.Status.Allocatable, kubetest.GPU)
		delete(n.Status.Capacity, kubetest.GPU)
	}
	for _, c := range dratest.NVIDIAClasses() {
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"}
		objects = append(objects, c)
	}
	for _, s := range []*resourcev1.ResourceSlice{
		dratest.NVIDIASlice("gpu-a", "NVIDIA H100 80GB HBM3", 8, 0),
		dratest.NVIDIASlice("gpu-b", "NVIDIA A100-SXM4-80GB", 8, 0),
	} {
		s.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"}
		objects = append(objects, s)
	}
	h100 := "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
	claims := map[string]*resourcev1.ResourceClaim{
		"job-0": dratest.AllocatedClaim("train", "job-0-gpus", "gpu-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5"),
		"job-1": {ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "job-1-gpus"}, Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", 2))},
		"job-2": {ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "job-2-gpus"}, Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", 4, h100))},
	}
	for _, p := range pods {
		c, ok := claims[p.Name]
		if !ok {
			continue
		}
		delete(p.Spec.Containers[0].Resources.Requests, kubetest.GPU)
		delete(p.Spec.Containers[0].Resources.Limits, kubetest.GPU)
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: &c.Name}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpus"}}
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"}
		c.CreationTimestamp = p.CreationTimestamp
		if p.Spec.NodeName != "" {
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
		}
		objects = append(objects, c)
	}
	return nodes, pods, objects
}

// PartitionCluster is a cluster of GPUs as Kubernetes v1.37 partitions and
// shares them through DRA, published as NVIDIA's DRA driver publishes
// them: mig-a and mig-b each have an A100 with dynamic MIG (KEP-4815:
// partitionable devices, a counter set per GPU), share-a two H100s whose
// memory claims share (KEP-5075: consumable capacity). train/notebook-0
// runs on mig-a in a 3g.40gb at memory slices 0–3; infer/infer-0 on
// share-a in a 60Gi share of gpu-0. Pending: train/mig-1 asks for a
// 3g.40gb, infer/infer-1 for a 10Gi share, infer/infer-2 for a 30Gi share
// and train/full-1 for a whole GPU. objects are the DRA objects, in
// snapshot order.
func PartitionCluster() (nodes []*v1.Node, pods []*v1.Pod, objects []runtime.Object) {
	for _, name := range []string{"mig-a", "mig-b", "share-a"} {
		alloc := kubetest.Resources("cpu", "32", "memory", "256Gi", "pods", "110")
		nodes = append(nodes, &v1.Node{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(Start.Add(-time.Hour))},
			Status:     v1.NodeStatus{Capacity: alloc, Allocatable: alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		})
	}
	for _, c := range dratest.NVIDIAClasses() {
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"}
		objects = append(objects, c)
	}
	slices := append(dratest.NVIDIAMIGSlices("mig-a", 1, 0), dratest.NVIDIAMIGSlices("mig-b", 1, 0)...)
	for _, s := range append(slices, dratest.NVIDIAShareableSlice("share-a", 2, 0)) {
		s.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"}
		objects = append(objects, s)
	}
	share := types.UID("infer-0-share")
	for i, p := range []struct {
		ns, name, node string
		request        resourcev1.DeviceRequest
		held           *resourcev1.DeviceRequestAllocationResult
	}{
		{"train", "notebook-0", "mig-a", dratest.MIGRequest("mig", "3g.40gb"), &resourcev1.DeviceRequestAllocationResult{
			Request: "mig", Driver: "gpu.nvidia.com", Pool: "mig-a", Device: dratest.MIGDeviceName(0, dratest.A100MIG[2], 0)}},
		{"infer", "infer-0", "share-a", dratest.ShareRequest("share", "60Gi"), &resourcev1.DeviceRequestAllocationResult{
			Request: "share", Driver: "gpu.nvidia.com", Pool: "share-a", Device: "gpu-0", ShareID: &share,
			ConsumedCapacity: map[resourcev1.QualifiedName]kres.Quantity{"memory": kres.MustParse("60Gi")}}},
		{"train", "mig-1", "", dratest.MIGRequest("mig", "3g.40gb"), nil},
		{"infer", "infer-1", "", dratest.ShareRequest("share", "10Gi"), nil},
		{"infer", "infer-2", "", dratest.ShareRequest("share", "30Gi"), nil},
		{"train", "full-1", "", dratest.Exactly("gpu", "gpu.nvidia.com", 1), nil},
	} {
		created := metav1.NewTime(Start.Add(time.Duration(i) * time.Second))
		phase := v1.PodPending
		if p.node != "" {
			phase = v1.PodRunning
		}
		req := kubetest.Resources("cpu", "4", "memory", "16Gi")
		pod := &v1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, UID: types.UID(p.name + "-uid"), CreationTimestamp: created},
			Spec: v1.PodSpec{NodeName: p.node, Containers: []v1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: req, Limits: req, Claims: []v1.ResourceClaim{{Name: "gpu"}}},
			}}},
			Status: v1.PodStatus{Phase: phase},
		}
		claim := &resourcev1.ResourceClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name + "-gpu", UID: types.UID(p.name + "-gpu-uid"), CreationTimestamp: created},
			Spec:       dratest.ClaimSpec(p.request),
		}
		pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim.Name}}
		if p.held != nil {
			claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{*p.held}},
				NodeSelector: dratest.NodeOf(p.node)} // as kube's allocator writes it for a node's devices
			claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}
		}
		pods = append(pods, pod)
		objects = append(objects, claim)
	}
	return nodes, pods, objects
}

// DefragCluster is the example cluster as a defragmentation finds it: the
// same four nodes, their pods owned by controllers, four GPUs free but no
// more than three on a node, and a 4-GPU job pending.
//   - gpu-a runs train/job-0 (a Job's pod: 8 cores, 6 GPUs): 2 GPUs free.
//   - gpu-b runs train/job-3 (a Job's: 8 cores, 3 GPUs), infer/infer-1 (a
//     ReplicaSet's, app=infer: 4 cores, 1 GPU) and notebook/notebook-0 (a
//     StatefulSet's: 2 cores, 1 GPU): 3 GPUs free.
//   - cpu-a runs web/api-0 (a ReplicaSet's, 8 cores), cpu-b
//     kube-system/coredns-0 (1 core), and each GPU node a monitoring
//     DaemonSet's exporter (100m).
//   - train/job-2 (8 cores, 16Gi, 4 GPUs, priority 100) is pending: it fits
//     neither GPU node.
//
// budgets holds the PodDisruptionBudget infer/infer (minAvailable 1 of
// app=infer), which with its one pod running allows no disruption, its
// status as the disruption controller writes it.
func DefragCluster() (nodes []*v1.Node, pods []*v1.Pod, budgets []*policyv1.PodDisruptionBudget) {
	nodes, _ = Cluster()
	yes := true
	for i, p := range []struct {
		ns, name, node, owner, ownerName string
		priority                         int32
		labels                           map[string]string
		req                              v1.ResourceList
	}{
		{"train", "job-0", "gpu-a", "Job", "job-0", TrainingPriority, nil, kubetest.Resources("cpu", "8", "memory", "32Gi", kubetest.GPU, "6")},
		{"train", "job-3", "gpu-b", "Job", "job-3", TrainingPriority, nil, kubetest.Resources("cpu", "8", "memory", "32Gi", kubetest.GPU, "3")},
		{"infer", "infer-1", "gpu-b", "ReplicaSet", "infer-7d4f9", 0, map[string]string{"app": "infer"}, kubetest.Resources("cpu", "4", "memory", "16Gi", kubetest.GPU, "1")},
		{"notebook", "notebook-0", "gpu-b", "StatefulSet", "notebook", 0, map[string]string{"app": "notebook"}, kubetest.Resources("cpu", "2", "memory", "8Gi", kubetest.GPU, "1")},
		{"web", "api-0", "cpu-a", "ReplicaSet", "api-5c9b8", 0, map[string]string{"app": "api"}, kubetest.Resources("cpu", "8", "memory", "16Gi")},
		{"kube-system", "coredns-0", "cpu-b", "ReplicaSet", "coredns-6f8d7", 0, map[string]string{"k8s-app": "kube-dns"}, kubetest.Resources("cpu", "1", "memory", "1Gi")},
		{"monitoring", "exporter-gpu-a", "gpu-a", "DaemonSet", "exporter", 0, nil, kubetest.Resources("cpu", "100m", "memory", "64Mi")},
		{"monitoring", "exporter-gpu-b", "gpu-b", "DaemonSet", "exporter", 0, nil, kubetest.Resources("cpu", "100m", "memory", "64Mi")},
		{"train", "job-2", "", "Job", "job-2", TrainingPriority, nil, kubetest.Resources("cpu", "8", "memory", "16Gi", kubetest.GPU, "4")},
	} {
		pod := &v1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Labels: p.labels, CreationTimestamp: metav1.NewTime(Start.Add(time.Duration(i) * time.Second)),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: ownerAPI[p.owner], Kind: p.owner, Name: p.ownerName, UID: types.UID("uid-" + p.ownerName), Controller: &yes}}},
			Spec: v1.PodSpec{NodeName: p.node, Containers: []v1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: p.req, Limits: p.req},
			}}},
			Status: v1.PodStatus{Phase: v1.PodRunning},
		}
		if p.priority == TrainingPriority {
			prio := p.priority
			pod.Spec.Priority, pod.Spec.PriorityClassName = &prio, TrainingPriorityClass
		}
		if p.node == "" {
			pod.Status.Phase = v1.PodPending
		}
		pods = append(pods, pod)
	}
	one := intstr.FromInt32(1)
	budgets = []*policyv1.PodDisruptionBudget{{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "infer", Name: "infer", Generation: 1, CreationTimestamp: metav1.NewTime(Start)},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "infer"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1},
	}}
	return nodes, pods, budgets
}

// ownerAPI is each owner kind's API version.
var ownerAPI = map[string]string{"Job": "batch/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1"}

// Large is a cluster for timing the hosts at scale: n nodes, one in five
// a GPU node (64 cores, 512Gi, 8 GPUs) and the others 32 cores and 128Gi,
// each running four pods of one ReplicaSet (load/load), two of them with
// 1 to 3 GPUs on a GPU node; then pending pods wait-00000 on, of 1 to 8
// cores, half of them with 1 to 4 GPUs. 5000 nodes hold 20,000 running
// pods.
func Large(n, pending int) (nodes []*v1.Node, pods []*v1.Pod) {
	controller := true
	pod := func(name, node string, req v1.ResourceList) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(Start),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "load", UID: "uid-load", Controller: &controller}}},
			Spec:   v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req}}}},
			Status: v1.PodStatus{Phase: v1.PodRunning}}
	}
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		alloc := kubetest.Resources("cpu", "32", "memory", "128Gi", "pods", "110")
		if i%5 == 0 {
			alloc = kubetest.Resources("cpu", "64", "memory", "512Gi", "pods", "110", kubetest.GPU, "8")
		}
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc}})
		for j := range 4 {
			req := kubetest.Resources("cpu", fmt.Sprint(1+(i+j)%6), "memory", fmt.Sprintf("%dGi", 2+(i*j)%9))
			if i%5 == 0 && j < 2 {
				req[kubetest.GPU] = kres.MustParse(fmt.Sprint(1 + (i+j)%3))
			}
			pods = append(pods, pod(fmt.Sprintf("run-%05d-%d", i, j), name, req))
		}
	}
	for i := range pending {
		req := kubetest.Resources("cpu", fmt.Sprint(1+i%8), "memory", "8Gi")
		if i%2 == 0 {
			req[kubetest.GPU] = kres.MustParse(fmt.Sprint(1 + i%4))
		}
		p := pod(fmt.Sprintf("wait-%05d", i), "", req)
		p.Status.Phase = v1.PodPending
		pods = append(pods, p)
	}
	return nodes, pods
}

// DRADefragCluster is the defrag example (DefragCluster) with its GPUs
// published through DRA, as v1.37 clusters publish them: NVIDIA's
// driver's slices for gpu-a and gpu-b (8 H100s each; no device plugin)
// and the chart's DeviceClasses. Each GPU pod's claim is its own, made
// from its namespace's ResourceClaimTemplate gpus-N (N whole GPUs) that
// its spec names, as its controller's pod template would: a running pod's
// claim allocated, reserved for it, owned by it and named in its status,
// as kube's resourceclaim controller and scheduler leave it. job-0 holds
// gpu-a's gpu-0 to gpu-5; job-3 gpu-b's gpu-0 to gpu-2, infer-1 gpu-3,
// notebook-0 gpu-4. job-2, pending, has no claim yet. objects are the DRA
// objects: classes, slices, templates, claims.
func DRADefragCluster() (nodes []*v1.Node, pods []*v1.Pod, budgets []*policyv1.PodDisruptionBudget, objects []runtime.Object) {
	nodes, pods, budgets = DefragCluster()
	for _, n := range nodes {
		delete(n.Status.Allocatable, kubetest.GPU)
		delete(n.Status.Capacity, kubetest.GPU)
	}
	meta := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: kind}
	}
	for _, c := range dratest.NVIDIAClasses() {
		c.TypeMeta = meta("DeviceClass")
		objects = append(objects, c)
	}
	for _, node := range []string{"gpu-a", "gpu-b"} {
		s := dratest.NVIDIASlice(node, "NVIDIA H100 80GB HBM3", 8, 0)
		s.TypeMeta = meta("ResourceSlice")
		objects = append(objects, s)
	}
	holds := map[string][]string{
		"job-0": {"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5"}, "job-3": {"gpu-0", "gpu-1", "gpu-2"},
		"infer-1": {"gpu-3"}, "notebook-0": {"gpu-4"},
	}
	templates := map[string]bool{}
	yes := true
	for _, p := range pods {
		q, ok := p.Spec.Containers[0].Resources.Requests[kubetest.GPU]
		if !ok {
			continue
		}
		p.UID = types.UID("uid-" + p.Namespace + "-" + p.Name)
		count := q.Value()
		template := fmt.Sprintf("gpus-%d", count)
		if !templates[p.Namespace+"/"+template] {
			templates[p.Namespace+"/"+template] = true
			objects = append(objects, &resourcev1.ResourceClaimTemplate{TypeMeta: meta("ResourceClaimTemplate"),
				ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: template, CreationTimestamp: metav1.NewTime(Start)},
				Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: dratest.ClaimSpec(dratest.Exactly("gpus", "gpu.nvidia.com", count))}})
		}
		for _, list := range []v1.ResourceList{p.Spec.Containers[0].Resources.Requests, p.Spec.Containers[0].Resources.Limits} {
			delete(list, kubetest.GPU)
		}
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: &template}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpus"}}
		if p.Spec.NodeName == "" {
			continue
		}
		c := dratest.AllocatedClaim(p.Namespace, p.Name+"-gpus-x7k2p", p.Spec.NodeName, holds[p.Name]...)
		c.TypeMeta, c.CreationTimestamp = meta("ResourceClaim"), p.CreationTimestamp
		c.Annotations = map[string]string{"resource.kubernetes.io/pod-claim-name": "gpus"}
		c.Finalizers = []string{"resource.kubernetes.io/delete-protection"} // the scheduler's, with the allocation
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
		c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpus", ResourceClaimName: &c.Name}}
		objects = append(objects, c)
	}
	return nodes, pods, budgets, objects
}
