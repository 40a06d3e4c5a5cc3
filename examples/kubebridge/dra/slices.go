package dra

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	"github.com/resfit/resfit/resource"
)

// readClasses reads the device classes into d, sorted by name: each a
// resource of the schema (its spec.extendedResourceName, or the implicit
// deviceclass.resource.kubernetes.io/<name>) with its CEL selectors
// compiled. A nameless class, one listed twice, two classes of one
// resource, a bad extended resource name or a selector that does not
// compile is an error naming the class and the field.
func (d *Reading) readClasses(classes []*resourcev1.DeviceClass) error {
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
		class := Class{Name: name, Resource: ImplicitResourcePrefix + name, Simple: true}
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
	slices.SortFunc(d.classes, func(a, b Class) int { return cmp.Compare(a.Name, b.Name) })
	return nil
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
func (d *Reading) readSlices(newest []*resourcev1.ResourceSlice, cache, next map[*resourcev1.ResourceSlice][]Device) error {
	d.devices, d.nodeOf = map[string][]Device{}, map[DeviceID]string{}
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
func (d *Reading) working(classes []int) []int {
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
func (d *Reading) ClassErrors() []error {
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
func (d *Reading) sliceDevices(s *resourcev1.ResourceSlice) ([]Device, error) {
	var out []Device
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
		device := Device{ID: id, Node: node, Shared: dev.AllowMultipleAllocations != nil && *dev.AllowMultipleAllocations,
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
