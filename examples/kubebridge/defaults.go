package kubebridge

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// DefaultRequests is the pod as the API server stores it on create, as far
// as what it asks for goes: kube v1.37's defaulting (SetDefaults_Pod) and
// the pod strategy's (PrepareForCreate's DefaultPodLevelResources, with
// PodLevelResources and its defaulting fix on, their defaults). A reader
// of manifests written by hand applies it before scoring, as every pod a
// cluster lists has had it applied:
//
//   - a container's or init container's request for a resource it limits
//     but does not request is its limit (so a GPU given in limits alone
//     is requested);
//   - with pod-level resources (spec.resources with a request or a limit):
//     a cpu or memory request not set there is the containers' aggregated
//     request; any other cpu, memory or hugepage request not set there is
//     its pod-level limit, and a hugepage request with no limit there
//     either is the containers' aggregated limit.
//
// What defaulting does not touch is read as written. spec.overhead is set
// by the RuntimeClass admission controller, not by defaulting, so a
// manifest's is its own. The pod is returned as given where nothing
// changes, else a copy: the argument is never changed.
func DefaultRequests(pod *v1.Pod) *v1.Pod {
	if !needsDefaults(pod) {
		return pod
	}
	pod = pod.DeepCopy()
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			requestLimits(&cs[i].Resources)
		}
	}
	if r := pod.Spec.Resources; r != nil && len(r.Requests)+len(r.Limits) > 0 {
		defaultPodLevel(pod)
	}
	return pod
}

// needsDefaults reports whether DefaultRequests could change the pod: a
// container limits what it does not request, or pod-level resources are
// set (their defaulting reads the containers as a whole).
func needsDefaults(pod *v1.Pod) bool {
	if r := pod.Spec.Resources; r != nil && len(r.Requests)+len(r.Limits) > 0 {
		return true
	}
	for _, cs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			for name := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					return true
				}
			}
		}
	}
	return false
}

// requestLimits sets each request not given to its limit
// (SetDefaults_Pod's rule for containers and init containers).
func requestLimits(r *v1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = v1.ResourceList{}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// defaultPodLevel defaults the pod-level requests from the (defaulted)
// containers and the pod-level limits, as DefaultPodLevelResources does:
// it defaults pod-level hugepage limits from the containers' first, and
// pod-level requests from those limits; here the containers' hugepage
// limits are read straight into the requests, and no limit is changed.
func defaultPodLevel(pod *v1.Pod) {
	r := pod.Spec.Resources
	requests := r.Requests
	if requests == nil {
		requests = v1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if _, ok := requests[name]; !ok && (name == v1.ResourceCPU || name == v1.ResourceMemory) {
			requests[name] = q
		}
	}
	for name, q := range r.Limits {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			requests[name] = q.DeepCopy()
		}
	}
	for name, q := range resourcehelper.AggregateContainerLimits(pod, resourcehelper.PodResourcesOptions{}) {
		if _, ok := requests[name]; !ok && strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) {
			requests[name] = q
		}
	}
	if len(requests) > 0 {
		r.Requests = requests
	}
}
