package kubebridge

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Counts reports whether a pod uses its node's resources, as
// kube-scheduler's cache counts it: it is bound (spec.nodeName is set) and
// has not finished (phase neither Succeeded nor Failed).
func Counts(pod *v1.Pod) bool {
	return pod.Spec.NodeName != "" && !Finished(pod)
}

// Finished reports whether a pod's phase is Succeeded or Failed.
func Finished(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

func amounts(l v1.ResourceList) map[string]int64 {
	if len(l) == 0 {
		return nil
	}
	m := make(map[string]int64, len(l))
	for n, q := range l {
		m[string(n)] = Amount(string(n), q)
	}
	return m
}

// PodOf reads what a pod's effective request is computed from (see
// resource.PodRequests): each container's requests, the init containers in
// order with restartPolicy Always marking a sidecar, pod-level requests and
// overhead.
func PodOf(pod *v1.Pod) resource.Pod {
	p := resource.Pod{Overhead: amounts(pod.Spec.Overhead)}
	for _, c := range pod.Spec.Containers {
		p.Containers = append(p.Containers, resource.Container{Requests: amounts(c.Resources.Requests)})
	}
	for _, c := range pod.Spec.InitContainers {
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		p.InitContainers = append(p.InitContainers, resource.Container{Requests: amounts(c.Resources.Requests), Sidecar: sidecar})
	}
	if pod.Spec.Resources != nil {
		p.PodLevel = amounts(pod.Spec.Resources.Requests)
	}
	return p
}

// ResourceNames lists, sorted, every resource a pod's requests name:
// containers, init containers, pod-level requests and overhead.
func ResourceNames(pod *v1.Pod) []string {
	seen := map[string]bool{}
	add := func(l v1.ResourceList) {
		for n := range l {
			seen[string(n)] = true
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c.Resources.Requests)
	}
	for _, c := range pod.Spec.InitContainers {
		add(c.Resources.Requests)
	}
	if pod.Spec.Resources != nil {
		add(pod.Spec.Resources.Requests)
	}
	add(pod.Spec.Overhead)
	return slices.Sorted(maps.Keys(seen))
}

// NewTask turns a pod into a task for a pipeline over the schema, by the
// rules every host shares (scoring.NewTask): its name
// ("namespace/name"), its pod group (Volcano's
// scheduling.k8s.io/group-name annotation, or the scheduler-plugins label
// scheduling.x-k8s.io/pod-group), its requests by every rule, Volcano's
// scoring annotations, and with opts what it asks of individual devices
// and the device models it accepts. An error names the pod.
func NewTask(schema *resource.Schema, pod *v1.Pod, opts scoring.TaskOptions) (*scoring.Task, error) {
	t, err := scoring.NewTask(schema, pod.Namespace+"/"+pod.Name, podGroup(pod), PodOf(pod), pod.Annotations, opts)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return t, nil
}

func podGroup(pod *v1.Pod) string {
	if g := pod.Annotations["scheduling.k8s.io/group-name"]; g != "" {
		return pod.Namespace + "/" + g
	}
	if g := pod.Labels["scheduling.x-k8s.io/pod-group"]; g != "" {
		return pod.Namespace + "/" + g
	}
	return ""
}

// podKey identifies a pod across events.
func podKey(pod *v1.Pod) string {
	if pod.UID != "" {
		return string(pod.UID)
	}
	return pod.Namespace + "/" + pod.Name
}
