package cache

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/scoring"
)

// The amounts that apimachinery's MilliValue and Value wrap are errors
// naming the object and the field, wherever a host reads them: a pod's
// requests, a node's allocatable, and so a snapshot of them.
func TestOverflowingQuantitiesAreErrors(t *testing.T) {
	node := func(kv ...string) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-a"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{}}}
		for i := 0; i < len(kv); i += 2 {
			n.Status.Allocatable[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
		}
		return n
	}
	pod := func(kv ...string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"}, Spec: v1.PodSpec{Containers: []v1.Container{{}, {Resources: v1.ResourceRequirements{Requests: v1.ResourceList{}}}}}}
		for i := 0; i < len(kv); i += 2 {
			p.Spec.Containers[1].Resources.Requests[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
		}
		return p
	}
	ok := node("cpu", "8", "memory", "32Gi", "pods", "110", "nvidia.com/gpu", "8")
	for _, tc := range []struct {
		name string
		node *v1.Node
		pod  *v1.Pod
		want string
	}{
		{"a pod asking 1e16 GPUs", ok, pod("nvidia.com/gpu", "1e16"),
			`pod ml/train: spec.containers[1].resources.requests[nvidia.com/gpu]: quantity "10e15": overflows int64 in milli-units`},
		{"a pod asking 2^63 - 1 cores", ok, pod("cpu", "9223372036854775807"),
			`pod ml/train: spec.containers[1].resources.requests[cpu]: quantity "9223372036854775807": `},
		{"a pod asking 10^27 cores", ok, pod("cpu", "999999999999999999999999999"),
			`pod ml/train: spec.containers[1].resources.requests[cpu]: quantity "999999999999999999999999999": `},
		{"a pod asking more than 2^53 bytes", ok, pod("memory", "9007199254740993"),
			`pod ml/train: spec.containers[1].resources.requests[memory]: quantity "9007199254740993": 9007199254740993 whole units is above the largest amount, 2^53`},
		{"a node with 9e18 GPUs", node("cpu", "8", "nvidia.com/gpu", "9e18"), pod("cpu", "1"),
			`node gpu-a: status.allocatable[nvidia.com/gpu]: quantity "9e18": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bound := tc.pod.DeepCopy()
			bound.Spec.NodeName = "gpu-a"
			_, err := New([]*v1.Node{tc.node}, []*v1.Pod{bound}, Options{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("snapshot: %v\nwant an error starting %q", err, tc.want)
			}
			if tc.node != ok {
				return
			}
			if _, err := kubebridge.PodOf(tc.pod); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("PodOf: %v", err)
			}
			snap, err := New([]*v1.Node{tc.node}, []*v1.Pod{tc.pod}, Options{}) // pending
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kubebridge.NewTask(snap.Schema(), tc.pod, scoring.TaskOptions{}); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("NewTask: %v", err)
			}
		})
	}
}
