package dra

import (
	"fmt"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/resource"
)

// Demand is what a pod's claims that are not allocated yet take
// (Reading.DemandOf). The zero value takes nothing, the same on every
// node.
type Demand struct {
	dra      *Reading
	claims   []pendingClaim
	requests []Request
	// varies says the take is not the same on every node that can satisfy
	// the requests, or that the node's amounts do not decide whether it
	// can: it is the same (Uniform) with no requests, or each one exact
	// count of one simple class without its own selectors (Class.Simple).
	// nominal is each request's first alternative's count (All counts
	// none, as its count depends on the node, and so does a share of a
	// device).
	varies  bool
	nominal []int64
	// pinned are the nodes the pod's claims already allocated bind it to
	// (boundNodes); nil where none does.
	pinned map[string]bool
}

// Uniform reports whether the take is the same on every node that can
// satisfy the claims and the node's amounts decide whether it can.
func (dd Demand) Uniform() bool { return !dd.varies }

// Pending reports whether the pod has claims that ask for devices.
func (dd Demand) Pending() bool { return len(dd.requests) > 0 }

// Nominal is, by class (Reading.Classes), what the requests' first
// alternatives take in the class resource's canonical units: their exact
// counts.
func (dd Demand) Nominal() []int64 { return dd.nominal }

// Allows reports whether the pod may run on node as far as its claims
// already allocated say: they bind it to no node, or to this one.
func (dd Demand) Allows(node string) bool { return dd.pinned == nil || dd.pinned[node] }

// Bound reports whether claims of the pod allocated already bind it to
// some nodes, and which, sorted (none: they select no node).
func (dd Demand) Bound() ([]string, bool) {
	if dd.pinned == nil {
		return nil, false
	}
	return slices.Sorted(maps.Keys(dd.pinned)), true
}

// Take is what the claims take on node, by class, as kube's allocator
// allocates them there, with the partition type of the part they take
// in a class (Reading.Fit); ok is false where the node cannot satisfy
// them. A demand without pending claims takes nothing anywhere.
func (dd Demand) Take(node string) (take []int64, types []string, ok bool, err error) {
	if !dd.Pending() {
		return nil, nil, true, nil
	}
	return dd.dra.fitParts(node, dd.claims)
}

// DemandOf reads what a pod's claims not allocated yet take.
func (d *Reading) DemandOf(pod *v1.Pod) (Demand, error) {
	claims, err := d.pendingClaims(pod)
	if err != nil {
		return Demand{}, err
	}
	requests, err := d.ClaimRequests(pod)
	if err != nil {
		return Demand{}, err
	}
	dd := Demand{dra: d, claims: claims, requests: requests, nominal: make([]int64, len(d.classes))}
	if dd.pinned, err = d.boundNodes(pod); err != nil {
		return Demand{}, err
	}
	if dd.pinned != nil {
		dd.varies = true // the nodes it is not bound to cannot take it
	}
	for _, c := range claims {
		for _, r := range c.claim.Spec.Devices.Requests {
			if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
				// It takes nothing from others, yet a device of its own
				// within the claim, which the node's amounts do not say.
				dd.varies = true
			}
		}
	}
	for _, r := range requests {
		first := r.Alternatives[0]
		if len(r.Alternatives) != 1 || first.All || len(first.selectors) > 0 || first.capacity || !d.classes[first.class].Simple {
			dd.varies = true
		}
		if !first.All && !first.capacity { // a share's part of a device is the node's to say
			dd.nominal[first.class] += resource.FromWhole(d.classes[first.class].Resource, first.Count)
		}
	}
	return dd, nil
}

// UnitsHeld are the units of the view's resource on node (NodeUnits'
// order, as the device view numbers them) that a pod's claims hold whole,
// each a device of its own (no partitions, not shared); ok is false when
// a claim of the pod holds anything else there: a partition, a share of
// a device, a device outside the view.
func (d *Reading) UnitsHeld(pod *v1.Pod, node, name string) (units []int, ok bool) {
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
// allocated already, as kube-scheduler's DynamicResources filters them:
// an allocation's nodeSelector, where it has one, must select the node
// (none: the claim binds the pod to no node, whatever devices it holds).
// The selector is matched against the Reading's nodes as kube matches it
// (nodeaffinity, labels and fields); where the host gave no nodes, it is
// read by its matchFields on metadata.name, the form kube's allocator
// writes for a node's devices, and one by labels is left to the
// scheduler. nil: no claim binds the pod.
func (d *Reading) boundNodes(pod *v1.Pod) (map[string]bool, error) {
	var nodes map[string]bool
	for _, key := range d.podClaimKeys(pod) {
		c := d.claims.at(key)
		if c == nil || c.Status.Allocation == nil || c.Status.Allocation.NodeSelector == nil {
			continue
		}
		here, ok, err := d.selected(c.Status.Allocation.NodeSelector)
		if err != nil {
			return nil, fmt.Errorf("resourceclaim %s: status.allocation.nodeSelector: %w", key, err)
		}
		if !ok {
			continue
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

// selected are the nodes a selector selects: among the Reading's nodes,
// as kube's nodeaffinity matches it; without them, by name alone
// (nodesNamed), ok false for one by labels.
func (d *Reading) selected(sel *v1.NodeSelector) (map[string]bool, bool, error) {
	if d.nodes == nil {
		return nodesNamed(sel)
	}
	match, err := nodeaffinity.NewNodeSelector(sel)
	if err != nil {
		return nil, false, err
	}
	here := map[string]bool{}
	for _, n := range d.nodes {
		if match.Match(n) {
			here[n.Name] = true
		}
	}
	return here, true, nil
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
