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

// addDevices appends a new row's devices, free (DRA's: as its claims
// hold them), of the node's model, and writes DRA's used amounts.
func (s *Cache) addDevices(row int, name string) error {
	if _, err := s.devices.AddNode(s.nodeDevs[name].Count()); err != nil {
		return err
	}
	if nd := s.nodeDevs[name]; nd.FromDRA() {
		if err := nd.Write(s.devices, row, s.nodes[name], nil); err != nil {
			return err
		}
	}
	if err := s.devices.SetModel(row, s.Model(name)); err != nil {
		return err
	}
	return s.writeUsed(row)
}

// writeUsed writes a row's used amounts again as they are, which puts
// DRA's and the device view's in (kubebridge.RowWriter.SetUsed).
func (s *Cache) writeUsed(row int) error {
	used := s.scratch
	copy(used, s.table.Used(row))
	cpu, _ := s.schema.Slot(resource.CPU)
	memory, _ := s.schema.Slot(resource.Memory)
	nonZero := s.table.NonZeroUsed(row)
	return s.writer.SetUsed(s.table, row, used, nonZero[cpu], nonZero[memory])
}

// countPods counts a node's pods on its row, whose used amounts and
// devices hold none of them: when the node has devices for them to take
// (the order decides which), in the order a host that reads a node's pods
// at once takes them (NodeDevices).
func (s *Cache) countPods(name string) error {
	row, ok := s.rows[name]
	if !ok {
		return nil
	}
	pods := s.bound[name]
	if len(s.devices.Free(row)) == 0 || len(pods) < 2 {
		for _, e := range pods {
			if err := s.account(row, e, +1); err != nil {
				return err
			}
		}
		return nil
	}
	entries := make(map[*v1.Pod]*podEntry, len(pods))
	for _, e := range pods {
		entries[e.pod] = e
	}
	for _, p := range s.nodeDevs[name].Ordered(slices.Collect(maps.Keys(entries))) {
		if err := s.account(row, entries[p], +1); err != nil {
			return err
		}
	}
	return nil
}

// account adds (sign +1) or takes away (−1) a counted pod's requests on a
// row and its devices, or changes nothing and reports why.
func (s *Cache) account(row int, e *podEntry, sign int64) error {
	used := s.scratch
	copy(used, s.table.Used(row))
	for i := range used {
		if i != s.writer.DeviceSlot() { // the device view's, below
			used[i] += sign * e.plain[i]
		}
	}
	pods, _ := s.schema.Slot(resource.Pods)
	used[pods] += sign
	cpu, _ := s.schema.Slot(resource.CPU)
	memory, _ := s.schema.Slot(resource.Memory)
	nonZero := s.table.NonZeroUsed(row)
	nonZeroCPU, nonZeroMemory := nonZero[cpu]+sign*e.nonZero[cpu], nonZero[memory]+sign*e.nonZero[memory]
	if err := s.schema.Check(used); err != nil {
		return fmt.Errorf("node %s used: %w", s.table.Name(row), err)
	}
	if nonZeroCPU < 0 || nonZeroCPU > resource.MaxAmount || nonZeroMemory < 0 || nonZeroMemory > resource.MaxAmount {
		return fmt.Errorf("node %s non-zero used: cpu %d or memory %d is outside [0, 2^53]", s.table.Name(row), nonZeroCPU, nonZeroMemory)
	}
	if sign < 0 && e.held.Holds() {
		if err := e.held.Return(s.devices, row); err != nil {
			return err
		}
		e.held = kubebridge.Held{}
	}
	if sign > 0 {
		held, err := s.nodeDevs[e.pod.Spec.NodeName].Hold(s.devices, row, e.pod, e.devices)
		if err != nil {
			return err
		}
		e.held = held
	}
	return s.writer.SetUsed(s.table, row, used, nonZeroCPU, nonZeroMemory)
}

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
		devs := s.readDevices(n)
		alloc, err := s.writer.AllocatableWith(n, devs.Count())
		if err != nil {
			return err
		}
		if err := s.updateNode(row, n, devs, alloc); err != nil {
			return err
		}
	}
	return nil
}

// readNodeDevices reads again what every node says of its devices.
func (s *Cache) readNodeDevices() {
	for name, n := range s.nodes {
		s.nodeDevs[name] = s.readDevices(n)
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
