package kubetest

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Running makes p a pod that has run since start (phase Running, its start
// time start), and returns it.
func Running(p *v1.Pod, start time.Time) *v1.Pod {
	at := metav1.NewTime(start)
	p.Status.StartTime, p.Status.Phase = &at, v1.PodRunning
	return p
}

// Succeeded makes p a pod that started at start and finished ran later
// (phase Succeeded, its container terminated then), and returns it.
func Succeeded(p *v1.Pod, start time.Time, ran time.Duration) *v1.Pod {
	Running(p, start)
	p.Status.Phase = v1.PodSucceeded
	p.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		FinishedAt: metav1.NewTime(start.Add(ran))}}}}
	return p
}

// OfJob makes p a pod of the Job of that name (its controller, UID the
// name), and returns it.
func OfJob(p *v1.Pod, job string) *v1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job, UID: types.UID("uid-" + job), Controller: ptr.To(true)}}
	return p
}
