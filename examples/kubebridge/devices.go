package kubebridge

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
)

// How a host reads a node's devices from Kubernetes objects, which do not
// say which device a pod holds: the node has as many whole devices as its
// allocatable amount of the device resource (at most
// resource.MaxDevicesPerNode), of its model (resource.NodeModel of its
// labels), and its pods take theirs tightest first, one after another; a
// pod whose devices do not fit holds none. A Snapshot takes them in the
// order of the pods' events (a fresh snapshot: of their namespaces and
// names); NodeDevices, for a host that reads a node's pods at once, in the
// order of their namespaces and names.

// deviceCount is how many whole devices of the named resource an
// allocatable amount (canonical units) makes.
func deviceCount(amount int64) int {
	return int(min(amount/1000, resource.MaxDevicesPerNode))
}

// holdDevices takes a pod's devices on a row, tightest first, and returns
// the devices it took: nil when it asks for none or they do not fit.
func holdDevices(d *resource.Devices, row int, r resource.DeviceRequest) ([]int, error) {
	if r.Count == 0 || !d.Fits(row, r) {
		return nil, nil
	}
	return d.AllocateInto(row, r, nil)
}

// NodeDevices writes a node's devices into its row of a device view, as
// kube-scheduler's NodeInfo shows the node and its pods: the node's whole
// devices of its model, and the pods that count on it (Counts) holding
// theirs, taken in the order of their namespaces and names. It is the
// rule a Snapshot follows, for a host that reads a node's pods at once.
func NodeDevices(d *resource.Devices, row int, node *v1.Node, pods []*v1.Pod) error {
	q := node.Status.Allocatable[v1.ResourceName(d.Name())]
	count := deviceCount(Amount(d.Name(), q))
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
		if _, err := holdDevices(d, row, resource.DeviceRequestOf(PodOf(p), d.Name())); err != nil {
			return err
		}
	}
	return nil
}
