package kubebridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/resfit/resfit/resource"
)

// Dynamic Resource Allocation (resource.k8s.io/v1) as resfit reads it: a
// device class is a resource of the schema, a node has as many of it as
// its ResourceSlices publish devices the class selects, and uses as many
// as the ResourceClaims' allocations hold. The objects are written by
// drivers and users and read as untrusted: an error names the object and
// the field.

// DefaultFilterTimeout is kube-scheduler's default DynamicResources
// filterTimeout (v1.37: 10s), DRAReader.FilterTimeout's default.
const DefaultFilterTimeout = 10 * time.Second

// ImplicitResourcePrefix names the resource of a device class without an
// extendedResourceName, as KEP-5004 names its implicit extended resource:
// deviceclass.resource.kubernetes.io/<class>.
const ImplicitResourcePrefix = "deviceclass.resource.kubernetes.io/"

// DeviceID names a device as an allocation result does.
type DeviceID struct{ Driver, Pool, Device string }

func (id DeviceID) String() string { return id.Driver + "/" + id.Pool + "/" + id.Device }

// DRADevice is a device a ResourceSlice publishes for one node.
type DRADevice struct {
	ID   DeviceID
	Node string
	// Classes are the device classes that select it: their indices in
	// DRA.Classes, in order.
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
func (dev *DRADevice) eachUse(use func(set string, counters map[string]resourcev1.Counter)) {
	use(dev.unit, dev.consumes)
	for set, counters := range dev.also {
		use(set, counters)
	}
}

// DRAClass is a device class as read.
type DRAClass struct {
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

// DRA is what a cluster's DeviceClasses, ResourceSlices and
// ResourceClaims say about its devices. It is immutable once read.
type DRA struct {
	classes []DRAClass
	// classErrs are, per class, why its selectors could not be evaluated
	// (a CEL runtime error, the cost limit among them), nil where they
	// could; such a class selects no device (ClassErrors).
	classErrs []error
	devices   map[string][]DRADevice // by node, in slice and device order
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
	// serial, the one a DRAReader made this one from by applying the
	// claims that changed (a serial, so that a reading does not keep every
	// earlier one).
	serial      uint64
	changedFrom uint64
	changed     []string
	// read stands for the reading of the classes and devices: readings
	// made from one by Allocate and Unallocate, or by a DRAReader that
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
}

// DRAObjects are the objects ReadDRA reads, as listed from a cluster.
type DRAObjects struct {
	Slices    []*resourcev1.ResourceSlice
	Classes   []*resourcev1.DeviceClass
	Claims    []*resourcev1.ResourceClaim
	Templates []*resourcev1.ResourceClaimTemplate
}

// DRAObjectsFromLists are the objects of lists as a client lists them; a
// nil list gives none.
func DRAObjectsFromLists(slices *resourcev1.ResourceSliceList, classes *resourcev1.DeviceClassList, claims *resourcev1.ResourceClaimList, templates *resourcev1.ResourceClaimTemplateList) DRAObjects {
	var o DRAObjects
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

// ReadDRA reads the objects. For each pool (driver and pool name) only the
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
func ReadDRA(objects DRAObjects) (*DRA, error) {
	var r DRAReader
	return r.Read(objects)
}

// DRAReader reads a cluster's DRA objects again and again, as a host that
// keeps them across scheduling cycles does (ReadDRA's rules), reusing what
// did not change: the classes while the same DeviceClass objects are
// listed, a slice's devices and the classes that select them while the
// same ResourceSlice object is listed (informers replace an object that
// changes), and the whole device table while the same slices are; of the
// claims, it reads those whose objects changed, and applies them to the
// last reading's tables, which the new reading shares (layered). ReadClaims
// reads claims a host was told changed, listing nothing. The zero value is
// ready; it is not safe for concurrent use (the readings it returns are).
type DRAReader struct {
	// Features are the allocator's features (kube-scheduler's feature
	// gates, as its DynamicResources plugin turns them into the
	// allocator's); nil is DefaultAllocatorFeatures.
	Features *structured.Features
	// FilterTimeout bounds the allocator's search for one pod's claims on
	// one node, as kube-scheduler's DynamicResources filterTimeout does
	// (its selectors' CEL may cost up to kube's limit on every device): 0
	// is kube-scheduler's default, DefaultFilterTimeout. A search that
	// runs out is an error for the pod on that node, as kube-scheduler's
	// Filter fails the scheduling cycle with it.
	FilterTimeout time.Duration

	last       *DRA
	classObjs  []*resourcev1.DeviceClass
	sliceObjs  []*resourcev1.ResourceSlice // the newest generation's, as last read
	sliceCache map[*resourcev1.ResourceSlice][]DRADevice
	slices     listed[resourcev1.ResourceSlice] // every slice last listed
	// claimObjs are the claims last read, each with what it holds; holders
	// counts the claims holding each held device, and sharers are the keys
	// of those claims for a device that several hold (shares of it). The
	// readings change them in place; listing numbers the readings.
	claimObjs map[*resourcev1.ResourceClaim]*claimRead
	holders   map[DeviceID]int
	sharers   map[DeviceID][]string
	listing   uint64
	// pending are the copies of claims with a pending allocation the last
	// readings made (WithPendingAllocations), by claim key, kept so that a
	// claim whose pending allocation stays is the same object at the next.
	pending map[string]pendingCopy
}

// pendingCopy is a claim's copy with its pending allocation.
type pendingCopy struct{ of, copy *resourcev1.ResourceClaim }

// keepPending is the copy of claim c with a pending allocation to read:
// copied, or the copy kept in prev when it is of the same object with the
// same allocation. It keeps the copy in r.pending.
func (r *DRAReader) keepPending(prev map[string]pendingCopy, c, copied *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
	key := c.Namespace + "/" + c.Name
	if k, ok := prev[key]; ok && k.of == c && k.copy.Status.Allocation == copied.Status.Allocation {
		copied = k.copy
	}
	if r.pending == nil {
		r.pending = map[string]pendingCopy{}
	}
	r.pending[key] = pendingCopy{c, copied}
	return copied
}

// claimRead is what a claim object says: its key (namespace/name) and the
// devices its allocation holds (admin access holds none), with whether it
// holds each as a share (a result with a share ID); listed is the
// reader's listing that last listed it.
type claimRead struct {
	key    string
	held   []DeviceID
	share  []bool
	listed uint64
}

// maxClaimChanges bounds the claims changed since the last reading that
// Read applies to a copy of its tables; more, and it reads every claim.
const maxClaimChanges = 256

// Read reads the objects (ReadDRA). A reading that keeps the last one's
// classes and devices shares them (DRA.ChangedNodes tells which nodes'
// allocations changed).
func (r *DRAReader) Read(objects DRAObjects) (*DRA, error) {
	d := &DRA{templates: map[string]*resourcev1.ResourceClaimTemplate{}, alloc: new(draAllocator), units: new(usageOnce), serial: newSerial()} // readClaims makes the claims' tables
	d.features = DefaultAllocatorFeatures()
	d.filterTimeout = cmp.Or(r.FilterTimeout, DefaultFilterTimeout)
	if r.Features != nil {
		d.features = *r.Features
	}
	if r.last != nil && r.last.features != d.features {
		r.last = nil // read everything again under the new features
	}
	sameClasses := r.last != nil && samePointers(r.classObjs, objects.Classes)
	if sameClasses {
		d.classes, d.classErrs, d.classObjs = r.last.classes, r.last.classErrs, r.last.classObjs
	} else if err := d.readClasses(objects.Classes); err != nil {
		return nil, err
	} else {
		d.classErrs = make([]error, len(d.classes))
	}
	sameList := sameClasses && r.slices.same(objects.Slices)
	newest := r.sliceObjs
	if !sameList {
		var err error
		if newest, err = newestSlices(objects.Slices); err != nil {
			return nil, err
		}
	}
	d.sliceObjs = newest
	if sameList || sameClasses && samePointers(r.sliceObjs, newest) {
		d.read, d.devices, d.nodeOf, d.sets = r.last.read, r.last.devices, r.last.nodeOf, r.last.sets
	} else {
		cache := r.sliceCache
		if !sameClasses || cache == nil {
			cache = map[*resourcev1.ResourceSlice][]DRADevice{}
		}
		next := make(map[*resourcev1.ResourceSlice][]DRADevice, len(newest))
		d.classErrs = slices.Clone(d.classErrs) // the last reading's are its own
		if err := d.readSlices(newest, cache, next); err != nil {
			return nil, err
		}
		d.read = new(draRead)
		r.sliceCache = next
	}
	if err := r.readClaims(d, objects.Claims); err != nil {
		return nil, err
	}
	if d.read == r.last.readOrNil() && d.changedFrom != 0 && d.changedFrom == r.last.serial {
		d.alloc.carry(r.last.alloc, d.changed) // the other nodes' allocators stay
	}
	for _, t := range objects.Templates {
		if t != nil {
			d.templates[t.Namespace+"/"+t.Name] = t
		}
	}
	r.last, r.classObjs, r.sliceObjs = d, slices.Clone(objects.Classes), newest
	if !sameList {
		r.slices.keep(objects.Slices)
	}
	return d, nil
}

// readOrNil is a reading's devices' identity; nil for no reading.
func (d *DRA) readOrNil() *draRead {
	if d == nil {
		return nil
	}
	return d.read
}

// samePointers reports whether two lists hold the same objects, in any
// order.
func samePointers[T any](a, b []*T) bool {
	if len(a) != len(b) {
		return false
	}
	set := make(map[*T]bool, len(a))
	for _, x := range a {
		set[x] = true
	}
	for _, x := range b {
		if !set[x] {
			return false
		}
	}
	return true
}

func (d *DRA) readClasses(classes []*resourcev1.DeviceClass) error {
	compiler := dracel.GetCompiler(d.celFeatures())
	resources, names := map[string]string{}, map[string]bool{}
	d.classObjs = classList{}
	for _, c := range classes {
		if c == nil {
			continue
		}
		name := c.Name
		if name == "" {
			return fmt.Errorf("deviceclass: metadata.name: empty")
		}
		if names[name] {
			return fmt.Errorf("deviceclass %s: metadata.name: listed twice", name)
		}
		names[name] = true
		d.classObjs[name] = c
		class := DRAClass{Name: name, Resource: ImplicitResourcePrefix + name, Simple: true}
		if r := c.Spec.ExtendedResourceName; r != nil {
			if !resource.IsExtended(*r) {
				return fmt.Errorf("deviceclass %s: spec.extendedResourceName: %q is not an extended resource name (domain/name)", name, *r)
			}
			if err := resource.ValidateName(*r); err != nil {
				return fmt.Errorf("deviceclass %s: spec.extendedResourceName: %v", name, err)
			}
			class.Resource, class.Extended = *r, true
		}
		if other, dup := resources[class.Resource]; dup {
			return fmt.Errorf("deviceclass %s: spec.extendedResourceName: %s is deviceclass %s's too", name, class.Resource, other)
		}
		resources[class.Resource] = name
		for i, s := range c.Spec.Selectors {
			if s.CEL == nil {
				return fmt.Errorf("deviceclass %s: spec.selectors[%d]: no cel selector", name, i)
			}
			compiled := compiler.CompileCELExpression(s.CEL.Expression, dracel.Options{})
			if compiled.Error != nil {
				return fmt.Errorf("deviceclass %s: spec.selectors[%d].cel.expression: %v", name, i, compiled.Error)
			}
			class.selectors = append(class.selectors, compiled)
		}
		d.classes = append(d.classes, class)
	}
	slices.SortFunc(d.classes, func(a, b DRAClass) int { return cmp.Compare(a.Name, b.Name) })
	return nil
}

// celFeatures are the CEL features the allocator compiles selectors with.
func (d *DRA) celFeatures() dracel.Features {
	return dracel.Features{EnableConsumableCapacity: d.features.ConsumableCapacity}
}

// newestSlices checks every slice's pool and returns the slices of each
// pool's newest generation, in order.
func newestSlices(list []*resourcev1.ResourceSlice) ([]*resourcev1.ResourceSlice, error) {
	type poolKey struct{ driver, pool string }
	newest := map[poolKey]int64{}
	for _, s := range list {
		if s == nil {
			continue
		}
		if s.Spec.Driver == "" {
			return nil, fmt.Errorf("resourceslice %s: spec.driver: empty", s.Name)
		}
		if s.Spec.Pool.Name == "" {
			return nil, fmt.Errorf("resourceslice %s: spec.pool.name: empty", s.Name)
		}
		if s.Spec.Pool.Generation < 0 {
			return nil, fmt.Errorf("resourceslice %s: spec.pool.generation: %d is negative", s.Name, s.Spec.Pool.Generation)
		}
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		if g, ok := newest[k]; !ok || s.Spec.Pool.Generation > g {
			newest[k] = s.Spec.Pool.Generation
		}
	}
	out := make([]*resourcev1.ResourceSlice, 0, len(list))
	for _, s := range list {
		if s != nil && s.Spec.Pool.Generation == newest[poolKey{s.Spec.Driver, s.Spec.Pool.Name}] {
			out = append(out, s)
		}
	}
	return out, nil
}

// readSlices reads the devices of the newest slices into the device
// table, each slice's from cache when it holds them (the classes
// unchanged), recording every slice's in next.
func (d *DRA) readSlices(newest []*resourcev1.ResourceSlice, cache, next map[*resourcev1.ResourceSlice][]DRADevice) error {
	d.devices, d.nodeOf = map[string][]DRADevice{}, map[DeviceID]string{}
	seen := map[DeviceID]string{}
	// A pool is complete when all the slices its newest generation counts
	// are listed; the allocator uses no device of one that is not.
	type poolKey struct{ driver, pool string }
	published, complete := map[poolKey]int64{}, map[poolKey]bool{}
	for _, s := range newest {
		if n := len(s.Spec.Devices); n > resourcev1.ResourceSliceMaxDevices {
			return fmt.Errorf("resourceslice %s: spec.devices: %d devices, more than the API's %d", s.Name, n, resourcev1.ResourceSliceMaxDevices)
		}
		if n := len(s.Spec.SharedCounters); n > resourcev1.ResourceSliceMaxCounterSets {
			return fmt.Errorf("resourceslice %s: spec.sharedCounters: %d counter sets, more than the API's %d", s.Name, n, resourcev1.ResourceSliceMaxCounterSets)
		}
		if s.Spec.SharedCounters != nil && s.Spec.Devices != nil {
			return fmt.Errorf("resourceslice %s: spec: both sharedCounters and devices; the API allows one of them in a slice", s.Name)
		}
		published[poolKey{s.Spec.Driver, s.Spec.Pool.Name}]++
	}
	pools := map[poolKey][]*resourcev1.ResourceSlice{}
	sets := map[string]map[string]resourcev1.Counter{} // by driver/pool/set
	d.sets = sets
	for _, s := range newest {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		complete[k] = published[k] == s.Spec.Pool.ResourceSliceCount
		pools[k] = append(pools[k], s)
		for _, set := range s.Spec.SharedCounters {
			sets[s.Spec.Driver+"/"+s.Spec.Pool.Name+"/"+set.Name] = set.Counters
		}
	}
	for _, s := range newest {
		if pool := pools[poolKey{s.Spec.Driver, s.Spec.Pool.Name}]; pool != nil {
			if err := checkCounters(pool, complete[poolKey{s.Spec.Driver, s.Spec.Pool.Name}]); err != nil {
				return err
			}
			delete(pools, poolKey{s.Spec.Driver, s.Spec.Pool.Name})
		}
	}
	classes := slices.Clone(d.classes) // Simple is the reading's
	for i := range classes {
		classes[i].Simple = true
	}
	for _, s := range newest {
		devices, ok := cache[s]
		if !ok {
			var err error
			if devices, err = d.sliceDevices(s); err != nil {
				return err
			}
		}
		next[s] = devices
		whole := complete[poolKey{s.Spec.Driver, s.Spec.Pool.Name}]
		for _, dev := range devices {
			if dev.Node == "" || dev.Counters || dev.Shared || !whole {
				for _, c := range dev.Classes {
					classes[c].Simple = false
				}
			}
		}
		for i, dev := range s.Spec.Devices {
			id := DeviceID{s.Spec.Driver, s.Spec.Pool.Name, dev.Name}
			if other, dup := seen[id]; dup {
				return fmt.Errorf("resourceslice %s: spec.devices[%d].name: device %s is published by resourceslice %s too", s.Name, i, id, other)
			}
			seen[id] = s.Name
		}
		for _, dev := range devices {
			if dev.Node == "" {
				continue // offered to many nodes: on none
			}
			dev.unusable = !whole
			dev.wholeUnit = dev.unit != "" && consumesAll(dev.consumes, sets[dev.unit])
			dev.Classes = d.working(dev.Classes)
			d.devices[dev.Node] = append(d.devices[dev.Node], dev)
			d.nodeOf[dev.ID] = dev.Node
		}
	}
	d.classes = classes
	return nil
}

// consumesAll reports whether what a device consumes takes every counter
// of its set whole.
func consumesAll(consumes, set map[string]resourcev1.Counter) bool {
	if len(set) == 0 {
		return false
	}
	for name, c := range set {
		use, ok := consumes[name]
		if !ok || use.Value.Cmp(c.Value) < 0 {
			return false
		}
	}
	return true
}

// working is classes without those whose selectors failed (a device read
// before its class failed on another, or cached from an earlier reading);
// classes itself when it has none of them.
func (d *DRA) working(classes []int) []int {
	if !slices.ContainsFunc(classes, func(c int) bool { return d.classErrs[c] != nil }) {
		return classes
	}
	return slices.DeleteFunc(slices.Clone(classes), func(c int) bool { return d.classErrs[c] != nil })
}

// ClassErrors say, for each device class whose CEL selectors failed on a
// device (a runtime error, or the cost limit kube-scheduler's allocator
// evaluates them under, CELSelectorExpressionMaxCost), which selector,
// on which device, and why; such a class selects no device, and is not
// evaluated again on other devices, so that one expensive selector costs
// one evaluation. kube-scheduler's allocator fails a pod that claims such
// a class with the same runtime error.
func (d *DRA) ClassErrors() []error {
	var errs []error
	for _, err := range d.classErrs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// sliceDevices reads a slice's devices that count on a node, with the
// classes that select them.
func (d *DRA) sliceDevices(s *resourcev1.ResourceSlice) ([]DRADevice, error) {
	var out []DRADevice
	perDevice := s.Spec.PerDeviceNodeSelection != nil && *s.Spec.PerDeviceNodeSelection
	for i, dev := range s.Spec.Devices {
		if dev.Name == "" {
			return nil, fmt.Errorf("resourceslice %s: spec.devices[%d].name: empty", s.Name, i)
		}
		id := DeviceID{s.Spec.Driver, s.Spec.Pool.Name, dev.Name}
		if err := checkCapacity(s, i, dev); err != nil {
			return nil, err
		}
		node := ""
		switch {
		case perDevice && dev.NodeName != nil:
			node = *dev.NodeName
		case !perDevice && s.Spec.NodeName != nil:
			node = *s.Spec.NodeName
		}
		// A device offered to many nodes (allNodes, a node selector) counts
		// on none (Node ""), but its classes are not simple.
		device := DRADevice{ID: id, Node: node, Shared: dev.AllowMultipleAllocations != nil && *dev.AllowMultipleAllocations,
			Counters: len(dev.ConsumesCounters) > 0}
		if device.Counters {
			use := dev.ConsumesCounters[0]
			device.unit, device.consumes = id.Driver+"/"+id.Pool+"/"+use.CounterSet, use.Counters
			device.partType, device.otherSets = partType(s, dev), len(dev.ConsumesCounters) > 1
			for _, other := range dev.ConsumesCounters[1:] {
				if device.also == nil {
					device.also = map[string]map[string]resourcev1.Counter{}
				}
				device.also[id.Driver+"/"+id.Pool+"/"+other.CounterSet] = other.Counters
			}
		}
		if device.Shared {
			device.capacity = map[resourcev1.QualifiedName]kres.Quantity{}
			for name, c := range dev.Capacity {
				device.capacity[name] = c.Value
			}
		}
		if a, ok := dev.Attributes["productName"]; ok && a.StringValue != nil {
			device.Model = strings.ReplaceAll(strings.TrimSpace(*a.StringValue), " ", "-")
		}
		device.cel = dracel.Device{Driver: id.Driver, AllowMultipleAllocations: dev.AllowMultipleAllocations, Attributes: dev.Attributes, Capacity: dev.Capacity}
		for i, c := range d.classes {
			if d.classErrs[i] != nil {
				continue
			}
			selected, failed, err := selects(c.selectors, device.cel)
			switch {
			case err != nil:
				d.classErrs[i] = fmt.Errorf("deviceclass %s: spec.selectors[%d].cel.expression %q on device %s: CEL runtime error: %v; the class selects no device",
					c.Name, failed, c.selectors[failed].Expression, id, err)
			case selected:
				device.Classes = append(device.Classes, i)
			}
		}
		out = append(out, device)
	}
	return out, nil
}

// ChangedNodes are the nodes whose devices' allocations differ between an
// earlier reading and this one, when both share their classes and devices
// (same reports it); a host then writes only those rows again.
func (d *DRA) ChangedNodes(earlier *DRA) (nodes []string, same bool) {
	if earlier == nil || d.read != earlier.read {
		return nil, false
	}
	if d.changedFrom != 0 && d.changedFrom == earlier.serial {
		return d.changed, true
	}
	changed := map[string]bool{}
	eachDifference(&d.allocated, &earlier.allocated, func(id DeviceID) { changed[d.nodeOf[id]] = true })
	delete(changed, "") // devices on no node
	return slices.Sorted(maps.Keys(changed)), true
}

// selectsAll reports whether every selector selects the device; one that
// fails does not.
func selectsAll(selectors []dracel.CompilationResult, device dracel.Device) bool {
	ok, _, err := selects(selectors, device)
	return ok && err == nil
}

// selects reports whether every selector selects the device, in order,
// or the runtime error of the first that fails, and its index.
func selects(selectors []dracel.CompilationResult, device dracel.Device) (ok bool, failed int, err error) {
	for i, s := range selectors {
		ok, _, err := s.DeviceMatches(context.Background(), device)
		if err != nil {
			// kube v1.37's allocator adds a hint to a "no such key" error
			// (cel.EnhanceRuntimeError); the Volcano this module is also
			// built with pins an older library that lacks it.
			return false, i, err
		}
		if !ok {
			return false, i, nil
		}
	}
	return true, 0, nil
}

// readClaims reads the claims into d: when few of them changed since the
// last reading (other objects listed, or none), by applying the changes to
// the last reading's tables (layered: what they share is not copied),
// which also tells which nodes changed (ChangedNodes); otherwise every
// claim. Finding the changes takes a map probe per listed claim and, when
// some claim is gone, a pass over the last ones; nothing is copied.
func (r *DRAReader) readClaims(d *DRA, claims []*resourcev1.ResourceClaim) error {
	if r.claimObjs == nil || r.last == nil {
		return r.readEveryClaim(d, claims)
	}
	r.listing++
	var added []*resourcev1.ResourceClaim
	var reads []*claimRead
	seen := 0
	for _, c := range claims {
		if c == nil {
			continue
		}
		if read, ok := r.claimObjs[c]; ok {
			if read.listed != r.listing {
				read.listed = r.listing
				seen++
			}
			continue
		}
		if slices.Contains(added, c) {
			continue
		}
		read, err := readClaim(c)
		if err != nil {
			return err
		}
		added, reads = append(added, c), append(reads, &read)
		if len(added) > maxClaimChanges {
			return r.readEveryClaim(d, claims)
		}
	}
	if len(r.claimObjs)-seen > maxClaimChanges {
		return r.readEveryClaim(d, claims)
	}
	var removed []*resourcev1.ResourceClaim
	if len(r.claimObjs) > seen { // some claims are gone: which
		for c, read := range r.claimObjs {
			if read.listed != r.listing {
				removed = append(removed, c)
			}
		}
	}
	if !r.applyClaims(d, added, reads, removed) {
		return r.readEveryClaim(d, claims)
	}
	return nil
}

// applyClaims makes d's claims the last reading's with the removed claims
// gone and the added ones (read: reads) in, and notes the nodes whose
// allocations changed. It reports false, having changed nothing, when a
// removed claim holds whole a device another claim holds too (no state of
// a cluster; a full reading says what it makes of it).
func (r *DRAReader) applyClaims(d *DRA, added []*resourcev1.ResourceClaim, reads []*claimRead, removed []*resourcev1.ResourceClaim) bool {
	for _, c := range removed {
		read := r.claimObjs[c]
		for i, id := range read.held {
			if r.holders[id] > 1 && !(read.share[i] && d.features.ConsumableCapacity) {
				return false
			}
		}
	}
	last := r.last
	d.claims, d.allocated = last.claims.next(), last.allocated.next()
	changed := map[string]bool{}
	for _, c := range removed {
		read := r.claimObjs[c]
		if d.claims.at(read.key) == c {
			d.claims.del(read.key)
		}
		for i, id := range read.held {
			if read.share[i] { // what is left of the device changes
				changed[d.nodeOf[id]] = true
			}
			if r.holders[id] <= 1 {
				delete(r.holders, id)
				d.allocated.del(id)
				changed[d.nodeOf[id]] = true
				continue
			}
			r.holders[id]--
			keys := r.sharers[id]
			keys = slices.Delete(keys, slices.Index(keys, read.key), slices.Index(keys, read.key)+1)
			r.sharers[id] = keys
			if first := slices.Min(keys); d.allocated.at(id) != first {
				d.allocated.set(id, first) // of several, the first by key
				changed[d.nodeOf[id]] = true
			}
			if len(keys) == 1 {
				delete(r.sharers, id)
			}
		}
		delete(r.claimObjs, c)
	}
	for i, c := range added {
		read := reads[i]
		read.listed = r.listing
		d.claims.set(read.key, c)
		r.claimObjs[c] = read
		for j, id := range read.held {
			r.noteHolder(id, read.key, d.allocated.at(id))
			if cur := d.allocated.at(id); cur == "" || read.key < cur {
				d.allocated.set(id, read.key)
				changed[d.nodeOf[id]] = true
			}
			if read.share[j] {
				changed[d.nodeOf[id]] = true
			}
		}
	}
	delete(changed, "")
	d.changedFrom, d.changed = last.serial, slices.Sorted(maps.Keys(changed))
	if u := last.units.done(); u != nil {
		d.units.set(d.usageFrom(u, removed, added))
	}
	return true
}

// noteHolder counts one more claim, of that key, holding a device whose
// holder so far (the only one, when there is one) is first.
func (r *DRAReader) noteHolder(id DeviceID, key, first string) {
	switch r.holders[id]++; r.holders[id] {
	case 1:
	case 2:
		if r.sharers == nil {
			r.sharers = map[DeviceID][]string{}
		}
		r.sharers[id] = []string{first, key}
	default:
		r.sharers[id] = append(r.sharers[id], key)
	}
}

// ReadClaims is a new reading made from the last one (Read's, ReadFrom's or
// ReadClaims') in which the claims of the given keys (namespace/name) are
// the given objects, nil for a claim gone, and every other claim, class and
// slice is as it was: how a host that is told which claims changed (an
// informer's events, the claims of a pod it reserved) reads DRA again in
// the time of what changed, listing nothing. Claims that did not change
// may be given. A claim the scheduler has allocated in memory (pending, as
// in DRAListers, non-nil for it) reads with that allocation
// (WithPendingAllocations). The reading shares the last one's classes and
// devices (ChangedNodes). A claim under another key, or a malformed
// allocation, is an error naming the claim, and so is calling it before
// any reading.
func (r *DRAReader) ReadClaims(claims map[string]*resourcev1.ResourceClaim, pending func(types.UID) *resourcev1.AllocationResult) (*DRA, error) {
	last := r.last
	if last == nil || r.claimObjs == nil {
		return nil, errors.New("DRAReader.ReadClaims: no reading to start from")
	}
	r.listing++
	given := claims
	claims = make(map[string]*resourcev1.ResourceClaim, len(given))
	for key, c := range given {
		var a *resourcev1.AllocationResult
		if c != nil && c.UID != "" && pending != nil {
			a = pending(c.UID)
		}
		if a == nil {
			delete(r.pending, key)
		} else {
			copied := *c
			copied.Status.Allocation = a
			c = r.keepPending(r.pending, c, &copied)
		}
		claims[key] = c
	}
	var added, removed []*resourcev1.ResourceClaim
	var reads []*claimRead
	full := false // a claim object listed under two keys: read every claim
	for _, key := range slices.Sorted(maps.Keys(claims)) {
		c, old := claims[key], last.claims.at(key)
		if c == old {
			continue
		}
		if c != nil {
			read, err := readClaim(c)
			if err != nil {
				return nil, err
			}
			if read.key != key {
				return nil, fmt.Errorf("resourceclaim %s: given as %s", read.key, key)
			}
			_, known := r.claimObjs[c]
			full = full || known
			added, reads = append(added, c), append(reads, &read)
		}
		if old != nil {
			removed = append(removed, old)
		}
	}
	d := *last
	d.alloc, d.units, d.serial = new(draAllocator), new(usageOnce), newSerial()
	if full || !r.applyClaims(&d, added, reads, removed) {
		all := slices.Collect(maps.Keys(r.claimObjs))
		all = slices.DeleteFunc(all, func(c *resourcev1.ResourceClaim) bool { return slices.Contains(removed, c) })
		if err := r.readEveryClaim(&d, append(all, added...)); err != nil {
			return nil, err
		}
	}
	if d.changedFrom == last.serial {
		d.alloc.carry(last.alloc, d.changed) // the other nodes' allocators stay
	}
	r.last = &d
	return &d, nil
}

// readEveryClaim reads every claim into d's tables. On an error the reader
// forgets the claims, and reads every one the next time.
func (r *DRAReader) readEveryClaim(d *DRA, claims []*resourcev1.ResourceClaim) error {
	d.changedFrom, d.changed = 0, nil
	byKey, allocated := map[string]*resourcev1.ResourceClaim{}, map[DeviceID]string{}
	objs := make(map[*resourcev1.ResourceClaim]*claimRead, len(claims))
	r.holders, r.sharers = map[DeviceID]int{}, nil
	for _, c := range claims {
		if c == nil {
			continue
		}
		if _, dup := objs[c]; dup {
			continue
		}
		read, ok := r.claimObjs[c]
		if !ok {
			fresh, err := readClaim(c)
			if err != nil {
				r.claimObjs, r.holders, r.sharers = nil, nil, nil
				return err
			}
			read = &fresh
		}
		read.listed = r.listing
		objs[c] = read
		byKey[read.key] = c
		for _, id := range read.held {
			r.noteHolder(id, read.key, allocated[id])
			if cur, held := allocated[id]; !held || read.key < cur {
				allocated[id] = read.key // of several, the first by key
			}
		}
	}
	d.claims, d.allocated = layeredOf(byKey), layeredOf(allocated)
	r.claimObjs = objs
	return nil
}

// readClaim reads what a claim holds; a malformed allocation result is an
// error naming the claim and the field.
func readClaim(c *resourcev1.ResourceClaim) (claimRead, error) {
	read := claimRead{key: c.Namespace + "/" + c.Name}
	if c.Status.Allocation == nil {
		return read, nil
	}
	for i, r := range c.Status.Allocation.Devices.Results {
		field := fmt.Sprintf("status.allocation.devices.results[%d]", i)
		switch {
		case r.Driver == "":
			return claimRead{}, fmt.Errorf("resourceclaim %s: %s.driver: empty", read.key, field)
		case r.Pool == "":
			return claimRead{}, fmt.Errorf("resourceclaim %s: %s.pool: empty", read.key, field)
		case r.Device == "":
			return claimRead{}, fmt.Errorf("resourceclaim %s: %s.device: empty", read.key, field)
		}
		if err := checkConsumed(read.key, field, r); err != nil {
			return claimRead{}, err
		}
		if r.AdminAccess != nil && *r.AdminAccess {
			continue
		}
		read.held = append(read.held, DeviceID{r.Driver, r.Pool, r.Device})
		read.share = append(read.share, r.ShareID != nil)
	}
	return read, nil
}

// Classes are the device classes, by name.
func (d *DRA) Classes() []DRAClass { return d.classes }

// classIndex is the index of the class of that name in Classes.
func (d *DRA) classIndex(name string) (int, bool) {
	return slices.BinarySearchFunc(d.classes, name, func(c DRAClass, n string) int { return cmp.Compare(c.Name, n) })
}

// Devices are a node's devices, in the order of their slices and of the
// devices in them.
func (d *DRA) Devices(node string) []DRADevice { return d.devices[node] }

// Nodes are the nodes with devices, in order.
func (d *DRA) Nodes() []string {
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
func (d *DRA) HeldBy(id DeviceID) string { return d.allocated.at(id) }

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
func (d *DRA) Amounts(node, class string) (allocatable, used int64) {
	c, ok := d.classIndex(class)
	if !ok {
		return 0, 0
	}
	return d.amounts(node, c)
}

// WithPendingAllocations are the claims as a scheduler holds them between
// its decision and the API's: each claim the scheduler has allocated in
// memory (pending(uid) non-nil, as kube-scheduler's and Volcano's
// ResourceClaimTracker.GetPendingAllocation answer) with that allocation
// in place of its status's. The claims are not changed; one with a pending
// allocation is a copy. Every host reads a scheduler's claims through it,
// since the tracker's List leaves the pending allocations out.
func WithPendingAllocations(claims []*resourcev1.ResourceClaim, pending func(types.UID) *resourcev1.AllocationResult) []*resourcev1.ResourceClaim {
	return withPending(claims, pending, nil)
}

// withPending is WithPendingAllocations; each copy it makes goes through
// made, when not nil, which may give another object of the same content
// in its place.
func withPending(claims []*resourcev1.ResourceClaim, pending func(types.UID) *resourcev1.AllocationResult, made func(claim, copied *resourcev1.ResourceClaim) *resourcev1.ResourceClaim) []*resourcev1.ResourceClaim {
	out := claims
	for i, c := range claims {
		if c == nil || c.UID == "" {
			continue
		}
		a := pending(c.UID)
		if a == nil {
			continue
		}
		if &out[0] == &claims[0] {
			out = slices.Clone(claims)
		}
		copied := *c
		copied.Status.Allocation = a
		out[i] = &copied
		if made != nil {
			out[i] = made(c, out[i])
		}
	}
	return out
}

// DRAListers are how a scheduler lists its DRA objects: kube-scheduler's
// and Volcano's SharedDRAManager give them as method values
// (ResourceSlices().ListWithDeviceTaintRules, DeviceClasses().List,
// ResourceClaims().List and ResourceClaims().GetPendingAllocation).
type DRAListers struct {
	Slices  func() ([]*resourcev1.ResourceSlice, error)
	Classes func() ([]*resourcev1.DeviceClass, error)
	Claims  func() ([]*resourcev1.ResourceClaim, error)
	Pending func(types.UID) *resourcev1.AllocationResult
	// Templates, when not nil, lists the ResourceClaimTemplates, for a
	// host that plans for pods whose claims are not made yet (a
	// descheduler); Pending, when nil, is none.
	Templates func() ([]*resourcev1.ResourceClaimTemplate, error)
}

// ReadFrom reads what a scheduler holds (Read): its slices, classes, and
// claims with the allocations it made in memory (WithPendingAllocations);
// nil when it holds no slices and no classes (a cluster without DRA).
func (r *DRAReader) ReadFrom(l DRAListers) (*DRA, error) {
	slices, err := l.Slices()
	if err != nil {
		return nil, fmt.Errorf("listing resourceslices: %w", err)
	}
	classes, err := l.Classes()
	if err != nil {
		return nil, fmt.Errorf("listing deviceclasses: %w", err)
	}
	if len(slices) == 0 && len(classes) == 0 {
		return nil, nil
	}
	claims, err := l.Claims()
	if err != nil {
		return nil, fmt.Errorf("listing resourceclaims: %w", err)
	}
	o := DRAObjects{Slices: slices, Classes: classes, Claims: claims}
	if l.Pending != nil {
		prev := r.pending
		r.pending = nil
		o.Claims = withPending(claims, l.Pending, func(c, copied *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
			return r.keepPending(prev, c, copied)
		})
	}
	if l.Templates != nil {
		if o.Templates, err = l.Templates(); err != nil {
			return nil, fmt.Errorf("listing resourceclaimtemplates: %w", err)
		}
	}
	return r.Read(o)
}
