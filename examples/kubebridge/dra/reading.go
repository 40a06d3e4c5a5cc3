package dra

import (
	"cmp"
	v1 "k8s.io/api/core/v1"
	"slices"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// DefaultFilterTimeout is kube-scheduler's default DynamicResources
// filterTimeout (v1.37: 10s), Reader.FilterTimeout's default.
const DefaultFilterTimeout = 10 * time.Second

// ImplicitResourcePrefix names the resource of a device class without an
// extendedResourceName, as KEP-5004 names its implicit extended resource:
// deviceclass.resource.kubernetes.io/<class>.
const ImplicitResourcePrefix = "deviceclass.resource.kubernetes.io/"

// DeviceID names a device as an allocation result does.
type DeviceID struct{ Driver, Pool, Device string }

func (id DeviceID) String() string { return id.Driver + "/" + id.Pool + "/" + id.Device }

// Device is a device a ResourceSlice publishes for one node.
type Device struct {
	ID   DeviceID
	Node string
	// Classes are the device classes that select it: their indices in
	// Reading.Classes, in order.
	Classes []int
	// Model is the device's productName attribute (NVIDIA's driver
	// publishes one per GPU) with spaces as hyphens, as GPU feature
	// discovery writes a node's product label; "" when it has none.
	Model string
	// Shared reports a device that several claims may be allocated at
	// once (allowMultipleAllocations).
	Shared bool
	// Counters reports a device that consumes counters of its pool's
	// counter sets (a partition, or a whole device that has partitions).
	Counters bool
	// unit is what the device is a part of, as a node's amounts count it
	// (unitOf): the counter set it consumes from (driver/pool/set), "" for
	// a device that consumes none (a unit of its own). wholeUnit reports a
	// device that consumes all of its set (a whole GPU beside its
	// partitions); unusable, one in a pool whose slices are not all listed.
	unit      string
	wholeUnit bool
	unusable  bool
	consumes  map[string]resourcev1.Counter
	// partType is the device's partition type (partType), otherSets
	// reports a device that consumes from more than one counter set, and
	// also what it consumes of those after the first (its unit), by
	// driver/pool/set.
	partType  string
	otherSets bool
	also      map[string]map[string]resourcev1.Counter
	// capacity is a shareable device's capacity, by name.
	capacity map[resourcev1.QualifiedName]kres.Quantity
	// cel is the device as CEL selectors see it.
	cel dracel.Device
}

// eachUse calls use with each counter set the device consumes from (its
// unit first) and what it consumes of it.
func (dev *Device) eachUse(use func(set string, counters map[string]resourcev1.Counter)) {
	use(dev.unit, dev.consumes)
	for set, counters := range dev.also {
		use(set, counters)
	}
}

// Class is a device class as read.
type Class struct {
	Name string
	// Resource is its resource in the schema: its extendedResourceName,
	// else ImplicitResourcePrefix + its name.
	Resource string
	// Extended reports whether Resource is its extendedResourceName, so
	// that a pod's request for that resource is a request for the class
	// (KEP-5004).
	Extended bool
	// Simple reports a class whose devices a node's amounts describe: none
	// it selects consumes counters (KEP-4815), allows several allocations
	// (KEP-5075), is offered to many nodes, or lies in a pool whose slices
	// are not all published. A pod asking an exact count of a simple class
	// takes that many on any node with as many free; otherwise what it
	// takes is the allocator's to say, node by node.
	Simple    bool
	selectors []dracel.CompilationResult
}

// Reading is what a cluster's DeviceClasses, ResourceSlices and
// ResourceClaims say about its devices. It is immutable once read.
type Reading struct {
	classes []Class
	// classErrs are, per class, why its selectors could not be evaluated
	// (a CEL runtime error, the cost limit among them), nil where they
	// could; such a class selects no device (ClassErrors).
	classErrs []error
	devices   map[string][]Device // by node, in slice and device order
	// allocated is the claim holding each held device (namespace/name);
	// claims are the claims by key. Readings made one from another share
	// most of them (layered).
	allocated layered[DeviceID, string]
	claims    layered[string, *resourcev1.ResourceClaim]
	templates map[string]*resourcev1.ResourceClaimTemplate
	// nodeOf is each device's node.
	nodeOf map[DeviceID]string
	// serial tells readings apart. changed, when changedFrom is not 0, are
	// the nodes whose allocations differ from those of the reading of that
	// serial, the one a Reader made this one from by applying the
	// claims that changed (a serial, so that a reading does not keep every
	// earlier one).
	serial      uint64
	changedFrom uint64
	changed     []string
	// read stands for the reading of the classes and devices: readings
	// made from one by Allocate and Unallocate, or by a Reader that
	// found them unchanged, share it.
	read *draRead
	// What kube's allocator is made from: its features, the classes, the
	// newest slices of every pool; and the reading's allocator, made once
	// (a reading Allocate or Unallocate makes has its own).
	features      structured.Features
	filterTimeout time.Duration
	classObjs     classList
	sliceObjs     []*resourcev1.ResourceSlice
	alloc         *draAllocator
	// sets are the counter sets of every pool, by driver/pool/set; units
	// is what the claims consume of units, worked out once (usage).
	sets  map[string]map[string]resourcev1.Counter
	units *usageOnce
	// nodes are the cluster's nodes, for the node selectors of claims
	// allocated already (boundNodes); nil where the host gave none.
	nodes []*v1.Node
}

// Objects are the objects Read reads, as listed from a cluster.
type Objects struct {
	Slices    []*resourcev1.ResourceSlice
	Classes   []*resourcev1.DeviceClass
	Claims    []*resourcev1.ResourceClaim
	Templates []*resourcev1.ResourceClaimTemplate
	// Nodes, when given, are the cluster's nodes: a claim allocated
	// already binds its pod to the nodes its allocation's nodeSelector
	// selects among them, by labels too (kube-scheduler's DynamicResources
	// matches it against each node). Without them a selector is read by
	// its matchFields on metadata.name alone, and one by labels binds
	// nothing here.
	Nodes []*v1.Node
}

// ObjectsFromLists are the objects of lists as a client lists them; a
// nil list gives none.
func ObjectsFromLists(slices *resourcev1.ResourceSliceList, classes *resourcev1.DeviceClassList, claims *resourcev1.ResourceClaimList, templates *resourcev1.ResourceClaimTemplateList) Objects {
	var o Objects
	if slices != nil {
		o.Slices = pointersTo(slices.Items)
	}
	if classes != nil {
		o.Classes = pointersTo(classes.Items)
	}
	if claims != nil {
		o.Claims = pointersTo(claims.Items)
	}
	if templates != nil {
		o.Templates = pointersTo(templates.Items)
	}
	return o
}

// pointersTo is a pointer to each item, in order.
func pointersTo[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// Read reads the objects. For each pool (driver and pool name) only the
// slices of its newest generation count, as the allocator reads them. A
// device counts on the node its slice names (spec.nodeName) or, with
// perDeviceNodeSelection, on the node the device names; devices offered to
// many nodes (allNodes, a node selector) count on none, which is
// documented as what resfit does not score. A class selects a device
// when every CEL selector of it does (Kubernetes' own compiler and
// environment, k8s.io/dynamic-resource-allocation/cel, under the cost
// limit kube-scheduler's allocator sets); a class whose selector fails at
// runtime on a device selects no device, and says why (ClassErrors). A
// claim's own selector that fails on a device does not select it. An
// allocation result
// held with admin access takes nothing.
func Read(objects Objects) (*Reading, error) {
	var r Reader
	return r.Read(objects)
}

// Classes are the device classes, by name.
func (d *Reading) Classes() []Class { return d.classes }

// classIndex is the index of the class of that name in Classes.
func (d *Reading) classIndex(name string) (int, bool) {
	return slices.BinarySearchFunc(d.classes, name, func(c Class, n string) int { return cmp.Compare(c.Name, n) })
}

// Devices are a node's devices, in the order of their slices and of the
// devices in them.
func (d *Reading) Devices(node string) []Device { return d.devices[node] }

// Nodes are the nodes with devices, in order.
func (d *Reading) Nodes() []string {
	nodes := make([]string, 0, len(d.devices))
	for n := range d.devices {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	return nodes
}

// HeldBy is the claim (namespace/name) a device is allocated to (of
// several sharing it, the first by namespace and name), "" when it is
// free.
func (d *Reading) HeldBy(id DeviceID) string { return d.allocated.at(id) }

// Amounts are how many whole units of a class a node has (allocatable)
// and how many of them are not wholly free (used). A unit is a device
// that consumes no counters, or a counter set (a GPU with partitions): a
// device, or a set, counts once whatever of it the class selects. A unit
// is not wholly free when a claim holds it or a part of it: any device
// consuming from its counter set (a MIG partition of a GPU), or a share
// of it (consumable capacity); so a claim for a whole unit fits where
// used < allocatable. Devices of a pool whose slices are not all
// listed are not counted: the allocator uses none of them. For plain
// devices these are kube-scheduler's NodeResourcesFit's numbers for a
// class's extended resource (KEP-5004), which counts a device taken by
// a partition or a share as free (counters) or taken (shares) as its
// devices say; resfit counts what a whole-device claim can still get.
func (d *Reading) Amounts(node, class string) (allocatable, used int64) {
	c, ok := d.classIndex(class)
	if !ok {
		return 0, 0
	}
	return d.amounts(node, c)
}
