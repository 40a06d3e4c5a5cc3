package cache

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
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
