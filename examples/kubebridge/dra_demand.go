package kubebridge

import (
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
)

// draNodeDevices reads a node's devices of a view's resource from DRA:
// its units (Amounts': a device, or a GPU with partitions once), each with
// what is left of it (unitLeft), and those that divide into parts with
// their layouts and counters left (partitioned).
func (d *DRA) draNodeDevices(node, name string) nodeDevices {
	devs := d.viewDevices(node, name)
	nd := nodeDevices{fromDRA: true}
	var seen unitSet
	units := make([]*DRADevice, 0, len(devs))
	past := 0 // units past resource.MaxDevicesPerNode
	for _, dev := range devs {
		if dev.unusable || !seen.add(dev) {
			continue
		}
		if len(nd.left) == resource.MaxDevicesPerNode {
			past++
			continue
		}
		units = append(units, dev)
		if len(nd.left) == 0 {
			nd.model = dev.Model
		}
		if dev.Model != nd.model || resource.ValidateModel(dev.Model) != nil {
			nd.model = ""
		}
		nd.left = append(nd.left, d.unitLeft(dev, d.sets))
	}
	if len(nd.left) == 0 {
		return nodeDevices{}
	}
	nd.count = len(nd.left)
	nd.parts, nd.partsKey = d.partitioned(node, units)
	if past > 0 {
		nd.err = fmt.Errorf("node %s: %d devices of %s in its ResourceSlices, more than the %d resfit reads of a node: the first %d are counted", node, nd.count+past, name, resource.MaxDevicesPerNode, resource.MaxDevicesPerNode)
	}
	return nd
}

// podDemand is what a pod's claims that are not allocated yet take.
type podDemand struct {
	dra      *DRA
	claims   []pendingClaim
	requests []DRARequest
	// uniform says the take is the same on every node that can satisfy the
	// requests, and that the node's amounts decide whether it can (none,
	// or each one exact count of one simple class without its own
	// selectors, DRAClass.Simple); nominal is each request's first
	// alternative's count (All counts none, as its count depends on the
	// node, and so does a share of a device).
	uniform bool
	nominal []int64
	// pinned are the nodes the pod's claims already allocated bind it to
	// (boundNodes); nil where none does.
	pinned map[string]bool
}

// demand reads a pod's demand (PodRequests).
func (d *DRA) demand(pod *v1.Pod) (podDemand, error) {
	claims, err := d.pendingClaims(pod)
	if err != nil {
		return podDemand{}, err
	}
	requests, err := d.ClaimRequests(pod)
	if err != nil {
		return podDemand{}, err
	}
	dd := podDemand{dra: d, claims: claims, requests: requests, uniform: true, nominal: make([]int64, len(d.classes))}
	if dd.pinned, err = d.boundNodes(pod); err != nil {
		return podDemand{}, err
	}
	if dd.pinned != nil {
		dd.uniform = false // the nodes it is not bound to cannot take it
	}
	for _, c := range claims {
		for _, r := range c.claim.Spec.Devices.Requests {
			if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
				// It takes nothing from others, yet a device of its own
				// within the claim, which the node's amounts do not say.
				dd.uniform = false
			}
		}
	}
	for _, r := range requests {
		first := r.Alternatives[0]
		if len(r.Alternatives) != 1 || first.All || len(first.selectors) > 0 || first.capacity || !d.classes[first.class].Simple {
			dd.uniform = false
		}
		if !first.All && !first.capacity { // a share's part of a device is the node's to say
			dd.nominal[first.class] += resource.FromWhole(d.classes[first.class].Resource, first.Count)
		}
	}
	return dd, nil
}

// unitsHeld are the units of the view's resource on node (draNodeDevices'
// order, as the device view numbers them) that a pod's claims hold whole,
// each a device of its own (no partitions, not shared); ok is false when
// a claim of the pod holds anything else there: a partition, a share of
// a device, a device outside the view.
func (d *DRA) unitsHeld(pod *v1.Pod, node, name string) (units []int, ok bool) {
	mine := map[string]bool{}
	held := 0 // the devices the pod's claims hold on the node
	for _, key := range d.podClaimKeys(pod) {
		mine[key] = true
		if c := d.claims.at(key); c != nil && c.Status.Allocation != nil {
			for _, r := range c.Status.Allocation.Devices.Results {
				if id := (DeviceID{Driver: r.Driver, Pool: r.Pool, Device: r.Device}); d.allocated.at(id) == key && d.nodeOf[id] == node {
					held++
				}
			}
		}
	}
	var seen unitSet
	n := 0
	for _, dev := range d.viewDevices(node, name) {
		if dev.unusable || n == resource.MaxDevicesPerNode || !seen.add(dev) {
			continue
		}
		if mine[d.allocated.at(dev.ID)] {
			if dev.unit != "" || dev.Shared {
				return nil, false
			}
			units = append(units, n)
		}
		n++
	}
	return units, len(units) == held
}

// boundNodes are the nodes a pod may run on by its claims that are
// allocated already: a claim's allocation holds devices of a node, or says
// by its nodeSelector where they can be reached, and the pod goes where
// every such claim can (kube-scheduler's DynamicResources filters by the
// allocation's nodeSelector). A node-local device binds the pod to its
// node; a nodeSelector is read by its matchFields on metadata.name, the
// form kube's allocator writes for a node's devices; one that selects by
// labels (devices of a pool offered to many nodes) is left to the
// scheduler, which has the nodes' labels. nil: no claim binds the pod.
func (d *DRA) boundNodes(pod *v1.Pod) (map[string]bool, error) {
	var nodes map[string]bool
	for _, key := range d.podClaimKeys(pod) {
		c := d.claims.at(key)
		if c == nil || c.Status.Allocation == nil {
			continue
		}
		here := map[string]bool{}
		for _, r := range c.Status.Allocation.Devices.Results {
			if n, ok := d.nodeOf[DeviceID{r.Driver, r.Pool, r.Device}]; ok {
				here[n] = true
			}
		}
		if len(here) == 0 {
			named, ok, err := nodesNamed(c.Status.Allocation.NodeSelector)
			if err != nil {
				return nil, fmt.Errorf("resourceclaim %s: status.allocation.nodeSelector: %w", key, err)
			}
			if !ok {
				continue
			}
			here = named
		}
		if nodes == nil {
			nodes = here
			continue
		}
		for n := range nodes {
			if !here[n] {
				delete(nodes, n)
			}
		}
	}
	return nodes, nil
}

// nodesNamed are the nodes a node selector selects by name alone: each
// term's matchFields on metadata.name (operator In), when every term has
// one and none selects by labels; ok is false otherwise (nil, or a
// selector by labels).
func nodesNamed(sel *v1.NodeSelector) (map[string]bool, bool, error) {
	if sel == nil || len(sel.NodeSelectorTerms) == 0 {
		return nil, false, nil
	}
	names := map[string]bool{}
	for i, term := range sel.NodeSelectorTerms {
		if len(term.MatchExpressions) > 0 || len(term.MatchFields) == 0 {
			return nil, false, nil
		}
		var in map[string]bool
		for j, f := range term.MatchFields {
			if f.Key != "metadata.name" || f.Operator != v1.NodeSelectorOpIn {
				return nil, false, fmt.Errorf("nodeSelectorTerms[%d].matchFields[%d]: %s %s: only metadata.name In is read", i, j, f.Key, f.Operator)
			}
			these := map[string]bool{}
			for _, v := range f.Values {
				if in == nil || in[v] {
					these[v] = true
				}
			}
			in = these
		}
		maps.Copy(names, in)
	}
	return names, true, nil
}
