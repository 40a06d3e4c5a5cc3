package resfitctl

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var update = flag.Bool("update", false, "write testdata/cluster.json from the generator")

const gpu = "nvidia.com/gpu"

func list(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
	}
	return l
}

// start is when the example cluster's pods were created; the pending ones
// a second apart, in the order listed.
var start = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// exampleCluster is the cluster of the README's worked example and the
// tests: two GPU nodes (32 cores, 128Gi, 8 GPUs) and two CPU nodes (16
// cores, 64Gi); a training job on 6 of gpu-a's GPUs, a web pod on cpu-a, a
// finished batch pod on cpu-b (it uses nothing); and four pending pods, two
// GPU jobs at priority 100 and two web pods at priority 0.
func exampleCluster() ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	for _, n := range []struct {
		name  string
		alloc v1.ResourceList
	}{
		{"cpu-a", list("cpu", "16", "memory", "64Gi", "pods", "110")},
		{"cpu-b", list("cpu", "16", "memory", "64Gi", "pods", "110")},
		{"gpu-a", list("cpu", "32", "memory", "128Gi", "pods", "110", gpu, "8")},
		{"gpu-b", list("cpu", "32", "memory", "128Gi", "pods", "110", gpu, "8")},
	} {
		nodes = append(nodes, &v1.Node{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: n.name, CreationTimestamp: metav1.NewTime(start.Add(-time.Hour))},
			Status:     v1.NodeStatus{Capacity: n.alloc, Allocatable: n.alloc, Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		})
	}
	priority := func(p int32) *int32 { return &p }
	var pods []*v1.Pod
	for i, p := range []struct {
		ns, name, node string
		phase          v1.PodPhase
		priority       int32
		req            v1.ResourceList
	}{
		{"train", "job-0", "gpu-a", v1.PodRunning, 100, list("cpu", "8", "memory", "32Gi", gpu, "6")},
		{"web", "api-0", "cpu-a", v1.PodRunning, 0, list("cpu", "8", "memory", "16Gi")},
		{"batch", "done-0", "cpu-b", v1.PodSucceeded, 0, list("cpu", "12", "memory", "8Gi")},
		{"train", "job-1", "", v1.PodPending, 100, list("cpu", "4", "memory", "16Gi", gpu, "2")},
		{"web", "api-1", "", v1.PodPending, 0, list("cpu", "4", "memory", "8Gi")},
		{"web", "api-2", "", v1.PodPending, 0, list("cpu", "12", "memory", "8Gi")},
		{"train", "job-2", "", v1.PodPending, 100, list("cpu", "8", "memory", "16Gi", gpu, "4")},
	} {
		pods = append(pods, &v1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, CreationTimestamp: metav1.NewTime(start.Add(time.Duration(i) * time.Second))},
			Spec: v1.PodSpec{NodeName: p.node, Priority: priority(p.priority), Containers: []v1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: p.req, Limits: p.req},
			}}},
			Status: v1.PodStatus{Phase: p.phase},
		})
	}
	return nodes, pods
}

// snapshotJSON writes nodes and pods as `kubectl get nodes,pods -A -o
// json` does: a v1 List of the objects.
func snapshotJSON(nodes []*v1.Node, pods []*v1.Pod) []byte {
	l := v1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, n := range nodes {
		l.Items = append(l.Items, runtime.RawExtension{Object: n})
	}
	for _, p := range pods {
		l.Items = append(l.Items, runtime.RawExtension{Object: p})
	}
	data, err := json.MarshalIndent(l, "", "    ")
	if err != nil {
		panic(fmt.Sprintf("a List of nodes and pods does not encode: %v", err))
	}
	return append(data, '\n')
}

// The snapshot shipped in testdata is the generator's output (go test
// -update writes it again).
func TestExampleSnapshotIsTheGenerators(t *testing.T) {
	want := snapshotJSON(exampleCluster())
	path := filepath.Join("..", "testdata", "cluster.json")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the generator's output; run go test ./resfitctl -run TestExampleSnapshotIsTheGenerators -update", path)
	}
}
