package kubebridge

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/strategy"
)

const gpu = "nvidia.com/gpu"

func list(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = kres.MustParse(kv[i+1])
	}
	return l
}

func node(name string, kv ...string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: list(kv...)}}
}

func pod(name, nodeName string, kv ...string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: list(kv...)}}}},
	}
}

// A pod with a sidecar before a larger init container: kube's rule gives
// 6 cores (the init container runs beside the sidecar), Koordinator's 5;
// the non-zero requests add 200Mi of memory for each container that sets
// none: the main container and the sidecar run together (400Mi), and so,
// by kube's rule, do the init container and the sidecar. Volcano's annotations become the override, and an
// unusable pair scores the pod 0 (a zero override).
func TestNewTaskFollowsEachRule(t *testing.T) {
	schema, err := resource.NewSchema("cpu", "memory", "pods", gpu)
	if err != nil {
		t.Fatal(err)
	}
	always := v1.ContainerRestartPolicyAlways
	p := pod("train-0", "", "cpu", "2", gpu, "1")
	p.Spec.InitContainers = []v1.Container{
		{Name: "sidecar", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: list("cpu", "1")}},
		{Name: "init", Resources: v1.ResourceRequirements{Requests: list("cpu", "5")}},
	}
	p.Annotations = map[string]string{"scheduling.k8s.io/group-name": "train",
		VolcanoScoringTypeAnnotation: "MostAllocated", VolcanoWeightAnnotation: `{"nvidia.com/gpu": 2}`}
	task, err := NewTask(schema, p, TaskOptions{Devices: gpu})
	if err != nil {
		t.Fatal(err)
	}
	if task.Name != "default/train-0" || task.Job != "default/train" {
		t.Errorf("name %q, job %q", task.Name, task.Job)
	}
	const mi200 = 200 << 20
	for name, c := range map[string]struct{ got, want resource.Vector }{
		"plain":       {task.Requests, resource.Vector{6000, 0, 0, 1000}},
		"non-zero":    {task.NonZeroRequests, resource.Vector{6000, 2 * mi200, 0, 1000}},
		"koordinator": {task.KoordinatorRequests, resource.Vector{5000, 2 * mi200, 0, 1000}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s requests %v, want %v", name, c.got, c.want)
		}
	}
	if task.Override == nil || task.Devices != (resource.DeviceRequest{Count: 1, Each: 1000}) {
		t.Errorf("override %v, devices %v", task.Override, task.Devices)
	}
	p.Annotations[VolcanoWeightAnnotation] = `{"nvidia.com/gpu": 4611686018427387904}`
	if _, err := VolcanoOverride(schema, p.Annotations); err == nil || !strings.Contains(err.Error(), "[0, 1000000]") {
		t.Errorf("VolcanoOverride: %v", err)
	}
	task, _ = NewTask(schema, p, TaskOptions{})
	if !reflect.DeepEqual(task.Override, strategy.ZeroOverride()) {
		t.Errorf("an unusable annotation gave %+v, want the zero override", task.Override)
	}
	// A share of one GPU, as HAMi states it.
	shared := pod("infer", "", "cpu", "1", gpu, "1", HAMiCoresResource, "30")
	if _, err := NewTask(schema, shared, TaskOptions{Devices: gpu}); err == nil {
		t.Error("a resource the schema lacks was accepted")
	}
	schema, _ = resource.NewSchema("cpu", "memory", "pods", gpu, HAMiCoresResource)
	task, err = NewTask(schema, shared, TaskOptions{Devices: gpu})
	if err != nil || task.Devices != (resource.DeviceRequest{Count: 1, Each: 300}) {
		t.Errorf("shared GPU: %v, %v", task.Devices, err)
	}
}

// The snapshot counts as kube-scheduler's NodeInfo: bound, unfinished pods
// add their plain requests to used and one to "pods"; non-zero used adds
// the defaults to cpu and memory only; finished pods use nothing; pods
// without a node are pending.
func TestSnapshotCountsLikeNodeInfo(t *testing.T) {
	done := pod("done", "n1", "cpu", "30")
	done.Status.Phase = v1.PodSucceeded
	s, err := NewSnapshot(
		[]*v1.Node{node("n1", "cpu", "32", "memory", "64Gi", "pods", "110", gpu, "4"), node("n2", "cpu", "8", "memory", "16Gi", "pods", "10")},
		[]*v1.Pod{pod("a", "n1", "cpu", "2", gpu, "1"), pod("b", "n1", "memory", "1Gi"), done, pod("waiting", "", "cpu", "1"), pod("ghost", "n9", "cpu", "1")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Schema().Names(), ","); got != "cpu,memory,ephemeral-storage,pods,nvidia.com/gpu" {
		t.Errorf("schema %s", got)
	}
	row, _ := s.Row("n1")
	tab := s.Table()
	if want := (resource.Vector{2000, 1 << 30, 0, 2, 1000}); !slices.Equal(tab.Used(row), want) {
		t.Errorf("used %v, want %v", tab.Used(row), want)
	}
	// a sets no memory (+200Mi), b no cpu (+100m).
	if want := (resource.Vector{2100, 1<<30 + 200<<20, 0, 2, 1000}); !slices.Equal(tab.NonZeroUsed(row), want) {
		t.Errorf("non-zero used %v, want %v", tab.NonZeroUsed(row), want)
	}
	if p := s.Pending(); len(p) != 1 || p[0].Name != "waiting" {
		t.Errorf("pending %v", p)
	}
	// The ghost pod's node arrives: it counts.
	if err := s.AddNode(node("n9", "cpu", "4", "memory", "8Gi", "pods", "10")); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Row("n9"); s.Table().Used(r)[0] != 1000 {
		t.Errorf("n9 used %v", s.Table().Used(r))
	}
}

// A bad object is an error that names it, and the snapshot stays as it
// was.
func TestSnapshotRefusesBadObjects(t *testing.T) {
	s, err := NewSnapshot([]*v1.Node{node("n1", "cpu", "4", "memory", "8Gi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := tableOf(s)
	bad := node("n2", "cpu", "4")
	bad.Status.Allocatable["Bad Name"] = kres.MustParse("1")
	if err := s.AddNode(bad); err == nil || !strings.Contains(err.Error(), "node n2") {
		t.Errorf("bad resource name: %v", err)
	}
	huge := pod("huge", "n1", "memory", "9Ei")
	if err := s.AddPod(huge); err == nil || !strings.Contains(err.Error(), "default/huge") {
		t.Errorf("huge pod: %v", err)
	}
	newRes := pod("fpga", "n1", "example.com/fpga", "1")
	newRes.Spec.Containers[0].Resources.Requests["memory"] = kres.MustParse("9Ei")
	if err := s.AddPod(newRes); err == nil {
		t.Error("a huge pod with a new resource was accepted")
	}
	if err := s.DeletePod(pod("nobody", "n1")); err == nil {
		t.Error("deleting an unknown pod was accepted")
	}
	if err := s.DeleteNode("nobody"); err == nil {
		t.Error("deleting an unknown node was accepted")
	}
	if got := tableOf(s); !mapsEqual(got, before) || strings.Contains(strings.Join(s.Schema().Names(), ","), "fpga") {
		t.Errorf("the snapshot changed:\n%v\n%v\nschema %v", before, got, s.Schema().Names())
	}
}

// row is a node's row by name, for comparing tables whose rows are in
// another order.
type row struct {
	alloc, used, nonZero string
}

func tableOf(s *Snapshot) map[string]row {
	t, names := s.Table(), s.Schema().Names()
	out := map[string]row{}
	byName := func(v resource.Vector) string {
		var b strings.Builder
		for i, x := range v {
			if x != 0 {
				fmt.Fprintf(&b, "%s=%d ", names[i], x)
			}
		}
		return b.String()
	}
	for i := range t.Len() {
		out[t.Name(i)] = row{byName(t.Allocatable(i)), byName(t.Used(i)), byName(t.NonZeroUsed(i))}
	}
	return out
}

func mapsEqual(a, b map[string]row) bool { return maps.Equal(a, b) }

// TestSnapshotMatchesRebuildAfterAnyEvents: after any sequence of node and
// pod events (adds, updates that resize a node or move, bind or finish a
// pod, deletes, pods on nodes not yet known, resources that appear only
// later), the snapshot's table is the table NewSnapshot builds from the
// objects as they then are.
func TestSnapshotMatchesRebuildAfterAnyEvents(t *testing.T) {
	nodeNames := []string{"n0", "n1", "n2", "n3"}
	podNames := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	extras := []string{gpu, "example.com/fpga", "hugepages-2Mi"}
	rapid.Check(t, func(t *rapid.T) {
		drawNode := func(name string) *v1.Node {
			kv := []string{"cpu", fmt.Sprint(rapid.IntRange(1, 64).Draw(t, "cpu")), "memory", fmt.Sprint(rapid.IntRange(1, 256).Draw(t, "mem"), "Gi"),
				"pods", fmt.Sprint(rapid.IntRange(1, 110).Draw(t, "pods"))}
			for _, x := range extras {
				if rapid.Bool().Draw(t, "node has "+x) {
					kv = append(kv, x, fmt.Sprint(rapid.IntRange(1, 8).Draw(t, x)))
				}
			}
			return node(name, kv...)
		}
		drawPod := func(name string) *v1.Pod {
			var kv []string
			if rapid.Bool().Draw(t, "cpu set") {
				kv = append(kv, "cpu", fmt.Sprint(rapid.IntRange(0, 4000).Draw(t, "milli"), "m"))
			}
			if rapid.Bool().Draw(t, "memory set") {
				kv = append(kv, "memory", fmt.Sprint(rapid.IntRange(0, 4096).Draw(t, "mi"), "Mi"))
			}
			for _, x := range extras {
				if rapid.Bool().Draw(t, "pod asks "+x) {
					kv = append(kv, x, fmt.Sprint(rapid.IntRange(1, 2).Draw(t, x)))
				}
			}
			where := rapid.SampledFrom(append([]string{"", "n9"}, nodeNames...)).Draw(t, "node")
			p := pod(name, where, kv...)
			if rapid.IntRange(0, 5).Draw(t, "finished") == 0 {
				p.Status.Phase = v1.PodSucceeded
			}
			if rapid.Bool().Draw(t, "init container") {
				p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: list("cpu", "3")}}}
			}
			return p
		}
		nodes := map[string]*v1.Node{}
		pods := map[string]*v1.Pod{}
		s, err := NewSnapshot(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range rapid.IntRange(1, 40).Draw(t, "events") {
			switch rapid.IntRange(0, 3).Draw(t, "event") {
			case 0:
				n := drawNode(rapid.SampledFrom(nodeNames).Draw(t, "node name"))
				if err := s.AddNode(n); err != nil {
					t.Fatal(err)
				}
				nodes[n.Name] = n
			case 1:
				if len(nodes) == 0 {
					continue
				}
				name := rapid.SampledFrom(slices.Sorted(maps.Keys(nodes))).Draw(t, "delete node")
				if err := s.DeleteNode(name); err != nil {
					t.Fatal(err)
				}
				delete(nodes, name)
			case 2:
				p := drawPod(rapid.SampledFrom(podNames).Draw(t, "pod name"))
				if err := s.AddPod(p); err != nil {
					t.Fatal(err)
				}
				pods[p.Name] = p
			case 3:
				if len(pods) == 0 {
					continue
				}
				name := rapid.SampledFrom(slices.Sorted(maps.Keys(pods))).Draw(t, "delete pod")
				if err := s.DeletePod(pods[name]); err != nil {
					t.Fatal(err)
				}
				delete(pods, name)
			}
			fresh, err := NewSnapshot(slices.Collect(maps.Values(nodes)), slices.Collect(maps.Values(pods)))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := tableOf(s), tableOf(fresh); !mapsEqual(got, want) {
				t.Fatalf("after the events, the snapshot holds\n%v\nwhere a fresh one holds\n%v", got, want)
			}
		}
	})
}

// The device view: each node's devices from its allocatable, its model
// from its labels (GPU feature discovery's, else Koordinator's), the
// devices the counted pods hold taken tightest first; a finished pod
// holds none.
func TestSnapshotDevices(t *testing.T) {
	a := node("a", "cpu", "64", gpu, "4")
	a.Labels = map[string]string{"nvidia.com/gpu.product": "Tesla-T4"}
	b := node("b", "cpu", "64", gpu, "2")
	b.Labels = map[string]string{"node.koordinator.sh/gpu-model": "NVIDIA-H20"}
	c := node("c", "cpu", "64")
	shared := pod("shared", "a", "cpu", "1", gpu, "1", "nvidia.com/gpucores", "30")
	whole := pod("whole", "a", "cpu", "1", gpu, "2")
	done := pod("done", "b", "cpu", "1", gpu, "2")
	done.Status.Phase = v1.PodSucceeded
	s, err := NewSnapshot([]*v1.Node{a, b, c}, []*v1.Pod{shared, whole, done})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Models(); !slices.Equal(got, []string{"NVIDIA-H20", "Tesla-T4"}) {
		t.Errorf("models %v", got)
	}
	d, err := s.Devices(gpu)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		model string
		free  []int64
	}{
		"a": {"Tesla-T4", []int64{700, 0, 0, 1000}}, // the shared pod's 300 on the first, the whole pod's two next
		"b": {"NVIDIA-H20", []int64{1000, 1000}},
		"c": {"", []int64{}},
	}
	for name, w := range want {
		row, _ := s.Row(name)
		if d.Model(row) != w.model || !slices.Equal(d.Free(row), w.free) {
			t.Errorf("node %s: model %q free %v, want %q %v", name, d.Model(row), d.Free(row), w.model, w.free)
		}
	}
	// NewTask reads the models a pod accepts only when asked to, and says
	// which annotation is at fault.
	p := pod("p", "", gpu, "1")
	p.Annotations = map[string]string{"nvidia.com/use-gputype": "A100"}
	if task, err := NewTask(s.Schema(), p, TaskOptions{}); err != nil || task.Models != "" {
		t.Errorf("without Models: %q, %v", task.Models, err)
	}
	if _, err := NewTask(s.Schema(), p, TaskOptions{Models: s.Models()}); err == nil ||
		err.Error() != "pod default/p: annotations nvidia.com/use-gputype: no GPU model of the cluster (NVIDIA-H20, Tesla-T4) is left" {
		t.Errorf("error %v", err)
	}
	p.Annotations = map[string]string{"resfit.io/gpu-models": "Tesla-T4"}
	if task, err := NewTask(s.Schema(), p, TaskOptions{Models: s.Models()}); err != nil || task.Models != "Tesla-T4" {
		t.Errorf("exact: %q, %v", task.Models, err)
	}
}
