package kubebridge

import (
	"fmt"
	"maps"
	"math/big"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/resfit/resfit/resource"
)

// How DRA enters a host's table, device view and tasks; every host calls
// these.
//
// A row: a device class's resource that the node does not report itself
// (its allocatable amount of that name is 0, as kube-scheduler's
// NodeResourcesFit decides that a resource is backed by DRA) holds the
// class's units on the node (allocatable: devices, a GPU with partitions
// once) and what claims use of them (used), in the resource's canonical
// unit (RowWriter.WithDRA, canonicalAmounts). The device view: a node
// that has no devices of the view's resource otherwise (no device-plugin
// amount, no GPU-sharing registration) has the units of the class whose
// resource it is (nvidia.com/gpu for NVIDIA's chart), each with what is
// left of it (unitLeft), of their productName's model when all of them
// agree (DRA.NodeDevices). A pod holds nothing on such a node
// by guessing: its claims' allocations say what it holds.
//
// A task: a pod's claims not yet allocated add what they take on a node to
// its requests in the classes' slots, and, for the device view's class, to
// the devices it asks for (PodTask). When what they take is the same on
// every node (every request one exact count of one simple class, without
// its own selectors), the task is one; otherwise a node that cannot satisfy the
// claims is infeasible and each distinct take is a task of its own.

// classSlot is a device class whose resource a schema has.
type classSlot struct {
	slot, class int
	name        string
}

// classSlots are the classes whose resources the schema has.
func (d *DRA) classSlots(schema *resource.Schema) []classSlot {
	var out []classSlot
	for i, c := range d.classes {
		if slot, ok := schema.Slot(c.Resource); ok {
			out = append(out, classSlot{slot: slot, class: i, name: c.Resource})
		}
	}
	return out
}

// ResourceNames are the resources of the device classes, sorted: what a
// schema needs beside the nodes' and pods' (SchemaFor's).
func (d *DRA) ResourceNames() []string {
	names := make([]string, len(d.classes))
	for i, c := range d.classes {
		names[i] = c.Resource
	}
	slices.Sort(names)
	return names
}

// busySets are the counter sets of a node's devices that a claim holds a
// part of (any device consuming from them is held); nil when none is.
func (d *DRA) busySets(node string) map[string]bool {
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
func (d *DRA) amounts(node string, class int) (allocatable, used int64) {
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
func (d *DRA) takeOf(node string, r resourcev1.DeviceRequestAllocationResult) *big.Rat {
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
func (d *DRA) unitClasses(node string, id DeviceID) []int {
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

// canonicalAmounts are a class's Amounts on a node in its resource's
// canonical units: for a resource counted in milli-units, what is left of
// each unit counts to the thousandth (a GPU with half its memory shared
// out is 500 used of 1000); otherwise in whole units (Amounts).
func (d *DRA) canonicalAmounts(node string, class int) (allocatable, used int64) {
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
func (d *DRA) viewDevices(node, name string) []*DRADevice {
	devs := d.devices[node]
	out := make([]*DRADevice, 0, len(devs))
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
func (s *unitSet) add(dev *DRADevice) bool {
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

// floorTimes is ⌊l·n⌋ for a share l of a unit (in [0, 1], n a unit's
// amount): scaled's answer, with no big arithmetic for all of it or none
// (most devices).
func floorTimes(l *big.Rat, n int64) int64 {
	if l.IsInt() {
		return l.Num().Int64() * n
	}
	v, _ := scaled(l, big.NewInt(n))
	return v
}

// WithDRA makes the writer hold each device class's resource as DRA says,
// on every node that does not report that resource itself: allocatable,
// the class's devices on the node; used, those claims hold. Call it before
// writing rows, and again with each new reading of DRA; then write the
// rows again, but for a reading Allocate or Unallocate made from the last
// one (the same classes and devices), whose changed rows' used amounts
// are enough.
func (w *RowWriter) WithDRA(d *DRA) *RowWriter {
	if w.dra != nil && d != nil && sameDevices(w.dra, d) {
		w.dra = d
		return w
	}
	w.dra, w.draSlots, w.backed = d, nil, map[string]uint64{}
	if d != nil {
		w.draSlots = d.classSlots(w.schema)
	}
	return w
}

// sameDevices reports whether two readings share their classes and
// devices (one was made from the other by Allocate or Unallocate).
func sameDevices(a, b *DRA) bool { return a.read == b.read }

// DRAAllocatable puts what DRA says into a node's allocatable amounts, for
// a host that reads them itself (as Allocatable does): each class's
// resource that the node leaves at 0. Call it for a row before DRAUsed.
func (w *RowWriter) DRAAllocatable(node string, alloc resource.Vector) {
	w.amendAllocatable(node, alloc)
}

// DRAUsed puts what DRA says into a node's used amounts, for a host that
// reads them itself (as SetUsed does): the resources DRA backs there.
func (w *RowWriter) DRAUsed(node string, used resource.Vector) { w.amendUsed(node, used) }

// amendAllocatable puts DRA's allocatable amounts in the slots of a node's
// allocatable vector that the node leaves at 0, and remembers which.
func (w *RowWriter) amendAllocatable(node string, alloc resource.Vector) {
	if len(w.draSlots) == 0 {
		return
	}
	var backed uint64
	for _, cs := range w.draSlots {
		if alloc[cs.slot] != 0 {
			continue
		}
		if a, _ := w.dra.canonicalAmounts(node, cs.class); a > 0 {
			alloc[cs.slot] = resource.Clamp(a)
			backed |= 1 << cs.slot
		}
	}
	if backed == 0 {
		delete(w.backed, node)
	} else {
		w.backed[node] = backed
	}
}

// amendUsed puts DRA's used amounts in a node's slots that DRA backs.
func (w *RowWriter) amendUsed(node string, used resource.Vector) {
	backed := w.backed[node]
	if backed == 0 {
		return
	}
	for _, cs := range w.draSlots {
		if backed&(1<<cs.slot) != 0 {
			_, u := w.dra.canonicalAmounts(node, cs.class)
			used[cs.slot] = resource.Clamp(u)
		}
	}
}

// NodeDevices is the package's NodeDevices with DRA: a node without
// devices of the view's resource otherwise has the units of its class,
// each with what is left of it, and its pods hold nothing by guessing.
// d may be nil: no DRA.
func (d *DRA) NodeDevices(view *resource.Devices, row int, node *v1.Node, pods []*v1.Pod) error {
	return writeNodeDevices(view, row, node, readNodeDevices(node, view.Name(), d), pods)
}

// HoldDevices is the package's HoldDevices with DRA: on a node whose
// devices DRA publishes, a pod holds what its claims hold, which the
// host reads with DRA again, and nothing here. d may be nil: no DRA.
func (d *DRA) HoldDevices(view *resource.Devices, row int, node *v1.Node, p *v1.Pod) (Held, error) {
	pod, err := PodOf(p)
	if err != nil {
		return Held{}, err
	}
	return readNodeDevices(node, view.Name(), d).hold(view, row, p, resource.DeviceRequestOf(pod, view.Name()))
}

// draNodeDevices reads a node's devices of a view's resource from DRA:
// its units (Amounts': a device, or a GPU with partitions once), each with
// what is left of it (unitLeft), and those that divide into parts with
// their layouts and counters left (partitioned).
func (d *DRA) draNodeDevices(node, name string) nodeDevices {
	devs := d.viewDevices(node, name)
	nd := nodeDevices{fromDRA: true}
	var seen unitSet
	units := make([]*DRADevice, 0, len(devs))
	past := 0 // units past resource.MaxDevicesPerNode
	for _, dev := range devs {
		if dev.unusable || !seen.add(dev) {
			continue
		}
		if len(nd.left) == resource.MaxDevicesPerNode {
			past++
			continue
		}
		units = append(units, dev)
		if len(nd.left) == 0 {
			nd.model = dev.Model
		}
		if dev.Model != nd.model || resource.ValidateModel(dev.Model) != nil {
			nd.model = ""
		}
		nd.left = append(nd.left, d.unitLeft(dev, d.sets))
	}
	if len(nd.left) == 0 {
		return nodeDevices{}
	}
	nd.count = len(nd.left)
	nd.parts, nd.partsKey = d.partitioned(node, units)
	if past > 0 {
		nd.err = fmt.Errorf("node %s: %d devices of %s in its ResourceSlices, more than the %d resfit reads of a node: the first %d are counted", node, nd.count+past, name, resource.MaxDevicesPerNode, resource.MaxDevicesPerNode)
	}
	return nd
}

// podDemand is what a pod's claims that are not allocated yet take.
type podDemand struct {
	dra      *DRA
	claims   []pendingClaim
	requests []DRARequest
	// uniform says the take is the same on every node that can satisfy the
	// requests, and that the node's amounts decide whether it can (none,
	// or each one exact count of one simple class without its own
	// selectors, DRAClass.Simple); nominal is each request's first
	// alternative's count (All counts none, as its count depends on the
	// node, and so does a share of a device).
	uniform bool
	nominal []int64
	// pinned are the nodes the pod's claims already allocated bind it to
	// (boundNodes); nil where none does.
	pinned map[string]bool
}

// demand reads a pod's demand (PodRequests).
func (d *DRA) demand(pod *v1.Pod) (podDemand, error) {
	claims, err := d.pendingClaims(pod)
	if err != nil {
		return podDemand{}, err
	}
	requests, err := d.PodRequests(pod)
	if err != nil {
		return podDemand{}, err
	}
	dd := podDemand{dra: d, claims: claims, requests: requests, uniform: true, nominal: make([]int64, len(d.classes))}
	if dd.pinned, err = d.boundNodes(pod); err != nil {
		return podDemand{}, err
	}
	if dd.pinned != nil {
		dd.uniform = false // the nodes it is not bound to cannot take it
	}
	for _, c := range claims {
		for _, r := range c.claim.Spec.Devices.Requests {
			if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
				// It takes nothing from others, yet a device of its own
				// within the claim, which the node's amounts do not say.
				dd.uniform = false
			}
		}
	}
	for _, r := range requests {
		first := r.Alternatives[0]
		if len(r.Alternatives) != 1 || first.All || len(first.selectors) > 0 || first.capacity || !d.classes[first.class].Simple {
			dd.uniform = false
		}
		if !first.All && !first.capacity { // a share's part of a device is the node's to say
			dd.nominal[first.class] += resource.FromWhole(d.classes[first.class].Resource, first.Count)
		}
	}
	return dd, nil
}

// unitsHeld are the units of the view's resource on node (draNodeDevices'
// order, as the device view numbers them) that a pod's claims hold whole,
// each a device of its own (no partitions, not shared); ok is false when
// a claim of the pod holds anything else there: a partition, a share of
// a device, a device outside the view.
func (d *DRA) unitsHeld(pod *v1.Pod, node, name string) (units []int, ok bool) {
	mine := map[string]bool{}
	held := 0 // the devices the pod's claims hold on the node
	for _, key := range d.podClaimKeys(pod) {
		mine[key] = true
		if c := d.claims.at(key); c != nil && c.Status.Allocation != nil {
			for _, r := range c.Status.Allocation.Devices.Results {
				if id := (DeviceID{Driver: r.Driver, Pool: r.Pool, Device: r.Device}); d.allocated.at(id) == key && d.nodeOf[id] == node {
					held++
				}
			}
		}
	}
	var seen unitSet
	n := 0
	for _, dev := range d.viewDevices(node, name) {
		if dev.unusable || n == resource.MaxDevicesPerNode || !seen.add(dev) {
			continue
		}
		if mine[d.allocated.at(dev.ID)] {
			if dev.unit != "" || dev.Shared {
				return nil, false
			}
			units = append(units, n)
		}
		n++
	}
	return units, len(units) == held
}

// boundNodes are the nodes a pod may run on by its claims that are
// allocated already: a claim's allocation holds devices of a node, or says
// by its nodeSelector where they can be reached, and the pod goes where
// every such claim can (kube-scheduler's DynamicResources filters by the
// allocation's nodeSelector). A node-local device binds the pod to its
// node; a nodeSelector is read by its matchFields on metadata.name, the
// form kube's allocator writes for a node's devices; one that selects by
// labels (devices of a pool offered to many nodes) is left to the
// scheduler, which has the nodes' labels. nil: no claim binds the pod.
func (d *DRA) boundNodes(pod *v1.Pod) (map[string]bool, error) {
	var nodes map[string]bool
	for _, key := range d.podClaimKeys(pod) {
		c := d.claims.at(key)
		if c == nil || c.Status.Allocation == nil {
			continue
		}
		here := map[string]bool{}
		for _, r := range c.Status.Allocation.Devices.Results {
			if n, ok := d.nodeOf[DeviceID{r.Driver, r.Pool, r.Device}]; ok {
				here[n] = true
			}
		}
		if len(here) == 0 {
			named, ok, err := nodesNamed(c.Status.Allocation.NodeSelector)
			if err != nil {
				return nil, fmt.Errorf("resourceclaim %s: status.allocation.nodeSelector: %w", key, err)
			}
			if !ok {
				continue
			}
			here = named
		}
		if nodes == nil {
			nodes = here
			continue
		}
		for n := range nodes {
			if !here[n] {
				delete(nodes, n)
			}
		}
	}
	return nodes, nil
}

// nodesNamed are the nodes a node selector selects by name alone: each
// term's matchFields on metadata.name (operator In), when every term has
// one and none selects by labels; ok is false otherwise (nil, or a
// selector by labels).
func nodesNamed(sel *v1.NodeSelector) (map[string]bool, bool, error) {
	if sel == nil || len(sel.NodeSelectorTerms) == 0 {
		return nil, false, nil
	}
	names := map[string]bool{}
	for i, term := range sel.NodeSelectorTerms {
		if len(term.MatchExpressions) > 0 || len(term.MatchFields) == 0 {
			return nil, false, nil
		}
		var in map[string]bool
		for j, f := range term.MatchFields {
			if f.Key != "metadata.name" || f.Operator != v1.NodeSelectorOpIn {
				return nil, false, fmt.Errorf("nodeSelectorTerms[%d].matchFields[%d]: %s %s: only metadata.name In is read", i, j, f.Key, f.Operator)
			}
			these := map[string]bool{}
			for _, v := range f.Values {
				if in == nil || in[v] {
					these[v] = true
				}
			}
			in = these
		}
		maps.Copy(names, in)
	}
	return names, true, nil
}
