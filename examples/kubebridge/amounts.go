package kubebridge

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
)

// Amount converts a Kubernetes quantity to resfit's canonical unit for the
// named resource: millicores for cpu, milli-units for extended resources,
// whole units (bytes) otherwise, rounded up as apimachinery rounds. It is
// exact: a negative quantity, or one above resource.MaxAmount in that unit,
// is an error that quotes it (apimachinery's MilliValue and Value wrap
// silently past int64: a request of "1e16" GPUs would read as none).
func Amount(name string, q kres.Quantity) (int64, error) {
	// Written as digits and a power of ten (without allocating, for the
	// quantities a cluster holds), most amounts convert in int64
	// arithmetic; what that cannot do exactly, the big integers below do.
	var buf [24]byte
	digits, exp := q.AsCanonicalBytes(buf[:0])
	if v, ok := resource.DecimalAmount(name, digits, int(exp)); ok {
		return v, nil
	}
	d := q.AsDec()
	// d is unscaled × 10^-scale, exactly: written back as a quantity in
	// exponent form, resource.ParseAmount converts it with big integers.
	text := d.UnscaledBig().String() + "e" + strconv.FormatInt(-int64(d.Scale()), 10)
	v, err := resource.ParseAmount(name, text)
	if err != nil {
		var qe *resource.QuantityError
		if errors.As(err, &qe) {
			return 0, fmt.Errorf("quantity %q: %s", q.String(), qe.Reason)
		}
		return 0, err
	}
	return v, nil
}

// fieldAmount is Amount for the quantity of a resource in a resource list
// at a field path (spec.containers[0].resources.requests), the error
// naming the path and the resource.
func fieldAmount(path string, name v1.ResourceName, q kres.Quantity) (int64, error) {
	v, err := Amount(string(name), q)
	if err != nil {
		return 0, fmt.Errorf("%s[%s]: %w", path, name, err)
	}
	if strings.Contains(path, "containers[") && extendedResource(string(name)) && !wholeNumber(q) {
		// The API server refuses it in a container's requests and limits.
		return 0, fmt.Errorf("%s[%s]: quantity %q: an extended resource is a whole number", path, name, q.String())
	}
	return v, nil
}

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

// SchedulerAmount is a quantity in the unit kube-scheduler counts its resource
// in: millicores for cpu, else the value rounded up; past MaxAmount it
// counts as MaxAmount, so that sums of a few do not wrap.
func SchedulerAmount(name v1.ResourceName, q kres.Quantity) int64 {
	v := q.Value()
	if name == v1.ResourceCPU {
		v = q.MilliValue()
	}
	if q.Cmp(*kres.NewQuantity(resource.MaxAmount, kres.DecimalSI)) > 0 || v > resource.MaxAmount || v < 0 {
		return resource.MaxAmount
	}
	return v
}
