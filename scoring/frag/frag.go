// Package frag scores nodes for GPU-sharing workloads by GPU
// fragmentation, as FGD ("fragmentation gradient descent", Weng et al.,
// USENIX ATC'23) does: a pod goes where it adds the least fragmentation,
// measured against the pod classes the workload typically holds.
//
// A node's GPU is fragmented for a pod class when that class cannot use
// it: all of the node's idle GPU when the class does not fit the node
// (too little cpu, too few GPUs with enough free) or asks for no GPU, and
// otherwise the idle GPU on devices with less free than the class asks
// for. Measure weighs this over the typical classes; Scorer scores each
// node by how much placing the task there lowers it. Both read the
// per-device free amounts of a resource.Devices view, whose rows match the
// scored table's.
//
// A GPU that divides into partitions (MIG, as Kubernetes' DRA publishes
// it: resource.Layout) is measured by what its counters leave: a class of
// one partition type (Class.Partition, a MIG profile) can use such a GPU
// when a part of that type still fits its counters, wherever its free
// amount puts it, so that FGD keeps the large profiles possible; a task of
// parts is scored by the part its host's allocator takes (first fit, as
// kube's DRA allocator picks).
package frag

import (
	"errors"
	"fmt"
	"slices"

	"github.com/resfit/resfit/resource"
)

// Class is a typical pod class: its cpu request (milli-cpu), what it asks
// of devices (Count 0 for a CPU-only class), the device models it accepts
// (empty: any), the type of part its devices are when they divide into
// parts (a MIG profile, scoring.Task.Partition; empty: a share of a device
// or whole devices) and its share of the workload.
type Class struct {
	CPU       int64
	Devices   resource.DeviceRequest
	Models    resource.ModelSet
	Partition string
	Weight    float64
}

// Measure is the fragmentation measure over a set of typical classes.
// It is immutable and safe for concurrent use.
type Measure struct {
	// cpuOnly is the summed weight of the CPU-only classes, which count
	// all idle GPU as fragment whatever the node.
	cpuOnly float64
	gpu     []gpuClass
	// thresholds are the GPU classes' distinct amounts per device,
	// ascending: NodeModel counts a node's devices against each once, not
	// once per class.
	thresholds []int64
	// partitioned reports a class of parts (Class.Partition).
	partitioned bool
}

// gpuClass is a class that asks for devices, as NodeModel reads it.
type gpuClass struct {
	cpu, each int64
	count     int
	at        int // each's index in thresholds
	weight    float64
	models    resource.ModelSet
	partition string
}

// maxThresholds bounds the distinct amounts per device NodeModel counts
// against in one pass (openb's typical classes have 12); with more it
// counts per class.
const maxThresholds = 32

// NewMeasure checks the classes: weights in [0, resource.MaxWeight], not
// all 0; device requests valid for the view's devices (Each in
// [1, perDevice] when Count > 0). The weights need not sum to 1. With the
// bound, a node's fragmentation (Σ weight × idle GPU) stays finite, so a
// fragmentation drop is never Inf − Inf.
func NewMeasure(classes []Class, perDevice int64) (*Measure, error) {
	if len(classes) == 0 {
		return nil, errors.New("frag: no classes")
	}
	m := &Measure{}
	total := 0.0
	for i, c := range classes {
		switch {
		case !(c.Weight >= 0 && c.Weight <= resource.MaxWeight):
			return nil, fmt.Errorf("frag: classes[%d].weight: must be in [0, %d], got %v", i, resource.MaxWeight, c.Weight)
		case c.CPU < 0 || c.CPU > resource.MaxAmount:
			return nil, fmt.Errorf("frag: classes[%d].cpu: must be in [0, %d], got %d", i, resource.MaxAmount, c.CPU)
		case c.Devices.Count < 0 || c.Devices.Count > resource.MaxDevicesPerNode:
			return nil, fmt.Errorf("frag: classes[%d].devices.count: must be in [0, %d], got %d", i, resource.MaxDevicesPerNode, c.Devices.Count)
		case c.Devices.Count > 0 && (c.Devices.Each < 1 || c.Devices.Each > perDevice):
			return nil, fmt.Errorf("frag: classes[%d].devices.each: must be in [1, %d], got %d", i, perDevice, c.Devices.Each)
		case c.Devices.Count == 0 && c.Devices.Each != 0:
			return nil, fmt.Errorf("frag: classes[%d].devices: %d per device but no device", i, c.Devices.Each)
		case c.Devices.Count == 0 && c.Partition != "":
			return nil, fmt.Errorf("frag: classes[%d].partition: %q but no device", i, c.Partition)
		}
		if canonical, err := resource.ParseModelSet(string(c.Models)); err != nil || canonical != c.Models {
			return nil, fmt.Errorf("frag: classes[%d].models: %q is not a canonical model set (resource.ParseModelSet)", i, c.Models)
		}
		total += c.Weight
		if c.Devices.Count == 0 {
			m.cpuOnly += c.Weight
		} else {
			m.gpu = append(m.gpu, gpuClass{cpu: c.CPU, each: c.Devices.Each, count: c.Devices.Count, weight: c.Weight, models: c.Models, partition: c.Partition})
			m.thresholds = append(m.thresholds, c.Devices.Each)
			m.partitioned = m.partitioned || c.Partition != ""
		}
	}
	if total == 0 {
		return nil, errors.New("frag: every class has weight 0")
	}
	slices.Sort(m.thresholds)
	m.thresholds = slices.Compact(m.thresholds)
	for i := range m.gpu {
		m.gpu[i].at, _ = slices.BinarySearch(m.thresholds, m.gpu[i].each)
	}
	return m, nil
}

// Node is the fragmentation, in device units (milli-GPU), of a node with
// freeCPU milli-cpu and the given free amount per device, whose devices'
// model is unknown ("": a class restricted to some models cannot use
// them). It adds in a fixed order, so that equal states give bit-identical
// results.
func (m *Measure) Node(freeCPU int64, free []int64) float64 {
	return m.NodeModel(freeCPU, free, "")
}

// NodeModel is Node for a node whose devices are of the model: a class
// restricted to other models cannot use any of them, so all of the node's
// idle devices are fragment for it, as for a class that does not fit (the
// paper's simulator does the same). A class of parts (Class.Partition)
// cannot use devices that are not known to divide: NodeParts counts them.
func (m *Measure) NodeModel(freeCPU int64, free []int64, model string) float64 {
	idle := sum(free)
	if idle == 0 {
		return 0
	}
	if len(m.thresholds) > maxThresholds {
		return m.partsByClass(freeCPU, free, nil, model, idle)
	}
	// For each threshold, the devices with at least that much free and
	// the free amount on the others.
	var fits [maxThresholds]int
	var small [maxThresholds]int64
	ts := m.thresholds
	for _, g := range free {
		for k, e := range ts {
			if g >= e {
				fits[k]++
			} else {
				small[k] += g
			}
		}
	}
	frag := m.cpuOnly * float64(idle)
	for i := range m.gpu {
		c := &m.gpu[i]
		unusable := idle
		if freeCPU >= c.cpu && fits[c.at] >= c.count && (c.models == "" || c.models.Accepts(model)) && c.partition == "" {
			unusable = small[c.at]
		}
		frag += c.weight * float64(unusable)
	}
	return frag
}

// Row is the fragmentation of a table's row as the Scorer measures a node
// before it places a task there: NodeParts of the row's cpu left (cpu is
// the schema's cpu slot) and the device view's free amounts, devices that
// divide into parts and model. The view's rows match the table's.
func (m *Measure) Row(t *resource.Table, cpu int, devices *resource.Devices, row int) float64 {
	return m.NodeParts(t.Allocatable(row)[cpu]-t.Used(row)[cpu], devices.Free(row), devices.Partitioned(row), devices.Model(row))
}

// NodeParts is NodeModel for a node some of whose devices divide into parts
// (resource.Devices.Partitioned: their layouts and counters left, in the
// order an allocator tries them), which a class of parts (Class.Partition)
// is measured on: it can use a device that can take a part of its type
// (resource.Layout.Fit), when the node has Count such devices, and the
// idle amount on the others is fragment for it. A class that is not of
// parts is measured by the free amounts as in NodeModel, whose result this
// is for a measure without classes of parts or a node without such
// devices.
func (m *Measure) NodeParts(freeCPU int64, free []int64, parts []resource.Partitioned, model string) float64 {
	if !m.partitioned || len(parts) == 0 {
		return m.NodeModel(freeCPU, free, model)
	}
	idle := sum(free)
	if idle == 0 {
		return 0
	}
	if len(m.gpu) > maxThresholds {
		return m.partsByClass(freeCPU, free, parts, model, idle)
	}
	// Per class, the devices it can use and their free amount: the devices
	// that divide walked once, each class's type resolved once per layout
	// (a share's consumption too: no look-up by name per device).
	var fits [maxThresholds]int
	var usable [maxThresholds]int64
	var types [maxThresholds]resource.PartType
	var layout *resource.Layout
	for _, p := range parts {
		if p.Layout != layout {
			layout = p.Layout
			for i, c := range m.gpu {
				if c.partition != "" {
					types[i] = layout.TypeOf(c.partition)
				}
			}
		}
		for i, c := range m.gpu {
			if c.partition == "" {
				continue
			}
			if _, ok := layout.FitType(types[i], p.Left); ok {
				fits[i]++
				usable[i] += free[p.Device]
			}
		}
	}
	frag := m.cpuOnly * float64(idle)
	for i, c := range m.gpu {
		unusable := idle
		switch {
		case freeCPU < c.cpu || !c.models.Accepts(model):
		case c.partition != "":
			if fits[i] >= c.count {
				unusable = idle - usable[i]
			}
		default:
			n, small := 0, int64(0)
			for _, g := range free {
				if g >= c.each {
					n++
				} else {
					small += g
				}
			}
			if n >= c.count {
				unusable = small
			}
		}
		frag += c.weight * float64(unusable)
	}
	return frag
}

// partsByClass is NodeParts class by class, for a measure of more than
// maxThresholds device classes: the same sums in the same order (and
// NodeModel's, with no devices that divide).
func (m *Measure) partsByClass(freeCPU int64, free []int64, parts []resource.Partitioned, model string, idle int64) float64 {
	frag := m.cpuOnly * float64(idle)
	for _, c := range m.gpu {
		if freeCPU < c.cpu || !c.models.Accepts(model) {
			frag += c.weight * float64(idle)
			continue
		}
		fits := 0
		var small int64
		if c.partition == "" {
			for _, g := range free {
				if g >= c.each {
					fits++
				} else {
					small += g
				}
			}
		} else {
			usable := int64(0)
			for _, p := range parts {
				if _, ok := p.Layout.Fit(c.partition, p.Left); ok {
					fits++
					usable += free[p.Device]
				}
			}
			small = idle - usable
		}
		if fits < c.count {
			small = idle
		}
		frag += c.weight * float64(small)
	}
	return frag
}

// sum is the devices' free amounts summed: the node's idle amount.
func sum(free []int64) int64 {
	var idle int64
	for _, g := range free {
		idle += g
	}
	return idle
}
