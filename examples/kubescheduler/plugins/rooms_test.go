package plugins

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/planning"
)

func roomsPod(name string, uid types.UID, gpus string, node string) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: kres.MustParse("2"), "nvidia.com/gpu": kres.MustParse(gpus)}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}}
}

func roomsNode(name string, running ...*v1.Pod) fwk.NodeInfo {
	info := framework.NewNodeInfo(running...)
	alloc := v1.ResourceList{v1.ResourceCPU: kres.MustParse("32"), v1.ResourcePods: kres.MustParse("110"), "nvidia.com/gpu": kres.MustParse("8")}
	info.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: alloc}})
	return info
}

// The plugin by hand: gpu-b runs 4 of its 8 GPUs, and a room of 3 GPUs
// is held there for a pending pod. The pod goes to gpu-b only; a 2-GPU
// pod of no room does not fit gpu-b (4 free, 3 held) but fits gpu-a; a
// 1-GPU pod fits both. Once the pending pod is reserved on gpu-b the room
// holds no more; Unreserve gives it back; an expired room holds nothing.
func TestRoomsByHand(t *testing.T) {
	now := time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)
	pending := roomsPod("job", "job-uid", "3", "")
	room, err := planning.RoomFor(pending, "gpu-b", true, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	obj := room.Object()
	obj.SetUID("room-uid")
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := store.Add(obj); err != nil {
		t.Fatal(err)
	}
	clock := now
	r := newRooms(store, func() time.Time { return clock })
	nodes := map[string]fwk.NodeInfo{"gpu-a": roomsNode("gpu-a"), "gpu-b": roomsNode("gpu-b", roomsPod("running", "run-uid", "4", "gpu-b"))}
	check := func(pod *v1.Pod, wantNodes string, fits map[string]bool) *framework.CycleState {
		t.Helper()
		state := framework.NewCycleState()
		res, status := r.PreFilter(t.Context(), state, pod, []fwk.NodeInfo{nodes["gpu-a"], nodes["gpu-b"]})
		if !status.IsSuccess() {
			t.Fatal(status)
		}
		got := ""
		if res != nil {
			got = strings.Join(res.NodeNames.UnsortedList(), ",")
		}
		if got != wantNodes {
			t.Errorf("%s: PreFilter narrows to %q, want %q", pod.Name, got, wantNodes)
		}
		for node, want := range fits {
			if status := r.Filter(t.Context(), state, pod, nodes[node]); status.IsSuccess() != want {
				t.Errorf("%s on %s: %v, want fits %v", pod.Name, node, status, want)
			}
		}
		return state
	}
	state := check(pending, "gpu-b", map[string]bool{"gpu-b": true})
	check(roomsPod("two", "two-uid", "2", ""), "", map[string]bool{"gpu-a": true, "gpu-b": false})
	check(roomsPod("one", "one-uid", "1", ""), "", map[string]bool{"gpu-a": true, "gpu-b": true})
	// Reserved on another node (as a nominated pod's cycle may), the pod
	// takes no room: gpu-b's still holds.
	if status := r.Reserve(t.Context(), state, pending, "gpu-a"); !status.IsSuccess() || len(r.holding()) != 1 {
		t.Fatalf("reserved on gpu-a: %v, %d rooms hold, want 1", status, len(r.holding()))
	}
	if status := r.Reserve(t.Context(), state, pending, "gpu-b"); !status.IsSuccess() {
		t.Fatal(status)
	}
	check(roomsPod("two", "two-uid", "2", ""), "", map[string]bool{"gpu-b": true})
	r.Unreserve(t.Context(), state, pending, "gpu-b")
	check(roomsPod("two", "two-uid", "2", ""), "", map[string]bool{"gpu-b": false})
	if _, status := r.SignPod(t.Context(), pending); status.IsSuccess() {
		t.Error("a pod signed while a room is held for it")
	}
	// Another pod is signed, by its requests and the rooms that hold.
	frags, status := r.SignPod(t.Context(), roomsPod("one", "one-uid", "1", ""))
	if !status.IsSuccess() || len(frags) != 2 || frags[1].Key != "ResfitRooms.heldRooms" || frags[1].Value != "room-uid 2026-11-26T22:01:00Z 0001-01-01T00:00:00Z" {
		t.Errorf("a pod no room is for, while one holds: %v, %v", frags, status)
	}
	// A room on a node that does not exist narrows its pod to no node.
	elsewhere, err := planning.RoomFor(roomsPod("lost", "lost-uid", "1", ""), "gone", true, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	lost := elsewhere.Object()
	lost.SetUID("lost-room-uid")
	if err := store.Add(lost); err != nil {
		t.Fatal(err)
	}
	check(roomsPod("lost", "lost-uid", "1", ""), "", map[string]bool{"gpu-a": true})
	clock = now.Add(time.Minute)
	check(pending, "", map[string]bool{"gpu-a": true})
	check(roomsPod("two", "two-uid", "2", ""), "", map[string]bool{"gpu-b": true})
	if _, status := r.SignPod(t.Context(), pending); !status.IsSuccess() {
		t.Errorf("no room holds, and the pod is not signed: %v", status)
	}
}

// The rooms' Filter against kube-scheduler's own NodeResourcesFit rule on
// generated nodes, pods and rooms: a pod no room is for fits a node with
// rooms held for others exactly when noderesources.Fits says it fits the
// node with a pod holding the rooms' requests added. The pods ask for cpu
// and GPUs, the rooms hold both (so that the two look at the same
// resources), and the node has room for the pods' count.
func TestRoomsFilterIsNodeResourcesFit(t *testing.T) {
	now := time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)
	rapid.Check(t, func(rt *rapid.T) {
		gpus := rapid.IntRange(0, 8).Draw(rt, "node gpus")
		milli := func(label string, most int) string {
			return fmt.Sprintf("%dm", rapid.IntRange(0, most).Draw(rt, label))
		}
		count := func(label string, most int) string { return fmt.Sprint(rapid.IntRange(0, most).Draw(rt, label)) }
		podOf := func(name, node, cpu, gpu string) *v1.Pod {
			req := v1.ResourceList{v1.ResourceCPU: kres.MustParse(cpu), "nvidia.com/gpu": kres.MustParse(gpu)}
			return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)},
				Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: req}}}}}
		}
		var running []*v1.Pod
		for i := range rapid.IntRange(0, 3).Draw(rt, "running") {
			running = append(running, podOf(fmt.Sprint("run-", i), "n", milli("run cpu", 8000), count("run gpu", 3)))
		}
		info := framework.NewNodeInfo(running...)
		alloc := v1.ResourceList{v1.ResourceCPU: kres.MustParse("16"), v1.ResourcePods: kres.MustParse("110"), "nvidia.com/gpu": kres.MustParse(fmt.Sprint(gpus))}
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: alloc}}
		info.SetNode(node)
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		held := v1.ResourceList{v1.ResourceCPU: kres.MustParse("0"), "nvidia.com/gpu": kres.MustParse("0")}
		for i := range rapid.IntRange(1, 2).Draw(rt, "rooms") {
			owner := podOf(fmt.Sprint("owner-", i), "", milli("room cpu", 8000), count("room gpu", 4))
			room, err := planning.RoomFor(owner, "n", true, now.Add(time.Hour))
			if err != nil {
				rt.Fatal(err)
			}
			for name, q := range room.Requests {
				sum := held[name]
				sum.Add(q)
				held[name] = sum
			}
			obj := room.Object()
			obj.SetUID(types.UID(fmt.Sprint("room-", i)))
			if err := store.Add(obj); err != nil {
				rt.Fatal(err)
			}
		}
		pod := podOf("pod", "", milli("pod cpu", 16000), count("pod gpu", 8))
		r := newRooms(store, func() time.Time { return now })
		state := framework.NewCycleState()
		if _, status := r.PreFilter(t.Context(), state, pod, nil); !status.IsSuccess() {
			rt.Fatal(status)
		}
		got := r.Filter(t.Context(), state, pod, info).IsSuccess()
		holder := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rooms", UID: "rooms"},
			Spec: v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: held, Limits: held}}}}}
		withRooms := framework.NewNodeInfo(append(slices.Clone(running), holder)...)
		withRooms.SetNode(node)
		want := len(noderesources.Fits(pod, withRooms, nil, noderesources.ResourceRequestsOptions{})) == 0
		if got != want {
			rt.Fatalf("the rooms' Filter says fits %v; NodeResourcesFit with the rooms' requests held, %v", got, want)
		}
	})
}

// A node-wide room, by hand: gpu-b (8 GPUs, 32 cores) runs long (4 GPUs,
// in the way, ending at 22:30) and short (2 GPUs, staying); a node-wide
// room holds gpu-b for big (6 GPUs), free at 22:30 by the plan.
// big may go anywhere; a 1-GPU pod that says it runs 20 minutes ends by
// then and may take gpu-b, one that runs an hour may not, nor one that
// says nothing, though each fits gpu-b now; gpu-a takes them all. A pod
// whose runs-for does not read is unschedulable, saying why. Reserved
// anywhere, big takes the room.
func TestNodeWideRoom(t *testing.T) {
	now := time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)
	big := roomsPod("big", "big-uid", "6", "")
	long := roomsPod("long", "long-uid", "4", "gpu-b")
	short := roomsPod("short", "short-uid", "2", "gpu-b")
	room := planning.Room{Namespace: "ns", Name: "hold-big", Node: "gpu-b", PodUID: big.UID, Requests: kubebridge.PodRequests(big),
		ExpiresAt: now.Add(10 * time.Minute), NodeWide: true, FreeAt: now.Add(30 * time.Minute), InTheWay: []types.UID{long.UID}}
	obj := room.Object()
	obj.SetUID("hold-uid")
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := store.Add(obj); err != nil {
		t.Fatal(err)
	}
	r := newRooms(store, func() time.Time { return now })
	nodes := map[string]fwk.NodeInfo{"gpu-a": roomsNode("gpu-a"), "gpu-b": roomsNode("gpu-b", long, short)}
	runsFor := func(name, d string) *v1.Pod {
		p := roomsPod(name, types.UID(name+"-uid"), "1", "")
		if d != "" {
			p.Annotations = map[string]string{planning.RunsForAnnotation: d}
		}
		return p
	}
	for _, c := range []struct {
		pod  *v1.Pod
		onB  bool
		want string // on gpu-b's rejection
	}{
		{runsFor("twenty", "20m"), true, ""},
		{runsFor("hour", "1h"), false, "held until 2026-11-26T22:30:00Z for a pod that has waited (room ns/hold-big): this pod would delay it"},
		{runsFor("silent", ""), false, "(room ns/hold-big): this pod would delay it"},
	} {
		state := framework.NewCycleState()
		if res, status := r.PreFilter(t.Context(), state, c.pod, nil); !status.IsSuccess() || res != nil {
			t.Fatalf("%s: PreFilter %v %v", c.pod.Name, res, status)
		}
		if status := r.Filter(t.Context(), state, c.pod, nodes["gpu-a"]); !status.IsSuccess() {
			t.Errorf("%s on gpu-a: %v", c.pod.Name, status)
		}
		status := r.Filter(t.Context(), state, c.pod, nodes["gpu-b"])
		if status.IsSuccess() != c.onB || !c.onB && !strings.Contains(status.Message(), c.want) {
			t.Errorf("%s on gpu-b: %v, want fits %v (%q)", c.pod.Name, status, c.onB, c.want)
		}
		// Signed only where its end does not decide where it may go.
		if _, status := r.SignPod(t.Context(), c.pod); status.IsSuccess() != (c.pod.Name == "silent") {
			t.Errorf("%s signed: %v", c.pod.Name, status)
		}
	}
	if _, status := r.PreFilter(t.Context(), framework.NewCycleState(), runsFor("garbled", "soon"), nil); status.IsSuccess() || !strings.Contains(status.Message(), `annotation resfit.io/runs-for: "soon"`) {
		t.Errorf("a garbled runs-for: %v", status)
	}
	state := framework.NewCycleState()
	if res, status := r.PreFilter(t.Context(), state, big, nil); !status.IsSuccess() || res != nil {
		t.Fatalf("big: PreFilter narrows to %v (%v); a node-wide room's pod may go anywhere", res, status)
	}
	if status := r.Reserve(t.Context(), state, big, "gpu-a"); !status.IsSuccess() || len(r.holding()) != 0 {
		t.Errorf("big reserved on gpu-a: %v, %d rooms hold", status, len(r.holding()))
	}
	r.Unreserve(t.Context(), state, big, "gpu-a")
	if len(r.holding()) != 1 {
		t.Error("Unreserve does not give the room back")
	}
}

// PreFilter and one Filter with 20,000 rooms held on 1,000 nodes, beside
// the same with none (the floor), in one run:
//
//	go test -run XXX -bench RoomsHeld -benchmem ./plugins
func BenchmarkRoomsHeld(b *testing.B) {
	now := time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)
	pod := roomsPod("one", "one-uid", "1", "")
	node := roomsNode("node-7")
	for _, n := range []int{0, 20000} {
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		for i := range n {
			room, err := planning.RoomFor(roomsPod(fmt.Sprint("p-", i), types.UID(fmt.Sprint("uid-", i)), "1", ""), fmt.Sprint("node-", i%1000), true, now.Add(time.Hour))
			if err != nil {
				b.Fatal(err)
			}
			obj := room.Object()
			obj.SetUID(types.UID(fmt.Sprint("room-", i)))
			if err := store.Add(obj); err != nil {
				b.Fatal(err)
			}
		}
		r := newRooms(store, func() time.Time { return now })
		b.Run(fmt.Sprint(n, " rooms"), func(b *testing.B) {
			for b.Loop() {
				state := framework.NewCycleState()
				if _, status := r.PreFilter(b.Context(), state, pod, nil); !status.IsSuccess() {
					b.Fatal(status)
				}
				r.Filter(b.Context(), state, pod, node)
			}
		})
	}
}
