package kubebridge

import (
	"fmt"
	"iter"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
)

// RegistrationError says why a node's GPU-sharing registration cannot be
// read; the node then has no devices of the view.
type RegistrationError struct {
	Node, Device string
	Err          error
}

func (e *RegistrationError) Error() string {
	return fmt.Sprintf("node %s: %v; it has no %s here", e.Node, e.Err, e.Device)
}

func (e *RegistrationError) Unwrap() error { return e.Err }

// DeviceReading is what a node says of its devices of a view's resource
// (ReadDevices), by the package's rule (How a host reads a node's
// devices): a host that keeps it (cache.Cache) writes the node's row from
// it and holds its pods' devices by it.
type DeviceReading struct {
	count int
	// index maps a registered GPU's UUID to its device in the view; nil
	// when the node has no registration.
	index map[string]int
	// err says why a registration could not be read (count is then 0), or
	// that the node has more DRA devices than resfit reads of a node.
	err error
	// fromDRA says the devices are DRA's units (dra.Reading.NodeUnits).
	fromDRA bool
	units   dra.NodeUnits
}

// ReadDevices reads a node's devices of the named resource; with DRA (d
// not nil), a node that has none otherwise has its DRA devices.
func ReadDevices(d *dra.Reading, node *v1.Node, device string) DeviceReading {
	if device == resource.GPU {
		registered, from, err := resource.RegisteredDevices(node.Annotations)
		if err != nil {
			return DeviceReading{err: &RegistrationError{Node: node.Name, Device: device, Err: err}}
		}
		if from != "" {
			index := make(map[string]int, len(registered))
			for _, d := range registered {
				if d.Healthy {
					index[d.UUID] = len(index)
				}
			}
			return DeviceReading{count: len(index), index: index}
		}
	}
	a, err := Amount(device, node.Status.Allocatable[v1.ResourceName(device)])
	if err != nil {
		return DeviceReading{err: fmt.Errorf("node %s: status.allocatable[%s]: %w", node.Name, device, err)}
	}
	nd := DeviceReading{count: int(min(a/1000, resource.MaxDevicesPerNode))}
	if nd.count == 0 && d != nil {
		if u := d.NodeUnits(node.Name, device); len(u.Left) > 0 {
			return DeviceReading{count: len(u.Left), err: u.Err, fromDRA: true, units: u}
		}
		return DeviceReading{}
	}
	return nd
}

// Count is how many devices the node has.
func (nd DeviceReading) Count() int { return nd.count }

// Err says why a registration could not be read (Count is then 0), or
// that the node has more DRA devices than resfit reads of a node; nil
// otherwise.
func (nd DeviceReading) Err() error { return nd.err }

// FromDRA reports devices that are DRA's units: their claims say what
// the node's pods hold.
func (nd DeviceReading) FromDRA() bool { return nd.fromDRA }

// Same reports whether two readings give the same devices.
func (nd DeviceReading) Same(o DeviceReading) bool {
	return nd.count == o.count && (nd.index == nil) == (o.index == nil) && maps.Equal(nd.index, o.index) &&
		nd.fromDRA == o.fromDRA && nd.units.Same(o.units)
}

// Model is a node's GPU model: its DRA devices' when they agree on one,
// else its labels' (resource.NodeModel).
func (nd DeviceReading) Model(node *v1.Node) string {
	if nd.fromDRA && nd.units.Model != "" {
		return nd.units.Model
	}
	return resource.NodeModel(node.Labels)
}

// exact is what the sharing stack says a pod holds on the node's devices
// (its holdings on registered, healthy devices), and whether it says so:
// false without a registration or a readable annotation.
func (nd DeviceReading) exact(p *v1.Pod) ([]part, bool) {
	if nd.index == nil {
		return nil, false
	}
	holdings, err := resource.PodDeviceHoldings(p.Annotations)
	if err != nil || holdings == nil {
		return nil, false
	}
	parts := make([]part, 0, len(holdings))
	for _, h := range holdings {
		if j, ok := nd.index[h.UUID]; ok {
			parts = append(parts, part{j, h.Amount})
		}
	}
	return parts, true
}

// Exact reports whether the node's sharing stack says what a pod holds on
// its devices: the node has a registration and the pod an annotation
// that can be read.
func (nd DeviceReading) Exact(p *v1.Pod) bool {
	_, ok := nd.exact(p)
	return ok
}

// Hold takes a pod's devices on the node's row by the package's rule; r
// is what the pod asks for (resource.DeviceRequestOf).
func (nd DeviceReading) Hold(d *resource.Devices, row int, p *v1.Pod, r resource.DeviceRequest) (Held, error) {
	if nd.fromDRA {
		return Held{}, nil // the claims say what it holds
	}
	if parts, ok := nd.exact(p); ok {
		free := d.Free(row)
		fits := true
		for _, pt := range parts {
			fits = fits && pt.amount <= free[pt.device]
		}
		if fits {
			for _, pt := range parts {
				if err := d.Take(row, pt.device, pt.amount); err != nil {
					return Held{}, err
				}
			}
			return Held{parts: parts}, nil
		}
	}
	return holdDevices(d, row, r)
}

// part is an amount a pod holds on one device of its node.
type part struct {
	device int
	amount int64
}

// Held is what one pod holds on its node's devices (HoldDevices); the
// zero value holds nothing.
type Held struct {
	parts []part
}

// Holds reports whether the pod holds any device.
func (h Held) Holds() bool { return len(h.parts) > 0 }

// Parts are the devices the pod holds, each with the amount it holds of
// it, in the order it took them.
func (h Held) Parts() iter.Seq2[int, int64] {
	return func(yield func(int, int64) bool) {
		for _, p := range h.parts {
			if !yield(p.device, p.amount) {
				return
			}
		}
	}
}

// AsRequested is the devices the pod holds, when it holds r: r.Count
// devices, each r.Each of one (a sharing stack's allocation may give the
// devices other shares).
func (h Held) AsRequested(r resource.DeviceRequest) (devices []int, ok bool) {
	if len(h.parts) != r.Count {
		return nil, false
	}
	for _, p := range h.parts {
		if p.amount != r.Each {
			return nil, false
		}
		devices = append(devices, p.device)
	}
	return devices, true
}

// HoldDevices takes a pod's devices on its node's row of a device view, by
// the package's rule, as a host does for a pod it places or finds on the node.
// A node whose registration cannot be read has no devices: the pod holds
// none. With DRA (d not nil), on a node whose devices DRA publishes a
// pod holds what its claims hold, which the host reads with DRA again,
// and nothing here.
func HoldDevices(d *dra.Reading, view *resource.Devices, row int, node *v1.Node, p *v1.Pod) (Held, error) {
	pod, err := PodOf(p)
	if err != nil {
		return Held{}, err
	}
	return ReadDevices(d, node, view.Name()).Hold(view, row, p, resource.DeviceRequestOf(pod, view.Name()))
}

// holdDevices takes a request on a row, tightest first: nothing when it
// asks for no device or its devices do not fit.
func holdDevices(d *resource.Devices, row int, r resource.DeviceRequest) (Held, error) {
	if r.Count == 0 || !d.Fits(row, r) {
		return Held{}, nil
	}
	devices, err := d.AllocateInto(row, r, nil)
	if err != nil {
		return Held{}, err
	}
	h := Held{parts: make([]part, len(devices))}
	for i, j := range devices {
		h.parts[i] = part{j, r.Each}
	}
	return h, nil
}

// Return gives back on a row of a device view what the pod held there, as
// the pod leaves (the inverse of HoldDevices).
func (h Held) Return(d *resource.Devices, row int) error {
	for _, p := range h.parts {
		if err := d.Return(row, p.device, p.amount); err != nil {
			return err
		}
	}
	return nil
}

// DeviceAmounts is what a row of a device view holds of the device
// resource, as a host's table holds it (RowWriter.WithDevices): its
// devices whole (allocatable) and what its pods hold on them (used).
func DeviceAmounts(d *resource.Devices, row int) (allocatable, used int64) {
	allocatable = int64(len(d.Free(row))) * d.PerDevice()
	return allocatable, allocatable - d.FreeTotal(row)
}

// NodeDevices writes a node's devices into its row of a device view, as
// kube-scheduler's NodeInfo shows the node and its pods: the node's
// devices of its model, and the pods that count on it (Counts) holding
// theirs, by the package's rule. It is the rule a fresh cache.Cache follows, for
// a host that reads a node's pods at once. A registration that cannot be
// read is a *RegistrationError, returned once the row is written (without
// devices): the host may report it and go on. With DRA (d not nil), a
// node without devices of the view's resource otherwise has the units of
// its class, each with what is left of it, and its pods hold nothing by
// guessing.
func NodeDevices(d *dra.Reading, view *resource.Devices, row int, node *v1.Node, pods []*v1.Pod) error {
	return ReadDevices(d, node, view.Name()).Write(view, row, node, pods)
}

// Write writes the node's devices as read into its row of a device view,
// and its pods' holdings (NodeDevices).
func (nd DeviceReading) Write(d *resource.Devices, row int, node *v1.Node, pods []*v1.Pod) error {
	if len(d.Free(row)) != nd.count || d.FreeTotal(row) != int64(nd.count)*d.PerDevice() {
		if err := d.SetCount(row, nd.count); err != nil {
			return err
		}
	}
	if err := d.SetModel(row, nd.Model(node)); err != nil {
		return err
	}
	if !nd.fromDRA && d.Partitioned(row) != nil {
		if err := d.SetPartitioned(row, nil); err != nil {
			return err
		}
	}
	if nd.count == 0 {
		return nd.err
	}
	if nd.fromDRA {
		if err := d.SetFree(row, nd.units.Free(d.PerDevice())); err != nil {
			return err
		}
		if nd.units.Parts != nil || d.Partitioned(row) != nil {
			return d.SetPartitioned(row, nd.units.Parts)
		}
		return nil
	}
	for _, p := range nd.Ordered(pods) {
		pod, err := PodOf(p)
		if err != nil {
			return err
		}
		if _, err := nd.Hold(d, row, p, resource.DeviceRequestOf(pod, d.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Ordered is the pods that count (Counts) in the order they take their
// devices when a node is read at once: those the sharing stack says hold
// devices first, so that no guess takes what they hold, then the others;
// each in the order of their namespaces and names.
func (nd DeviceReading) Ordered(pods []*v1.Pod) []*v1.Pod {
	type entry struct {
		pod   *v1.Pod
		exact bool
	}
	entries := make([]entry, 0, len(pods))
	for _, p := range pods {
		if Counts(p) {
			_, exact := nd.exact(p)
			entries = append(entries, entry{p, exact})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.exact && !b.exact:
			return -1
		case b.exact && !a.exact:
			return 1
		}
		return ByNamespaceAndName(a.pod, b.pod)
	})
	out := make([]*v1.Pod, len(entries))
	for i, e := range entries {
		out[i] = e.pod
	}
	return out
}
