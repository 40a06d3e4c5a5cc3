package resfitctl

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge/testing/dratest"
	"github.com/resfit/resfit/scoring/config"
)

// draTestdata reads the example with its GPUs published through DRA
// (examplecluster.DRACluster) and a configuration.
func draTestdata(t *testing.T, configFile string) (*Snapshot, *config.Config) {
	t.Helper()
	return readTestdata(t, "dra-cluster.json", configFile)
}

// The DRA snapshot read: its slices, classes and claims beside the nodes
// and pods, and the GPU nodes holding the class's devices as nvidia.com/gpu.
func TestReadDRASnapshot(t *testing.T) {
	c, _ := draTestdata(t, "rsf.yaml")
	if len(c.Slices) != 2 || len(c.Classes) != 2 || len(c.Claims) != 3 || len(c.Nodes) != 4 || len(c.Pods) != 7 {
		t.Fatalf("read %d slices, %d classes, %d claims, %d nodes, %d pods", len(c.Slices), len(c.Classes), len(c.Claims), len(c.Nodes), len(c.Pods))
	}
	if c.Claims[0].Status.Allocation == nil || len(c.Slices[0].Spec.Devices) != 8 {
		t.Errorf("claim %+v, slice %+v", c.Claims[0].Status, c.Slices[0].Spec)
	}
}

// rsf.yaml on the DRA snapshot gives job-1 (4 cores, a claim of 2 GPUs)
// the numbers the device-plugin snapshot gives it asking nvidia.com/gpu: 2
// (TestExplainGPUJobUnderResourceStrategyFit): gpu-a, 6 of its 8 GPUs held
// by job-0's claim, 1000·(2·8/8 + 20/32)/3 = 875; gpu-b, empty,
// 1000·(2·2/8 + 28/32)/3 = 458.33; the CPU nodes have no GPU. The GPUS FREE
// column shows each node's whole free GPUs and their productName. job-2's
// claim wants 4 H100s: gpu-a has 2 free, gpu-b's are A100s, so every node
// is rejected for its claims. job-0 runs on gpu-a and is scored as before
// its claim was allocated: gpu-a 8 of 8 free, 1000·(2·6/8 + 24/32)/3 = 750.
func TestExplainDRASnapshot(t *testing.T) {
	c, cfg := draTestdata(t, "rsf.yaml")
	plain, _ := testdata(t, "rsf.yaml")
	explain := func(c *Snapshot, name string) *Explanation {
		t.Helper()
		pod, err := c.FindPod(name, "")
		if err != nil {
			t.Fatal(err)
		}
		e, err := Explain(c, cfg, "rsf.yaml", pod)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := explain(c, "train/job-1")
	for name, want := range map[string]struct {
		total float64
		gpus  string
	}{
		"gpu-a": {875, "2/8 NVIDIA-H100-80GB-HBM3"},
		"gpu-b": {1000 * (2*0.25 + 0.875) / 3, "8/8 NVIDIA-A100-SXM4-80GB"},
	} {
		if n := node(t, e, name); !n.Feasible || !near(n.Total, want.total) || n.GPUs != want.gpus {
			t.Errorf("job-1 on %s: %+v, want %v with GPUs %s", name, n, want.total, want.gpus)
		}
	}
	if n := node(t, e, "cpu-a"); n.Feasible || n.Reason != "NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0" {
		t.Errorf("job-1 on cpu-a: %+v", n)
	}
	same := explain(plain, "train/job-1")
	for _, name := range []string{"gpu-a", "gpu-b"} {
		if a, b := node(t, e, name).Total, node(t, same, name).Total; a != b {
			t.Errorf("job-1 on %s: %v through DRA, %v through the device plugin", name, a, b)
		}
	}
	if !e.DRA || same.DRA || e.Requests["nvidia.com/gpu"] != "2" {
		t.Errorf("DRA %v (device plugin %v), requests %v", e.DRA, same.DRA, e.Requests)
	}
	var table bytes.Buffer
	if err := e.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	// The claim's 2 GPUs on each node, as kube's allocator picks them: the
	// first free ones.
	for _, line := range []string{
		"RANK  NODE   TOTAL   resource-strategy-fit  GPUS FREE                  CLAIMS TAKE",
		"1     gpu-a  875     875                    2/8 NVIDIA-H100-80GB-HBM3  gpu-6, gpu-7",
		"2     gpu-b  458.33  458.33                 8/8 NVIDIA-A100-SXM4-80GB  gpu-0, gpu-1",
	} {
		if !strings.Contains(table.String(), line+"\n") {
			t.Errorf("the table lacks %q:\n%s", line, table.String())
		}
	}

	if n := node(t, e, "gpu-a"); len(n.Claims) != 1 || n.Claims[0].Claim != "train/job-1-gpus" || len(n.Claims[0].Devices) != 2 {
		t.Errorf("job-1's claim on gpu-a takes %+v", n.Claims)
	} else {
		for i, d := range n.Claims[0].Devices {
			if got, want := fmt.Sprintf("%s %s/%s/%s %v", d.Request, d.Driver, d.Pool, d.Device, d.Consumed), fmt.Sprintf("gpus gpu.nvidia.com/gpu-a/gpu-%d map[]", 6+i); got != want {
				t.Errorf("job-1's claim on gpu-a takes %s, want %s", got, want)
			}
		}
	}

	e = explain(c, "train/job-2")
	if e.Feasible != 0 || e.Rejected != 4 {
		t.Errorf("job-2: %d feasible, %d rejected", e.Feasible, e.Rejected)
	}
	// Why, as far as resfit can tell: the claim and request, and what the
	// node has of what it asks for (job-2 asks for 4 H100s).
	const none = "DRA: claim train/job-2-gpus, request gpus: deviceclass gpu.nvidia.com and the request's selectors select no device on the node"
	for _, n := range e.Nodes {
		want := map[string]string{"gpu-a": "DRA: claim train/job-2-gpus, request gpus: it asks for 4; deviceclass gpu.nvidia.com and the request's selectors select 8 devices on the node, 2 of them wholly free (no claim holds it or a part of it)"}[n.Name]
		if want == "" {
			want = none
		}
		if n.Reason != want {
			t.Errorf("job-2 on %s: %q, want %q", n.Name, n.Reason, want)
		}
	}
	if n := node(t, explain(c, "train/job-0"), "gpu-a"); !near(n.Total, 750) || n.GPUs != "8/8 NVIDIA-H100-80GB-HBM3" {
		t.Errorf("job-0 on gpu-a as before it was placed: %+v", n)
	}
}

// whatif on the DRA snapshot counts a placed pod's claim on its node: job-1
// packs onto gpu-a and takes its last 2 GPUs, so job-3, another 2-GPU
// claim, goes to gpu-b; job-2 (4 H100s) waits, for its claims. The web
// pods spread by cpu: api-1 (4 cores) ties cpu-b and gpu-b at 12/16 and
// 24/32 free after and takes cpu-b, the first by name; api-2 (12 cores)
// then gpu-b (16/32 free after, cpu-b none).
func TestWhatIfDRASnapshot(t *testing.T) {
	c, cfg := draTestdata(t, "rsf.yaml")
	addJob3(t, c, dratest.Exactly("gpus", "gpu.nvidia.com", 2))
	r, got, reasons := whatIfNodes(t, c, cfg)
	if reasons["train/job-2"] != "0/4 nodes can take it: 4 "+claimsUnsatisfiable {
		t.Errorf("job-2 pending for %q", reasons["train/job-2"])
	}
	want := map[string]string{"train/job-1": "gpu-a", "train/job-3": "gpu-b", "train/job-2": "", "web/api-1": "cpu-b", "web/api-2": "gpu-b"}
	if !cmp.Equal(got, want) {
		t.Errorf("placements %v, want %v", got, want)
	}
	// job-0's 6, job-1's 2 and job-3's 2 of the 16 GPUs.
	if a := r.Outcomes[0].GPUAllocated; a == nil || !near(*a, 10.0/16) {
		t.Errorf("GPU allocated %v, want 10/16", a)
	}
}

// On the shipped snapshot of partitioned and shared GPUs
// (examplecluster.PartitionCluster), explain shows on each node what is
// left of its GPUs (mig-a's A100 half left beside notebook-0's 3g.40gb,
// share-a's gpu-0 a quarter beside a 60Gi share) and the devices each
// pending pod's claim takes there, as kube's allocator picks them: the
// 3g.40gb at the free placement, each share on the first GPU with that
// much memory left, a whole GPU where one is wholly free; and rejects the
// nodes where the allocator finds none.
func TestExplainPartitionSnapshot(t *testing.T) {
	c, cfg := readTestdata(t, "partition-cluster.json", "rsf.yaml")
	gpus := map[string]string{"mig-a": "0/1 +0.5 NVIDIA-A100-SXM4-80GB", "mig-b": "1/1 NVIDIA-A100-SXM4-80GB", "share-a": "1/2 +0.25 NVIDIA-H100-80GB-HBM3"}
	notShared := "request share: it asks for a share of a device, and none of the 1 device deviceclass gpu.nvidia.com selects on the node may be shared (allowMultipleAllocations)"
	reasons := map[string]string{
		"train/mig-1 share-a": "DRA: claim train/mig-1-gpu, request mig: deviceclass mig.nvidia.com and the request's selectors select no device on the node",
		"infer/infer-1 mig-a": "DRA: claim infer/infer-1-gpu, " + notShared,
		"infer/infer-2 mig-a": "DRA: claim infer/infer-2-gpu, " + notShared,
		"train/full-1 mig-a":  "DRA: claim train/full-1-gpu, request gpu: it asks for 1; deviceclass gpu.nvidia.com selects 1 device on the node, 0 of them wholly free (no claim holds it or a part of it)",
	}
	for pod, takes := range map[string]map[string]string{
		"train/mig-1":   {"mig-a": "gpu-0-mig-3g40gb-9-4", "mig-b": "gpu-0-mig-3g40gb-9-0", "share-a": "rejected"},
		"infer/infer-1": {"mig-a": "rejected", "mig-b": "gpu-0", "share-a": "gpu-0 memory=10Gi"},
		"infer/infer-2": {"mig-a": "rejected", "mig-b": "gpu-0", "share-a": "gpu-1 memory=30Gi"},
		"train/full-1":  {"mig-a": "rejected", "mig-b": "gpu-0", "share-a": "gpu-1 memory=80Gi"},
	} {
		p, err := c.FindPod(pod, "")
		if err != nil {
			t.Fatal(err)
		}
		e, err := Explain(c, cfg, "rsf.yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range takes {
			n := node(t, e, name)
			got := claimsText(n.Claims)
			if !n.Feasible {
				got = "rejected"
				if !strings.HasPrefix(n.Reason, "DRA: claim ") || n.Reason != reasons[pod+" "+name] {
					t.Errorf("%s on %s rejected: %q, want %q", pod, name, n.Reason, reasons[pod+" "+name])
				}
			}
			if got != want || n.GPUs != gpus[name] {
				t.Errorf("%s on %s: takes %s (GPUs %s), want %s (GPUs %s)", pod, name, got, n.GPUs, want, gpus[name])
			}
		}
	}
}

// One pod that cannot be scored does not fail whatif: job-3's claim has a
// selector that fails as kube's allocator runs it (an attribute no device
// has), so job-3 stays pending with the reason, a warning says so, and
// the other pods are placed as they are without job-3.
func TestWhatIfOnePodFailsAlone(t *testing.T) {
	c, cfg := draTestdata(t, "rsf.yaml")
	_, want, _ := whatIfNodes(t, c, cfg)
	want["train/job-3"] = ""
	addJob3(t, c, dratest.Exactly("gpus", "gpu.nvidia.com", 1, `device.attributes["gpu.nvidia.com"].nosuch == "x"`))
	r, got, reasons := whatIfNodes(t, c, cfg)
	if !strings.HasPrefix(reasons["train/job-3"], "not scored: ") {
		t.Errorf("job-3 pending for %q", reasons["train/job-3"])
	}
	if !cmp.Equal(got, want) || len(got) != 5 {
		t.Errorf("placements %v, want %v", got, want)
	}
	if !slices.ContainsFunc(r.Outcomes[0].Warnings, func(w string) bool { return strings.HasPrefix(w, "pod train/job-3 not scored: ") }) {
		t.Errorf("no warning of job-3: %v", r.Outcomes[0].Warnings)
	}
}

// addJob3 adds train/job-3, job-1's like, queued after it, with a claim of
// its own (train/job-3-gpus) for the request.
func addJob3(t *testing.T, c *Snapshot, request resourcev1.DeviceRequest) {
	t.Helper()
	job3 := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "job-3-gpus"}, Spec: dratest.ClaimSpec(request)}
	c.Claims = append(c.Claims, job3)
	job1, err := c.FindPod("train/job-1", "")
	if err != nil {
		t.Fatal(err)
	}
	p := job1.DeepCopy()
	p.Name, p.CreationTimestamp = "job-3", metav1.NewTime(job1.CreationTimestamp.Add(1))
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimName: &job3.Name}}
	c.Pods = append(c.Pods, p)
}

// whatIfNodes is whatif's report of one configuration on the cluster, each
// pod's node ("" pending) and each pending pod's reason.
func whatIfNodes(t *testing.T, c *Snapshot, cfg *config.Config) (r *WhatIfReport, nodes, reasons map[string]string) {
	t.Helper()
	r, err := WhatIf(c, []NamedConfig{{"rsf.yaml", cfg}}, nil, WhatIfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, reasons = map[string]string{}, map[string]string{}
	for _, pl := range r.Outcomes[0].Placements {
		nodes[pl.Pod] = pl.Node
		if pl.Node == "" {
			reasons[pl.Pod] = pl.Reason
		}
	}
	return r, nodes, reasons
}

// A pod whose claim's selector fails as kube's allocator runs it is
// explained, not an error: every node is rejected with the cause, and a
// warning says so, as whatif leaves it pending; with the fault in the
// class instead, job-2 (a claim) and job-1 (nvidia.com/gpu through the
// class) are both explained, each with the fault in a warning. defrag
// names the fault as why it leaves the pod out, not the devices' shape.
func TestOnePodsFaultIsExplained(t *testing.T) {
	const fails = `device.attributes["gpu.nvidia.com"].nosuch == "x"`
	c, cfg := draTestdata(t, "rsf.yaml")
	addJob3(t, c, dratest.Exactly("gpus", "gpu.nvidia.com", 1, fails))
	explain := func(c *Snapshot, name string) *Explanation {
		t.Helper()
		p, err := c.FindPod(name, "")
		if err != nil {
			t.Fatal(err)
		}
		e, err := Explain(c, cfg, "rsf.yaml", p)
		if err != nil {
			t.Fatalf("explain %s: %v", name, err)
		}
		return e
	}
	e := explain(c, "train/job-3")
	if e.Feasible != 0 || e.Rejected != 4 || len(e.Nodes) != 4 {
		t.Errorf("job-3: %d feasible, %d rejected, %d nodes", e.Feasible, e.Rejected, len(e.Nodes))
	}
	for _, n := range e.Nodes {
		if !strings.HasPrefix(n.Reason, "not scored: ") || !strings.Contains(n.Reason, "CEL runtime error: no such key: nosuch") {
			t.Errorf("job-3 on %s: %q", n.Name, n.Reason)
		}
	}
	if !slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.HasPrefix(w, "pod train/job-3 not scored: ") }) {
		t.Errorf("no warning of job-3: %v", e.Warnings)
	}

	for _, p := range []string{"train/job-3"} {
		pod, _ := c.FindPod(p, "")
		_, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{For: []*v1.Pod{pod}})
		if err == nil || !strings.Contains(err.Error(), "its claims cannot be evaluated: ") || !strings.Contains(err.Error(), "CEL runtime error") {
			t.Errorf("defrag --for %s: %v", p, err)
		}
	}
	r, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "pending pod train/job-3: its claims cannot be evaluated: ") && strings.Contains(w, "CEL runtime error")
	}) {
		t.Errorf("defrag's warnings: %v", r.Warnings)
	}

	c, _ = draTestdata(t, "rsf.yaml")
	for _, cl := range c.Classes {
		cl.Spec.Selectors = append(cl.Spec.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: fails}})
	}
	for _, name := range []string{"train/job-1", "train/job-2"} {
		e := explain(c, name)
		if !slices.ContainsFunc(e.Warnings, func(w string) bool { return strings.Contains(w, "CEL runtime error: no such key: nosuch") }) {
			t.Errorf("%s: no warning of the fault: %v", name, e.Warnings)
		}
	}
}

// A snapshot of nodes and pods alone (the README's first command) holds no
// ResourceClaims: a pod that names one is not scored, with the claim said
// missing and the command that takes a snapshot with it, where it was
// explained as asking for cpu and memory alone; a warning counts the pods
// whose devices go uncounted.
func TestClaimsMissingFromTheSnapshot(t *testing.T) {
	c, cfg := draTestdata(t, "rsf.yaml")
	c.Slices, c.Classes, c.Claims = nil, nil, nil
	p, err := c.FindPod("train/job-1", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf.yaml", p)
	want := "pod train/job-1: spec.resourceClaims[0]: claim job-1-gpus is missing: no ResourceClaim, ResourceSlice or DeviceClass was read; a snapshot with them is made by " + SnapshotCommand
	if err != nil || e.Feasible != 0 || !slices.Equal(e.Faults, []string{want}) {
		t.Errorf("explain: %v, %d feasible, faults %q", err, e.Feasible, e.Faults)
	}
	if !slices.ContainsFunc(e.Warnings, func(w string) bool {
		return strings.Contains(w, ": 3 pods name DRA resource claims, but no ResourceClaim")
	}) {
		t.Errorf("warnings %q", e.Warnings)
	}
	r, err := WhatIf(c, []NamedConfig{{"rsf.yaml", cfg}}, nil, WhatIfOptions{})
	if err != nil || len(r.InputFaults()) != 2 || r.InputFaults()[0] != want {
		t.Errorf("whatif: %v, faults %q", err, r.InputFaults())
	}
}

// TestAllocatedClaimSelectorBindsThePod: job-1's claim allocated already,
// its allocation selecting gpu-b by the kubernetes.io/hostname label (as a
// driver with devices reachable from several nodes may write it), binds
// the pod to gpu-b, as kube-scheduler's DynamicResources filters it:
// explain turns the other nodes away with the reason, and defrag --for
// says the same of why it plans nothing, where it said the pod fits with
// no move on cpu-a.
func TestAllocatedClaimSelectorBindsThePod(t *testing.T) {
	c, cfg := readTestdata(t, "dra-cluster.json", "rsf.yaml")
	for _, n := range c.Nodes {
		n.Labels = map[string]string{"kubernetes.io/hostname": n.Name}
	}
	for _, claim := range c.Claims {
		if claim.Name == "job-1-gpus" {
			claim.Status.Allocation = &resourcev1.AllocationResult{
				Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
					{Request: claim.Spec.Devices.Requests[0].Name, Driver: "gpu.nvidia.com", Pool: "gpu-b", Device: "gpu-0"},
					{Request: claim.Spec.Devices.Requests[0].Name, Driver: "gpu.nvidia.com", Pool: "gpu-b", Device: "gpu-1"}}},
				NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{"gpu-b"}}}}}},
			}
		}
	}
	pod, err := c.FindPod("train/job-1", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Explain(c, cfg, "rsf.yaml", pod)
	if err != nil {
		t.Fatal(err)
	}
	const why = "a claim of the pod is allocated already, and its allocation's nodeSelector does not select this node"
	for _, n := range e.Nodes {
		if want := n.Name == "gpu-b"; n.Feasible != want || (!want && !strings.Contains(n.Reason, why)) {
			t.Errorf("%s: feasible %v (%q), want %v", n.Name, n.Feasible, n.Reason, want)
		}
	}
	r, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{For: []*v1.Pod{pod}, MaxMoves: 3})
	want := "a claim of the pod is allocated already, and its allocation's nodeSelector selects only gpu-b; the planner does not plan for such a pod"
	if got := fmt.Sprint(err); r != nil && r.Reason != "" {
		got = r.Reason
		if !strings.Contains(got, want) {
			t.Errorf("defrag --for: %q, want %q", got, want)
		}
	} else if !strings.Contains(got, want) {
		t.Errorf("defrag --for: report %+v, error %v; want %q", r, err, want)
	}
}
