package resfitctl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
)

func nodesOf(o Outcome) []string {
	var out []string
	for _, p := range o.Placements {
		out = append(out, p.Node)
	}
	return out
}

// The four pending pods of the example in queue order: the two GPU jobs
// (priority 100) first, job-1 created before job-2; then the web pods.
// Under rsf.yaml, worked by hand (cpu free after placing / cpus, gpu used
// after / gpus):
//
//	job-1 (4c, 2 GPU): gpu-a 1000·(2·8/8 + 20/32)/3 = 875, gpu-b 458.33  → gpu-a
//	job-2 (8c, 4 GPU): gpu-a has no GPU left; gpu-b 1000·(2·4/8 + 24/32)/3 = 583.33 → gpu-b
//	api-1 (4c): cpu-a 4/16, cpu-b 12/16 (done-0 finished), gpu-a 16/32, gpu-b 20/32 → cpu-b 750
//	api-2 (12c): cpu-a has 8 free; cpu-b 0/16, gpu-a 8/32, gpu-b 12/32 → gpu-b 375
//
// Under rsf-sra.yaml retention adds 1000 on CPU nodes for the web pods, so
// api-2 goes to cpu-b (0 + 1000) instead.
func TestWhatIfComparesConfigurations(t *testing.T) {
	c, rsf := testdata(t, "rsf.yaml")
	_, sra := testdata(t, "rsf-sra.yaml")
	var progress bytes.Buffer
	r, err := WhatIf(c, []NamedConfig{{"rsf", rsf}, {"sra", sra}}, nil, WhatIfOptions{Progress: &progress, Every: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"train/job-1", "train/job-2", "web/api-1", "web/api-2"}; !cmp.Equal(r.Pods, want) {
		t.Errorf("queue %v, want %v", r.Pods, want)
	}
	wantNodes := map[string][]string{
		"rsf": {"gpu-a", "gpu-b", "cpu-b", "gpu-b"},
		"sra": {"gpu-a", "gpu-b", "cpu-b", "cpu-b"},
	}
	wantScores := map[string][]float64{
		"rsf": {875, 1750.0 / 3, 750, 375},
		"sra": {875, 1750.0 / 3, 1750, 1000},
	}
	for _, o := range r.Outcomes {
		if got := nodesOf(o); !cmp.Equal(got, wantNodes[o.Config]) {
			t.Errorf("%s placed %v, want %v", o.Config, got, wantNodes[o.Config])
		}
		for i, p := range o.Placements {
			if !near(p.Score, wantScores[o.Config][i]) {
				t.Errorf("%s: %s scored %v, want %v", o.Config, p.Pod, p.Score, wantScores[o.Config][i])
			}
		}
		if o.Placed != 4 || o.Pending != 0 {
			t.Errorf("%s: %d placed, %d pending; want 4, 0", o.Config, o.Placed, o.Pending)
		}
		// 6+2+4 of 16 GPUs. Idle: gpu-b's 4. The workload's six pods are six
		// classes of 1/6 each: the four that ask for no GPU, or for 6, cannot
		// use them (4 × 4 GPUs / 6), the 2- and 4-GPU jobs can.
		if *o.GPUAllocated != 0.75 || !near(*o.GPUFragmented, (4*4.0/6)/16) {
			t.Errorf("%s: GPU allocated %v fragmented %v, want 0.75 and 1/6", o.Config, *o.GPUAllocated, *o.GPUFragmented)
		}
	}
	if !cmp.Equal(r.Differs, []string{"web/api-2"}) {
		t.Errorf("differs %v, want [web/api-2]", r.Differs)
	}
	for _, line := range []string{"rsf: 2 of 4 pods, 2 placed", "rsf: 4 pods, 4 placed, 0 pending", "sra: 4 pods, 4 placed, 0 pending"} {
		if !strings.Contains(progress.String(), line) {
			t.Errorf("progress lacks %q:\n%s", line, progress.String())
		}
	}
	// The configurations ran on copies: the cluster is as it was.
	if pod, _ := c.FindPod("web/api-2", ""); pod.Spec.NodeName != "" {
		t.Errorf("whatif bound web/api-2 to %s in the cluster it was given", pod.Spec.NodeName)
	}

	var table strings.Builder
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rsf     4       0        75%            16.67%",
		"web/api-2    gpu-b  cpu-b  *",
		"1 of 4 pods goes to a different node under some configuration.",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back WhatIfReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, &back); diff != "" {
		t.Errorf("JSON does not read back (-written +read):\n%s", diff)
	}
}

// The fragmentation column reads GPU models as FGD does: with gpu-a an
// A100 node, gpu-b a T4 node and job-1 accepting only A100s, job-1's class
// cannot use gpu-b's 4 idle GPUs either, so only the 4-GPU job's class
// can: 4 × 5/6 of 16 GPUs fragmented instead of 4 × 4/6. The placements
// are rsf.yaml's as before (job-1 went to gpu-a anyway).
func TestWhatIfFragmentationReadsGPUModels(t *testing.T) {
	c, rsf := testdata(t, "rsf.yaml")
	for _, n := range c.Nodes {
		switch n.Name {
		case "gpu-a":
			n.Labels = map[string]string{resource.GPUProductLabel: "A100"}
		case "gpu-b":
			n.Labels = map[string]string{resource.GPUProductLabel: "T4"}
		}
	}
	job1, _ := c.FindPod("train/job-1", "")
	job1.Annotations = map[string]string{resource.GPUModelsAnnotation: "A100"}
	r, err := WhatIf(c, []NamedConfig{{"rsf", rsf}}, nil, WhatIfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Outcomes[0]
	if want := []string{"gpu-a", "gpu-b", "cpu-b", "gpu-b"}; !cmp.Equal(nodesOf(o), want) {
		t.Errorf("placed %v, want %v", nodesOf(o), want)
	}
	if *o.GPUAllocated != 0.75 || !near(*o.GPUFragmented, (4*5.0/6)/16) {
		t.Errorf("GPU allocated %v fragmented %v, want 0.75 and 5/24", *o.GPUAllocated, *o.GPUFragmented)
	}
}

// A pod no node can take stays pending with kube-scheduler's kind of
// summary; the pods after it still place.
func TestWhatIfPendingReason(t *testing.T) {
	c, rsf := testdata(t, "rsf.yaml")
	path := filepath.Join(t.TempDir(), "pods.yaml")
	pods := `apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: train}
spec:
  containers:
  - {name: main, image: x, resources: {requests: {cpu: "40", nvidia.com/gpu: "1"}}}
---
apiVersion: v1
kind: Pod
metadata: {name: eight-gpus, namespace: train}
spec:
  containers:
  - {name: main, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "8"}}}
---
apiVersion: v1
kind: Pod
metadata: {name: nine-gpus, namespace: train}
spec:
  containers:
  - {name: main, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "9"}}}
`
	if err := os.WriteFile(path, []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := ReadPods(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := WhatIf(c, []NamedConfig{{"rsf", rsf}}, file, WhatIfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Outcomes[0]
	// Same priority and creation time: by name.
	want := []Placement{
		{Pod: "train/eight-gpus", Node: "gpu-b", Score: 1000 * (2*1 + 31.0/32) / 3},
		{Pod: "train/huge", Reason: "0/4 nodes can take it: 4 NodeResourcesFit (insufficient cpu)"},
		{Pod: "train/nine-gpus", Reason: "0/4 nodes can take it: 4 NodeResourcesFit (insufficient nvidia.com/gpu)"},
	}
	if diff := cmp.Diff(want, o.Placements, cmp.Comparer(func(a, b float64) bool { return near(a, b) })); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}
	if o.Placed != 1 || o.Pending != 2 || *o.GPUAllocated != 14.0/16 {
		t.Errorf("%d placed, %d pending, %v allocated; want 1, 2, 14/16", o.Placed, o.Pending, *o.GPUAllocated)
	}
	var table strings.Builder
	_ = r.WriteTable(&table)
	if !strings.Contains(table.String(), "Pending under rsf:\n  train/huge: 0/4 nodes can take it: 4 NodeResourcesFit (insufficient cpu)\n") {
		t.Errorf("the table does not list the pending pods with their reasons:\n%s", table.String())
	}
}

// A cluster without GPUs reports no GPU figures, not 0%.
func TestWhatIfWithoutGPUs(t *testing.T) {
	c, rsf := testdata(t, "rsf.yaml")
	var cpuOnly []*v1.Node
	for _, n := range c.Nodes {
		if strings.HasPrefix(n.Name, "cpu-") {
			cpuOnly = append(cpuOnly, n)
		}
	}
	var pods []*v1.Pod
	for _, p := range c.Pods {
		if p.Namespace == "web" {
			pods = append(pods, p)
		}
	}
	r, err := WhatIf(&Snapshot{Nodes: cpuOnly, Pods: pods, Source: "test"}, []NamedConfig{{"rsf", rsf}}, nil, WhatIfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Outcomes[0]
	if o.GPUAllocated != nil || o.GPUFragmented != nil || !cmp.Equal(nodesOf(o), []string{"cpu-b", "cpu-b"}) {
		t.Errorf("placed %v, GPU %v %v; want [cpu-b cpu-b] (api-2 takes cpu-b's last 12 cores), no GPU figures", nodesOf(o), o.GPUAllocated, o.GPUFragmented)
	}
	var table strings.Builder
	_ = r.WriteTable(&table)
	if !strings.Contains(table.String(), "no GPUs") {
		t.Errorf("table:\n%s", table.String())
	}
}
