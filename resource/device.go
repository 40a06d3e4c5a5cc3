package resource

import (
	"fmt"
	"slices"
)

// DeviceRequest asks for Count devices of one kind with at least Each
// free on every one, in the device resource's units (milli-units for an
// extended resource: 1000 is a whole device). A pod sharing one GPU asks
// for {Count: 1, Each: 300}; a pod with two whole GPUs for {2, 1000}. The
// zero value asks for nothing.
type DeviceRequest struct {
	Count int
	Each  int64
}

// Total is the amount the request takes from the node: Count × Each.
func (r DeviceRequest) Total() int64 { return int64(r.Count) * r.Each }

// Devices is a device-level view of one resource, such as nvidia.com/gpu:
// for each node, its devices and how much of each is free. A Table holds a
// node's amount of the resource as one number; Devices says whether that
// amount is one free GPU or eight GPUs with 125 milli free each, which is
// what decides where a pod sharing a GPU fits.
//
// Node rows are meant to match a Table's rows (add nodes to both in the
// same order). Like a Table it is plain data: reads may run concurrently,
// a change must not run alongside anything else; and like a Table's, the
// accessors that return a value (Free, FreeTotal, Fits, Tightest, Version)
// panic on a row outside [0, Len()), while Take and Allocate report it as
// an error.
type Devices struct {
	name      string
	perDevice int64
	start     []int           // node i's devices are free[start[i]:start[i+1]]
	free      []int64         // free amount per device
	sorted    []int64         // each node's free amounts in increasing order (see Fits)
	versions  []uint64        // changes per node (see Version)
	models    []string        // per node; "" unknown
	parts     [][]Partitioned // per node (SetPartitioned)
	freed     uint64          // see Freed
	rowFree   []int64         // per node, its free amounts summed (FreeTotal)
	freeSum   int64           // rowFree summed (FreeSum)
}

// MaxDevicesPerNode bounds the devices one node may have.
const MaxDevicesPerNode = 1 << 10

// NewDevices returns an empty view of the named resource whose devices
// each hold perDevice (1000 for GPUs counted in milli-units).
func NewDevices(name string, perDevice int64) (*Devices, error) {
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("devices: %w", err)
	}
	if perDevice <= 0 || perDevice > MaxAmount/MaxDevicesPerNode {
		return nil, fmt.Errorf("devices %s: amount per device must be in [1, %d], got %d", name, MaxAmount/MaxDevicesPerNode, perDevice)
	}
	return &Devices{name: name, perDevice: perDevice, start: []int{0}}, nil
}

// Name is the resource the devices provide.
func (d *Devices) Name() string { return d.name }

// PerDevice is the amount one whole device holds.
func (d *Devices) PerDevice() int64 { return d.perDevice }

// Len is the number of nodes.
func (d *Devices) Len() int { return len(d.start) - 1 }

// AddNode appends a node with count whole, free devices and returns its
// row.
func (d *Devices) AddNode(count int) (int, error) {
	if count < 0 || count > MaxDevicesPerNode {
		return 0, fmt.Errorf("devices %s: a node has 0 to %d devices, got %d", d.name, MaxDevicesPerNode, count)
	}
	for range count {
		d.free = append(d.free, d.perDevice)
		d.sorted = append(d.sorted, d.perDevice)
	}
	d.start = append(d.start, len(d.free))
	d.versions = append(d.versions, 0)
	d.models = append(d.models, "")
	d.parts = append(d.parts, nil)
	d.rowFree = append(d.rowFree, int64(count)*d.perDevice)
	d.freeSum += int64(count) * d.perDevice
	d.freed++
	return d.Len() - 1, nil
}

// SetModel records the model of node i's devices (one model per node, as
// a node's GPUs are alike; "" for unknown), which a task's accepted models
// (ModelSet) are checked against. It counts as a change (Version).
func (d *Devices) SetModel(i int, model string) error {
	if err := d.checkRow(i); err != nil {
		return err
	}
	if err := ValidateModel(model); err != nil {
		return fmt.Errorf("devices %s: node row %d: %w", d.name, i, err)
	}
	if model != d.models[i] {
		d.freed++
	}
	d.models[i] = model
	d.versions[i]++
	return nil
}

// Freed counts the changes that may have made room on some node: AddNode,
// SetModel changing a model, SetFree raising an amount, Return, SetCount
// and Remove. Take and Allocate only take room and leave it as it was.
func (d *Devices) Freed() uint64 { return d.freed }

// Model is the model of node i's devices, "" when unknown.
func (d *Devices) Model(i int) string { return d.models[i] }

// Version counts the changes made to node i (Take, Allocate, SetFree,
// SetModel, Return, SetCount, and Remove moving another node into its
// row), so that a cache of what a node's devices imply can tell when to
// recompute.
func (d *Devices) Version(i int) uint64 { return d.versions[i] }

// Free returns node i's free amount per device, a view into d: read it,
// change it only through Take and Allocate.
func (d *Devices) Free(i int) []int64 {
	return d.free[d.start[i]:d.start[i+1]:d.start[i+1]]
}

// Count is how many devices node i has.
func (d *Devices) Count(i int) int { return d.start[i+1] - d.start[i] }

// Whole reports whether node i has devices and every one of them is
// wholly free.
func (d *Devices) Whole(i int) bool {
	lo, hi := d.start[i], d.start[i+1]
	return hi > lo && d.sorted[lo] == d.perDevice // sorted: its least free amount first
}

// FreeTotal is node i's free amount summed over its devices.
func (d *Devices) FreeTotal(i int) int64 { return d.rowFree[i] }

// FreeSum is the free amount summed over every node's devices (FreeTotal
// summed), kept as the view changes, so that reading it costs nothing.
func (d *Devices) FreeSum() int64 { return d.freeSum }

// Capacity is the amount every node's devices hold when wholly free: how
// many devices there are, times PerDevice.
func (d *Devices) Capacity() int64 { return int64(len(d.free)) * d.perDevice }

// Check reports whether r is a request the devices could ever serve: a
// count ≥ 0 and, when it asks for something, an amount per device in
// [1, PerDevice].
func (d *Devices) Check(r DeviceRequest) error {
	switch {
	case r.Count < 0 || r.Count > MaxDevicesPerNode:
		return fmt.Errorf("device request: count must be in [0, %d], got %d", MaxDevicesPerNode, r.Count)
	case r.Count == 0 && r.Each != 0:
		return fmt.Errorf("device request: %d per device but no device", r.Each)
	case r.Count > 0 && (r.Each <= 0 || r.Each > d.perDevice):
		return fmt.Errorf("device request: amount per device must be in [1, %d], got %d", d.perDevice, r.Each)
	}
	return nil
}

func (d *Devices) checkRow(i int) error {
	if i < 0 || i >= d.Len() {
		return fmt.Errorf("devices %s: node row %d is outside [0, %d)", d.name, i, d.Len())
	}
	return nil
}

// Fits reports whether node i has r.Count devices with at least r.Each
// free each. A request for no device fits everywhere.
func (d *Devices) Fits(i int, r DeviceRequest) bool {
	if r.Count <= 0 {
		return true
	}
	// The r.Count-th largest free amount is at least r.Each.
	lo, hi := d.start[i], d.start[i+1]
	return r.Count <= hi-lo && d.sorted[hi-r.Count] >= r.Each
}

// changed counts a change to node i's free amounts, sorts them again and
// sums them again (FreeTotal, FreeSum).
func (d *Devices) changed(i int) {
	d.versions[i]++
	s := d.sorted[d.start[i]:d.start[i+1]]
	copy(s, d.Free(i))
	slices.Sort(s)
	var t int64
	for _, f := range s {
		t += f
	}
	d.freeSum += t - d.rowFree[i]
	d.rowFree[i] = t
}

// Tightest returns the device of node i with the least free amount that
// is still at least each (the lowest index among equals), or -1 when no
// device has that much free: the best-fit choice for a pod sharing a
// device.
func (d *Devices) Tightest(i int, each int64) int {
	best := -1
	free := d.Free(i)
	for j, f := range free {
		if f >= each && (best < 0 || f < free[best]) {
			best = j
		}
	}
	return best
}

// Take takes amount from device j of node i.
func (d *Devices) Take(i, j int, amount int64) error {
	if err := d.checkRow(i); err != nil {
		return err
	}
	free := d.Free(i)
	switch {
	case j < 0 || j >= len(free):
		return fmt.Errorf("devices %s: node row %d has no device %d", d.name, i, j)
	case amount < 0 || amount > free[j]:
		return fmt.Errorf("devices %s: node row %d device %d has %d free, cannot take %d", d.name, i, j, free[j], amount)
	}
	free[j] -= amount
	d.changed(i)
	return nil
}

// SetFree sets node i's free amount per device, as a snapshot of Free
// taken earlier gives it back (undoing allocations): one amount per device,
// each in [0, PerDevice()].
func (d *Devices) SetFree(i int, free []int64) error {
	if err := d.checkRow(i); err != nil {
		return err
	}
	cur := d.Free(i)
	if len(free) != len(cur) {
		return fmt.Errorf("devices %s: node row %d has %d devices, got %d amounts", d.name, i, len(cur), len(free))
	}
	for j, f := range free {
		if f < 0 || f > d.perDevice {
			return fmt.Errorf("devices %s: node row %d device %d: free amount must be in [0, %d], got %d", d.name, i, j, d.perDevice, f)
		}
	}
	for j, f := range free {
		if f > cur[j] {
			d.freed++
			break
		}
	}
	copy(cur, free)
	d.changed(i)
	return nil
}

// Allocate serves r on node i from the tightest devices that fit: the
// r.Count devices with the least free amount that is at least r.Each
// (lower index first among equals), as Tightest picks one. It returns the
// first device it used (-1 for an empty request) and changes nothing when
// r does not fit.
func (d *Devices) Allocate(i int, r DeviceRequest) (int, error) {
	var buf [1]int
	used, err := d.AllocateInto(i, r, buf[:0])
	if err != nil || len(used) == 0 {
		return -1, err
	}
	return used[0], nil
}

// AllocateInto is Allocate, appending to dst[:0] every device it used, in
// the order it chose them (the first is Allocate's), so that Return can
// give them back.
func (d *Devices) AllocateInto(i int, r DeviceRequest, dst []int) ([]int, error) {
	dst = dst[:0]
	if err := d.Check(r); err != nil {
		return dst, err
	}
	if err := d.checkRow(i); err != nil {
		return dst, err
	}
	if !d.Fits(i, r) {
		return dst, fmt.Errorf("devices %s: %d × %d does not fit on node row %d", d.name, r.Count, r.Each, i)
	}
	// Walk the fitting devices in (free, index) order and take from the
	// first r.Count.
	free := d.Free(i)
	lastF, lastJ := int64(-1), -1
	for range r.Count {
		bestJ := -1
		for j, f := range free {
			if f < r.Each || f < lastF || (f == lastF && j <= lastJ) {
				continue
			}
			if bestJ < 0 || f < free[bestJ] {
				bestJ = j
			}
		}
		lastF, lastJ = free[bestJ], bestJ
		dst = append(dst, bestJ)
	}
	for _, j := range dst {
		free[j] -= r.Each
	}
	if r.Count > 0 {
		d.changed(i)
	}
	return dst, nil
}

// Return gives amount back to device j of node i, as a pod that held it
// (Take, AllocateInto) leaves: the inverse of Take. A device that does not
// exist, or that would then have more than PerDevice free, is an error, and
// nothing changes. It counts as freeing (Freed).
func (d *Devices) Return(i, j int, amount int64) error {
	if err := d.checkRow(i); err != nil {
		return err
	}
	free := d.Free(i)
	switch {
	case j < 0 || j >= len(free):
		return fmt.Errorf("devices %s: node row %d has no device %d", d.name, i, j)
	case amount < 0 || amount > d.perDevice-free[j]:
		return fmt.Errorf("devices %s: node row %d device %d has %d free of %d, cannot take %d back", d.name, i, j, free[j], d.perDevice, amount)
	case amount == 0:
		return nil
	}
	free[j] += amount
	d.freed++
	d.changed(i)
	return nil
}

// SetCount gives node i count whole, free devices in place of those it
// had, as when a node's allocatable amount of the resource changes; its
// model stays. It counts as freeing (Freed).
func (d *Devices) SetCount(i, count int) error {
	if err := d.checkRow(i); err != nil {
		return err
	}
	if count < 0 || count > MaxDevicesPerNode {
		return fmt.Errorf("devices %s: a node has 0 to %d devices, got %d", d.name, MaxDevicesPerNode, count)
	}
	whole := make([]int64, count)
	for j := range whole {
		whole[j] = d.perDevice
	}
	d.splice(i, whole)
	d.parts[i] = nil
	d.freed++
	d.changed(i)
	return nil
}

// Remove deletes node i as Table.Remove deletes a row: the last node moves
// into row i (a change to it), and the old row of the node now at i is
// returned, i itself when i was the last.
func (d *Devices) Remove(i int) (int, error) {
	if err := d.checkRow(i); err != nil {
		return 0, err
	}
	last := d.Len() - 1
	if i != last {
		d.splice(i, slices.Clone(d.Free(last)))
		d.models[i] = d.models[last]
		d.parts[i] = d.parts[last]
		d.changed(i)
		d.freed++
	}
	d.freeSum -= d.rowFree[last]
	d.rowFree = d.rowFree[:last]
	d.free = d.free[:d.start[last]]
	d.sorted = d.sorted[:d.start[last]]
	d.start = d.start[:last+1]
	d.versions = d.versions[:last]
	d.models = d.models[:last]
	d.parts = d.parts[:last]
	return last, nil
}

// splice replaces node i's free amounts by free (sorted is set by changed).
// The same number of devices is written in place: a node read again costs
// its own devices, not a move of every later node's.
func (d *Devices) splice(i int, free []int64) {
	lo, hi := d.start[i], d.start[i+1]
	delta := len(free) - (hi - lo)
	if delta == 0 {
		copy(d.free[lo:hi], free)
		return
	}
	d.free = slices.Replace(d.free, lo, hi, free...)
	d.sorted = slices.Replace(d.sorted, lo, hi, free...)
	for j := i + 1; j < len(d.start); j++ {
		d.start[j] += delta
	}
}
