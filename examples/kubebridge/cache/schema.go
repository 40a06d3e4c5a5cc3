package cache

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
)

// learnDRA records the resources of DRA's device classes and returns the
// new ones; on an error it records none.
func (s *Cache) learnDRA() ([]string, error) {
	if s.dra == nil {
		return nil, nil
	}
	var added []string
	for _, c := range s.dra.Classes() {
		names, err := s.learn([]string{c.Resource}, "deviceclass "+c.Name)
		if err != nil {
			for _, name := range added {
				delete(s.names, name)
			}
			return nil, err
		}
		added = append(added, names...)
	}
	return added, nil
}

// SetDRA replaces what the cache reads of DRA, after a change to a
// ResourceSlice, DeviceClass or ResourceClaim (or a pod's claims allocated,
// as Assume does). When the classes bring no resource the schema lacks,
// every node's row and devices are written again in place (the table
// stays, and a node whose devices changed has its pods counted again);
// otherwise the schema, table and device view are built again
// (SchemaChanges counts it). nil drops DRA.
func (s *Cache) SetDRA(d *dra.Reading) error {
	before := s.dra
	s.dra = d
	added, err := s.learnDRA()
	if err != nil {
		s.dra = before
		return err
	}
	if added != nil {
		return s.grow(added, s.readNodeDevices, func() {
			s.dra = before
			s.readNodeDevices()
		})
	}
	s.writer.WithDRA(d)
	for row, name := range s.order {
		n := s.nodes[name]
		alloc, err := s.writer.AllocatableWith(n, kubebridge.ReadDevices(d, n, s.device).Count())
		if err != nil {
			return err
		}
		if err := s.updateNode(row, n, alloc); err != nil {
			return err
		}
	}
	return nil
}

// readNodeDevices reads again what every node says of its devices.
func (s *Cache) readNodeDevices() {
	for name, n := range s.nodes {
		s.nodeDevs[name] = kubebridge.ReadDevices(s.dra, n, s.device)
	}
}

// learn records the resource names an object brings and returns the new
// ones. A name Kubernetes would not accept is an error, and then nothing is
// recorded.
func (s *Cache) learn(names []string, owner string) ([]string, error) {
	var added []string
	for _, name := range names {
		if _, ok := s.names[name]; ok || slices.Contains(added, name) {
			continue
		}
		if err := resource.ValidateName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", owner, err)
		}
		added = append(added, name)
	}
	for _, name := range added {
		s.names[name] = owner
	}
	return added, nil
}

func nodeResourceNames(n *v1.Node) []string {
	names := make([]string, 0, len(n.Status.Allocatable))
	for name := range n.Status.Allocatable {
		names = append(names, string(name))
	}
	slices.Sort(names)
	return names
}

// rebuild makes the schema, table and device view from scratch, keeping
// the rows' order.
func (s *Cache) rebuild() error {
	schema, err := resource.SchemaOf(s.names)
	if err != nil {
		return err
	}
	writer, err := kubebridge.NewRowWriter(schema)
	if err != nil {
		return err
	}
	devices, err := resource.NewDevices(s.device, 1000)
	if err != nil {
		return err
	}
	writer.WithDevices(devices).WithDRA(s.dra)
	table := resource.NewTable(schema, len(s.order))
	rows := make(map[string]int, len(s.order))
	for _, name := range s.order {
		alloc, err := writer.AllocatableWith(s.nodes[name], s.nodeDevs[name].Count())
		if err != nil {
			return err
		}
		r, err := table.Add(name, alloc, nil)
		if err != nil {
			return err
		}
		rows[name] = r
	}
	// Work out every counted pod's requests before changing anything, so
	// that a failure leaves the cache as it was.
	counted := map[*podEntry]*podEntry{}
	for _, key := range slices.Sorted(maps.Keys(s.pods)) {
		e := s.pods[key]
		if !kubebridge.Counts(e.pod) {
			continue
		}
		c := &podEntry{pod: e.pod}
		if err := c.count(schema, s.device); err != nil {
			return err
		}
		counted[e] = c
	}
	bound := map[string]map[string]*podEntry{}
	for key, e := range s.pods {
		e.plain, e.nonZero, e.devices, e.held = nil, nil, resource.DeviceRequest{}, kubebridge.Held{}
		c, ok := counted[e]
		if !ok {
			continue
		}
		e.plain, e.nonZero, e.devices = c.plain, c.nonZero, c.devices
		node := e.pod.Spec.NodeName
		if bound[node] == nil {
			bound[node] = map[string]*podEntry{}
		}
		bound[node][key] = e
	}
	// From here a failure leaves derived state half made; grow rebuilds
	// again without the change, and New returns no cache.
	s.schema, s.table, s.writer, s.devices, s.rows, s.bound = schema, table, writer, devices, rows, bound
	s.scratch = make(resource.Vector, schema.Len())
	for row, name := range s.order {
		if err := s.addDevices(row, name); err != nil {
			return err
		}
		if err := s.countPods(name); err != nil {
			return err
		}
	}
	return nil
}

// grow applies a change that brings new resource names and rebuilds; when
// the rebuild fails, it undoes the change and forgets the names.
func (s *Cache) grow(added []string, apply, undo func()) error {
	apply()
	if err := s.rebuild(); err != nil {
		undo()
		for _, name := range added {
			delete(s.names, name)
		}
		if again := s.rebuild(); again != nil {
			return fmt.Errorf("%w (and rebuilding without the change: %v)", err, again)
		}
		return err
	}
	s.changes++
	return nil
}
