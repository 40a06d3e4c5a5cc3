package resource

import (
	"fmt"
	"strings"
)

// The requests kube-scheduler assumes for a container that sets no cpu or
// memory request, when it scores with NodeResourcesFit (its "non-zero"
// requests): 100 millicores and 200 MiB.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 << 20
)

// Container is one container's requests in canonical units. A name that is
// absent was not set; a name present with 0 was set to zero, which matters
// for the non-zero defaults.
type Container struct {
	Requests map[string]int64
	// Sidecar marks an init container with restartPolicy Always: it runs
	// alongside the main containers.
	Sidecar bool
}

// Pod is what a pod's effective request is computed from.
type Pod struct {
	Containers     []Container
	InitContainers []Container
	// PodLevel holds pod-level requests (spec.resources.requests); where set
	// for cpu, memory or hugepages-*, they replace the containers' sum.
	PodLevel map[string]int64
	// Overhead is the RuntimeClass overhead, added last.
	Overhead map[string]int64
}

// PodRequests computes a pod's effective request the way Kubernetes does
// (k8s.io/component-helpers resource.PodRequests): the larger of the main
// containers plus sidecars, and each regular init container plus the
// sidecars started before it; then pod-level requests; then overhead.
//
// With nonZero, a container (init containers included) that does not set cpu
// or memory counts as requesting DefaultMilliCPURequest and
// DefaultMemoryRequest, as kube-scheduler's NodeResourcesFit and
// Koordinator's NodeResourcesFitPlus do when scoring; BalancedAllocation and
// the Fit filter use nonZero = false.
func PodRequests(schema *Schema, pod Pod, nonZero bool) (Vector, error) {
	k := schema.Len()
	result := make(Vector, k)
	sidecars := make(Vector, k)
	initMax := make(Vector, k)
	step := make(Vector, k)
	add := func(dst Vector, c Container, where string) error {
		for name, amount := range c.Requests {
			i, ok := schema.Slot(name)
			if !ok {
				return fmt.Errorf("%s: resource %q is not in the schema", where, name)
			}
			if amount < 0 || amount > MaxAmount {
				return fmt.Errorf("%s: %s amount %d is outside [0, 2^53]", where, name, amount)
			}
			dst[i] += amount
		}
		if nonZero {
			addDefault(schema, dst, c.Requests, CPU, DefaultMilliCPURequest)
			addDefault(schema, dst, c.Requests, Memory, DefaultMemoryRequest)
		}
		return nil
	}
	for i, c := range pod.Containers {
		if err := add(result, c, fmt.Sprintf("containers[%d]", i)); err != nil {
			return nil, err
		}
	}
	for i, c := range pod.InitContainers {
		clear(step)
		if err := add(step, c, fmt.Sprintf("initContainers[%d]", i)); err != nil {
			return nil, err
		}
		if c.Sidecar {
			addInto(result, step)
			addInto(sidecars, step)
			maxInto(initMax, sidecars)
		} else {
			addInto(step, sidecars)
			maxInto(initMax, step)
		}
	}
	maxInto(result, initMax)
	for name, amount := range pod.PodLevel {
		if name != CPU && name != Memory && !strings.HasPrefix(name, "hugepages-") {
			continue
		}
		i, ok := schema.Slot(name)
		if !ok {
			continue
		}
		result[i] = amount
	}
	for name, amount := range pod.Overhead {
		i, ok := schema.Slot(name)
		if !ok {
			return nil, fmt.Errorf("overhead: resource %q is not in the schema", name)
		}
		result[i] += amount
	}
	if err := schema.Check(result); err != nil {
		return nil, fmt.Errorf("pod requests: %w", err)
	}
	return result, nil
}

func addDefault(schema *Schema, dst Vector, set map[string]int64, name string, amount int64) {
	if _, ok := set[name]; ok {
		return
	}
	if i, ok := schema.Slot(name); ok {
		dst[i] += amount
	}
}

func addInto(dst, v Vector) {
	for i := range dst {
		dst[i] += v[i]
	}
}

func maxInto(dst, v Vector) {
	for i := range dst {
		dst[i] = max(dst[i], v[i])
	}
}
