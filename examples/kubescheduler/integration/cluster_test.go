package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/resfit/resfit/examples/kubescheduler/testing/schedtest"
)

// testCluster is the cluster both tests schedule on: two GPU nodes of 8
// GPUs and two CPU nodes, made through the API.
type testCluster struct {
	t         *testing.T
	ctx       context.Context
	cs        clientset.Interface
	ns        string
	scheduler string // the pods' schedulerName; empty for the default
}

func newTestCluster(t *testing.T, ctx context.Context, cs clientset.Interface, ns, scheduler string) *testCluster {
	t.Helper()
	for _, n := range []struct {
		name  string
		alloc v1.ResourceList
	}{
		{"gpu-busy", list("cpu", "74", "memory", "256G", "pods", "110", gpu, "8")},
		{"gpu-idle", list("cpu", "74", "memory", "256G", "pods", "110", gpu, "8")},
		{"cpu-1", list("cpu", "16", "memory", "64Gi", "pods", "110")},
		{"cpu-2", list("cpu", "16", "memory", "64Gi", "pods", "110")},
	} {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}, Status: v1.NodeStatus{
			Capacity: n.alloc, Allocatable: n.alloc,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return &testCluster{t: t, ctx: ctx, cs: cs, ns: ns, scheduler: scheduler}
}

// create makes a pod with the given requests (and limits), bound to
// nodeName when it is set.
func (c *testCluster) create(name, nodeName string, req v1.ResourceList) *v1.Pod {
	c.t.Helper()
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns}, Spec: v1.PodSpec{
		SchedulerName: c.scheduler,
		NodeName:      nodeName,
		Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}},
	}}
	p, err := c.cs.CoreV1().Pods(c.ns).Create(c.ctx, p, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// boundTo waits for a pod to be scheduled and returns its node.
func (c *testCluster) boundTo(p *v1.Pod) string {
	c.t.Helper()
	node, err := schedtest.WaitForBound(c.ctx, c.cs, c.ns, p.Name, 30*time.Second)
	if err != nil {
		c.t.Fatal(err)
	}
	return node
}

// packAndSpread checks the design's AI scenario: the GPU pods pack as
// packGPUs says; the CPU pods go to the CPU nodes, spread.
func (c *testCluster) packAndSpread() {
	c.t.Helper()
	c.packGPUs()
	if seen := c.cpuPods(); seen["cpu-1"] != 2 || seen["cpu-2"] != 2 {
		c.t.Errorf("CPU pods landed %v, want two on each CPU node", seen)
	}
}

// packFrag checks the shipped profile, ResfitFrag: the GPU pods pack as
// packGPUs says; then the four CPU pods go where the tie-breaker packs
// them, the node whose less-used resource is fullest: gpu-busy, whose GPUs
// are all taken, so that none keeps a GPU idle; none goes to gpu-idle,
// whose six idle GPUs would be left fewer cores.
func (c *testCluster) packFrag() {
	c.t.Helper()
	c.packGPUs()
	if seen := c.cpuPods(); seen["gpu-busy"] != 4 {
		c.t.Errorf("CPU pods landed %v, want all four on gpu-busy", seen)
	}
}

// packGPUs runs a job on 6 of gpu-busy's GPUs; then two 2-GPU pods pack,
// the first onto gpu-busy, the second, gpu-busy full, onto gpu-idle.
func (c *testCluster) packGPUs() {
	c.t.Helper()
	c.create("running-job", "gpu-busy", list("cpu", "8", "memory", "16G", gpu, "6"))
	for i, want := range []string{"gpu-busy", "gpu-idle"} {
		if got := c.boundTo(c.create(fmt.Sprintf("gpu-%d", i), "", list("cpu", "8", "memory", "16G", gpu, "2"))); got != want {
			c.t.Errorf("GPU pod %d bound to %s, want %s", i, got, want)
		}
	}
}

// cpuPods makes four 2-core pods and counts where they are bound.
func (c *testCluster) cpuPods() map[string]int {
	c.t.Helper()
	seen := map[string]int{}
	for i := range 4 {
		seen[c.boundTo(c.create(fmt.Sprintf("cpu-%d", i), "", list("cpu", "2", "memory", "2Gi")))]++
	}
	return seen
}
