package plugins

import (
	"encoding/json"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/resfit/resfit/resource"
)

// decodeArgs turns the plugin arguments kube-scheduler hands an
// out-of-tree plugin (a *runtime.Unknown holding the pluginConfig args as
// JSON, or nil) into a decoded document.
func decodeArgs(obj runtime.Object) (map[string]any, error) {
	if obj == nil {
		return map[string]any{}, nil
	}
	u, ok := obj.(*runtime.Unknown)
	if !ok {
		return nil, fmt.Errorf("want plugin args as *runtime.Unknown, got %T", obj)
	}
	if len(u.Raw) == 0 {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(u.Raw, &m); err != nil {
		return nil, fmt.Errorf("plugin args: %w", err)
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	return m, nil
}

// amount converts a Kubernetes quantity to resfit's canonical unit for the
// resource: millicores for cpu, milli-units for extended resources, whole
// units otherwise.
func amount(name string, q kres.Quantity) int64 {
	if resource.UnitOf(name) == resource.Milli {
		return q.MilliValue()
	}
	return q.Value()
}

func requests(l v1.ResourceList) map[string]int64 {
	m := make(map[string]int64, len(l))
	for n, q := range l {
		m[string(n)] = amount(string(n), q)
	}
	return m
}

// schemaFor lists every resource the cycle can meet: cpu, memory,
// ephemeral-storage and pods, each scalar resource any node offers, and
// each resource the pod asks for, in sorted order after the first four.
func schemaFor(pod *v1.Pod, nodes []fwk.NodeInfo) (*resource.Schema, error) {
	seen := map[string]bool{}
	var rest []string
	add := func(n string) {
		if !seen[n] && n != resource.CPU && n != resource.Memory && n != resource.EphemeralStorage && n != resource.Pods {
			seen[n] = true
			rest = append(rest, n)
		}
	}
	for _, n := range nodes {
		for name := range n.GetAllocatable().GetScalarResources() {
			add(string(name))
		}
	}
	for _, c := range append(slices.Clone(pod.Spec.Containers), pod.Spec.InitContainers...) {
		for name := range c.Resources.Requests {
			add(string(name))
		}
	}
	for name := range pod.Spec.Overhead {
		add(string(name))
	}
	slices.Sort(rest)
	return resource.NewSchema(append([]string{resource.CPU, resource.Memory, resource.EphemeralStorage, resource.Pods}, rest...)...)
}

// podRequests computes the pod's effective request as kube-scheduler does:
// plain, and with the non-zero defaults for containers that set no cpu or
// memory (see resource.PodRequests); and the non-zero request by
// Koordinator's rule, which NodeResourcesFitPlus scores (see
// resource.KoordinatorPodRequests).
func podRequests(schema *resource.Schema, pod *v1.Pod) (plain, nonZero, koordinator resource.Vector, err error) {
	p := resource.Pod{Overhead: requests(pod.Spec.Overhead)}
	for _, c := range pod.Spec.Containers {
		p.Containers = append(p.Containers, resource.Container{Requests: requests(c.Resources.Requests)})
	}
	for _, c := range pod.Spec.InitContainers {
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		p.InitContainers = append(p.InitContainers, resource.Container{Requests: requests(c.Resources.Requests), Sidecar: sidecar})
	}
	if pod.Spec.Resources != nil {
		p.PodLevel = requests(pod.Spec.Resources.Requests)
	}
	if plain, err = resource.PodRequests(schema, p, false); err != nil {
		return nil, nil, nil, err
	}
	if nonZero, err = resource.PodRequests(schema, p, true); err != nil {
		return nil, nil, nil, err
	}
	koordinator, err = resource.KoordinatorPodRequests(schema, p)
	return plain, nonZero, koordinator, err
}

// vector reads a framework Resource into a vector; pods, when asked,
// holds the pod count.
func vector(schema *resource.Schema, r fwk.Resource, pods int64, dst resource.Vector) {
	clear(dst)
	set := func(name string, v int64) {
		if i, ok := schema.Slot(name); ok {
			dst[i] = v
		}
	}
	set(resource.CPU, r.GetMilliCPU())
	set(resource.Memory, r.GetMemory())
	set(resource.EphemeralStorage, r.GetEphemeralStorage())
	set(resource.Pods, pods)
	for name, v := range r.GetScalarResources() {
		if resource.UnitOf(string(name)) == resource.Milli {
			v *= 1000
		}
		set(string(name), v)
	}
}

// table builds the cycle's node table: allocatable, requested, and the
// non-zero requested amounts kube-scheduler scores with — which it tracks
// for cpu and memory only, taking every other resource from the plain
// requested amounts.
func table(schema *resource.Schema, nodes []fwk.NodeInfo) (*resource.Table, error) {
	t := resource.NewTable(schema, len(nodes))
	k := schema.Len()
	alloc, used, nonZero := make(resource.Vector, k), make(resource.Vector, k), make(resource.Vector, k)
	cpu, _ := schema.Slot(resource.CPU)
	memory, _ := schema.Slot(resource.Memory)
	for _, n := range nodes {
		vector(schema, n.GetAllocatable(), int64(n.GetAllocatable().GetAllowedPodNumber()), alloc)
		vector(schema, n.GetRequested(), int64(len(n.GetPods())), used)
		copy(nonZero, used)
		nonZero[cpu] = n.GetNonZeroRequested().GetMilliCPU()
		nonZero[memory] = n.GetNonZeroRequested().GetMemory()
		row, err := t.Add(n.Node().Name, alloc, used)
		if err != nil {
			return nil, err
		}
		if err := t.SetNonZeroUsed(row, nonZero); err != nil {
			return nil, err
		}
	}
	return t, nil
}
