package planning

import (
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/lifetime"
)

// How a host reads its pods into a lifetime model (scoring/lifetime): the
// keys it learns by, a running pod as a lifetime.Tracker follows it, and
// how long a pod that ended ran. Every host calls these.

// LifetimeKeys are what a lifetime model knows a pod by, most specific
// first: its controller ("workload namespace/Kind/name": the Job, the
// ReplicaSet), when it has one, then its shape ("shape" and its requests
// as kube-scheduler counts them, by name: the pods that ask for the same).
func LifetimeKeys(pod *v1.Pod) []string {
	var keys []string
	if c := controllerOf(pod); c != nil {
		keys = append(keys, "workload "+pod.Namespace+"/"+c.Kind+"/"+c.Name)
	}
	requests := kubebridge.PodRequests(pod)
	names := make([]string, 0, len(requests))
	for n := range requests {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("shape")
	for _, n := range names {
		q := requests[v1.ResourceName(n)]
		b.WriteString(" " + n + "=" + q.String())
	}
	return append(keys, b.String())
}

// Seconds is a time on a lifetime model's clock: seconds since the Unix
// epoch.
func Seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// RunningLifetime is a running pod as a lifetime.Tracker follows it: when
// it started, the end it declares (DeclaredEnd; 0 for none), its keys
// (LifetimeKeys) and the GPUs it asks for (resource.GPU, in whole
// devices, rounded down for a share). A pod bound to a node that has no
// start time yet (a scheduler assumed it there, or its kubelet has not
// started it) starts now, as DeclaredEnd counts it, and is NotStarted:
// nothing is guessed from its age until it has a start time. ok is false for a pod
// on no node; the error is DeclaredEnd's. The caller sets the Row.
func RunningLifetime(pod *v1.Pod, jobs JobLookup, now time.Time) (p lifetime.Pod, ok bool, err error) {
	if pod.Spec.NodeName == "" {
		return lifetime.Pod{}, false, nil
	}
	end, declared, err := DeclaredEnd(pod, jobs, now)
	if err != nil {
		return lifetime.Pod{}, false, err
	}
	started := now
	if pod.Status.StartTime != nil {
		started = pod.Status.StartTime.Time
	}
	p = lifetime.Pod{Started: Seconds(started), Keys: LifetimeKeys(pod), NotStarted: pod.Status.StartTime == nil}
	if declared {
		p.Declared = Seconds(end)
	}
	if q, found := kubebridge.PodRequests(pod)[v1.ResourceName(resource.GPU)]; found {
		p.Size = q.Value()
	}
	return p, true, nil
}

// Lived is how long a pod that ended ran, in seconds: from its start to
// the last of its containers' finishes when it finished (Succeeded or
// Failed), else to its deletion (its deletionTimestamp, or now for a pod
// deleted without one). ok is false for a pod that never started, and for
// one whose end is before its start (a clock that went back).
func Lived(pod *v1.Pod, now time.Time) (float64, bool) {
	if pod.Status.StartTime == nil {
		return 0, false
	}
	end := now
	if pod.DeletionTimestamp != nil {
		end = pod.DeletionTimestamp.Time
	}
	if kubebridge.Finished(pod) {
		var last time.Time
		for _, s := range pod.Status.ContainerStatuses {
			if t := s.State.Terminated; t != nil && t.FinishedAt.After(last) {
				last = t.FinishedAt.Time
			}
		}
		if !last.IsZero() {
			end = last
		}
	}
	lived := end.Sub(pod.Status.StartTime.Time)
	if lived < 0 {
		return 0, false
	}
	return lived.Seconds(), true
}

// ExpectedEnd is when a pod about to be placed is expected to end, on a
// lifetime model's clock, and from what: the end it declares
// (DeclaredEnd, counted from now), else what the model has learned of
// pods of its keys (LifetimeKeys) from their start; 0 and lifetime.Unknown
// when neither says. model may be nil (nothing learned). The error is
// DeclaredEnd's.
func ExpectedEnd(pod *v1.Pod, jobs JobLookup, model *lifetime.Model, now time.Time) (float64, lifetime.Source, error) {
	end, declared, err := DeclaredEnd(pod, jobs, now)
	if err != nil {
		return 0, lifetime.Unknown, err
	}
	if declared {
		return Seconds(end), lifetime.Declared, nil
	}
	if model == nil {
		return 0, lifetime.Unknown, nil
	}
	rest, src := model.Remaining(LifetimeKeys(pod), 0)
	if src == lifetime.Unknown {
		return 0, lifetime.Unknown, nil
	}
	return Seconds(now) + rest, src, nil
}
