package plugins

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/resource"
)

// RoomsName is the plugin that honours rooms (planning.Room).
const RoomsName = "ResfitRooms"

// Rooms honours the rooms a descheduler holds while it carries a plan
// out (planning.Room, rooms.resfit.io): a pod a room is for may go to
// the room's node only (PreFilter narrows the nodes to it), and on a node
// with rooms held for other pods, a pod fits only in what the rooms leave
// (Filter). A node-wide room, starvation control's hold for a pod that
// has waited too long, lets its pod go anywhere, and another pod onto its
// node only where it cannot delay it (planning.Room.Backfills, reading
// the pod's declared end: its activeDeadlineSeconds, its Job's, its
// resfit.io/runs-for). A room holds until a pod it is for is reserved on
// its node (a node-wide room's: on any node; Reserve, and Unreserve gives
// it back) or it expires. Rooms are read from an informer of their own,
// Jobs from the scheduler's; the plugin is safe for concurrent use.
type Rooms struct {
	rooms cache.Store
	jobs  planning.JobLookup
	now   func() time.Time
	mu    sync.Mutex
	taken map[types.UID]bool // rooms a reserved pod took
	// read are the room objects read, by object: an informer replaces an
	// object that changes, so each is read once (a room that does not
	// read is logged once); pass tells this listing's from the last.
	read map[*unstructured.Unstructured]*readRoom
	pass uint64
}

// readRoom is a room object as read, and the listing that last saw it.
type readRoom struct {
	room planning.Room
	err  error
	pass uint64
}

var (
	_ fwk.PreFilterPlugin = (*Rooms)(nil)
	_ fwk.FilterPlugin    = (*Rooms)(nil)
	_ fwk.ReservePlugin   = (*Rooms)(nil)
	_ fwk.SignPlugin      = (*Rooms)(nil)
)

// NewRooms builds the plugin: it checks the Room resource is served (its
// CRD, manifests/rooms.yaml, installed) and starts an informer of rooms.
func NewRooms(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	gv := planning.RoomResource.GroupVersion().String()
	list, err := h.ClientSet().Discovery().ServerResourcesForGroupVersion(gv)
	if err != nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == planning.RoomResource.Resource }) {
		return nil, fmt.Errorf("%s: the API does not serve %s rooms (%v): install the Room CRD, kubectl apply -f manifests/rooms.yaml", RoomsName, gv, err)
	}
	client, err := dynamic.NewForConfig(h.KubeConfig())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", RoomsName, err)
	}
	informer := dynamicinformer.NewFilteredDynamicInformer(client, planning.RoomResource, "", 0, cache.Indexers{}, nil).Informer()
	go informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, fmt.Errorf("%s: the rooms' informer did not sync", RoomsName)
	}
	r := newRooms(informer.GetStore(), time.Now)
	r.jobs = planning.ListedJobs(h.SharedInformerFactory().Batch().V1().Jobs().Lister())
	return r, nil
}

// newRooms is the plugin over a store of room objects.
func newRooms(store cache.Store, now func() time.Time) *Rooms {
	return &Rooms{rooms: store, now: now, taken: map[types.UID]bool{}, read: map[*unstructured.Unstructured]*readRoom{}}
}

// Name is RoomsName.
func (r *Rooms) Name() string { return RoomsName }

// roomsState is a cycle's rooms: those the pod may take, and what the
// others hold on each node.
type roomsState struct {
	takes []planning.Room
	// held is what the rooms hold on each node, in the units
	// kube-scheduler counts (kubebridge.SchedulerAmount), summed up to
	// resource.MaxAmount.
	held  map[string]map[v1.ResourceName]int64
	names map[string]roomNames // the rooms held on each node, for messages
	// wide are the node-wide rooms held for other pods, by node; end is
	// the pod's declared end, if it declares one.
	wide     map[string][]planning.Room
	end      time.Time
	declared bool
}

func (s *roomsState) Clone() fwk.StateData { return s }

const roomsStateKey fwk.StateKey = RoomsName

// holding are the rooms that hold now: readable, not expired, not taken.
// A room that does not read is logged and holds nothing.
func (r *Rooms) holding() []planning.Room {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []planning.Room
	var present map[types.UID]bool
	if len(r.taken) > 0 {
		present = map[types.UID]bool{}
	}
	r.pass++
	listed := r.rooms.List()
	for _, obj := range listed {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if present != nil {
			present[u.GetUID()] = true
		}
		rr := r.read[u]
		if rr == nil {
			rr = &readRoom{}
			rr.room, rr.err = planning.ReadRoom(u)
			if rr.err != nil {
				klog.ErrorS(rr.err, "a room holds nothing", "plugin", RoomsName)
			}
			r.read[u] = rr
		}
		rr.pass = r.pass
		if rr.err == nil && !rr.room.Expired(now) && !r.taken[rr.room.UID] {
			out = append(out, rr.room)
		}
	}
	if len(r.read) > len(listed) { // objects replaced or deleted are forgotten
		for u, rr := range r.read {
			if rr.pass != r.pass {
				delete(r.read, u)
			}
		}
	}
	for uid := range r.taken { // deleted rooms are forgotten
		if !present[uid] {
			delete(r.taken, uid)
		}
	}
	return out
}

// SignPod signs a pod by its requests and the rooms that hold (the
// signature changes when they do: rooms are not cluster events that end
// kube-scheduler's reuse of a ranking). It refuses a pod a room is for,
// ranked as no other pod is, and, while a node-wide room holds, a pod that
// declares its end (where the room lets it in depends on that end): every
// other pod is signed, so a held room does not turn batching off for the
// whole cluster.
func (r *Rooms) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	requests, err := kubebridge.PodOf(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	fragments := []fwk.SignFragment{{Key: RequestsSignerName, Value: requests}}
	rooms := r.holding()
	if len(rooms) == 0 {
		return fragments, nil
	}
	held := make([]string, 0, len(rooms))
	for _, room := range rooms {
		if room.Takes(pod) {
			return nil, fwk.NewStatus(fwk.Unschedulable, "a room is held for this pod")
		}
		if room.NodeWide {
			if _, declared, err := planning.DeclaredEnd(pod, r.jobs, r.now()); err != nil || declared {
				return nil, fwk.NewStatus(fwk.Unschedulable, "a node-wide room holds, and this pod's declared end decides where it may go")
			}
		}
		held = append(held, fmt.Sprintf("%s %s %s", room.UID, room.ExpiresAt.UTC().Format(time.RFC3339), room.FreeAt.UTC().Format(time.RFC3339)))
	}
	slices.Sort(held)
	return append(fragments, fwk.SignFragment{Key: RoomsName + ".heldRooms", Value: strings.Join(held, ",")}), nil
}

// PreFilter reads the rooms: a pod some room is for goes to those rooms'
// nodes only.
func (r *Rooms) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, infos []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	s := &roomsState{held: map[string]map[v1.ResourceName]int64{}, names: map[string]roomNames{}, wide: map[string][]planning.Room{}}
	for _, room := range r.holding() {
		if room.NodeWide {
			if !room.Takes(pod) {
				s.wide[room.Node] = append(s.wide[room.Node], room)
			} else {
				s.takes = append(s.takes, room) // taken wherever it goes
			}
			continue
		}
		if room.Takes(pod) {
			s.takes = append(s.takes, room)
			continue
		}
		held := s.held[room.Node]
		if held == nil {
			held = map[v1.ResourceName]int64{}
			s.held[room.Node] = held
		}
		for name, q := range room.Requests {
			held[name] = resource.Clamp(held[name] + kubebridge.SchedulerAmount(name, q))
		}
		names := s.names[room.Node]
		names.n++
		if len(names.first) < 3 { // a message names three
			names.first = append(names.first, room.Namespace+"/"+room.Name)
		}
		s.names[room.Node] = names
	}
	if len(s.wide) > 0 {
		end, declared, err := planning.DeclaredEnd(pod, r.jobs, r.now())
		if err != nil {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
		}
		s.end, s.declared = end, declared
	}
	state.Write(roomsStateKey, s)
	// A pod a room is for goes to the rooms' nodes that exist: a room on a
	// node that does not pins its pod nowhere.
	exists := make(map[string]bool, len(infos))
	for _, info := range infos {
		if n := info.Node(); n != nil {
			exists[n.Name] = true
		}
	}
	nodes := sets.New[string]()
	for _, room := range s.takes {
		if !room.NodeWide && exists[room.Node] {
			nodes.Insert(room.Node)
		}
	}
	if nodes.Len() == 0 {
		return nil, nil
	}
	return &fwk.PreFilterResult{NodeNames: nodes}, nil
}

// PreFilterExtensions is nil: a pod added or removed in preemption's
// simulation changes no room.
func (r *Rooms) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node where the pod does not fit in what the rooms held
// for other pods leave: for each resource a room holds, the pod's request,
// the node's requested amount and the rooms' must be within its
// allocatable.
func (r *Rooms) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, info fwk.NodeInfo) *fwk.Status {
	data, err := state.Read(roomsStateKey)
	if err != nil {
		return fwk.AsStatus(err)
	}
	s := data.(*roomsState)
	node := info.Node().Name
	if wide := s.wide[node]; len(wide) > 0 {
		alloc, used := info.GetAllocatable(), info.GetRequested()
		allocated, requested := map[v1.ResourceName]int64{}, map[v1.ResourceName]int64{}
		for name := range kubebridge.PodRequests(pod) {
			allocated[name], requested[name] = amount(alloc, name), amount(used, name)
		}
		var onNode []*v1.Pod
		for _, pi := range info.GetPods() {
			onNode = append(onNode, pi.GetPod())
		}
		for _, room := range wide {
			if !room.Backfills(pod, s.end, s.declared, allocated, requested, onNode) {
				until := "its pods in the way leave"
				if !room.FreeAt.IsZero() {
					until = room.FreeAt.UTC().Format(time.RFC3339)
				}
				return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("held until %s for a pod that has waited (room %s/%s): this pod would delay it", until, room.Namespace, room.Name))
			}
		}
	}
	held := s.held[node]
	if len(held) == 0 {
		return nil
	}
	requests := kubebridge.PodRequests(pod)
	alloc, used := info.GetAllocatable(), info.GetRequested()
	for name, h := range held {
		q, ok := requests[name]
		if !ok || q.IsZero() {
			continue
		}
		if amount(alloc, name)-amount(used, name)-h < kubebridge.SchedulerAmount(name, q) {
			return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("room for another pod is held here (%s): not enough %s left", s.names[node], name))
		}
	}
	return nil
}

// roomNames are the first three rooms held on a node, by name, and how
// many there are: a message names three.
type roomNames struct {
	first []string
	n     int
}

func (r roomNames) String() string {
	if r.n <= len(r.first) {
		return strings.Join(r.first, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(r.first, ", "), r.n-len(r.first))
}

// amount is a NodeInfo resource's amount in the unit kube-scheduler counts
// it in (millicores for cpu).
func amount(r fwk.Resource, name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.GetMilliCPU()
	case v1.ResourceMemory:
		return r.GetMemory()
	case v1.ResourceEphemeralStorage:
		return r.GetEphemeralStorage()
	case v1.ResourcePods:
		return int64(r.GetAllowedPodNumber())
	}
	return r.GetScalarResources()[name]
}

// Reserve marks the room the pod takes on the node as taken: it holds no
// more.
func (r *Rooms) Reserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	data, err := state.Read(roomsStateKey)
	if err != nil {
		return nil // PreFilter did not run for this pod (a nominated pod's cycle)
	}
	for _, room := range data.(*roomsState).takes {
		if room.Node == node || room.NodeWide {
			r.mu.Lock()
			r.taken[room.UID] = true
			r.mu.Unlock()
		}
	}
	return nil
}

// Unreserve gives the room back when the binding failed.
func (r *Rooms) Unreserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, node string) {
	data, err := state.Read(roomsStateKey)
	if err != nil {
		return
	}
	for _, room := range data.(*roomsState).takes {
		if room.Node == node || room.NodeWide {
			r.mu.Lock()
			delete(r.taken, room.UID)
			r.mu.Unlock()
		}
	}
}
