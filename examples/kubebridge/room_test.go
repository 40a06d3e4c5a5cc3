package kubebridge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var roomExpiry = time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)

// A room for a moved pod's replacement is taken by a pod of the same
// controller and shape, in its namespace, and by no other; a room for a
// pending pod by that pod alone. Written and read back, a room is the
// same; it expires at its time.
func TestRoom(t *testing.T) {
	web0 := owned(pod("web-0", "gpu-b", "cpu", "2", gpu, "1"), "ReplicaSet")
	web0.OwnerReferences[0].UID = "rs-uid"
	room, err := RoomFor(web0, "gpu-a", false, roomExpiry)
	if err != nil {
		t.Fatal(err)
	}
	if room.Name != "move-web-0" || room.ControllerUID != "rs-uid" || room.Node != "gpu-a" {
		t.Fatalf("room %+v", room)
	}
	again, err := ReadRoom(room.Object())
	if err != nil || again.Node != room.Node || again.ControllerUID != room.ControllerUID || !again.ExpiresAt.Equal(roomExpiry) || !sameAmounts(again.Requests, room.Requests) {
		t.Fatalf("read back %+v, %v; wrote %+v", again, err, room)
	}
	replacement := web0.DeepCopy()
	replacement.Name, replacement.UID, replacement.Spec.NodeName = "web-0x", "new", ""
	bigger := owned(pod("web-1", "", "cpu", "3", gpu, "1"), "ReplicaSet")
	bigger.OwnerReferences[0].UID = "rs-uid"
	stranger := owned(pod("other", "", "cpu", "2", gpu, "1"), "ReplicaSet")
	elsewhere := replacement.DeepCopy()
	elsewhere.Namespace = "other"
	for _, c := range []struct {
		pod  *v1.Pod
		want bool
	}{{replacement, true}, {bigger, false}, {stranger, false}, {elsewhere, false}} {
		if got := room.Takes(c.pod); got != c.want {
			t.Errorf("room for web-0's replacement taken by %s/%s: %v, want %v", c.pod.Namespace, c.pod.Name, got, c.want)
		}
	}
	job := pod("job-2", "", "cpu", "8", gpu, "4")
	held, err := RoomFor(job, "gpu-b", true, roomExpiry)
	if err != nil {
		t.Fatal(err)
	}
	if !held.Takes(job) || held.Takes(replacement) {
		t.Error("a pending pod's room: taken by another pod, or not by the pod")
	}
	if _, err := RoomFor(pod("bare", "gpu-b", "cpu", "1"), "gpu-a", false, roomExpiry); err == nil {
		t.Error("a room for the replacement of a pod without a controller: no error")
	}
	if room.Expired(roomExpiry.Add(-time.Second)) || !room.Expired(roomExpiry) {
		t.Error("expiry")
	}
}

// A room object from the cluster is untrusted: each bad field is an error
// naming the room and the field.
func TestReadRoomErrors(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{"apiVersion": "resfit.io/v1alpha1", "kind": "Room", "metadata": map[string]any{"namespace": "ns", "name": "r"},
			"spec": map[string]any{"nodeName": "gpu-a", "podUID": "u", "requests": map[string]any{"cpu": "2"}, "expiresAt": "2026-11-26T22:00:00Z"}}
	}
	if _, err := ReadRoom(&unstructured.Unstructured{Object: good()}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func(spec map[string]any, obj map[string]any)
		want   string
	}{
		{func(s, o map[string]any) { o["kind"] = "Pod" }, "room ns/r: kind:"},
		{func(s, o map[string]any) { delete(o, "spec") }, "room ns/r: spec: missing"},
		{func(s, o map[string]any) { delete(s, "nodeName") }, "spec.nodeName"},
		{func(s, o map[string]any) { s["nodeName"] = 3 }, "spec.nodeName"},
		{func(s, o map[string]any) { s["controllerUID"] = "c" }, "spec.controllerUID: exactly one"},
		{func(s, o map[string]any) { delete(s, "podUID") }, "spec.controllerUID: exactly one"},
		{func(s, o map[string]any) { s["expiresAt"] = "tomorrow" }, "spec.expiresAt"},
		{func(s, o map[string]any) { s["requests"] = map[string]any{} }, "spec.requests: must map"},
		{func(s, o map[string]any) { s["requests"] = map[string]any{"cpu": "-1"} }, `spec.requests.cpu: "-1" is not a quantity ≥ 0`},
		{func(s, o map[string]any) { s["requests"] = map[string]any{"cpu": 2} }, "spec.requests.cpu: 2 is not a quantity string"},
	} {
		obj := good()
		c.change(obj["spec"].(map[string]any), obj)
		if _, err := ReadRoom(&unstructured.Unstructured{Object: obj}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// ReadRoom never panics; a room it reads, written and read again, is the
// same room.
func FuzzReadRoom(f *testing.F) {
	f.Add(`{"apiVersion":"resfit.io/v1alpha1","kind":"Room","metadata":{"namespace":"ns","name":"r"},"spec":{"nodeName":"n","controllerUID":"c","requests":{"cpu":"2","nvidia.com/gpu":"1"},"expiresAt":"2026-11-26T22:00:00Z"}}`)
	f.Add(`{"apiVersion":"resfit.io/v1alpha1","kind":"Room","spec":{"nodeName":"n","podUID":"p","requests":{"memory":"1Gi"},"expiresAt":"2026-11-26T22:00:00+01:00"}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var obj map[string]any
		if json.Unmarshal([]byte(doc), &obj) != nil {
			return
		}
		r, err := ReadRoom(&unstructured.Unstructured{Object: obj})
		if err != nil {
			return
		}
		again, err := ReadRoom(r.Object())
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if again.Node != r.Node || again.ControllerUID != r.ControllerUID || again.PodUID != r.PodUID ||
			!again.ExpiresAt.Equal(r.ExpiresAt.Truncate(time.Second)) || !sameAmounts(again.Requests, r.Requests) {
			t.Fatalf("read back %+v, wrote %+v", again, r)
		}
	})
}
