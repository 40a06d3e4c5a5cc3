package kubebridge

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
)

// How a host reads a node's devices from Kubernetes objects: the node has
// as many devices as its allocatable amount of the device resource in
// whole devices (at most resource.MaxDevicesPerNode), of its model
// (resource.NodeModel of its labels); its pods take theirs tightest
// first, one after another, and a pod whose devices do not fit holds none
// (Kubernetes objects do not say which device a pod holds). A Snapshot
// takes them in the order of the pods' events (a fresh snapshot: of their
// namespaces and names); NodeDevices, for a host that reads a node's pods
// at once, in the order of their namespaces and names.
//
// With a device view, a host's table holds the device resource as the
// view does (RowWriter.WithDevices): a node's allocatable amount is its
// devices, whole, and its used amount what its pods hold, a share of a
// device counting as the share; a task asks for its share's total
// (scoring.NewTask).

// nodeDeviceCount is how many devices of the named resource a node has.
func nodeDeviceCount(node *v1.Node, device string) int {
	q := node.Status.Allocatable[v1.ResourceName(device)]
	return int(min(max(Amount(device, q), 0)/1000, resource.MaxDevicesPerNode))
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

// HoldDevices takes what a pod asks of a row's devices
// (resource.DeviceRequestOf), tightest first, as a host does for a pod it
// places or finds on the node: nothing when the pod asks for no device or
// its devices do not fit.
func HoldDevices(d *resource.Devices, row int, p *v1.Pod) (Held, error) {
	return holdDevices(d, row, resource.DeviceRequestOf(PodOf(p), d.Name()))
}

// holdDevices is HoldDevices for a request read already.
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
// theirs, taken in the order of their namespaces and names. It is the
// rule a Snapshot follows, for a host that reads a node's pods at once.
func NodeDevices(d *resource.Devices, row int, node *v1.Node, pods []*v1.Pod) error {
	count := nodeDeviceCount(node, d.Name())
	if len(d.Free(row)) != count || d.FreeTotal(row) != int64(count)*d.PerDevice() {
		if err := d.SetCount(row, count); err != nil {
			return err
		}
	}
	if err := d.SetModel(row, resource.NodeModel(node.Labels)); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	pods = slices.Clone(pods)
	slices.SortFunc(pods, byNamespaceAndName)
	for _, p := range pods {
		if !Counts(p) {
			continue
		}
		if _, err := HoldDevices(d, row, p); err != nil {
			return err
		}
	}
	return nil
}
