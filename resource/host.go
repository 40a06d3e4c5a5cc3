package resource

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// The rules that turn what a host reports (Kubernetes objects, a
// kube-scheduler NodeInfo, a Volcano session) into schemas and amounts.
// Every host calls these, so that the same cluster gives the same schema
// and the same numbers in each.

// BaseResources are the resources every host's schema starts with, in
// this order: what every node has and kube-scheduler's NodeInfo counts.
var BaseResources = []string{CPU, Memory, EphemeralStorage, Pods}

// SchemaOf is a cluster's schema: BaseResources, then, sorted, every other
// resource name in names (those the cluster's nodes offer and its pods
// request). names maps each name to an object that has it ("node gpu-a",
// "pod web/api-1"), which an error names: a name Kubernetes would not
// accept, or more than MaxResources names, is an error.
func SchemaOf(names map[string]string) (*Schema, error) {
	all := slices.Clone(BaseResources)
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if slices.Contains(BaseResources, name) {
			continue
		}
		if err := ValidateName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", names[name], err)
		}
		all = append(all, name)
	}
	if len(all) > MaxResources {
		return nil, fmt.Errorf("the cluster names %d resources; resfit scores at most %d", len(all), MaxResources)
	}
	return NewSchema(all...)
}

// Clamp holds an amount a host reports to [0, MaxAmount]. A host's sums
// (a node's requested amounts) can pass MaxAmount on a misreporting node,
// and a node's row must still be scored, not fail the cycle; the
// apiserver rejects negative amounts, so only a host's own arithmetic
// gives them.
func Clamp(amount int64) int64 { return min(max(amount, 0), MaxAmount) }

// ClampFloat is Clamp for an amount reported as a float (Volcano's):
// rounded to the nearest whole amount, NaN being 0.
func ClampFloat(amount float64) int64 {
	switch {
	case !(amount > 0): // NaN too
		return 0
	case amount >= float64(MaxAmount):
		return MaxAmount
	}
	return int64(math.Round(amount))
}

// FromWhole is a count of whole units of the named resource (a Kubernetes
// quantity's Value, as kube-scheduler's NodeInfo keeps scalar resources)
// in the resource's canonical unit (UnitOf), clamped.
func FromWhole(name string, whole int64) int64 {
	if UnitOf(name) == Milli {
		if whole > MaxAmount/1000 {
			return MaxAmount
		}
		whole *= 1000
	}
	return Clamp(whole)
}

// ToWhole is an amount in the resource's canonical unit as whole units,
// rounded away from zero as a Kubernetes quantity's Value rounds.
func ToWhole(name string, amount int64) int64 {
	if UnitOf(name) != Milli {
		return amount
	}
	q, r := amount/1000, amount%1000
	switch {
	case r > 0:
		q++
	case r < 0:
		q--
	}
	return q
}

// Requests are one pod's requests by the three rules resfit's scorers
// use.
type Requests struct {
	// Plain is kube's effective request (PodRequests without non-zero
	// defaults): what the fit filter checks and a node's used amount adds
	// up.
	Plain Vector
	// NonZero adds kube-scheduler's non-zero defaults (100m cpu and 200Mi
	// memory per container that sets none), as its scores do.
	NonZero Vector
	// Koordinator sums the non-zero requests by Koordinator's rule
	// (KoordinatorPodRequests), as NodeResourcesFitPlus scores.
	Koordinator Vector
}

// RequestsOf computes a pod's requests by every rule in a schema's slots.
// A resource the schema lacks, or an amount or sum beyond MaxAmount, is an
// error.
func RequestsOf(schema *Schema, pod Pod) (Requests, error) {
	// One allocation: the three vectors, then the sums' scratch.
	n := schema.Len()
	buf := make(Vector, 6*n)
	scratch := buf[3*n:]
	var r Requests
	var err error
	if r.Plain, err = podRequests(schema, pod, false, buf[:n:n], scratch); err != nil {
		return Requests{}, err
	}
	if r.NonZero, err = podRequests(schema, pod, true, buf[n:2*n:2*n], scratch); err != nil {
		return Requests{}, err
	}
	if r.Koordinator, err = koordinatorPodRequests(schema, pod, buf[2*n:3*n:3*n], scratch); err != nil {
		return Requests{}, err
	}
	return r, nil
}

// How a pod asks for a share of a GPU. Whole devices come from the device
// resource's request (nvidia.com/gpu: 2 is two whole devices); a share of
// each device from HAMi's nvidia.com/gpucores or Volcano's
// volcano.sh/vgpu-cores (percent of one device: 30 is 300 milli-units),
// with the device count from the device resource or Volcano's
// volcano.sh/vgpu-number.
const (
	HAMiCoresResource    = "nvidia.com/gpucores"
	HAMiMemoryResource   = "nvidia.com/gpumem"
	VolcanoCoresResource = "volcano.sh/vgpu-cores"
	VolcanoVGPUResource  = "volcano.sh/vgpu-number"
)

// HAMiShareResources are the resources a HAMi pod states its share of a
// GPU with (cores in percent, memory in MiB or percent). No node offers
// them: HAMi's scheduler reads them, and has kube-scheduler ignore them.
var HAMiShareResources = []string{HAMiCoresResource, HAMiMemoryResource, "nvidia.com/gpumem-percentage"}

// DeviceRequestOf reads what a pod asks of individual devices of the named
// resource (counted as Devices counts them, 1000 milli-units a device):
// the device count summed over its containers (the device resource, else
// VolcanoVGPUResource), whole devices unless a cores share (percent, in
// (0, 100)) is stated by HAMiCoresResource or VolcanoCoresResource. A
// count above MaxDevicesPerNode asks for nothing (no node has that many);
// an unusable share is ignored: the pod asks for whole devices.
func DeviceRequestOf(pod Pod, device string) DeviceRequest {
	var count, cores int64
	for _, c := range pod.Containers {
		// count stays within [-2^53, 2^10 + 1]: no sum overflows.
		if a, ok := c.Requests[device]; ok {
			count += max(ToWhole(device, a), -MaxAmount)
		} else if a, ok := c.Requests[VolcanoVGPUResource]; ok {
			count += max(ToWhole(VolcanoVGPUResource, a), -MaxAmount)
		}
		count = min(max(count, -MaxAmount), MaxDevicesPerNode+1)
		for _, name := range [...]string{HAMiCoresResource, VolcanoCoresResource} {
			if a, ok := c.Requests[name]; ok {
				cores = max(cores, ToWhole(name, a))
			}
		}
	}
	if count <= 0 || count > MaxDevicesPerNode {
		return DeviceRequest{}
	}
	each := int64(1000)
	if cores > 0 && cores < 100 {
		each = cores * 10
	}
	return DeviceRequest{Count: int(count), Each: each}
}
