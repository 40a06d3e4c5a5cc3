package kubebridge

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
)

// SchemaFor lists the resources of a cluster (resource.SchemaOf): cpu,
// memory, ephemeral-storage and pods, then, sorted, every other resource a
// node offers or a pod requests. A name Kubernetes would not accept, or
// more than resource.MaxResources names, is an error that says which
// object has it. With DRA (d not nil), the resources of its device
// classes too (ResourceNames).
func SchemaFor(d *dra.Reading, nodes []*v1.Node, pods []*v1.Pod) (*resource.Schema, error) {
	seen := map[string]string{} // name → the object that has it
	if d != nil {
		for _, c := range d.Classes() {
			seen[c.Resource] = "deviceclass " + c.Name
		}
	}
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
	return resource.SchemaOf(seen)
}

// Allocatable reads a node's status.allocatable in a schema's slots, in
// canonical units (Amount). Resources the schema lacks are left out. An
// amount that is negative or above resource.MaxAmount is an error naming
// the node and the field.
func Allocatable(schema *resource.Schema, node *v1.Node) (resource.Vector, error) {
	v := make(resource.Vector, schema.Len())
	for name, q := range node.Status.Allocatable {
		if i, ok := schema.Slot(string(name)); ok {
			a, err := fieldAmount("status.allocatable", name, q)
			if err != nil {
				return nil, fmt.Errorf("node %s: %w", node.Name, err)
			}
			v[i] = a
		}
	}
	return v, nil
}

// Amounts is what kube-scheduler reports of a node's resources (its
// NodeInfo's allocatable, requested and non-zero requested amounts):
// framework.Resource has these methods. Scalar resources are in whole
// units, as NodeInfo keeps them.
type Amounts interface {
	GetMilliCPU() int64
	GetMemory() int64
	GetEphemeralStorage() int64
	GetScalarResources() map[v1.ResourceName]int64
}

// NodeReport is what kube-scheduler's NodeInfo says of a node, as a
// plugin reads it: GetAllocatable and GetRequested, the allowed pod
// number, the number of pods (len(GetPods())), and GetNonZeroRequested's
// cpu and memory.
type NodeReport struct {
	Allocatable, Requested    Amounts
	AllowedPods, Pods         int64
	NonZeroCPU, NonZeroMemory int64
}

// RowWriter writes what a host knows of a node into its table row, by the
// rules every host shares: amounts in canonical units, each held to
// [0, resource.MaxAmount]; the "pods" slot is the pod count; the non-zero
// used amounts are the plain used ones with cpu and memory replaced by
// their sums with kube-scheduler's non-zero defaults (NodeInfo's
// NonZeroRequested keeps only those two). It reuses its vectors, so it is
// not safe for concurrent use.
type RowWriter struct {
	schema               *resource.Schema
	cpu, memory, pods    int
	alloc, used, nonZero resource.Vector
	// devices, when set (WithDevices), holds the device resource, in
	// slot device (-1: the schema lacks it, or no view).
	devices *resource.Devices
	device  int
	// dra, when set (WithDRA), backs the resources of its classes in
	// draSlots; backed says, per node, which slots (bits by slot) DRA
	// backs there.
	dra      *dra.Reading
	draSlots []dra.ClassSlot
	backed   map[string]uint64
}

// DeviceSlot is the device resource's slot, which the device view holds
// (WithDevices); -1 without a view, or where the schema lacks it.
func (w *RowWriter) DeviceSlot() int { return w.device }

// NewRowWriter returns a writer for tables of a schema that has the base
// resources (resource.BaseResources), as resource.SchemaOf makes them.
func NewRowWriter(schema *resource.Schema) (*RowWriter, error) {
	w := &RowWriter{schema: schema}
	for _, s := range []struct {
		name string
		slot *int
	}{{resource.CPU, &w.cpu}, {resource.Memory, &w.memory}, {resource.Pods, &w.pods}} {
		slot, ok := schema.Slot(s.name)
		if !ok {
			return nil, fmt.Errorf("the schema %v lacks %s", schema.Names(), s.name)
		}
		*s.slot = slot
	}
	k := schema.Len()
	w.alloc, w.used, w.nonZero = make(resource.Vector, k), make(resource.Vector, k), make(resource.Vector, k)
	w.device = -1
	return w, nil
}

// WithDevices makes the writer hold the device resource as a device view
// holds it, whatever the host reports of it (a sharing stack's node
// reports more devices than it has, and counts a pod's share as a whole
// one): a row's allocatable amount is its devices, whole (Allocatable of
// a node: its device count), its used amount what its pods hold on them.
// Write a row's devices into the view before the row.
func (w *RowWriter) WithDevices(d *resource.Devices) *RowWriter {
	w.devices, w.device = d, -1
	if slot, ok := w.schema.Slot(d.Name()); ok {
		w.device = slot
	}
	return w
}

// Allocatable is a node's allocatable amounts (the package's Allocatable),
// the device resource's as the device view counts it.
func (w *RowWriter) Allocatable(node *v1.Node) (resource.Vector, error) {
	count := 0
	if w.devices != nil {
		count = ReadDevices(w.dra, node, w.devices.Name()).count
	}
	return w.AllocatableWith(node, count)
}

// AllocatableWith is Allocatable for a node whose devices a host has read
// (DeviceReading.Count): count devices.
func (w *RowWriter) AllocatableWith(node *v1.Node, count int) (resource.Vector, error) {
	v, err := Allocatable(w.schema, node)
	if err != nil {
		return nil, err
	}
	w.amendAllocatable(node.Name, v)
	if w.device >= 0 {
		v[w.device] = int64(count) * w.devices.PerDevice()
	}
	return v, nil
}

// CheckNode reports the first of a node's allocatable amounts that is not
// exact (Amount), naming the node and the field.
func CheckNode(node *v1.Node) error {
	for _, name := range slices.Sorted(maps.Keys(node.Status.Allocatable)) {
		if _, err := fieldAmount("status.allocatable", name, node.Status.Allocatable[name]); err != nil {
			return fmt.Errorf("node %s: %w", node.Name, err)
		}
	}
	return nil
}

// Report writes a NodeInfo's report into a row: allocatable, used and
// non-zero used amounts.
func (w *RowWriter) Report(t *resource.Table, row int, r NodeReport) error {
	w.read(r.Allocatable, r.AllowedPods, w.alloc)
	w.amendAllocatable(t.Name(row), w.alloc)
	if w.device >= 0 {
		w.alloc[w.device], _ = DeviceAmounts(w.devices, row)
	}
	if err := t.SetAllocatable(row, w.alloc); err != nil {
		return err
	}
	w.read(r.Requested, r.Pods, w.used)
	return w.SetUsed(t, row, w.used, r.NonZeroCPU, r.NonZeroMemory)
}

// SetUsed writes a node's used amounts into its row: used as it is (every
// amount in [0, resource.MaxAmount]; the device resource's, with a device
// view, what the view holds taken), and the non-zero used amounts, used
// with cpu and memory replaced by nonZeroCPU and nonZeroMemory (clamped).
func (w *RowWriter) SetUsed(t *resource.Table, row int, used resource.Vector, nonZeroCPU, nonZeroMemory int64) error {
	w.amendUsed(t.Name(row), used)
	if w.device >= 0 {
		_, used[w.device] = DeviceAmounts(w.devices, row)
	}
	if err := t.SetUsed(row, used); err != nil {
		return err
	}
	copy(w.nonZero, used)
	w.nonZero[w.cpu], w.nonZero[w.memory] = resource.Clamp(nonZeroCPU), resource.Clamp(nonZeroMemory)
	return t.SetNonZeroUsed(row, w.nonZero)
}

// read writes reported amounts into dst in the schema's slots, pods in the
// "pods" slot; resources the schema lacks are left out.
func (w *RowWriter) read(r Amounts, pods int64, dst resource.Vector) {
	clear(dst)
	set := func(name string, v int64) {
		if i, ok := w.schema.Slot(name); ok {
			dst[i] = v
		}
	}
	dst[w.cpu] = resource.Clamp(r.GetMilliCPU())
	dst[w.memory] = resource.Clamp(r.GetMemory())
	set(resource.EphemeralStorage, resource.Clamp(r.GetEphemeralStorage()))
	dst[w.pods] = resource.Clamp(pods)
	for name, v := range r.GetScalarResources() {
		set(string(name), resource.FromWhole(string(name), v))
	}
}

// WithDRA makes the writer hold each device class's resource as DRA says,
// on every node that does not report that resource itself: allocatable,
// the class's devices on the node; used, those claims hold. Call it before
// writing rows, and again with each new reading of DRA; then write the
// rows again, but for a reading Allocate or Unallocate made from the last
// one (the same classes and devices), whose changed rows' used amounts
// are enough.
func (w *RowWriter) WithDRA(d *dra.Reading) *RowWriter {
	if w.dra != nil && d != nil && w.dra.SameDevices(d) {
		w.dra = d
		return w
	}
	w.dra, w.draSlots, w.backed = d, nil, map[string]uint64{}
	if d != nil {
		w.draSlots = d.ClassSlots(w.schema)
	}
	return w
}

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
		if alloc[cs.Slot] != 0 {
			continue
		}
		if a, _ := w.dra.CanonicalAmounts(node, cs.Class); a > 0 {
			alloc[cs.Slot] = resource.Clamp(a)
			backed |= 1 << cs.Slot
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
		if backed&(1<<cs.Slot) != 0 {
			_, u := w.dra.CanonicalAmounts(node, cs.Class)
			used[cs.Slot] = resource.Clamp(u)
		}
	}
}
