// Package examplecluster makes the small cluster of kubectl-resfit's worked
// example (README) and of its tests, the in-process ones on snapshot files
// and the live one against a real kube-apiserver: the same objects either
// way. testdata/cluster.json is its output.
package examplecluster

import (
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GPU is the device resource the example uses.
const GPU = "nvidia.com/gpu"

// Resources is a resource list from name, quantity pairs:
// Resources("cpu", "4", "memory", "16Gi"). It panics on a quantity that
// does not parse, a programming error in the caller's constants.
func Resources(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
	}
	return l
}

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
		{"cpu-a", Resources("cpu", "16", "memory", "64Gi", "pods", "110")},
		{"cpu-b", Resources("cpu", "16", "memory", "64Gi", "pods", "110")},
		{"gpu-a", Resources("cpu", "32", "memory", "128Gi", "pods", "110", GPU, "8")},
		{"gpu-b", Resources("cpu", "32", "memory", "128Gi", "pods", "110", GPU, "8")},
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
		{"train", "job-0", "gpu-a", v1.PodRunning, 100, Resources("cpu", "8", "memory", "32Gi", GPU, "6")},
		{"web", "api-0", "cpu-a", v1.PodRunning, 0, Resources("cpu", "8", "memory", "16Gi")},
		{"batch", "done-0", "cpu-b", v1.PodSucceeded, 0, Resources("cpu", "12", "memory", "8Gi")},
		{"train", "job-1", "", v1.PodPending, 100, Resources("cpu", "4", "memory", "16Gi", GPU, "2")},
		{"web", "api-1", "", v1.PodPending, 0, Resources("cpu", "4", "memory", "8Gi")},
		{"web", "api-2", "", v1.PodPending, 0, Resources("cpu", "12", "memory", "8Gi")},
		{"train", "job-2", "", v1.PodPending, 100, Resources("cpu", "8", "memory", "16Gi", GPU, "4")},
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

// SnapshotJSON writes nodes and pods as `kubectl get nodes,pods -A -o
// json` does: a v1 List of the objects, each with its kind (objects read
// through a typed client have none; they are copied, not changed).
func SnapshotJSON(nodes []*v1.Node, pods []*v1.Pod) []byte {
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
	data, err := json.MarshalIndent(l, "", "    ")
	if err != nil {
		panic(fmt.Sprintf("a List of nodes and pods does not encode: %v", err))
	}
	return append(data, '\n')
}
