package planning

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring/starvation"
)

// RunsForAnnotation is the annotation a pod declares how long it runs by,
// as a Go duration ("90m", "2h30m", at most MaxRunsFor): an estimate that
// nothing enforces. Starvation control (scoring/starvation) lets other
// pods use a node held for a starving pod only where their declared end
// cannot delay it, and plans the hold by the running pods' ends.
const RunsForAnnotation = "resfit.io/runs-for"

// MaxRunsFor bounds a declared run time: ten years.
const MaxRunsFor = 10 * 365 * 24 * time.Hour

// JobLookup finds a Job by namespace and name; a host that lists no Jobs
// passes nil.
type JobLookup func(namespace, name string) (*batchv1.Job, bool)

// ListedJobs is the lookup of a host's Job lister (an informer's); nil for
// none.
func ListedJobs(jobs batchlisters.JobLister) JobLookup {
	if jobs == nil {
		return nil
	}
	return func(namespace, name string) (*batchv1.Job, bool) {
		job, err := jobs.Jobs(namespace).Get(name)
		return job, err == nil
	}
}

// DeclaredEnd is when a pod says it will have ended: the earliest of its
// spec.activeDeadlineSeconds after it started (the kubelet ends it then),
// its Job's spec.activeDeadlineSeconds after the Job started (the Job
// controller ends it then; jobs may be nil), and its resfit.io/runs-for
// after it started (an estimate). A pod that has not started counts from
// now. ok is false when it declares none. A runs-for that is not a
// duration in (0, MaxRunsFor] is an error naming the pod and the
// annotation.
func DeclaredEnd(pod *v1.Pod, jobs JobLookup, now time.Time) (end time.Time, ok bool, err error) {
	start := now
	if pod.Status.StartTime != nil && pod.Spec.NodeName != "" {
		start = pod.Status.StartTime.Time
	}
	earliest := func(t time.Time) {
		if !ok || t.Before(end) {
			end, ok = t, true
		}
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil && *d > 0 {
		earliest(start.Add(time.Duration(min(*d, int64(MaxRunsFor/time.Second))) * time.Second))
	}
	if text, present := pod.Annotations[RunsForAnnotation]; present {
		d, perr := time.ParseDuration(text)
		if perr != nil || d <= 0 || d > MaxRunsFor {
			return time.Time{}, false, fmt.Errorf("pod %s/%s: annotation %s: %q is not a duration in (0, %v]", pod.Namespace, pod.Name, RunsForAnnotation, text, MaxRunsFor)
		}
		earliest(start.Add(d))
	}
	if c := controllerOf(pod); c != nil && c.Kind == "Job" && jobs != nil {
		if job, found := jobs(pod.Namespace, c.Name); found && job.UID == c.UID {
			if d := job.Spec.ActiveDeadlineSeconds; d != nil && *d > 0 {
				from := now
				if job.Status.StartTime != nil {
					from = job.Status.StartTime.Time
				}
				earliest(from.Add(time.Duration(min(*d, int64(MaxRunsFor/time.Second))) * time.Second))
			}
		}
	}
	return end, ok, nil
}

// StarvationNodes are the planning cluster's nodes as starvation control
// sees them (scoring/starvation): each node's amounts and free GPUs, and
// its running pods with the GPUs they hold and the end each declares
// (ends, by the planning's pod index; zero for none).
func (p *Planning) StarvationNodes(ends func(i int) time.Time) []starvation.Node {
	c := p.cluster
	nodes := make([]starvation.Node, c.Table.Len())
	for row := range nodes {
		nodes[row] = starvation.Node{Name: c.Table.Name(row), Allocatable: c.Table.Allocatable(row), Used: c.Table.Used(row)}
		if c.Devices != nil {
			nodes[row].DeviceFree = c.Devices.Free(row)
		}
	}
	for i, pod := range c.Pods {
		sp := starvation.Pod{Name: kubebridge.PodKey(p.pods[i]), Request: pod.Task.Requests, Devices: pod.Task.Devices, End: ends(i)}
		for _, j := range pod.Holds {
			sp.Holds = append(sp.Holds, starvation.DeviceHold{Device: j, Amount: pod.Task.Devices.Each})
		}
		nodes[pod.Row].Pods = append(nodes[pod.Row].Pods, sp)
	}
	return nodes
}

// StarvationWaiting is a pending pod as starvation control sees it: its
// task's requests and devices on the scene, waiting since it was created.
func (sc *Scene) StarvationWaiting(pod *v1.Pod) (starvation.Waiting, error) {
	pt, err := sc.Task(pod)
	if err != nil {
		return starvation.Waiting{}, err
	}
	return starvation.Waiting{Pod: starvation.Pod{Name: kubebridge.PodKey(pod), Request: resource.Vector(pt.Task.Requests), Devices: pt.Task.Devices},
		Since: pod.CreationTimestamp.Time}, nil
}
