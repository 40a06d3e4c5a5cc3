package planning

import (
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
)

// A Room is room held on a node for one pod, so that a plan's moves land
// where the plan put them: the room a moved pod's replacement is to take
// on the node the plan moves it to, and the room its leaving frees for the
// pending pod the plan lets in. A descheduler carrying a plan out creates
// a Room before each eviction and deletes it once the pod is bound;
// resfit's kube-scheduler plugin ResfitRooms honours it: a pod the room is
// for goes to its node only, and no other pod may take its requests
// there, until a pod the room is for is bound there or the room expires.
//
// It is the custom resource rooms.resfit.io/v1alpha1 (Room), namespaced
// in the pod's namespace (the CRD: examples/kubescheduler/manifests/
// rooms.yaml):
//
//	apiVersion: resfit.io/v1alpha1
//	kind: Room
//	metadata: {namespace: notebook, name: move-notebook-0}
//	spec:
//	  nodeName: gpu-a
//	  controllerUID: 2f0c…   # a pod of this controller takes it, or
//	  podUID: 7a41…          # this pod
//	  requests: {cpu: "2", memory: 8Gi, nvidia.com/gpu: "1"}
//	  expiresAt: "2026-11-26T22:00:00Z"
//
// A pod takes a room (Takes) when it is in the room's namespace, is the
// room's pod or a pod of its controller, and asks for exactly the room's
// requests (its effective requests, as kube-scheduler counts them).
//
// A node-wide room (spec.nodeWide, for a pending pod) is starvation
// control's hold (scoring/starvation): the descheduler holds the node a
// pod that waits too long fits first, and the scheduler lets another pod
// there only where it cannot delay it (Backfills): when the pod declares
// an end (DeclaredEnd) by spec.freeAt, when the node is expected to be
// free for the room's pod, or when it fits beside the room's requests and
// the node's pods that are not in the way (all but spec.inTheWay, the
// pods that must leave first). The room's pod may go to any node.
//
//	spec:
//	  nodeName: gpu-a
//	  podUID: 9c2e…
//	  nodeWide: true
//	  freeAt: "2026-11-28T13:00:00Z"   # absent: a pod in the way declares no end
//	  inTheWay: [5b1f…, 77a0…]
//	  requests: {cpu: "88", memory: 320Gi, nvidia.com/gpu: "8"}
//	  expiresAt: "2026-11-28T12:20:00Z"
type Room struct {
	Namespace, Name string
	UID             types.UID
	Node            string
	ControllerUID   types.UID
	PodUID          types.UID
	Requests        v1.ResourceList
	ExpiresAt       time.Time
	// NodeWide, FreeAt and InTheWay make the room a node-wide hold.
	NodeWide bool
	FreeAt   time.Time
	InTheWay []types.UID
}

// MaxInTheWay bounds a node-wide room's pods in the way.
const MaxInTheWay = 1024

// MaxRoomLife is the longest a room may hold from when it was made (its
// creationTimestamp): a room that says it expires later is read as
// malformed and holds nothing, so that a room written by mistake or
// malice cannot pin its pod for years. The descheduler renews its rooms
// every run, each for at most its longest duration (30 days).
const MaxRoomLife = 31 * 24 * time.Hour

// RoomResource is the Room custom resource.
var RoomResource = schema.GroupVersionResource{Group: "resfit.io", Version: "v1alpha1", Resource: "rooms"}

// RoomKind is its kind.
const RoomKind = "Room"

// ReadRoom reads a Room object, untrusted: an error names the room and the
// field.
func ReadRoom(u *unstructured.Unstructured) (Room, error) {
	r := Room{Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID()}
	bad := func(field, why string) (Room, error) {
		return Room{}, fmt.Errorf("room %s/%s: %s: %s", r.Namespace, r.Name, field, why)
	}
	if u.GetKind() != RoomKind || u.GetAPIVersion() != RoomResource.GroupVersion().String() {
		return bad("kind", fmt.Sprintf("%s %s, want %s %s", u.GetAPIVersion(), u.GetKind(), RoomResource.GroupVersion(), RoomKind))
	}
	spec, ok := u.Object["spec"].(map[string]any)
	if !ok {
		return bad("spec", "missing or not an object")
	}
	str := func(name string) (string, bool) {
		v, present := spec[name]
		s, ok := v.(string)
		return s, !present || ok
	}
	var controller, pod, expires string
	var okNode, okController, okPod, okExpires bool
	r.Node, okNode = str("nodeName")
	controller, okController = str("controllerUID")
	pod, okPod = str("podUID")
	expires, okExpires = str("expiresAt")
	switch {
	case !okNode || r.Node == "":
		return bad("spec.nodeName", "must name a node")
	case !okController || !okPod || (controller == "") == (pod == ""):
		return bad("spec.controllerUID", "exactly one of controllerUID and podUID must be a UID")
	case !okExpires || expires == "":
		return bad("spec.expiresAt", "must be a time (RFC 3339)")
	}
	r.ControllerUID, r.PodUID = types.UID(controller), types.UID(pod)
	t, err := time.Parse(time.RFC3339, expires)
	if err != nil {
		return bad("spec.expiresAt", err.Error())
	}
	r.ExpiresAt = t
	if made := u.GetCreationTimestamp(); !made.IsZero() && t.Sub(made.Time) > MaxRoomLife {
		return bad("spec.expiresAt", fmt.Sprintf("%s is more than %v after the room was made (%s)", expires, MaxRoomLife, made.UTC().Format(time.RFC3339)))
	}
	if v, present := spec["nodeWide"]; present {
		wide, ok := v.(bool)
		if !ok {
			return bad("spec.nodeWide", fmt.Sprintf("%v is not true or false", v))
		}
		r.NodeWide = wide
	}
	if v, present := spec["freeAt"]; present {
		text, ok := v.(string)
		at, err := time.Parse(time.RFC3339, text)
		if !ok || err != nil {
			return bad("spec.freeAt", fmt.Sprintf("%v is not a time (RFC 3339)", v))
		}
		r.FreeAt = at
	}
	if v, present := spec["inTheWay"]; present {
		list, ok := v.([]any)
		if !ok || len(list) > MaxInTheWay {
			return bad("spec.inTheWay", fmt.Sprintf("must be a list of at most %d pod UIDs", MaxInTheWay))
		}
		for i, x := range list {
			uid, ok := x.(string)
			if !ok || uid == "" {
				return bad(fmt.Sprintf("spec.inTheWay[%d]", i), fmt.Sprintf("%v is not a pod UID", x))
			}
			r.InTheWay = append(r.InTheWay, types.UID(uid))
		}
	}
	if (r.NodeWide || !r.FreeAt.IsZero() || r.InTheWay != nil) && (!r.NodeWide || r.PodUID == "") {
		return bad("spec.nodeWide", "freeAt and inTheWay belong to a node-wide room, which is for a pod (podUID)")
	}
	requests, ok := spec["requests"].(map[string]any)
	if !ok || len(requests) == 0 {
		return bad("spec.requests", "must map resource names to quantities")
	}
	r.Requests = v1.ResourceList{}
	for name, v := range requests {
		s, ok := v.(string)
		if !ok {
			return bad("spec.requests."+name, fmt.Sprintf("%v is not a quantity string", v))
		}
		q, err := kres.ParseQuantity(s)
		if err != nil || q.Sign() < 0 {
			return bad("spec.requests."+name, fmt.Sprintf("%q is not a quantity ≥ 0", s))
		}
		if kubebridge.SchedulerAmount(v1.ResourceName(name), q) == resource.MaxAmount {
			return bad("spec.requests."+name, fmt.Sprintf("%s is more than any node has", s))
		}
		r.Requests[v1.ResourceName(name)] = q
	}
	return r, nil
}

// Object is the room as an object to create.
func (r Room) Object() *unstructured.Unstructured {
	requests := map[string]any{}
	for name, q := range r.Requests {
		requests[string(name)] = q.String()
	}
	spec := map[string]any{"nodeName": r.Node, "requests": requests, "expiresAt": r.ExpiresAt.UTC().Format(time.RFC3339)}
	if r.ControllerUID != "" {
		spec["controllerUID"] = string(r.ControllerUID)
	} else {
		spec["podUID"] = string(r.PodUID)
	}
	if r.NodeWide {
		spec["nodeWide"] = true
		if !r.FreeAt.IsZero() {
			spec["freeAt"] = r.FreeAt.UTC().Format(time.RFC3339)
		}
		way := make([]any, len(r.InTheWay))
		for i, uid := range r.InTheWay {
			way[i] = string(uid)
		}
		spec["inTheWay"] = way
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(RoomResource.GroupVersion().String())
	u.SetKind(RoomKind)
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	return u
}

// RoomFor is a room on node for pod's replacement (a pod of its
// controller), or, with pending, for the pending pod itself: its
// namespace, its effective requests, expiring at expires.
func RoomFor(pod *v1.Pod, node string, pending bool, expires time.Time) (Room, error) {
	r := Room{Namespace: pod.Namespace, Node: node, Requests: kubebridge.PodRequests(pod), ExpiresAt: expires}
	switch {
	case pending:
		r.Name, r.PodUID = "pending-"+pod.Name, pod.UID
	case controllerOf(pod) == nil:
		return Room{}, fmt.Errorf("pod %s/%s has no controller to make its replacement", pod.Namespace, pod.Name)
	default:
		r.Name, r.ControllerUID = "move-"+pod.Name, controllerOf(pod).UID
	}
	return r, nil
}

// Takes reports whether the pod may take the room (Room).
func (r Room) Takes(pod *v1.Pod) bool {
	if pod.Namespace != r.Namespace {
		return false
	}
	switch {
	case r.PodUID != "":
		if pod.UID != r.PodUID {
			return false
		}
	case controllerOf(pod) == nil || controllerOf(pod).UID != r.ControllerUID:
		return false
	}
	return sameAmounts(kubebridge.PodRequests(pod), r.Requests)
}

// Expired reports whether the room no longer holds at now.
func (r Room) Expired(now time.Time) bool { return !now.Before(r.ExpiresAt) }

// sameAmounts reports whether two resource lists ask for the same
// amounts, a name missing from one counting as 0.
func sameAmounts(a, b v1.ResourceList) bool {
	for name, q := range a {
		if p := b[name]; q.Cmp(p) != 0 {
			return false
		}
	}
	for name, q := range b {
		if _, ok := a[name]; !ok && !q.IsZero() {
			return false
		}
	}
	return true
}

// Backfills reports whether pod, about to start on the node-wide room's
// node (info's pods and amounts: allocatable, alloc; requested, used),
// cannot delay the room's pod: it is that pod; or it declares an end
// (ends, DeclaredEnd from now) no later than FreeAt; or, for every
// resource it asks for, it fits with the room's requests and the node's
// pods that are not in the way (used less what InTheWay's pods on the
// node request). Amounts are in the units kube-scheduler counts
// (millicores for cpu); a pod in the way that is no longer on the node
// frees nothing.
func (r Room) Backfills(pod *v1.Pod, end time.Time, declared bool, alloc, used map[v1.ResourceName]int64, onNode []*v1.Pod) bool {
	if pod.UID == r.PodUID && pod.Namespace == r.Namespace {
		return true
	}
	if declared && !r.FreeAt.IsZero() && !end.After(r.FreeAt) {
		return true
	}
	staying := maps.Clone(used)
	for _, p := range onNode {
		if !slices.Contains(r.InTheWay, p.UID) {
			continue
		}
		for name, q := range kubebridge.PodRequests(p) {
			staying[name] -= kubebridge.SchedulerAmount(name, q)
		}
	}
	for name, q := range kubebridge.PodRequests(pod) {
		need := kubebridge.SchedulerAmount(name, q)
		if need == 0 {
			continue
		}
		held := kubebridge.SchedulerAmount(name, r.Requests[name])
		if staying[name]+held+need > alloc[name] {
			return false
		}
	}
	return true
}
