package resfitctl

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/scoring/config"
)

func TestReadSnapshot(t *testing.T) {
	c, err := ReadSnapshot(filepath.Join("..", "testdata", "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 4 || len(c.Pods) != 7 || c.Nodes[0].Name != "cpu-a" || c.Pods[0].Name != "done-0" {
		t.Errorf("%d nodes (first %s), %d pods (first %s); want 4 (cpu-a), 7 (batch/done-0)", len(c.Nodes), c.Nodes[0].Name, len(c.Pods), c.Pods[0].Name)
	}
	if !strings.HasSuffix(c.Source, "cluster.json") {
		t.Errorf("source %q", c.Source)
	}
	// The same objects in YAML, and as a NodeList whose items have no kind.
	js, _ := os.ReadFile(filepath.Join("..", "testdata", "cluster.json"))
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		t.Fatal(err)
	}
	if c2, err := ParseSnapshot(y); err != nil || len(c2.Nodes) != 4 || len(c2.Pods) != 7 {
		t.Errorf("YAML snapshot: %v", err)
	}
	nodeList := `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4"}}}]}`
	if c3, err := ParseSnapshot([]byte(nodeList)); err != nil || len(c3.Nodes) != 1 || c3.Nodes[0].Name != "n1" {
		t.Errorf("NodeList: %v", err)
	}
}

// Each mistake is one line that says what to fix.
func TestSnapshotErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "snapshot " + dir + "/missing.json does not exist; make one with: kubectl get nodes,pods -A -o json > " + dir + "/missing.json"},
		{write("garbage.json", "{not: [json"), "not valid JSON: line 1, column 2 (byte 2 of 11): invalid character 'n' looking for beginning of object key string"},
		{write("truncated.json", "{\"kind\": \"List\",\n \"items\": [{\"kind\": \"Node\""), "not valid JSON: line 2, column 26 (byte 43 of 43): unexpected end of JSON input; make it with kubectl get nodes,pods -A -o json"},
		{write("garbage.yaml", "kind: List\nitems: [\n"), "not JSON or YAML ("},
		{write("pod.json", `{"kind":"Pod","metadata":{"name":"p"}}`), "a Pod, not a List of nodes and pods; make it with kubectl get nodes,pods -A -o json"},
		{write("nokind.yaml", "foo: bar\n"), "a document without kind, not a List of nodes and pods"},
		{write("empty.json", `{"kind":"List","items":[]}`), "no nodes in it (0 items); make it with kubectl get nodes,pods -A -o json"},
		{write("podsonly.json", `{"kind":"PodList","items":[{"metadata":{"namespace":"x","name":"p"}}]}`), "no nodes in it (1 item)"},
		{write("badnode.json", `{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"lots"}}}]}`),
			`items[0] (Node n): status.allocatable[cpu]: "lots" is not a quantity (such as 500m, 2, 1.5Gi, 64Mi)`},
		{write("typo.json", `{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"},"status":{"allocatible":{"cpu":"4"}}}]}`),
			`items[0] (Node n): unknown field "status.allocatible"`},
		{write("twice.json", `{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"4"},"allocatable":{"cpu":"8"}}}]}`),
			`items[0] (Node n): duplicate field "status.allocatable"`},
		{write("twice.yaml", "kind: List\nitems:\n- kind: Pod\n  metadata: {name: p, namespace: x}\n  spec:\n    containers:\n    - name: c\n      resources:\n        requests: {nvidia.com/gpu: 8}\n        requests: {cpu: 1}\n"),
			`not JSON or YAML (line 10: key "requests" given twice in one mapping); make it`},
		{write("nod.json", `{"kind":"List","items":[{"kind":"Nod","metadata":{"name":"n"}}]}`),
			`items[0] (n): kind "Nod" is not one a snapshot holds (Node, Pod, ResourceSlice, DeviceClass, ResourceClaim, ResourceClaimTemplate, PodDisruptionBudget)`},
		{write("nameless.json", `{"kind":"List","items":[{"kind":"Node","metadata":{}}]}`), "items[0] (a Node): metadata.name: Required value"},
		{write("nowhere.json", `{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p"}}]}`), "items[0] (Pod p): metadata.namespace: Required value"},
		{write("itemkey.json", `{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"},"stauts":{}}]}`), `unknown field "items[0].stauts"`},
		{write("scalar.json", `"hello"`), "not a List of nodes and pods ("},
	} {
		_, err := ReadSnapshot(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}

func TestFindPod(t *testing.T) {
	c, _ := testdata(t, "rsf.yaml")
	for _, tc := range []struct{ ref, ns, want string }{
		{"train/job-1", "", "job-1"},
		{"job-1", "train", "job-1"},
		{"web/api-0", "train", "api-0"}, // namespace/name wins over -n
	} {
		p, err := c.FindPod(tc.ref, tc.ns)
		if err != nil || p.Name != tc.want {
			t.Errorf("FindPod(%q, %q) = %v, %v; want %s", tc.ref, tc.ns, p, err, tc.want)
		}
	}
	_, err := c.FindPod("job-1", "")
	want := "pod default/job-1 is not in snapshot ../testdata/cluster.json (7 pods); check the name and the namespace (-n)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestReadPods(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pods.yaml")
	content := `# a comment before the first document
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: ns}}
- {apiVersion: v1, kind: Pod, metadata: {name: c, namespace: ns}}
---
`
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	pods, err := ReadPods(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pods {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	if strings.Join(got, " ") != "default/a ns/b ns/c" {
		t.Errorf("pods %v, want default/a ns/b ns/c", got)
	}
	stream := filepath.Join(dir, "stream.json")
	if err := os.WriteFile(stream, []byte(`{"kind": "Pod", "metadata": {"name": "a"}} {"kind": "Pod", "metadata": {"name": "b"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if pods, err := ReadPods(stream); err != nil || len(pods) != 2 {
		t.Errorf("a JSON stream of two pods: %d pods, error %v", len(pods), err)
	}
	for name, tc := range map[string]struct{ content, want string }{
		"deploy.yaml": {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", "document 1: a Deployment, not a Pod"},
		"none.yaml":   {"# nothing\n", "holds no pods"},
		"bad.yaml":    {"kind: Pod\n---\nkind: [\n", "document 2: not JSON or YAML"},
		"list.yaml":   {"kind: List\nitems:\n- {kind: Service}\n", "document 1, items[0]: a Service, not a Pod"},
		"typo.yaml": {"kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {request: {cpu: 1}}}]}\n",
			`document 1: unknown field "spec.containers[0].resources.request"`},
		"half.yaml": {"kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"0.5\"}}}]}\n",
			`document 1: spec.containers[0].resources.requests[nvidia.com/gpu]: quantity "0.5": an extended resource is a whole number`},
		"huge.yaml": {"kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"1e16\"}}}]}\n",
			`document 1: spec.containers[0].resources.requests[cpu]: quantity "1e16": `},
		"twice.yaml": {"kind: Pod\nmetadata: {name: p}\n---\nkind: Pod\nmetadata: {name: p, namespace: default}\n",
			"pod default/p appears twice"},
		"halflimit.yaml": {"kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"0.5\"}}}]}\n",
			`document 1: spec.containers[0].resources.limits[nvidia.com/gpu]: quantity "0.5": an extended resource is a whole number (a limit with no request is requested, as the API server defaults it)`},
		"twicekey.yaml": {"kind: Pod\nmetadata: {name: p}\n---\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {nvidia.com/gpu: 8}\n      requests: {cpu: 1}\n",
			`document 2: not JSON or YAML (line 8: key "requests" given twice in one mapping)`},
		"twicekey.json": {`{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": 8}, "requests": {"cpu": 1}}}]}}`,
			`document 1: duplicate field "spec.containers[0].resources.requests"`},
		"lots.yaml": {"kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n",
			`document 1: spec.containers[0].resources.requests[cpu]: "lots" is not a quantity`},
	} {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, []byte(tc.content), 0o644)
		if _, err := ReadPods(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
}

// TestGPUsInLimitsAreRequested: a container that gives a GPU in limits
// alone, as NVIDIA's device plugin documents it, requests it, as the API
// server defaults a missing request to its limit (kubebridge.DefaultRequests,
// held to kube's own defaulting in the kubescheduler module's
// TestDefaultRequestsIsKubes): explain ranks the GPU nodes and turns the
// CPU nodes away, for a pod file and for a pod in a snapshot alike.
func TestGPUsInLimitsAreRequested(t *testing.T) {
	c, cfg := testdata(t, "rsf.yaml")
	path := filepath.Join(t.TempDir(), "pod.yaml")
	manifest := "kind: Pod\nmetadata: {name: limited, namespace: research}\n" +
		"spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 2}, limits: {nvidia.com/gpu: 1}}}]}\n"
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	pods, err := ReadPods(path)
	if err != nil {
		t.Fatal(err)
	}
	check := func(from string, pod *v1.Pod) {
		t.Helper()
		if q := pod.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]; q.Value() != 1 {
			t.Errorf("%s: GPU request %v, want 1 (its limit)", from, q.String())
		}
		e, err := Explain(c, cfg, "rsf.yaml", pod)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range e.Nodes {
			if gpuNode := strings.HasPrefix(n.Name, "gpu-"); n.Feasible != gpuNode {
				t.Errorf("%s: %s feasible %v (%s)", from, n.Name, n.Feasible, n.Reason)
			}
		}
	}
	check("pod file", pods[0])
	snap, err := os.ReadFile(filepath.Join("..", "testdata", "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := json.Unmarshal(snap, &list); err != nil {
		t.Fatal(err)
	}
	list["items"] = append(list["items"].([]any), map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "limited", "namespace": "research"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"nvidia.com/gpu": "1"}}}}}})
	js, _ := json.Marshal(list)
	sc, err := ParseSnapshot(js)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := sc.FindPod("research/limited", "")
	if err != nil {
		t.Fatal(err)
	}
	check("snapshot", pod)
}

// A pod file is written by hand: whatever it holds, reading it gives pods
// or an error, never a panic, and every pod read has a namespace and
// requests that resfit counts (kubebridge.PodOf accepts them).
func FuzzReadPods(f *testing.F) {
	for _, seed := range []string{
		"kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}\n",
		"kind: Pod\nmetadata: {name: p}\n---\nkind: List\nitems:\n- {kind: Pod, metadata: {name: q, namespace: ns}}\n",
		`{"kind": "Pod", "metadata": {"name": "a"}} {"kind": "Pod", "metadata": {"name": "b"}}`,
		"kind: Pod\nmetadata: {name: p}\nspec: {resources: {limits: {cpu: 2, hugepages-2Mi: 4Mi}}, containers: [{name: c, resources: {requests: {memory: 1Gi}}}]}\n",
		"kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {cpu: 1}\n      requests: {cpu: 2}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := kubebridge.LimitedReader("pod file fuzz", bytes.NewReader(data), kubebridge.MaxPodFileBytes)
		if err != nil {
			t.Fatal(err)
		}
		pods, err := readPods("fuzz", r)
		if err != nil {
			return
		}
		for _, p := range pods {
			if p.Namespace == "" {
				t.Fatalf("pod %s read without a namespace", p.Name)
			}
			if _, err := kubebridge.PodOf(p); err != nil {
				t.Fatalf("pod read with requests resfit refuses: %v", err)
			}
		}
	})
}

// A snapshot is untrusted: whatever it holds, reading it, its DRA objects
// and explaining its pods gives an answer or an error, never a panic.
func FuzzParseSnapshot(f *testing.F) {
	for _, file := range []string{"cluster.json", "dra-cluster.json", "partition-cluster.json", "defrag-cluster.json"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"kind": "List", "items": [
	  {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}},
	  {"kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {"extendedResourceName": "example.com/gpu", "selectors": [{"cel": {"expression": "device.driver == 'd'"}}]}},
	  {"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "g0"}, {"name": "g1"}]}},
	  {"kind": "ResourceClaim", "metadata": {"namespace": "x", "name": "a"}, "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c", "count": 1}}]}},
	   "status": {"allocation": {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "g0"}]}}}},
	  {"kind": "Pod", "metadata": {"namespace": "x", "name": "p"}, "spec": {"resourceClaims": [{"name": "r", "resourceClaimName": "a"}], "containers": [{"name": "c"}]}}]}`))
	cfg, err := LoadConfig(filepath.Join("..", "testdata", "rsf.yaml"), config.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseSnapshot(data)
		if err != nil {
			return
		}
		c.Source = "the fuzzed snapshot"
		for i, p := range c.Pods {
			if i == 3 {
				break
			}
			if e, err := Explain(c, cfg, "rsf.yaml", p); err == nil {
				for _, n := range e.Nodes {
					if math.IsNaN(n.Total) || n.Total < 0 || n.Total > e.MaxScore {
						t.Fatalf("%s on %s: total %v outside [0, %v]", e.Pod, n.Name, n.Total, e.MaxScore)
					}
				}
			}
		}
		// Its budgets read and the moves that free GPU planned: no panic,
		// no more moves than the cap.
		if r, err := Defrag(c, cfg, "rsf.yaml", DefragOptions{MaxMoves: 2}); err == nil && len(r.Moves) > 2 {
			t.Fatalf("%d moves, at most 2", len(r.Moves))
		}
	})
}
