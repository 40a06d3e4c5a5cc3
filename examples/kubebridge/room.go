package kubebridge

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
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
type Room struct {
	Namespace, Name string
	UID             types.UID
	Node            string
	ControllerUID   types.UID
	PodUID          types.UID
	Requests        v1.ResourceList
	ExpiresAt       time.Time
}

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
	r := Room{Namespace: pod.Namespace, Node: node, Requests: PodRequests(pod), ExpiresAt: expires}
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

// PodRequests are a pod's effective requests as kube-scheduler counts
// them (its containers, init containers and sidecars, overhead), the
// shape a room is matched by.
func PodRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
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
	return sameAmounts(PodRequests(pod), r.Requests)
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
