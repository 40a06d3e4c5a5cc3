package kubebridge

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

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

// amounts reads a resource list at a field path in canonical units: the
// list's field, with an index when the list is a container's (index ≥ 0,
// field holding the one %d). The first amount in name order that is not
// exact (Amount) is an error naming the path: the same error whatever
// order the map gives.
func amounts(field string, index int, l v1.ResourceList) (map[string]int64, error) {
	if len(l) == 0 {
		return nil, nil
	}
	m := make(map[string]int64, len(l))
	for n, q := range l {
		v, err := Amount(string(n), q)
		if err == nil && index != -1 && extendedResource(string(n)) && !wholeNumber(q) {
			err = errors.New("an extended resource is a whole number") // fieldAmount says where
		}
		if err != nil {
			return nil, firstAmountError(fieldPath(field, index), l, err)
		}
		m[string(n)] = v
	}
	return m, nil
}

func fieldPath(field string, index int) string {
	if index < 0 {
		return field
	}
	return fmt.Sprintf(field, index)
}

// firstAmountError is the error of the first quantity, in name order, that
// Amount refuses in a list where one was refused (err, if none is: Amount
// decides alike each time).
func firstAmountError(path string, l v1.ResourceList, err error) error {
	for _, n := range slices.Sorted(maps.Keys(l)) {
		if _, err := fieldAmount(path, n, l[n]); err != nil {
			return err
		}
	}
	return err
}

// PodOf reads what a pod's effective request is computed from (see
// resource.PodRequests): each container's requests, the init containers in
// order with restartPolicy Always marking a sidecar, pod-level requests and
// overhead. A quantity that is negative or above resource.MaxAmount in its
// unit is an error naming the pod and the field.
func PodOf(pod *v1.Pod) (resource.Pod, error) {
	var p resource.Pod
	var err error
	fail := func(err error) (resource.Pod, error) {
		return resource.Pod{}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if p.Overhead, err = amounts("spec.overhead", -1, pod.Spec.Overhead); err != nil {
		return fail(err)
	}
	if len(pod.Spec.Containers) > 0 {
		p.Containers = make([]resource.Container, len(pod.Spec.Containers))
	}
	for i, c := range pod.Spec.Containers {
		if p.Containers[i].Requests, err = amounts("spec.containers[%d].resources.requests", i, c.Resources.Requests); err != nil {
			return fail(err)
		}
	}
	if len(pod.Spec.InitContainers) > 0 {
		p.InitContainers = make([]resource.Container, len(pod.Spec.InitContainers))
	}
	for i, c := range pod.Spec.InitContainers {
		if p.InitContainers[i].Requests, err = amounts("spec.initContainers[%d].resources.requests", i, c.Resources.Requests); err != nil {
			return fail(err)
		}
		p.InitContainers[i].Sidecar = c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
	}
	if pod.Spec.Resources != nil {
		if p.PodLevel, err = amounts("spec.resources.requests", -1, pod.Spec.Resources.Requests); err != nil {
			return fail(err)
		}
	}
	return p, nil
}

// ResourceNames lists, sorted, every resource a pod's requests name:
// containers, init containers, pod-level requests and overhead
// (RequestLists).
func ResourceNames(pod *v1.Pod) []string {
	seen := map[string]bool{}
	for l := range RequestLists(pod) {
		for n := range l {
			seen[string(n)] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// RequestLists yields each resource list a pod's requests are read from:
// every container's and init container's requests, the pod-level requests
// and the overhead.
func RequestLists(pod *v1.Pod) iter.Seq[v1.ResourceList] {
	return func(yield func(v1.ResourceList) bool) {
		for _, c := range pod.Spec.Containers {
			if !yield(c.Resources.Requests) {
				return
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if !yield(c.Resources.Requests) {
				return
			}
		}
		if pod.Spec.Resources != nil && !yield(pod.Spec.Resources.Requests) {
			return
		}
		yield(pod.Spec.Overhead)
	}
}

// NewTask turns a pod into a task for a pipeline over the schema, by the
// rules every host shares (scoring.NewTask): its name
// ("namespace/name"), its pod group (PodGroup) as its job, its requests
// by every rule, Volcano's
// scoring annotations, and with opts what it asks of individual devices
// and the device models it accepts. An error names the pod.
func NewTask(schema *resource.Schema, pod *v1.Pod, opts scoring.TaskOptions) (*scoring.Task, error) {
	p, err := PodOf(pod)
	if err != nil {
		return nil, err
	}
	t, err := scoring.NewTask(schema, pod.Namespace+"/"+pod.Name, PodGroup(pod), p, pod.Annotations, opts)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return t, nil
}

// PodGroup is the pod group a pod belongs to, as "namespace/name", or ""
// for none: Kubernetes' own (spec.schedulingGroup.podGroupName, a
// scheduling.k8s.io PodGroup, as kube-scheduler's GangScheduling reads
// it), else Volcano's (the scheduling.k8s.io/group-name annotation), else
// the scheduler-plugins coscheduling label scheduling.x-k8s.io/pod-group.
// Planners take a group's pending pods as a gang: all of them or none.
func PodGroup(pod *v1.Pod) string {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return pod.Namespace + "/" + *g.PodGroupName
	}
	if g := pod.Annotations["scheduling.k8s.io/group-name"]; g != "" {
		return pod.Namespace + "/" + g
	}
	if g := pod.Labels["scheduling.x-k8s.io/pod-group"]; g != "" {
		return pod.Namespace + "/" + g
	}
	return ""
}

// ByNamespaceAndName orders pods by namespace, then name (slices.SortFunc).
func ByNamespaceAndName(a, b *v1.Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// PodKey identifies a pod across events: its UID, else namespace/name.
func PodKey(pod *v1.Pod) string {
	if pod.UID != "" {
		return string(pod.UID)
	}
	return pod.Namespace + "/" + pod.Name
}

// PodRequests are a pod's effective requests as kube-scheduler counts
// them (its containers, init containers and sidecars, overhead), the
// shape a room is matched by.
func PodRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// PodName is a pod's namespace/name.
func PodName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }
