package defragplugin

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/resource"
)

// memRooms keeps the rooms runs make, as the API would, so that a run
// finds what the runs before it held.
type memRooms struct {
	rooms map[string]planning.Room
	made  int
}

func (m *memRooms) Create(_ context.Context, room planning.Room) (string, error) {
	m.made++
	name := fmt.Sprintf("%s-%d", room.Name, m.made)
	m.rooms[name] = room
	return name, nil
}

func (m *memRooms) List(context.Context) (map[string]planning.Room, error) {
	return maps.Clone(m.rooms), nil
}

func (m *memRooms) Delete(_ context.Context, _, name string) error {
	delete(m.rooms, name)
	return nil
}

// reserveRun is one run of reserve mode at now on the nodes and pods, the
// rooms held before it given: the plugin built through the descheduler's
// own framework handle and evictor over a fake clientset, under ResfitFrag,
// with args changed by set. It returns what the run did for its first
// target (reserveRuns: for every one), the pods evicted (an eviction
// deletes the pod) and the rooms held after it.
func reserveRun(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, before map[string]planning.Room, set func(*Args)) (Reservation, []string, map[string]planning.Room) {
	t.Helper()
	res, evicted, rooms := reserveRuns(t, nodes, pods, before, set)
	if len(res) == 0 {
		return Reservation{}, evicted, rooms
	}
	return res[0], evicted, rooms
}

func reserveRuns(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, before map[string]planning.Room, set func(*Args)) (Reservations, []string, map[string]planning.Room) {
	t.Helper()
	ctx := t.Context()
	file := filepath.Join(t.TempDir(), "resfit.yaml")
	if err := os.WriteFile(file, []byte(`plugins: [{name: ResfitFrag, args: {classes: [{cpu: 2, gpus: 1}]}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := &Args{ConfigFile: file, Mode: ModeReserve}
	if set != nil {
		set(args)
	}
	var objects []runtime.Object
	for _, n := range nodes {
		objects = append(objects, n)
	}
	for _, p := range pods {
		objects = append(objects, p)
	}
	p, client := newPlugin(t, ctx, args, objects...)
	rooms := &memRooms{rooms: maps.Clone(before)}
	if rooms.rooms == nil {
		rooms.rooms = map[string]planning.Room{}
	}
	p.rooms = rooms
	var evicted []string
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		name := action.(clienttesting.CreateAction).GetObject().(metav1.Object).GetName()
		evicted = append(evicted, action.GetNamespace()+"/"+name)
		return true, nil, client.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), action.GetNamespace(), name)
	})
	res, err := p.Reserve(ctx, nodes, reserveNow)
	if err != nil {
		t.Fatal(err)
	}
	return res, evicted, rooms.rooms
}

var reserveNow = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// gpuNode is a node of 64 cores and gpus GPUs.
func gpuNode(name string, gpus int) *v1.Node {
	return kubetest.Node(name, "cpu", "64", "memory", "256Gi", "pods", "110", resource.GPU, fmt.Sprint(gpus))
}

// inTheWay is a Job's pod running on the node with gpus GPUs since an
// hour ago, declaring it runs for runsFor more from now ("": no end).
func inTheWay(name, node string, gpus int, runsFor string) *v1.Pod {
	p := kubetest.OfJob(kubetest.Running(kubetest.Pod(name, node, "cpu", "2", resource.GPU, fmt.Sprint(gpus)), reserveNow.Add(-time.Hour)), "job-"+name)
	if runsFor != "" {
		d, _ := time.ParseDuration(runsFor)
		p.Annotations = map[string]string{planning.RunsForAnnotation: (time.Hour + d).String()}
	}
	return p
}

// starving is a pending pod asking for gpus GPUs (and cores), created two
// hours before the run: past starveAfter (by default an hour).
func starving(name string, cores, gpus int) *v1.Pod {
	p := kubetest.Pod(name, "", "cpu", fmt.Sprint(cores), resource.GPU, fmt.Sprint(gpus))
	p.CreationTimestamp = metav1.NewTime(reserveNow.Add(-2 * time.Hour))
	return p
}

// The node: p1 (2 GPUs) and p2 (4) declare no end, p3 (1) ends in
// an hour, one GPU is free, and the 4-GPU target has starved. Waiting
// alone will not free the node (p1 and p2 never leave), so the run drains:
// p2 first, after which the target fits; p3 stays, and p1.
func TestReserveDrainsOnlyUntilTheTargetFits(t *testing.T) {
	pods := []*v1.Pod{inTheWay("p1", "gpu-a", 2, ""), inTheWay("p2", "gpu-a", 4, ""), inTheWay("p3", "gpu-a", 1, "1h"), starving("target", 4, 4)}
	res, evicted, rooms := reserveRun(t, []*v1.Node{gpuNode("gpu-a", 8)}, pods, nil, nil)
	if res.Target != "default/target" || res.Node != "gpu-a" || !slices.Equal(res.InTheWay, []string{"default/p3", "default/p2"}) ||
		!slices.Equal(res.Evicted, []string{"default/p2"}) || !slices.Equal(evicted, []string{"default/p2"}) {
		t.Errorf("%+v, evicted %v; want gpu-a held for default/target, p3 and p2 in the way, p2 alone evicted", res, evicted)
	}
	if len(rooms) != 1 || !slices.ContainsFunc(slices.Collect(maps.Values(rooms)), func(r planning.Room) bool {
		return r.Node == "gpu-a" && r.PodUID == "uid-target" && r.NodeWide
	}) {
		t.Errorf("rooms %v, want one node-wide room on gpu-a for the target", rooms)
	}
}

// A run evicts no more than maxMoves: the 8-GPU target needs all three
// pods gone, the run may move one, the largest that declares no end.
func TestReserveKeepsToTheBudget(t *testing.T) {
	pods := []*v1.Pod{inTheWay("p1", "gpu-a", 2, ""), inTheWay("p2", "gpu-a", 2, ""), inTheWay("p3", "gpu-a", 3, ""), starving("target", 4, 8)}
	for _, budget := range []int{0, 1, 2} {
		res, evicted, _ := reserveRun(t, []*v1.Node{gpuNode("gpu-a", 8)}, pods, nil, func(a *Args) { a.MaxMoves = &budget })
		if len(res.Evicted) != budget || len(evicted) != budget || budget > 0 && evicted[0] != "default/p3" {
			t.Errorf("maxMoves %d: evicted %v (%v); want %d, p3 first", budget, res.Evicted, evicted, budget)
		}
	}
}

// A dry run holds nothing and evicts nothing: it says what it would do.
func TestReserveDryRunEvictsNothing(t *testing.T) {
	pods := []*v1.Pod{inTheWay("p1", "gpu-a", 2, ""), inTheWay("p2", "gpu-a", 4, ""), inTheWay("p3", "gpu-a", 1, "1h"), starving("target", 4, 4)}
	res, evicted, rooms := reserveRun(t, []*v1.Node{gpuNode("gpu-a", 8)}, pods, nil, func(a *Args) { a.DryRun = true })
	if res.Node != "gpu-a" || len(res.InTheWay) != 2 || len(res.Evicted) != 0 || len(evicted) != 0 || len(rooms) != 0 {
		t.Errorf("dry run: %+v, evicted %v, rooms %v; want gpu-a planned, nothing evicted or held", res, evicted, rooms)
	}
}

// The node held for the target stays held while the target fits it once
// its pods go, though another node is now as good (Choose would take
// gpu-a, the first); a room held for another pod does not keep its node,
// and is let go. A room on a node with fewer GPUs than the target asks
// for (gpu-small: it never fits there) is not kept either.
func TestReserveKeepsTheTargetsNode(t *testing.T) {
	nodes := []*v1.Node{gpuNode("gpu-a", 8), gpuNode("gpu-b", 8), gpuNode("gpu-small", 2)}
	pods := []*v1.Pod{inTheWay("a1", "gpu-a", 6, ""), inTheWay("b1", "gpu-b", 6, ""), inTheWay("s1", "gpu-small", 1, ""), starving("target", 4, 4)}
	room := func(node, uid string) planning.Room {
		return planning.Room{Namespace: "default", Name: "hold-x", Node: node, PodUID: k8stypes.UID(uid), NodeWide: true, ExpiresAt: reserveNow.Add(5 * time.Minute)}
	}
	for _, c := range []struct {
		name, node, uid, want string
	}{
		{"the target's", "gpu-b", "uid-target", "gpu-b"},
		{"another pod's", "gpu-b", "uid-other", "gpu-a"},
		{"on a node too small", "gpu-small", "uid-target", "gpu-a"},
	} {
		res, _, rooms := reserveRun(t, nodes, pods, map[string]planning.Room{"hold-x-0": room(c.node, c.uid)}, nil)
		if res.Node != c.want {
			t.Errorf("a room held for %s on %s: the run holds %s, want %s", c.name, c.node, res.Node, c.want)
		}
		if _, kept := rooms["hold-x-0"]; kept || len(rooms) != 1 {
			t.Errorf("a room held for %s: rooms after the run %v, want the run's alone", c.name, rooms)
		}
	}
	// A target asking for shares of two GPUs (30% of each: 0.6 of a GPU in
	// all) fits no node of one GPU, however empty, though its amount does.
	shares := starving("target", 4, 2)
	shares.Spec.Containers[0].Resources.Requests[resource.HAMiCoresResource] = kres.MustParse("30")
	one := []*v1.Node{gpuNode("gpu-a", 8), gpuNode("gpu-one", 1)}
	res, _, _ := reserveRun(t, one, []*v1.Pod{inTheWay("a1", "gpu-a", 7, ""), shares}, map[string]planning.Room{"hold-x-0": room("gpu-one", "uid-target")}, nil)
	if res.Node != "gpu-a" {
		t.Errorf("a room held for a target of two shares on a node of one GPU: the run holds %s, want gpu-a", res.Node)
	}
}

// Reserve mode is for pods that ask for GPUs: a CPU pod that has starved
// is not elected, and nothing is held.
func TestReserveElectsOnlyGPUPods(t *testing.T) {
	pods := []*v1.Pod{inTheWay("p1", "gpu-a", 8, ""), starving("cpu-only", 63, 0)}
	res, evicted, rooms := reserveRun(t, []*v1.Node{gpuNode("gpu-a", 8)}, pods, nil, nil)
	if res.Target != "" || len(evicted) != 0 || len(rooms) != 0 {
		t.Errorf("%+v, evicted %v, rooms %v; want no target", res, evicted, rooms)
	}
}

// TestReserveHoldsUpTo: with two 8-GPU pods starving (t1 the longer),
// reserve mode holds a node for t1 alone by default (holds: 1, EASY's one
// reservation): gpu-a, whose pod ends first. With holds: 2 it holds one
// for each, t2 the node that frees next (gpu-b), never the same node
// twice; with holds: 3 no more than the two that wait. A target held
// before keeps its node (gpu-c, whose pod declares no end) and comes first.
// Each run's rooms are the holds it reports, the rooms before let go.
func TestReserveHoldsUpTo(t *testing.T) {
	nodes := []*v1.Node{gpuNode("gpu-a", 8), gpuNode("gpu-b", 8), gpuNode("gpu-c", 8)}
	t1 := starving("t1", 4, 8)
	t1.CreationTimestamp = metav1.NewTime(reserveNow.Add(-3 * time.Hour))
	pods := []*v1.Pod{inTheWay("a1", "gpu-a", 4, "1h"), inTheWay("b1", "gpu-b", 4, "90m"), inTheWay("c1", "gpu-c", 4, ""), t1, starving("t2", 4, 8)}
	noMoves := func(holds int) func(*Args) {
		return func(a *Args) { a.Holds, a.MaxMoves = new(holds), new(0) }
	}
	before := map[string]planning.Room{"hold-t2-old": {Namespace: "default", Name: "hold-t2", Node: "gpu-c", PodUID: "uid-t2", NodeWide: true, ExpiresAt: reserveNow.Add(time.Minute)}}
	for _, c := range []struct {
		name   string
		set    func(*Args)
		before map[string]planning.Room
		want   []string // target@node, in order
	}{
		{"default", nil, nil, []string{"default/t1@gpu-a"}},
		{"holds 2", noMoves(2), nil, []string{"default/t1@gpu-a", "default/t2@gpu-b"}},
		{"holds 3", noMoves(3), nil, []string{"default/t1@gpu-a", "default/t2@gpu-b"}},
		{"holds 2, t2 held before", noMoves(2), before, []string{"default/t2@gpu-c", "default/t1@gpu-a"}},
		{"holds 1, t2 held before", noMoves(1), before, []string{"default/t2@gpu-c"}},
	} {
		res, evicted, rooms := reserveRuns(t, nodes, pods, c.before, c.set)
		var got, roomsAt []string
		for _, r := range res {
			got = append(got, r.Target+"@"+r.Node)
		}
		for name, r := range rooms {
			if _, old := c.before[name]; !old {
				roomsAt = append(roomsAt, "default/"+strings.TrimPrefix(r.Name, "hold-")+"@"+r.Node)
			}
		}
		slices.Sort(roomsAt)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, c.want) || !slices.Equal(roomsAt, want) || len(rooms) != len(c.want) {
			t.Errorf("%s: %v, rooms %v (%d), want %v and their rooms alone", c.name, got, roomsAt, len(rooms), c.want)
		}
		if c.set != nil && len(evicted) > 0 {
			t.Errorf("%s: evicted %v with maxMoves 0", c.name, evicted)
		}
	}
}
