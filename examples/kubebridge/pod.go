package kubebridge

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/strategy"
)

// Volcano's per-pod scoring annotations (resource-strategy-fit).
const (
	VolcanoScoringTypeAnnotation = "volcano.sh/resource-strategy-scoring-type"
	VolcanoWeightAnnotation      = "volcano.sh/resource-strategy-weight"
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

// Amount converts a Kubernetes quantity to resfit's canonical unit for the
// named resource: millicores for cpu, milli-units for extended resources,
// whole units (bytes) otherwise, rounded up as apimachinery rounds.
func Amount(name string, q kres.Quantity) int64 {
	if resource.UnitOf(name) == resource.Milli {
		return q.MilliValue()
	}
	return q.Value()
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

// Requests are one pod's requests by the three rules resfit's scorers
// use.
type Requests struct {
	// Plain is kube's effective request (resource.PodRequests without
	// non-zero defaults): what the fit filter checks and a node's used
	// amount adds up.
	Plain resource.Vector
	// NonZero adds kube-scheduler's non-zero defaults (100m cpu and 200Mi
	// memory per container that sets none), as its scores do.
	NonZero resource.Vector
	// Koordinator sums the non-zero requests by Koordinator's rule
	// (resource.KoordinatorPodRequests), as NodeResourcesFitPlus scores.
	Koordinator resource.Vector
}

// RequestsOf computes a pod's requests in a schema's slots. A resource the
// schema lacks, or an amount or sum beyond resource.MaxAmount, is an error
// that names the pod.
func RequestsOf(schema *resource.Schema, pod *v1.Pod) (Requests, error) {
	p := PodOf(pod)
	var r Requests
	var err error
	if r.Plain, err = resource.PodRequests(schema, p, false); err == nil {
		if r.NonZero, err = resource.PodRequests(schema, p, true); err == nil {
			r.Koordinator, err = resource.KoordinatorPodRequests(schema, p)
		}
	}
	if err != nil {
		return Requests{}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return r, nil
}

// VolcanoOverride reads a pod's Volcano scoring annotations: nil when it
// has none. The annotations are written by the pod's author, so they are
// untrusted: an unusable pair (a type without weights, weights that are not
// a JSON object of whole numbers in [0, resource.MaxWeight], an unknown
// type) is an error, and Volcano scores such a pod 0 on every node
// (strategy.ZeroOverride), which NewTask does.
func VolcanoOverride(schema *resource.Schema, annotations map[string]string) (*strategy.Override, error) {
	return strategy.ParseVolcanoAnnotations(schema, annotations[VolcanoScoringTypeAnnotation], annotations[VolcanoWeightAnnotation])
}

// Device sharing: how a pod states a share of a GPU. Whole devices come
// from the device resource's request (nvidia.com/gpu: 2 is two whole
// devices); a share of each device from HAMi's nvidia.com/gpucores or
// Volcano's volcano.sh/vgpu-cores (percent of one device, 30 is 300
// milli-units), with the device count from nvidia.com/gpu or
// volcano.sh/vgpu-number.
const (
	HAMiCoresResource    = "nvidia.com/gpucores"
	VolcanoCoresResource = "volcano.sh/vgpu-cores"
	VolcanoVGPUResource  = "volcano.sh/vgpu-number"
)

// TaskOptions say how NewTask reads a pod.
type TaskOptions struct {
	// Devices names the device resource whose requests fill Task.Devices
	// (as resource.Devices counts it: 1000 milli-units a device), such as
	// nvidia.com/gpu; empty leaves Task.Devices empty.
	Devices string
	// Models, when not nil, fills Task.Models from the pod's annotations
	// (resource.AcceptedModels: resfit.io/gpu-models, or HAMi's
	// nvidia.com/use-gputype and nvidia.com/nouse-gputype) among these
	// models, the cluster's (Snapshot.Models); an unusable annotation is
	// NewTask's error. nil leaves Task.Models empty: any model.
	Models []string
}

// NewTask turns a pod into a task for a pipeline over the schema: its
// name ("namespace/name"), its pod group (Volcano's
// scheduling.k8s.io/group-name annotation, or the scheduler-plugins label
// scheduling.x-k8s.io/pod-group), its requests by every rule, Volcano's
// scoring annotations (an unusable pair scores the pod 0 everywhere, as
// Volcano does; VolcanoOverride says why), with opts.Devices what it
// asks of individual devices and with opts.Models the GPU models it
// accepts.
func NewTask(schema *resource.Schema, pod *v1.Pod, opts TaskOptions) (*scoring.Task, error) {
	r, err := RequestsOf(schema, pod)
	if err != nil {
		return nil, err
	}
	t := &scoring.Task{
		Name:                pod.Namespace + "/" + pod.Name,
		Job:                 podGroup(pod),
		Requests:            r.Plain,
		NonZeroRequests:     r.NonZero,
		KoordinatorRequests: r.Koordinator,
	}
	if o, err := VolcanoOverride(schema, pod.Annotations); err != nil {
		t.Override = strategy.ZeroOverride()
	} else {
		t.Override = o
	}
	if opts.Devices != "" {
		t.Devices = deviceRequest(pod, opts.Devices)
	}
	if opts.Models != nil {
		if t.Models, err = resource.AcceptedModels(pod.Annotations, opts.Models); err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
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

// deviceRequest reads what a pod asks of individual devices: the device
// count summed over its containers, whole devices unless a cores share
// (percent, in (0, 100)) is stated. An unusable share is ignored: the pod
// asks for whole devices.
func deviceRequest(pod *v1.Pod, device string) resource.DeviceRequest {
	var count, cores int64
	for _, c := range pod.Spec.Containers {
		req := c.Resources.Requests
		if q, ok := req[v1.ResourceName(device)]; ok {
			count += q.Value()
		} else if q, ok := req[VolcanoVGPUResource]; ok {
			count += q.Value()
		}
		for _, name := range []v1.ResourceName{HAMiCoresResource, VolcanoCoresResource} {
			if q, ok := req[name]; ok {
				cores = max(cores, q.Value())
			}
		}
	}
	if count <= 0 || count > resource.MaxDevicesPerNode {
		return resource.DeviceRequest{}
	}
	each := int64(1000)
	if cores > 0 && cores < 100 {
		each = cores * 10
	}
	return resource.DeviceRequest{Count: int(count), Each: each}
}

// SchemaFor lists the resources of a cluster: cpu, memory,
// ephemeral-storage and pods, then, sorted, every other resource a node
// offers or a pod requests. A name Kubernetes would not accept, or more than
// resource.MaxResources names, is an error that says which object has it.
func SchemaFor(nodes []*v1.Node, pods []*v1.Pod) (*resource.Schema, error) {
	seen := map[string]string{} // name → the object that has it
	for _, n := range nodes {
		for name := range n.Status.Allocatable {
			seen[string(name)] = "node " + n.Name
		}
	}
	for _, p := range pods {
		for _, name := range ResourceNames(p) {
			seen[name] = "pod " + p.Namespace + "/" + p.Name
		}
	}
	return schemaOf(seen)
}

var baseResources = []string{resource.CPU, resource.Memory, resource.EphemeralStorage, resource.Pods}

func schemaOf(seen map[string]string) (*resource.Schema, error) {
	names := append([]string(nil), baseResources...)
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		if slices.Contains(baseResources, name) {
			continue
		}
		if err := resource.ValidateName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", seen[name], err)
		}
		names = append(names, name)
	}
	if len(names) > resource.MaxResources {
		return nil, fmt.Errorf("the cluster names %d resources; resfit scores at most %d", len(names), resource.MaxResources)
	}
	return resource.NewSchema(names...)
}

// Allocatable reads a node's status.allocatable in a schema's slots.
// Resources the schema lacks are left out; an amount outside
// [0, resource.MaxAmount] is an error that names the node.
func Allocatable(schema *resource.Schema, node *v1.Node) (resource.Vector, error) {
	v := make(resource.Vector, schema.Len())
	for name, q := range node.Status.Allocatable {
		if i, ok := schema.Slot(string(name)); ok {
			v[i] = Amount(string(name), q)
		}
	}
	if err := schema.Check(v); err != nil {
		return nil, fmt.Errorf("node %s allocatable: %w", node.Name, err)
	}
	return v, nil
}

// podKey identifies a pod across events.
func podKey(pod *v1.Pod) string {
	if pod.UID != "" {
		return string(pod.UID)
	}
	return pod.Namespace + "/" + pod.Name
}
