package dra

import (
	"fmt"
	"math/big"
	"slices"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/resfit/resfit/resource"
)

// ClassSlot is a device class whose resource a schema has: the class's
// index in Reading.Classes and the resource's slot.
type ClassSlot struct{ Slot, Class int }

// ClassSlots are the classes whose resources the schema has.
func (d *Reading) ClassSlots(schema *resource.Schema) []ClassSlot {
	var out []ClassSlot
	for i, c := range d.classes {
		if slot, ok := schema.Slot(c.Resource); ok {
			out = append(out, ClassSlot{Slot: slot, Class: i})
		}
	}
	return out
}

// SameDevices reports whether two readings share their classes and
// devices: one was made from the other by Allocate or Unallocate.
func (d *Reading) SameDevices(o *Reading) bool { return d.read == o.read }

// ResourceNames are the resources of the device classes, sorted: what a
// schema needs beside the nodes' and pods' (SchemaFor's).
func (d *Reading) ResourceNames() []string {
	names := make([]string, len(d.classes))
	for i, c := range d.classes {
		names[i] = c.Resource
	}
	slices.Sort(names)
	return names
}

// busySets are the counter sets of a node's devices that a claim holds a
// part of (any device consuming from them is held); nil when none is.
func (d *Reading) busySets(node string) map[string]bool {
	var busy map[string]bool
	for _, dev := range d.devices[node] {
		if dev.unit != "" && d.allocated.at(dev.ID) != "" {
			if busy == nil {
				busy = map[string]bool{}
			}
			dev.eachUse(func(set string, _ map[string]resourcev1.Counter) { busy[set] = true })
		}
	}
	return busy
}

// amounts are Amounts by class index.
func (d *Reading) amounts(node string, class int) (allocatable, used int64) {
	devices := d.devices[node]
	busy := d.busySets(node)
	var counted map[string]bool // counter sets counted already
	for _, dev := range devices {
		if dev.unusable || !slices.Contains(dev.Classes, class) {
			continue
		}
		if dev.unit == "" {
			allocatable++
			if d.allocated.at(dev.ID) != "" {
				used++
			}
			continue
		}
		if counted[dev.unit] {
			continue
		}
		if counted == nil {
			counted = map[string]bool{}
		}
		counted[dev.unit] = true
		allocatable++
		if busy[dev.unit] {
			used++
		}
	}
	return allocatable, used
}

// takeOf is how much of its unit an allocation result takes, as a share
// of the whole (Amounts' units): all of it for a device that consumes no
// counters held whole, or for a device that consumes all of its counter
// set; for a share of a device, the largest share of a capacity it
// consumes; for a partition, the largest share of a counter of its set it
// consumes (slots aside, as unitLeft counts them).
func (d *Reading) takeOf(node string, r resourcev1.DeviceRequestAllocationResult) *big.Rat {
	id := DeviceID{r.Driver, r.Pool, r.Device}
	for _, dev := range d.devices[node] {
		if dev.ID != id {
			continue
		}
		most := new(big.Rat)
		larger := func(whole, used *big.Rat) {
			if whole.Sign() > 0 {
				if share := new(big.Rat).Quo(used, whole); share.Cmp(most) > 0 {
					most = share
				}
			}
		}
		switch {
		case dev.unit != "" && !dev.wholeUnit:
			set := d.sets[dev.unit]
			slots := isSlots(set)
			for name, c := range set {
				if use, ok := dev.consumes[name]; ok && (slots || !isSlot(c)) {
					larger(ratOf(c.Value), ratOf(use.Value))
				}
			}
		case dev.unit == "" && r.ShareID != nil:
			for name, value := range dev.capacity {
				if q, ok := r.ConsumedCapacity[name]; ok {
					larger(ratOf(value), ratOf(q))
				}
			}
		default:
			return big.NewRat(1, 1)
		}
		if most.Cmp(big.NewRat(1, 1)) > 0 {
			most = big.NewRat(1, 1)
		}
		return most
	}
	// A device on no node's list (a pool offered to many nodes) is not
	// in the node's amounts, and takes nothing of them: charged a unit,
	// a node whose own GPUs are all held would refuse a pod the
	// allocator gives a GPU of the pool.
	return new(big.Rat)
}

// unitClasses are the classes that select a device of the same counter
// set as a device (a GPU with partitions); none for a device of no set.
func (d *Reading) unitClasses(node string, id DeviceID) []int {
	unit := ""
	for _, dev := range d.devices[node] {
		if dev.ID == id {
			unit = dev.unit
		}
	}
	if unit == "" {
		return nil
	}
	var out []int
	for _, dev := range d.devices[node] {
		if dev.unit != unit {
			continue
		}
		for _, c := range dev.Classes {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// inUnits is a share of a unit in a class's resource's canonical units:
// thousandths, rounded up, for a resource counted in milli-units (an
// extended resource: nvidia.com/gpu), so that what a claim takes is not
// understated, but short of a whole unit for a part short of all of it (a
// share of 81839Mi of an 80Gi GPU is 999, a part, as kube's allocator
// gives it, not the whole device); whole units otherwise, a part counting
// none.
func inUnits(resourceName string, share *big.Rat) int64 {
	one := resource.FromWhole(resourceName, 1)
	whole := share.Cmp(ratOne) >= 0
	if one == 1 {
		if whole {
			return 1
		}
		return 0
	}
	f := new(big.Rat).Mul(share, new(big.Rat).SetInt64(one))
	q, r := new(big.Int).QuoRem(f.Num(), f.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !whole {
		return min(q.Int64(), one-1)
	}
	return q.Int64()
}

// CanonicalAmounts are a class's Amounts on a node in its resource's
// canonical units: for a resource counted in milli-units, what is left of
// each unit counts to the thousandth (a GPU with half its memory shared
// out is 500 used of 1000); otherwise in whole units (Amounts).
func (d *Reading) CanonicalAmounts(node string, class int) (allocatable, used int64) {
	name := d.classes[class].Resource
	if resource.FromWhole(name, 1) == 1 {
		return d.amounts(node, class)
	}
	one := resource.FromWhole(name, 1)
	var seen unitSet
	devs := d.devices[node]
	for i := range devs {
		dev := &devs[i]
		if dev.unusable || !slices.Contains(dev.Classes, class) || !seen.add(dev) {
			continue
		}
		allocatable += one
		used += one - floorTimes(d.unitLeft(dev, d.sets), one)
	}
	return allocatable, used
}

// viewDevices are a node's devices of the class whose resource is named,
// in order.
func (d *Reading) viewDevices(node, name string) []*Device {
	devs := d.devices[node]
	out := make([]*Device, 0, len(devs))
	for i, c := range d.classes {
		if c.Resource != name {
			continue
		}
		for j := range devs {
			if slices.Contains(devs[j].Classes, i) {
				out = append(out, &devs[j])
			}
		}
	}
	return out
}

// unitKey names a device's unit: the counter set it consumes, or the
// device itself when it consumes none.
type unitKey struct {
	set string
	id  DeviceID
}

// unitSet is the units of one node's devices seen so far: a short list
// (on its user's stack), and a map as well once there are many. The zero
// unitSet is empty.
type unitSet struct {
	n    int
	list [unitSetListed]unitKey
	m    map[unitKey]bool
}

// unitSetListed is how many units a unitSet keeps in its list alone.
const unitSetListed = 16

// add notes dev's unit, and reports whether it was not seen before.
func (s *unitSet) add(dev *Device) bool {
	k := unitKey{set: dev.unit}
	if dev.unit == "" {
		k.id = dev.ID
	}
	if s.m != nil {
		if s.m[k] {
			return false
		}
		s.m[k] = true
		return true
	}
	if slices.Contains(s.list[:s.n], k) {
		return false
	}
	if s.n < unitSetListed {
		s.list[s.n] = k
		s.n++
		return true
	}
	s.m = make(map[unitKey]bool, 4*unitSetListed)
	for _, k := range s.list {
		s.m[k] = true
	}
	s.m[k] = true
	return true
}

// NodeUnits is what a node's DRA devices of a device view's resource are
// (Reading.NodeUnits): its units (Amounts': a device, or a GPU with
// partitions once), each with what is left of it, and those that divide
// into parts. The zero value is a node without such devices.
type NodeUnits struct {
	// Left is what is left of each unit, as a share of the whole
	// (unitLeft).
	Left []*big.Rat
	// Model is the units' productName model, "" when they differ or one is
	// not a model resfit reads (resource.ValidateModel).
	Model string
	// Parts are the units that divide into parts, with their layouts and
	// counters left (partitioned); PartsKey tells two readings' apart.
	Parts    []resource.Partitioned
	PartsKey string
	// Err says that the node publishes more units than resfit reads of a
	// node (resource.MaxDevicesPerNode): the first are counted.
	Err error
}

// Free is what is left of each unit in a device view where a device is
// per: ⌊left·per⌋, whole only when nothing of it is used.
func (u NodeUnits) Free(per int64) []int64 {
	free := make([]int64, len(u.Left))
	for j, l := range u.Left {
		free[j] = floorTimes(l, per)
	}
	return free
}

// Same reports whether two readings of a node give the same units.
func (u NodeUnits) Same(o NodeUnits) bool {
	return slices.EqualFunc(u.Left, o.Left, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 }) && u.Model == o.Model && u.PartsKey == o.PartsKey
}

// NodeUnits reads a node's devices of a view's resource.
func (d *Reading) NodeUnits(node, name string) NodeUnits {
	devs := d.viewDevices(node, name)
	var u NodeUnits
	var seen unitSet
	units := make([]*Device, 0, len(devs))
	past := 0 // units past resource.MaxDevicesPerNode
	for _, dev := range devs {
		if dev.unusable || !seen.add(dev) {
			continue
		}
		if len(u.Left) == resource.MaxDevicesPerNode {
			past++
			continue
		}
		units = append(units, dev)
		if len(u.Left) == 0 {
			u.Model = dev.Model
		}
		if dev.Model != u.Model || resource.ValidateModel(dev.Model) != nil {
			u.Model = ""
		}
		u.Left = append(u.Left, d.unitLeft(dev, d.sets))
	}
	if len(u.Left) == 0 {
		return NodeUnits{}
	}
	u.Parts, u.PartsKey = d.partitioned(node, units)
	if past > 0 {
		u.Err = fmt.Errorf("node %s: %d devices of %s in its ResourceSlices, more than the %d resfit reads of a node: the first %d are counted", node, len(u.Left)+past, name, resource.MaxDevicesPerNode, resource.MaxDevicesPerNode)
	}
	return u
}
