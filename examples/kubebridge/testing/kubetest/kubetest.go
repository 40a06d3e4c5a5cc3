// Package kubetest makes the nodes and pods of kubebridge's tests and its
// packages': a node of allocatable amounts, a pod of requests, written as
// name and quantity pairs; and deletes pods through a fake client as its
// watch can take them.
package kubetest

import (
	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// GPU is NVIDIA's device plugin's resource.
const GPU = "nvidia.com/gpu"

// Resources is a resource list of name and quantity pairs: Resources("cpu",
// "4", "memory", "8Gi"). A quantity that does not parse panics.
func Resources(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
	}
	return l
}

// Node is a node of these allocatable amounts (Resources).
func Node(name string, kv ...string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: Resources(kv...)}}
}

// Pod is a pod of namespace default, UID uid-<name>, bound to nodeName
// ("" pending), with one container requesting these amounts (Resources).
func Pod(name, nodeName string, kv ...string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: Resources(kv...)}}}},
	}
}
