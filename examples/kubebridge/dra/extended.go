package dra

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// extendedClaimName names, beside a pod's own claims, the claim
// kube-scheduler makes for the pod's extended resources that DRA backs
// (KEP-5004): a ':' no claim name holds keeps it apart from them.
const extendedClaimName = ":extended-resources"

// extendedClaim is the claim kube-scheduler's DynamicResources plugin
// allocates for a pod's requests of the extended resources of device
// classes whose take the node's amounts do not say (not Class.Simple:
// a share of a shareable device, a device over shared counters), as its
// createRequestsAndMappings writes it: one exact-count request a
// container, named container-<index among init containers and
// containers>-request-<index of the resource among the container's
// sorted requests>, init containers that run to completion reusing what
// the containers after them ask for and asking only for the largest
// rest, requests sorted by name. nil when the pod asks for none. The
// requests of a simple class stay the pod's requests, which the node's
// amounts decide as NodeResourcesFit does (the same answer: a whole
// device each). A claim the pod's status names (made for it already) is
// read instead while it is not allocated.
func (d *Reading) extendedClaim(pod *v1.Pod) (*pendingClaim, error) {
	classes := d.ExtendedClasses(pod)
	if len(classes) == 0 {
		return nil, nil
	}
	if s := pod.Status.ExtendedResourceClaimStatus; s != nil && s.ResourceClaimName != "" {
		key := pod.Namespace + "/" + s.ResourceClaimName
		if c, ok := d.claims.get(key); ok {
			if c.Status.Allocation != nil {
				return nil, nil
			}
			return &pendingClaim{key: key, claim: withDefaults(c)}, nil
		}
	}
	key := madeClaimKey(pod, extendedClaimName)
	if c, ok := d.claims.get(key); ok { // a what-if allocation made it
		if c.Status.Allocation != nil {
			return nil, nil
		}
		return &pendingClaim{key: key, claim: c}, nil
	}
	containers := slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)
	var requests []resourcev1.DeviceRequest
	for _, class := range classes {
		name := v1.ResourceName(d.classes[class].Resource)
		long := make([]*resourcev1.DeviceRequest, len(containers))
		var shortLived []int
		for i, c := range containers {
			if i < len(pod.Spec.InitContainers) && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
				shortLived = append(shortLived, i)
				continue
			}
			r, err := containerRequest(pod, i, &c, name, d.classes[class].Name, nil)
			if err != nil {
				return nil, err
			}
			long[i] = r
		}
		var largest *resourcev1.DeviceRequest
		for _, i := range shortLived {
			r, err := containerRequest(pod, i, &containers[i], name, d.classes[class].Name, long[i:])
			if err != nil {
				return nil, err
			}
			if r != nil && (largest == nil || largest.Exactly.Count < r.Exactly.Count) {
				largest = r
			}
		}
		if largest != nil {
			requests = append(requests, *largest)
		}
		for _, r := range long {
			if r != nil {
				requests = append(requests, *r)
			}
		}
	}
	if len(requests) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(requests, func(a, b resourcev1.DeviceRequest) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name + "-extended-resources", UID: types.UID("resfit:" + key),
			Annotations: map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"}},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}},
	}
	return &pendingClaim{key: key, claim: claim}, nil
}

// ExtendedClasses are the indices of the classes whose extended resource
// (explicit or implicit) the pod asks for.
func (d *Reading) ExtendedClasses(pod *v1.Pod) []int {
	var out []int
	for i, c := range d.classes {
		name := v1.ResourceName(c.Resource)
		asks := func(cs []v1.Container) bool {
			return slices.ContainsFunc(cs, func(c v1.Container) bool {
				q, ok := c.Resources.Requests[name]
				return ok && !q.IsZero()
			})
		}
		if asks(pod.Spec.InitContainers) || asks(pod.Spec.Containers) {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, func(a, b int) int {
		switch {
		case d.classes[a].Resource < d.classes[b].Resource:
			return -1
		case d.classes[a].Resource > d.classes[b].Resource:
			return 1
		}
		return 0
	})
	return out
}

// containerRequest is container i's request for an extended resource of a
// class, as kube-scheduler's createResourceRequestAndMappings makes it:
// what reusable requests (those of the containers after an init
// container) do not cover, nil when they cover it or the container asks
// for none. A count that is not a whole number is an error (the API
// server refuses one for an extended resource).
func containerRequest(pod *v1.Pod, i int, c *v1.Container, name v1.ResourceName, class string, reusable []*resourcev1.DeviceRequest) (*resourcev1.DeviceRequest, error) {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil, nil
	}
	count, whole := q.AsInt64()
	if !whole {
		return nil, fmt.Errorf("pod %s/%s: container %s: resources.requests[%s]: %s is not a whole number", pod.Namespace, pod.Name, c.Name, name, q.String())
	}
	if count == 0 {
		return nil, nil
	}
	var sum int64
	for _, r := range reusable {
		if r != nil {
			if sum += r.Exactly.Count; sum >= count {
				return nil, nil
			}
		}
	}
	keys := make([]string, 0, len(c.Resources.Requests))
	for k := range c.Resources.Requests {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	return &resourcev1.DeviceRequest{
		Name: fmt.Sprintf("container-%d-request-%d", i, slices.Index(keys, string(name))),
		Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: class,
			AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
			Count:           count - sum,
		},
	}, nil
}
