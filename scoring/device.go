package scoring

import (
	"fmt"
	"sync/atomic"

	"github.com/resfit/resfit/resource"
)

// DeviceFilter rejects a node that lacks the devices a task asks for in
// Task.Devices, or whose devices' model (resource.Devices.Model) is not one
// of Task.Models: Count devices with at least Each free on every one, as the
// GPU-sharing filters of Alibaba's gpushare and the ATC'23 simulator do. A
// node with 1000 milli-GPU free in total, spread as 4 × 250, fails a pod
// asking for one GPU with 300 free, though NodeResourcesFit would pass it.
// A task whose devices are parts of a type (Task.Partition) needs Count
// devices that can each take a part of that type instead
// (resource.Devices.FitsPart).
//
// It reads a resource.Devices whose rows match the scored table's rows.
// The filter only reads the view; the caller updates it (Take, Allocate)
// between scheduling cycles, as it updates the table's used amounts.
type DeviceFilter struct {
	devices *resource.Devices
	// slot is the device resource's slot in the schema last seen.
	slot atomic.Pointer[deviceSlot]
}

type deviceSlot struct {
	schema *resource.Schema
	slot   int // -1 when the schema lacks the resource
}

// NewDeviceFilter returns the filter over a device view.
func NewDeviceFilter(devices *resource.Devices) (*DeviceFilter, error) {
	if devices == nil {
		return nil, fmt.Errorf("device filter: nil device view")
	}
	return &DeviceFilter{devices: devices}, nil
}

// DeviceShare is the DeviceFilter's name.
const DeviceShare = "DeviceShare"

// Name is DeviceShare.
func (f *DeviceFilter) Name() string { return DeviceShare }

// Freed is the device view's resource.Devices.Freed: the filter is
// Monotone, as a node's devices only fill up between the changes it
// counts.
func (f *DeviceFilter) Freed() uint64 { return f.devices.Freed() }

// FilterNodes rejects the span's nodes where the task's devices do not fit.
func (f *DeviceFilter) FilterNodes(task *Task, nodes Span, v *Verdicts) error {
	if f.devices.Len() != nodes.Table().Len() {
		return fmt.Errorf("the device view has %d nodes, the table %d", f.devices.Len(), nodes.Table().Len())
	}
	r := task.Devices
	if r.Count == 0 {
		return nil
	}
	if err := f.devices.Check(r); err != nil {
		return err
	}
	models := task.Models
	schema := nodes.Table().Schema()
	ds := f.slot.Load()
	if ds == nil || ds.schema != schema {
		ds = &deviceSlot{schema: schema, slot: -1}
		if s, ok := schema.Slot(f.devices.Name()); ok {
			ds.slot = s
		}
		f.slot.Store(ds)
	}
	slot := ds.slot
	for i := range nodes.Len() {
		row := nodes.Row(i)
		fits := f.devices.Fits(row, r)
		if task.Partition != "" {
			fits = f.devices.FitsPart(row, task.Partition, r.Count)
		}
		if !fits || !models.Accepts(f.devices.Model(row)) {
			v.Reject(i, slot)
		}
	}
	return nil
}

// Explain says which model the task does not accept, or how many devices
// had enough free.
func (f *DeviceFilter) Explain(task *Task, nodes *resource.Table, row, _ int) string {
	r := task.Devices
	if why := task.Models.Rejection(f.devices.Name(), f.devices.Model(row)); why != "" {
		return why
	}
	name := f.devices.Name()
	if task.Partition != "" {
		n := 0
		for _, p := range f.devices.Partitioned(row) {
			if _, ok := p.Layout.Fit(task.Partition, p.Left); ok {
				n++
			}
		}
		return fmt.Sprintf("Insufficient %s devices: %d of %d can take a %s part, %d needed", name, n, len(f.devices.Free(row)), task.Partition, r.Count)
	}
	n := 0
	for _, free := range f.devices.Free(row) {
		if free >= r.Each {
			n++
		}
	}
	return fmt.Sprintf("Insufficient %s devices: %d of %d have %s free, %d needed",
		name, n, len(f.devices.Free(row)), resource.FormatAmount(name, r.Each), r.Count)
}
