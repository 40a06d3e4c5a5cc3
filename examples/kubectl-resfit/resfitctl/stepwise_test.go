package resfitctl

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/scoring/config"
)

// whatif places each pod where explain ranks first at that step: on the
// cluster with the pods placed so far bound where whatif put them, explain
// ranks whatif's node first for the next pod, with whatif's score, and
// leaves a pod whatif could not place without a feasible node.
func TestWhatIfPlacesEachPodOnExplainsTopNode(t *testing.T) {
	for _, file := range []string{"rsf.yaml", "rsf-sra.yaml"} {
		c, cfg := testdata(t, file)
		if n := checkStepwise(t, c, cfg); n != 4 {
			t.Errorf("%s: %d steps, want the example's 4", file, n)
		}
	}
	// Random clusters: GPU and CPU nodes, pods bound and pending, CPU pods
	// and pods of whole GPUs (a pod sharing a GPU holds devices that
	// Kubernetes objects do not name, which explain's snapshot assigns in
	// name order where whatif assigned them in queue order).
	_, cfg := testdata(t, "rsf-sra.yaml")
	rapid.Check(t, func(rt *rapid.T) {
		c := &Snapshot{Source: "the drawn cluster"}
		for i := range rapid.IntRange(1, 6).Draw(rt, "nodes") {
			kv := []string{"cpu", fmt.Sprint(rapid.IntRange(4, 64).Draw(rt, "cpu")), "memory", "256Gi", "pods", "110"}
			if g := rapid.SampledFrom([]int{0, 4, 8}).Draw(rt, "gpus"); g > 0 {
				kv = append(kv, kubetest.GPU, fmt.Sprint(g))
			}
			c.Nodes = append(c.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)},
				Status: v1.NodeStatus{Allocatable: kubetest.Resources(kv...)}})
		}
		for i := range rapid.IntRange(1, 12).Draw(rt, "pods") {
			kv := []string{"cpu", fmt.Sprint(rapid.IntRange(1, 16).Draw(rt, "pod cpu")), "memory", "1Gi"}
			if g := rapid.IntRange(0, 4).Draw(rt, "pod gpus"); g > 0 {
				kv = append(kv, kubetest.GPU, fmt.Sprint(g))
			}
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%02d", i),
				CreationTimestamp: metav1.NewTime(examplecluster.Start.Add(time.Duration(rapid.IntRange(0, 5).Draw(rt, "created")) * time.Second))},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: kubetest.Resources(kv...)}}}}}
			if rapid.IntRange(0, 3).Draw(rt, "bound") == 0 {
				p.Spec.NodeName = rapid.SampledFrom(c.Nodes).Draw(rt, "on").Name
			}
			c.Pods = append(c.Pods, p)
		}
		c.sort()
		checkStepwise(rt, c, cfg)
	})
}

// checkStepwise runs whatif on the cluster's pending pods and explains
// each pod on the cluster as whatif left it before placing that pod; it
// returns the number of steps.
func checkStepwise(t interface {
	Helper()
	Fatalf(string, ...any)
}, c *Snapshot, cfg *config.Config) int {
	t.Helper()
	r, err := WhatIf(c, []NamedConfig{{"cfg", cfg}}, nil, WhatIfOptions{})
	if err != nil {
		t.Fatalf("whatif: %v", err)
	}
	now := &Snapshot{Nodes: c.Nodes, Pods: slices.Clone(c.Pods), Source: c.Source}
	for i, name := range r.Pods {
		k := slices.IndexFunc(now.Pods, func(p *v1.Pod) bool { return p.Namespace+"/"+p.Name == name })
		pod := now.Pods[k]
		e, err := Explain(now, cfg, "cfg", pod)
		if err != nil {
			t.Fatalf("explain %s: %v", name, err)
		}
		placed := r.Outcomes[0].Placements[i]
		top := NodeExplanation{}
		if len(e.Nodes) > 0 && e.Nodes[0].Feasible {
			top = e.Nodes[0]
		}
		if top.Name != placed.Node || (top.Feasible && top.Total != placed.Score) {
			t.Fatalf("step %d, %s: whatif placed it on %q (%v), explain ranks %q (%v) first", i, name, placed.Node, placed.Score, top.Name, top.Total)
		}
		if placed.Node != "" {
			bound := pod.DeepCopy()
			bound.Spec.NodeName = placed.Node
			now.Pods[k] = bound
		}
	}
	return len(r.Pods)
}
