package cache

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// The snapshot counts as kube-scheduler's NodeInfo: bound, unfinished pods
// add their plain requests to used and one to "pods"; non-zero used adds
// the defaults to cpu and memory only; finished pods use nothing; pods
// without a node are pending.
func TestCacheCountsLikeNodeInfo(t *testing.T) {
	done := kubetest.Pod("done", "n1", "cpu", "30")
	done.Status.Phase = v1.PodSucceeded
	s, err := New(
		[]*v1.Node{kubetest.Node("n1", "cpu", "32", "memory", "64Gi", "pods", "110", kubetest.GPU, "4"), kubetest.Node("n2", "cpu", "8", "memory", "16Gi", "pods", "10")},
		[]*v1.Pod{kubetest.Pod("a", "n1", "cpu", "2", kubetest.GPU, "1"), kubetest.Pod("b", "n1", "memory", "1Gi"), done, kubetest.Pod("waiting", "", "cpu", "1"), kubetest.Pod("ghost", "n9", "cpu", "1")},
		Options{})
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
	if err := s.AddNode(kubetest.Node("n9", "cpu", "4", "memory", "8Gi", "pods", "10")); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Row("n9"); s.Table().Used(r)[0] != 1000 {
		t.Errorf("n9 used %v", s.Table().Used(r))
	}
}

// A bad object is an error that names it, and the snapshot stays as it
// was.
func TestCacheRefusesBadObjects(t *testing.T) {
	s, err := New([]*v1.Node{kubetest.Node("n1", "cpu", "4", "memory", "8Gi")}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := tableOf(s)
	bad := kubetest.Node("n2", "cpu", "4")
	bad.Status.Allocatable["Bad Name"] = kres.MustParse("1")
	if err := s.AddNode(bad); err == nil || !strings.Contains(err.Error(), "node n2") {
		t.Errorf("bad resource name: %v", err)
	}
	huge := kubetest.Pod("huge", "n1", "memory", "9Ei")
	if err := s.AddPod(huge); err == nil || !strings.Contains(err.Error(), "default/huge") {
		t.Errorf("huge pod: %v", err)
	}
	newRes := kubetest.Pod("fpga", "n1", "example.com/fpga", "1")
	newRes.Spec.Containers[0].Resources.Requests["memory"] = kres.MustParse("9Ei")
	if err := s.AddPod(newRes); err == nil {
		t.Error("a huge pod with a new resource was accepted")
	}
	if err := s.DeletePod(kubetest.Pod("nobody", "n1")); err == nil {
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

func tableOf(s *Cache) map[string]row { return tableWithout(s, "") }

// tableWithout is tableOf with the named resource's used amounts left out.
func tableWithout(s *Cache, skip string) map[string]row {
	t, names := s.Table(), s.Schema().Names()
	out := map[string]row{}
	alloc := func(v resource.Vector) string {
		var b strings.Builder
		for i, x := range v {
			if x != 0 {
				fmt.Fprintf(&b, "%s=%d ", names[i], x)
			}
		}
		return b.String()
	}
	byName := func(v resource.Vector) string {
		var b strings.Builder
		for i, x := range v {
			if x != 0 && names[i] != skip {
				fmt.Fprintf(&b, "%s=%d ", names[i], x)
			}
		}
		return b.String()
	}
	for i := range t.Len() {
		out[t.Name(i)] = row{alloc(t.Allocatable(i)), byName(t.Used(i)), byName(t.NonZeroUsed(i))}
	}
	return out
}

func mapsEqual(a, b map[string]row) bool { return maps.Equal(a, b) }

// TestCacheMatchesRebuildAfterAnyEvents: after any sequence of node and
// pod events (adds, updates that resize a node, relabel its model or move,
// bind or finish a pod, deletes, pods on nodes not yet known, resources
// that appear only later) and assumptions (Assume, Forget), the snapshot's
// table is the table New builds from the objects as they then are
// (an assumed pod bound to its node), and so are its device view's nodes:
// their devices, models, and the devices its pods hold (which depend on
// the events' order, so they are checked against the pods that hold them).
func TestCacheMatchesRebuildAfterAnyEvents(t *testing.T) {
	nodeNames := []string{"n0", "n1", "n2", "n3"}
	podNames := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	extras := []string{kubetest.GPU, "example.com/fpga", "hugepages-2Mi", resource.HAMiCoresResource}
	rapid.Check(t, func(t *rapid.T) {
		drawNode := func(name string) *v1.Node {
			kv := []string{"cpu", fmt.Sprint(rapid.IntRange(1, 64).Draw(t, "cpu")), "memory", fmt.Sprint(rapid.IntRange(1, 256).Draw(t, "mem"), "Gi"),
				"pods", fmt.Sprint(rapid.IntRange(1, 110).Draw(t, "pods"))}
			for _, x := range extras[:3] {
				if rapid.Bool().Draw(t, "node has "+x) {
					kv = append(kv, x, fmt.Sprint(rapid.IntRange(1, 8).Draw(t, x)))
				}
			}
			// HAMi's registration: its GPUs, allocatable counting ten
			// virtual GPUs each.
			registered := rapid.IntRange(0, 4).Draw(t, "registered GPUs")
			if registered > 0 {
				kv = append(kv, kubetest.GPU, fmt.Sprint(10*registered))
			}
			n := kubetest.Node(name, kv...)
			if model := rapid.SampledFrom([]string{"", "Tesla-T4", "NVIDIA-H20"}).Draw(t, "model"); model != "" {
				n.Labels = map[string]string{resource.GPUProductLabel: model}
			}
			if registered > 0 {
				var b strings.Builder
				for i := range registered {
					fmt.Fprintf(&b, "GPU-%s-%d,10,15360,100,NVIDIA-Tesla T4,0,%t:", name, i, rapid.IntRange(0, 3).Draw(t, "healthy") > 0)
				}
				n.Annotations = map[string]string{resource.HAMiNodeRegisterAnnotation: b.String()}
			}
			return n
		}
		drawPod := func(name, where string) *v1.Pod {
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
			if x := resource.HAMiCoresResource; rapid.Bool().Draw(t, "pod shares a GPU") {
				kv = append(kv, kubetest.GPU, "1", x, fmt.Sprint(rapid.IntRange(10, 90).Draw(t, x)))
			}
			p := kubetest.Pod(name, where, kv...)
			// The devices HAMi gave it, on any node's GPUs.
			if rapid.IntRange(0, 2).Draw(t, "allocated by HAMi") == 0 {
				var b strings.Builder
				for range rapid.IntRange(1, 2).Draw(t, "allocated GPUs") {
					fmt.Fprintf(&b, "GPU-%s-%d,NVIDIA,0,%d:", rapid.SampledFrom(nodeNames).Draw(t, "of node"), rapid.IntRange(0, 3).Draw(t, "GPU"), rapid.IntRange(0, 100).Draw(t, "cores"))
				}
				p.Annotations = map[string]string{resource.HAMiPodDevicesAnnotation: b.String() + ";"}
			}
			if rapid.IntRange(0, 5).Draw(t, "finished") == 0 {
				p.Status.Phase = v1.PodSucceeded
			}
			if rapid.Bool().Draw(t, "init container") {
				p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: kubetest.Resources("cpu", "3")}}}
			}
			return p
		}
		nodes := map[string]*v1.Node{}
		pods := map[string]*v1.Pod{}   // as the snapshot should hold them
		assumed := map[string]bool{}   // pods assumed, by name
		before := map[string]*v1.Pod{} // an assumed pod as it was before, when known
		s, err := New(nil, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range rapid.IntRange(1, 40).Draw(t, "events") {
			switch rapid.IntRange(0, 5).Draw(t, "event") {
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
				where := rapid.SampledFrom(append([]string{"", "n9"}, nodeNames...)).Draw(t, "node")
				p := drawPod(rapid.SampledFrom(podNames).Draw(t, "pod name"), where)
				if err := s.AddPod(p); err != nil {
					t.Fatal(err)
				}
				pods[p.Name] = p
				delete(assumed, p.Name)
			case 3:
				if len(pods) == 0 {
					continue
				}
				name := rapid.SampledFrom(slices.Sorted(maps.Keys(pods))).Draw(t, "delete pod")
				if err := s.DeletePod(pods[name]); err != nil {
					t.Fatal(err)
				}
				delete(pods, name)
				delete(assumed, name)
			case 4:
				name := rapid.SampledFrom(podNames).Draw(t, "assume pod")
				if len(nodes) == 0 || assumed[name] || (pods[name] != nil && (pods[name].Spec.NodeName != "" || kubebridge.Finished(pods[name]))) {
					continue
				}
				where := rapid.SampledFrom(slices.Sorted(maps.Keys(nodes))).Draw(t, "on")
				p := pods[name]
				if p == nil {
					p = drawPod(name, "")
					p.Status.Phase = ""
				}
				if err := s.Assume(p, where); err != nil {
					t.Fatal(err)
				}
				if pods[name] != nil {
					before[name] = pods[name]
				} else {
					delete(before, name)
				}
				bound := p.DeepCopy()
				bound.Spec.NodeName = where
				pods[name], assumed[name] = bound, true
			case 5:
				if len(assumed) == 0 {
					continue
				}
				name := rapid.SampledFrom(slices.Sorted(maps.Keys(assumed))).Draw(t, "forget pod")
				if err := s.Forget(pods[name]); err != nil {
					t.Fatal(err)
				}
				delete(assumed, name)
				if b := before[name]; b != nil {
					pods[name] = b
				} else {
					delete(pods, name)
				}
			}
			fresh, err := New(slices.Collect(maps.Values(nodes)), slices.Collect(maps.Values(pods)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The GPUs' used amounts are what the pods hold (checkDevices),
			// which depends on the events' order.
			if got, want := tableWithout(s, kubetest.GPU), tableWithout(fresh, kubetest.GPU); !mapsEqual(got, want) {
				t.Fatalf("after the events, the snapshot holds\n%v\nwhere a fresh one holds\n%v", got, want)
			}
			checkDevices(t, s, fresh)
			for name, p := range pods {
				if got := s.Pod(p.Namespace, name); got == nil || got.Spec.NodeName != p.Spec.NodeName {
					t.Fatalf("Pod(%s) = %v, want it on %q", name, got, p.Spec.NodeName)
				}
			}
		}
	})
}

// checkDevices compares a snapshot's device view with a fresh one's: the
// same devices and model per node, and on each node the amount the
// snapshot's pods hold taken, each holding pod's devices distinct.
func checkDevices(t *rapid.T, s, fresh *Cache) {
	taken := map[string]int64{}
	for _, e := range s.pods {
		if !e.held.Holds() {
			continue
		}
		var devices []int
		var amounts []int64
		for device, amount := range e.held.Parts() {
			devices, amounts = append(devices, device), append(amounts, amount)
			taken[e.pod.Spec.NodeName] += amount
		}
		if len(slices.Compact(slices.Sorted(slices.Values(devices)))) != len(devices) {
			t.Fatalf("pod %s holds devices %v", e.pod.Name, e.held)
		}
		// A pod holds what it asks for, unless its sharing stack says what
		// it holds.
		if !s.nodeDevs[e.pod.Spec.NodeName].Exact(e.pod) && (len(devices) != e.devices.Count || amounts[0] != e.devices.Each) {
			t.Fatalf("pod %s holds %v for %+v", e.pod.Name, e.held, e.devices)
		}
	}
	d, f := s.Devices(), fresh.Devices()
	for name := range s.rows {
		row, _ := s.Row(name)
		frow, _ := fresh.Row(name)
		if len(d.Free(row)) != len(f.Free(frow)) || d.Model(row) != f.Model(frow) {
			t.Fatalf("node %s: %d devices of %q, a fresh view %d of %q", name, len(d.Free(row)), d.Model(row), len(f.Free(frow)), f.Model(frow))
		}
		if got := int64(len(d.Free(row)))*1000 - d.FreeTotal(row); got != taken[name] {
			t.Fatalf("node %s: %d taken from its devices %v, its pods hold %d", name, got, d.Free(row), taken[name])
		}
		// The table holds the GPUs as the view does.
		if slot, ok := s.Schema().Slot(kubetest.GPU); ok {
			tab := s.Table()
			if a, u, nz := tab.Allocatable(row)[slot], tab.Used(row)[slot], tab.NonZeroUsed(row)[slot]; a != int64(len(d.Free(row)))*1000 || u != taken[name] || nz != u {
				t.Fatalf("node %s: the table holds GPUs %d allocatable, %d used (non-zero %d), the view %v", name, a, u, nz, d.Free(row))
			}
		}
		// A host that reads the node's pods at once gives a fresh
		// snapshot's view of the node.
		var pods []*v1.Pod
		for _, e := range fresh.pods {
			if e.pod.Spec.NodeName == name {
				pods = append(pods, e.pod)
			}
		}
		one, _ := resource.NewDevices(kubetest.GPU, 1000)
		one.AddNode(3) // whatever it held before
		one.Take(0, 1, 400)
		if err := kubebridge.NodeDevices(nil, one, 0, fresh.Node(name), pods); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one.Free(0), f.Free(frow)) || one.Model(0) != f.Model(frow) {
			t.Fatalf("node %s: kubebridge.NodeDevices %v of %q, a fresh snapshot %v of %q", name, one.Free(0), one.Model(0), f.Free(frow), f.Model(frow))
		}
	}
}

// Assume counts a pod on a node as kube-scheduler's cache assumes it, with
// its devices; Forget takes it back; the pod's binding event replaces the
// assumption.
func TestCacheAssumeAndForget(t *testing.T) {
	s, err := New([]*v1.Node{kubetest.Node("gpu-a", "cpu", "32", "pods", "110", kubetest.GPU, "4")}, []*v1.Pod{kubetest.Pod("train", "", "cpu", "4", kubetest.GPU, "2")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	row, _ := s.Row("gpu-a")
	state := func() string {
		return fmt.Sprint(s.Table().Used(row), s.Devices().Free(row), len(s.Pending()))
	}
	idle := state()
	train := s.Pod("default", "train")
	if err := s.Assume(train, "gpu-a"); err != nil {
		t.Fatal(err)
	}
	if got, want := state(), "[4000 0 0 1 2000] [0 0 1000 1000] 0"; got != want {
		t.Errorf("assumed: %s, want %s", got, want)
	}
	if train.Spec.NodeName != "" || s.Pod("default", "train").Spec.NodeName != "gpu-a" {
		t.Error("Assume changed the pod given, or holds it unbound")
	}
	if err := s.Assume(train, "gpu-a"); err == nil {
		t.Error("assumed twice")
	}
	if err := s.Forget(train); err != nil || state() != idle || s.Pod("default", "train").Spec.NodeName != "" {
		t.Errorf("forgotten: %s, %v; want %s", state(), err, idle)
	}
	if err := s.Forget(train); err == nil {
		t.Error("forgot a pod that was not assumed")
	}
	// The binding event replaces the assumption: nothing is left to forget.
	if err := s.Assume(train, "gpu-a"); err != nil {
		t.Fatal(err)
	}
	bound := train.DeepCopy()
	bound.Spec.NodeName = "gpu-a"
	if err := s.UpdatePod(bound); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(bound); err == nil || state() != "[4000 0 0 1 2000] [0 0 1000 1000] 0" {
		t.Errorf("after the binding: %s, forget %v", state(), err)
	}
	if err := s.Assume(train, "gpu-a"); err == nil || !strings.Contains(err.Error(), "bound to gpu-a") {
		t.Errorf("assuming a bound pod: %v", err)
	}
	// A pod the snapshot did not know is gone again once forgotten.
	other := kubetest.Pod("other", "", "cpu", "1")
	if err := s.Assume(other, "gpu-a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(other); err != nil || s.Pod("default", "other") != nil {
		t.Errorf("forgetting an unknown pod: %v, %v", err, s.Pod("default", "other"))
	}
	if err := s.Assume(other, "nowhere"); err == nil || !strings.Contains(err.Error(), "node nowhere") {
		t.Errorf("unknown node: %v", err)
	}
}

// The device view: each node's devices from its allocatable, its model
// from its labels (GPU feature discovery's, else Koordinator's), the
// devices the counted pods hold taken tightest first; a finished pod
// holds none. The table holds the GPUs as the view does: the shared pod
// uses 300 of node a's 4000, not the whole GPU its nvidia.com/gpu: 1
// says.
func TestCacheDevices(t *testing.T) {
	a := kubetest.Node("a", "cpu", "64", kubetest.GPU, "4")
	a.Labels = map[string]string{"nvidia.com/gpu.product": "Tesla-T4"}
	b := kubetest.Node("b", "cpu", "64", kubetest.GPU, "2")
	b.Labels = map[string]string{"node.koordinator.sh/gpu-model": "NVIDIA-H20"}
	c := kubetest.Node("c", "cpu", "64")
	shared := kubetest.Pod("shared", "a", "cpu", "1", kubetest.GPU, "1", "nvidia.com/gpucores", "30")
	whole := kubetest.Pod("whole", "a", "cpu", "1", kubetest.GPU, "2")
	done := kubetest.Pod("done", "b", "cpu", "1", kubetest.GPU, "2")
	done.Status.Phase = v1.PodSucceeded
	s, err := New([]*v1.Node{a, b, c}, []*v1.Pod{shared, whole, done}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Models(); !slices.Equal(got, []string{"NVIDIA-H20", "Tesla-T4"}) {
		t.Errorf("models %v", got)
	}
	d := s.Devices()
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
	slot, _ := s.Schema().Slot(kubetest.GPU)
	for name, w := range map[string][2]int64{"a": {4000, 2300}, "b": {2000, 0}, "c": {0, 0}} {
		row, _ := s.Row(name)
		if got := [2]int64{s.Table().Allocatable(row)[slot], s.Table().Used(row)[slot]}; got != w {
			t.Errorf("node %s: GPUs allocatable and used %v, want %v", name, got, w)
		}
	}
	// kubebridge.NewTask reads the models a pod accepts only when asked to and the
	// pod asks for devices, and says which annotation is at fault.
	p := kubetest.Pod("p", "", kubetest.GPU, "1")
	p.Annotations = map[string]string{"nvidia.com/use-gputype": "A100"}
	withModels := scoring.TaskOptions{Devices: kubetest.GPU, Models: s.Models()}
	if _, err := kubebridge.NewTask(s.Schema(), p, scoring.TaskOptions{Devices: kubetest.GPU}); err == nil {
		t.Error("a cluster without models left the pod's A100")
	}
	if _, err := kubebridge.NewTask(s.Schema(), p, withModels); err == nil ||
		err.Error() != "pod default/p: annotations nvidia.com/use-gputype: no GPU model of the cluster (NVIDIA-H20, Tesla-T4) is left" {
		t.Errorf("error %v", err)
	}
	cpuOnly := kubetest.Pod("c", "", "cpu", "1")
	cpuOnly.Annotations = p.Annotations
	if task, err := kubebridge.NewTask(s.Schema(), cpuOnly, withModels); err != nil || task.Models != "" {
		t.Errorf("a pod without GPUs: %q, %v", task.Models, err)
	}
	p.Annotations = map[string]string{"resfit.io/gpu-models": "Tesla-T4"}
	if task, err := kubebridge.NewTask(s.Schema(), p, withModels); err != nil || task.Models != "Tesla-T4" {
		t.Errorf("exact: %q, %v", task.Models, err)
	}
}

// GPUs as sharing stacks describe them. Node hami has HAMi's registration
// of four T4s, the third unhealthy (so three in the view: a, b, d), and
// 40 virtual GPUs allocatable; its pods: "infer" holds 30% of GPU-d (as
// HAMi wrote), "train" two whole GPUs a and b, "guess" asks for 50% of
// one GPU with no annotation (it takes the tightest left: d, 700 free),
// and "gone" holds 20% of the unhealthy GPU, which is not in the view.
// The pods with annotations take theirs first, though "guess" comes
// before "infer" by name. Node volcano has Volcano's vGPU registration of
// two GPUs and a pod holding 25% of the second. Node broken's
// registration cannot be read: it has no GPUs, and the snapshot says why.
func TestCacheReadsSharingStacks(t *testing.T) {
	hami := kubetest.Node("hami", "cpu", "64", "pods", "110", kubetest.GPU, "40")
	hami.Annotations = map[string]string{resource.HAMiNodeRegisterAnnotation: `[` +
		`{"id":"GPU-a","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true},` +
		`{"id":"GPU-b","index":1,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true},` +
		`{"id":"GPU-c","index":2,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4"},` +
		`{"id":"GPU-d","index":3,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true}]`}
	volcano := kubetest.Node("volcano", "cpu", "64", "pods", "110", "volcano.sh/vgpu-number", "20")
	volcano.Annotations = map[string]string{resource.VolcanoNodeRegisterAnnotation: "GPU-v0,10,15360,NVIDIA-Tesla T4,true,hami-core:GPU-v1,10,15360,NVIDIA-Tesla T4,true,hami-core:"}
	broken := kubetest.Node("broken", "cpu", "64", "pods", "110", kubetest.GPU, "80")
	broken.Annotations = map[string]string{resource.HAMiNodeRegisterAnnotation: "GPU-x,10,15360"}
	annotated := func(p *v1.Pod, key, value string) *v1.Pod {
		p.Annotations = map[string]string{key: value}
		return p
	}
	pods := []*v1.Pod{
		annotated(kubetest.Pod("infer", "hami", "cpu", "1", kubetest.GPU, "1", resource.HAMiCoresResource, "30"), resource.HAMiPodDevicesAnnotation, "GPU-d,NVIDIA,4000,30:;"),
		annotated(kubetest.Pod("train", "hami", "cpu", "8", kubetest.GPU, "2"), resource.HAMiPodDevicesAnnotation, "GPU-a,NVIDIA,15360,100:GPU-b,NVIDIA,15360,100:;"),
		kubetest.Pod("guess", "hami", "cpu", "1", kubetest.GPU, "1", resource.HAMiCoresResource, "50"),
		annotated(kubetest.Pod("gone", "hami", "cpu", "1", kubetest.GPU, "1", resource.HAMiCoresResource, "20"), resource.HAMiPodDevicesAnnotation, "GPU-c,NVIDIA,3000,20:;"),
		annotated(kubetest.Pod("vgpu", "volcano", "cpu", "1", "volcano.sh/vgpu-number", "1", "volcano.sh/vgpu-cores", "25"), resource.VolcanoPodDevicesAnnotation, "GPU-v1,NVIDIA,3000,25:;"),
	}
	s, err := New([]*v1.Node{hami, volcano, broken}, pods, Options{})
	if err != nil {
		t.Fatal(err)
	}
	slot, _ := s.Schema().Slot(kubetest.GPU)
	for name, want := range map[string]struct {
		free        []int64
		alloc, used int64
	}{
		"hami":    {[]int64{0, 0, 200}, 3000, 2800}, // d: 300 infer, then 500 guess
		"volcano": {[]int64{1000, 750}, 2000, 250},
		"broken":  {[]int64{}, 0, 0},
	} {
		row, _ := s.Row(name)
		tab := s.Table()
		if got := s.Devices().Free(row); !slices.Equal(got, want.free) || tab.Allocatable(row)[slot] != want.alloc || tab.Used(row)[slot] != want.used {
			t.Errorf("node %s: free %v, GPUs %d of %d; want %v, %d of %d", name, got, tab.Used(row)[slot], tab.Allocatable(row)[slot], want.free, want.used, want.alloc)
		}
	}
	if errs := s.DeviceErrors(); len(errs) != 1 || errs[0].Error() != "node broken: annotation hami.io/node-nvidia-register: no device ends with ':'; it has no nvidia.com/gpu here" {
		t.Errorf("device errors %v", errs)
	}
	// kubebridge.NodeDevices reads the node the same way.
	d, _ := resource.NewDevices(kubetest.GPU, 1000)
	d.AddNode(0)
	if err := kubebridge.NodeDevices(nil, d, 0, hami, pods[:4]); err != nil || !slices.Equal(d.Free(0), []int64{0, 0, 200}) {
		t.Errorf("NodeDevices: %v, %v", d.Free(0), err)
	}
	var re *kubebridge.RegistrationError
	if err := kubebridge.NodeDevices(nil, d, 0, broken, nil); !errors.As(err, &re) || re.Node != "broken" || len(d.Free(0)) != 0 {
		t.Errorf("NodeDevices of a broken registration: %v, %v", d.Free(0), err)
	}
	// HAMi re-registers GPU-c healthy: the node's devices change, and its
	// pods take theirs again (gone's 20% on c, now the third device).
	healed := hami.DeepCopy()
	healed.Annotations[resource.HAMiNodeRegisterAnnotation] = strings.ReplaceAll(healed.Annotations[resource.HAMiNodeRegisterAnnotation], `"NVIDIA-Tesla T4"}`, `"NVIDIA-Tesla T4","health":true}`)
	if err := s.UpdateNode(healed); err != nil {
		t.Fatal(err)
	}
	if row, _ := s.Row("hami"); !slices.Equal(s.Devices().Free(row), []int64{0, 0, 800, 200}) {
		t.Errorf("healed: %v", s.Devices().Free(row))
	}
}
