package planning

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/scoring/lifetime"
)

// TestPodLifetimes: a Job's GPU pod is known by its Job, then its shape;
// running, it follows its start and the deadline it declares; ended, it
// lived until its last container finished, or its deletion; a pod bound
// but not started yet starts now; a pod on no node is none of these.
func TestPodLifetimes(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-time.Hour))
	pod := kubetest.Pod("train-0", "gpu-a", "cpu", "4", "nvidia.com/gpu", "2")
	pod.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "train", UID: "job-uid", Controller: ptr.To(true)}}
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](3 * 3600)
	pod.Status.StartTime = &started

	keys := LifetimeKeys(pod)
	if want := []string{"workload default/Job/train", "shape cpu=4 nvidia.com/gpu=2"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	got, ok, err := RunningLifetime(pod, nil, now)
	want := lifetime.Pod{Started: Seconds(started.Time), Declared: Seconds(started.Add(3 * time.Hour)), Keys: keys, Size: 2}
	if err != nil || !ok || got.Started != want.Started || got.Declared != want.Declared || got.Size != 2 || !slices.Equal(got.Keys, keys) {
		t.Errorf("running: %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if lived, ok := Lived(pod, now); !ok || lived != 3600 {
		t.Errorf("deleted now: lived %v, %v; want 3600", lived, ok)
	}
	deleted := metav1.NewTime(now.Add(-30 * time.Minute))
	pod.DeletionTimestamp = &deleted
	if lived, ok := Lived(pod, now); !ok || lived != 1800 {
		t.Errorf("deleted half an hour ago: lived %v, %v; want 1800", lived, ok)
	}
	pod.Status.Phase = v1.PodSucceeded
	for _, m := range []int{10, 20} {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, v1.ContainerStatus{
			State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(started.Add(time.Duration(m) * time.Minute))}}})
	}
	if lived, ok := Lived(pod, now); !ok || lived != 1200 {
		t.Errorf("finished: lived %v, %v; want 1200 (its last container)", lived, ok)
	}

	waiting := kubetest.Pod("waiting", "", "cpu", "1")
	if _, ok, err := RunningLifetime(waiting, nil, now); ok || err != nil {
		t.Errorf("a pod on no node runs: %v, %v", ok, err)
	}
	bound := kubetest.Pod("bound", "gpu-a", "cpu", "1")
	bound.Annotations = map[string]string{RunsForAnnotation: "2h"}
	if got, ok, err := RunningLifetime(bound, nil, now); !ok || err != nil || got.Started != Seconds(now) || got.Declared != Seconds(now.Add(2*time.Hour)) {
		t.Errorf("a pod bound, not started: %+v, %v, %v; want it started now, ending in 2h", got, ok, err)
	}
	if _, ok := Lived(waiting, now); ok {
		t.Error("a pod that never started lived")
	}
	if keys := LifetimeKeys(waiting); !slices.Equal(keys, []string{"shape cpu=1"}) {
		t.Errorf("a pod without a controller: keys %q", keys)
	}
	early := metav1.NewTime(started.Add(-time.Minute))
	pod.DeletionTimestamp, pod.Status.Phase = &early, v1.PodRunning
	if _, ok := Lived(pod, now); ok {
		t.Error("a pod deleted before it started lived")
	}
	bad := pod.DeepCopy()
	bad.Annotations = map[string]string{RunsForAnnotation: "soon"}
	if _, _, err := RunningLifetime(bad, nil, now); err == nil {
		t.Error("an unusable resfit.io/runs-for gave no error")
	}
}

// TestExpectedEnd: a pod's declared end first, counted from now; else
// what the model learned of its keys; else nothing.
func TestExpectedEnd(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	pod := kubetest.Pod("train-0", "", "cpu", "4", "nvidia.com/gpu", "2")
	model, err := lifetime.NewModel(lifetime.ModelOptions{MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	if at, src, err := ExpectedEnd(pod, nil, model, now); at != 0 || src != lifetime.Unknown || err != nil {
		t.Errorf("nothing learned: %v %v %v, want 0, unknown", at, src, err)
	}
	model.Observe(LifetimeKeys(pod), 600)
	if at, src, err := ExpectedEnd(pod, nil, model, now); at != Seconds(now)+600 || src != lifetime.Learned || err != nil {
		t.Errorf("learned 600 s: %v %v %v", at, src, err)
	}
	if at, src, err := ExpectedEnd(pod, nil, nil, now); at != 0 || src != lifetime.Unknown || err != nil {
		t.Errorf("no model: %v %v %v, want 0, unknown", at, src, err)
	}
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	if at, src, err := ExpectedEnd(pod, nil, model, now); at != Seconds(now)+60 || src != lifetime.Declared || err != nil {
		t.Errorf("declared 60 s: %v %v %v", at, src, err)
	}
	pod.Annotations = map[string]string{RunsForAnnotation: "-1h"}
	if _, _, err := ExpectedEnd(pod, nil, model, now); err == nil || !strings.Contains(err.Error(), "train-0") {
		t.Errorf("a bad runs-for: %v, want an error naming the pod", err)
	}
}
