package planning

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
)

var roomExpiry = time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)

// A room for a moved pod's replacement is taken by a pod of the same
// controller and shape, in its namespace, and by no other; a room for a
// pending pod by that pod alone. Written and read back, a room is the
// same; it expires at its time.
func TestRoom(t *testing.T) {
	web0 := owned(kubetest.Pod("web-0", "gpu-b", "cpu", "2", kubetest.GPU, "1"), "ReplicaSet")
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
	bigger := owned(kubetest.Pod("web-1", "", "cpu", "3", kubetest.GPU, "1"), "ReplicaSet")
	bigger.OwnerReferences[0].UID = "rs-uid"
	stranger := owned(kubetest.Pod("other", "", "cpu", "2", kubetest.GPU, "1"), "ReplicaSet")
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
	job := kubetest.Pod("job-2", "", "cpu", "8", kubetest.GPU, "4")
	held, err := RoomFor(job, "gpu-b", true, roomExpiry)
	if err != nil {
		t.Fatal(err)
	}
	twin := job.DeepCopy() // the same namespace and requests, another pod
	twin.Name, twin.UID = "job-2-twin", "twin-uid"
	if !held.Takes(job) || held.Takes(replacement) || held.Takes(twin) {
		t.Error("a pending pod's room: taken by another pod, or not by the pod")
	}
	if _, err := RoomFor(kubetest.Pod("bare", "gpu-b", "cpu", "1"), "gpu-a", false, roomExpiry); err == nil {
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
		{func(s, o map[string]any) { s["nodeWide"] = "yes" }, "spec.nodeWide: yes is not true or false"},
		{func(s, o map[string]any) { s["nodeWide"], s["freeAt"] = true, "soon" }, "spec.freeAt: soon is not a time"},
		{func(s, o map[string]any) { s["nodeWide"], s["inTheWay"] = true, []any{"a", 3} }, "spec.inTheWay[1]: 3 is not a pod UID"},
		{func(s, o map[string]any) { s["nodeWide"], s["inTheWay"] = true, "a" }, "spec.inTheWay: must be a list"},
		{func(s, o map[string]any) { s["nodeWide"], s["inTheWay"] = true, make([]any, MaxInTheWay+1) }, "spec.inTheWay: must be a list of at most 1024"},
		{func(s, o map[string]any) { s["freeAt"] = "2026-11-26T22:00:00Z" }, "spec.nodeWide: freeAt and inTheWay belong to a node-wide room"},
		{func(s, o map[string]any) { s["nodeWide"], s["controllerUID"] = true, "c"; delete(s, "podUID") }, "spec.nodeWide: freeAt and inTheWay belong to a node-wide room, which is for a pod"},
		// Past what any node has: kube-scheduler's int64 sums would wrap.
		{func(s, o map[string]any) { s["requests"] = map[string]any{"nvidia.com/gpu": "1e19"} }, "room ns/r: spec.requests.nvidia.com/gpu: 1e19 is more than any node has"},
		{func(s, o map[string]any) { s["requests"] = map[string]any{"nvidia.com/gpu": "5e18"} }, "room ns/r: spec.requests.nvidia.com/gpu: 5e18 is more than any node has"},
		// A room that would hold past its longest life from when it was made.
		{func(s, o map[string]any) {
			o["metadata"].(map[string]any)["creationTimestamp"] = "2026-11-26T21:00:00Z"
			s["expiresAt"] = "9999-01-01T00:00:00Z"
		}, "room ns/r: spec.expiresAt: 9999-01-01T00:00:00Z is more than 744h0m0s after the room was made (2026-11-26T21:00:00Z)"},
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
	f.Add(`{"apiVersion":"resfit.io/v1alpha1","kind":"Room","spec":{"nodeName":"n","podUID":"p","nodeWide":true,"freeAt":"2026-11-26T23:00:00Z","inTheWay":["a","b"],"requests":{"nvidia.com/gpu":"8"},"expiresAt":"2026-11-26T22:00:00Z"}}`)
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
			!again.ExpiresAt.Equal(r.ExpiresAt.Truncate(time.Second)) || !sameAmounts(again.Requests, r.Requests) ||
			again.NodeWide != r.NodeWide || !again.FreeAt.Equal(r.FreeAt.Truncate(time.Second)) || !slices.Equal(again.InTheWay, r.InTheWay) {
			t.Fatalf("read back %+v, wrote %+v", again, r)
		}
	})
}

// A node-wide room on gpu-a (8 GPUs, 96 cores) for an 8-GPU, 64-core pod,
// the node free at 13:00 once job-a (4 GPUs, 16 cores, in the way) has
// left; job-b (2 GPUs, 8 cores) stays. Another pod may start there when it
// ends by 13:00, or when it fits beside the room's requests and job-b:
// a 1-core pod that asks no GPU fits (64 + 8 + 1 ≤ 96 cores), a 1-GPU pod
// does not (8 + 2 + 1 > 8 GPUs). Written and read back, the room is the
// same.
func TestNodeWideRoomBackfills(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 28, h, 0, 0, 0, time.UTC) }
	target := kubetest.Pod("train", "", "cpu", "64", kubetest.GPU, "8")
	target.UID = "train-uid"
	jobA := kubetest.Pod("job-a", "gpu-a", "cpu", "16", kubetest.GPU, "4")
	jobA.UID = "a-uid"
	jobB := kubetest.Pod("job-b", "gpu-a", "cpu", "8", kubetest.GPU, "2")
	jobB.UID = "b-uid"
	room := Room{Namespace: target.Namespace, Name: "hold-train", Node: "gpu-a", PodUID: target.UID, Requests: kubebridge.PodRequests(target),
		ExpiresAt: at(12), NodeWide: true, FreeAt: at(13), InTheWay: []types.UID{jobA.UID}}
	again, err := ReadRoom(room.Object())
	if err != nil || !again.NodeWide || !again.FreeAt.Equal(at(13)) || !slices.Equal(again.InTheWay, room.InTheWay) || !again.Takes(target) {
		t.Fatalf("read back %+v, %v", again, err)
	}
	alloc := map[v1.ResourceName]int64{v1.ResourceCPU: 96000, v1.ResourceMemory: 1 << 40, kubetest.GPU: 8}
	used := map[v1.ResourceName]int64{v1.ResourceCPU: 24000, kubetest.GPU: 6}
	onNode := []*v1.Pod{jobA, jobB}
	small := kubetest.Pod("small", "", "cpu", "1")
	one := kubetest.Pod("one", "", "cpu", "1", kubetest.GPU, "1")
	for _, c := range []struct {
		name     string
		p        *v1.Pod
		end      time.Time
		declared bool
		want     bool
	}{
		{"the room's pod", target, time.Time{}, false, true},
		{"a 1-GPU pod ending by 13:00", one, at(13), true, true},
		{"a 1-GPU pod ending after 13:00", one, at(14), true, false},
		{"a 1-GPU pod that declares nothing", one, time.Time{}, false, false},
		{"a CPU pod beside the target and job-b", small, time.Time{}, false, true},
		{"a CPU pod filling the node exactly beside them (64 + 8 + 24 = 96)", kubetest.Pod("fill", "", "cpu", "24"), time.Time{}, false, true},
		{"a CPU pod a core past it", kubetest.Pod("over", "", "cpu", "25"), time.Time{}, false, false},
	} {
		if got := room.Backfills(c.p, c.end, c.declared, alloc, used, onNode); got != c.want {
			t.Errorf("%s: backfills %v, want %v", c.name, got, c.want)
		}
	}
	// With job-b in the way too, a 1-GPU pod still does not fit beside an
	// 8-GPU target; with the target asking 6 GPUs, it does.
	room.InTheWay = append(room.InTheWay, jobB.UID)
	if room.Backfills(one, time.Time{}, false, alloc, used, onNode) {
		t.Error("a 1-GPU pod beside an 8-GPU target on 8 GPUs: backfills")
	}
	room.Requests = kubebridge.PodRequests(kubetest.Pod("six", "", "cpu", "64", kubetest.GPU, "6"))
	if !room.Backfills(one, time.Time{}, false, alloc, used, onNode) {
		t.Error("a 1-GPU pod beside a 6-GPU target on 8 GPUs, both pods in the way: does not backfill")
	}
	// A room whose freeAt is unknown admits no pod by its end.
	room.FreeAt = time.Time{}
	room.Requests = kubebridge.PodRequests(target)
	if room.Backfills(one, at(0), true, alloc, used, onNode) {
		t.Error("a room with no freeAt admits a pod by its end")
	}
}

// A pod declares its end by its activeDeadlineSeconds, its Job's, or
// resfit.io/runs-for, from when it (or its Job) started, or from now when
// it has not; the earliest counts; a bad runs-for is an error naming the
// pod and the annotation.
func TestDeclaredEnd(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-time.Hour))
	jobStarted := metav1.NewTime(now.Add(-2 * time.Hour))
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train", UID: "job-uid"},
		Spec: batchv1.JobSpec{ActiveDeadlineSeconds: ptr.To[int64](3 * 3600)}, Status: batchv1.JobStatus{StartTime: &jobStarted}}
	jobs := func(namespace, name string) (*batchv1.Job, bool) {
		if namespace == job.Namespace && name == job.Name {
			return job, true
		}
		return nil, false
	}
	mk := func(node string, deadline int64, runsFor string, ofJob bool) *v1.Pod {
		p := kubetest.Pod("p", node, "cpu", "1")
		p.Namespace = "default"
		if node != "" {
			p.Status.StartTime = &started
		}
		if deadline > 0 {
			p.Spec.ActiveDeadlineSeconds = &deadline
		}
		if runsFor != "" {
			p.Annotations = map[string]string{RunsForAnnotation: runsFor}
		}
		if ofJob {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "train", UID: "job-uid", Controller: ptr.To(true)}}
		}
		return p
	}
	for _, c := range []struct {
		name string
		p    *v1.Pod
		want time.Time // zero: declares none
	}{
		{"nothing", mk("gpu-a", 0, "", false), time.Time{}},
		{"runs-for, running", mk("gpu-a", 0, "90m", false), now.Add(30 * time.Minute)},
		{"runs-for, pending", mk("", 0, "90m", false), now.Add(90 * time.Minute)},
		{"activeDeadlineSeconds", mk("gpu-a", 7200, "", false), now.Add(time.Hour)},
		{"the earlier of the two", mk("gpu-a", 7200, "30m", false), now.Add(-30 * time.Minute)},
		{"its Job's deadline", mk("gpu-a", 0, "", true), now.Add(time.Hour)},
		{"its own before its Job's", mk("gpu-a", 0, "75m", true), now.Add(15 * time.Minute)},
		// A start time on a pod bound to no node (a status left over) is
		// not a start: the pod counts from now.
		{"a start time but no node", func() *v1.Pod { p := mk("", 0, "90m", false); p.Status.StartTime = &started; return p }(), now.Add(90 * time.Minute)},
	} {
		end, ok, err := DeclaredEnd(c.p, jobs, now)
		if err != nil || ok != !c.want.IsZero() || !end.Equal(c.want) {
			t.Errorf("%s: %v %v %v, want %v", c.name, end, ok, err, c.want)
		}
	}
	if _, ok, _ := DeclaredEnd(mk("gpu-a", 0, "", true), nil, now); ok {
		t.Error("a Job's pod with no Job lister declares an end")
	}
	other := mk("gpu-a", 0, "", true)
	other.OwnerReferences[0].UID = "another-job"
	if _, ok, _ := DeclaredEnd(other, jobs, now); ok {
		t.Error("a pod of another Job of the same name takes its deadline")
	}
	for _, bad := range []string{"soon", "-5m", "0s", "87601h"} {
		if _, _, err := DeclaredEnd(mk("gpu-a", 0, bad, false), nil, now); err == nil || !strings.Contains(err.Error(), "pod default/p: annotation resfit.io/runs-for: "+fmt.Sprintf("%q", bad)) {
			t.Errorf("runs-for %q: %v", bad, err)
		}
	}
}
