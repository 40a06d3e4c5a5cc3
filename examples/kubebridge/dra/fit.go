package dra

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// Fit is what a pod's claims not allocated yet take on a node, by class
// (in the order of Classes), in each class's resource's canonical units
// (thousandths of a unit for an extended resource such as nvidia.com/gpu,
// whole units otherwise): of each device kube's allocator gives them
// there, the share of its unit it takes (takeOf: all of it, or the part a
// partition or a share takes), counted in the class of the request (or
// firstAvailable subrequest) it is given for. ok is false when the allocator finds no devices for them
// on the node; an error is the allocator's about the claims or classes
// themselves (a CEL runtime error), or a claim the pod names that is
// missing (PodRequests).
func (d *Reading) Fit(node string, pod *v1.Pod) (take []int64, ok bool, err error) {
	claims, err := d.pendingClaims(pod)
	if err != nil {
		return nil, false, err
	}
	return d.fit(node, claims)
}

// fit is Fit for the claims.
func (d *Reading) fit(node string, claims []pendingClaim) (take []int64, ok bool, err error) {
	take, _, ok, err = d.fitParts(node, claims)
	return take, ok, err
}

// fitParts is fit with, by class, the partition type of the part the
// claims take in it (partType) when they take one device in it and that
// device is a part of a unit with a layout; "" otherwise.
func (d *Reading) fitParts(node string, claims []pendingClaim) (take []int64, types []string, ok bool, err error) {
	results, ok, err := d.allocate(node, claims)
	if !ok || err != nil {
		return nil, nil, false, err
	}
	take, types = make([]int64, len(d.classes)), make([]string, len(d.classes))
	devices := make([]int, len(d.classes))
	for i, c := range claims {
		for _, r := range results[i].Devices.Results {
			class, ok := d.classIndex(requestClass(c.claim, r.Request))
			if !ok || (r.AdminAccess != nil && *r.AdminAccess) { // admin access takes nothing from others
				continue
			}
			id := DeviceID{r.Driver, r.Pool, r.Device}
			share := d.takeOf(node, r)
			typ := d.layoutPart(node, id)
			if r.ShareID != nil && typ == "" {
				typ = d.shareOn(node, id, r.ConsumedCapacity)
			}
			take[class] += inUnits(d.classes[class].Resource, share)
			devices[class]++
			types[class] = typ
			// A part of a GPU is a part of it for every class that selects
			// a device of the GPU: a 3g.40gb takes half of an A100 in
			// nvidia.com/gpu (gpu.nvidia.com's resource) too.
			for _, other := range d.unitClasses(node, id) {
				if other != class {
					take[other] += inUnits(d.classes[other].Resource, share)
					devices[other]++
					types[other] = typ
				}
			}
		}
	}
	for c, n := range devices {
		if n != 1 {
			types[c] = ""
		}
		// The allocator found the devices: what they take of the node is
		// within what it has left. Counting each part by its largest
		// counter overstates parts that fit together (two 2g.20gb beside
		// a 3g.40gb: 286 thousandths each, where the A100 has 500 left by
		// its memory), which the node's amounts would refuse.
		if take[c] > 0 {
			if a, u := d.CanonicalAmounts(node, c); take[c] > a-u {
				take[c] = max(a-u, 0)
			}
		}
	}
	return take, types, true, nil
}

// shareOn is the type of a share of a device of a node (shareType) when
// the device is a share layout that can resolve it; "" otherwise.
func (d *Reading) shareOn(node string, id DeviceID, consumed map[resourcev1.QualifiedName]kres.Quantity) string {
	for _, dev := range d.devices[node] {
		if dev.ID == id && dev.unit == "" && dev.Shared && d.features.ConsumableCapacity {
			ul := d.shareLayoutOf(dev)
			typ := shareType(consumed)
			if ul.layout == nil {
				return ""
			}
			if _, ok := ul.consumes(typ); !ok {
				return ""
			}
			return typ
		}
	}
	return ""
}

// layoutPart is the partition type of a device of a node when it is a part
// of a unit that has a layout; "" otherwise.
func (d *Reading) layoutPart(node string, id DeviceID) string {
	for _, dev := range d.devices[node] {
		if dev.ID == id {
			if dev.partType == "" || dev.unit == "" || d.layoutOf(node, dev.unit).layout == nil {
				return ""
			}
			return dev.partType
		}
	}
	return ""
}

// ClaimAllocation is what kube's allocator gives one of a pod's claims on
// a node.
type ClaimAllocation struct {
	// Claim is the claim, namespace/name; for a claim a template makes
	// that is not made yet, the template's namespace/name.
	Claim  string
	Result resourcev1.AllocationResult
}

// Allocation is what a pod's claims not allocated yet would be given on a
// node: kube's allocator's results there, one per claim in the pod's
// order (devices, and for a share its share ID and the capacity it
// consumes); ok false where the node cannot satisfy them. An error is as
// Fit's.
func (d *Reading) Allocation(pod *v1.Pod, node string) (claims []ClaimAllocation, ok bool, err error) {
	pending, err := d.pendingClaims(pod)
	if err != nil {
		return nil, false, err
	}
	results, ok, err := d.allocate(node, pending)
	if !ok || err != nil {
		return nil, false, err
	}
	for i, c := range pending {
		name := c.key
		if c.template != "" {
			name = c.template
		}
		claims = append(claims, ClaimAllocation{Claim: name, Result: results[i]})
	}
	return claims, true, nil
}

// Allocate is what DRA would say once a pod's claims not yet allocated
// were allocated on a node as kube's allocator allocates them there
// (Allocation): a new reading (this one is not changed) in which the
// claims hold what it gives them (devices, shares and the capacity they
// consume), and the pod's claims ask for nothing more; a template's claim
// not made yet is kept as made (madeClaimKey). A node that cannot satisfy
// them is an error. It is how a host that places pods itself (a what-if)
// counts a placed pod's devices.
func (d *Reading) Allocate(pod *v1.Pod, node string) (*Reading, error) {
	claims, err := d.pendingClaims(pod)
	if err != nil {
		return nil, err
	}
	results, ok, err := d.allocate(node, claims)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if !ok {
		return nil, fmt.Errorf("pod %s/%s: its resource claims cannot be satisfied on node %s", pod.Namespace, pod.Name, node)
	}
	out := d.copyClaims()
	for i, c := range claims {
		allocated := c.claim.DeepCopy()
		allocated.Status.Allocation = results[i].DeepCopy()
		// Results are shared by claims alike (resultKey): each share its
		// own ID, as the allocator gives each.
		for j := range allocated.Status.Allocation.Devices.Results {
			if r := &allocated.Status.Allocation.Devices.Results[j]; r.ShareID != nil {
				r.ShareID = new(uuid.NewUUID())
			}
		}
		out.claims.set(c.key, allocated)
		for _, r := range results[i].Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			if id := (DeviceID{r.Driver, r.Pool, r.Device}); out.allocated.at(id) == "" {
				out.allocated.set(id, c.key)
			}
		}
	}
	return out, nil
}

// copyClaims is a new reading with the same classes and devices, and
// copies of the claims' tables to change, whose allocator is its own.
func (d *Reading) copyClaims() *Reading {
	out := *d
	out.allocated = d.allocated.next()
	out.claims = d.claims.next()
	out.alloc, out.units, out.serial = new(draAllocator), new(usageOnce), newSerial()
	out.changedFrom, out.changed = 0, nil
	return &out
}

// Change is what Allocate changed: the devices it made held, and the
// claims it replaced, as they were.
type Change struct {
	devices []DeviceID
	claims  map[string]*resourcev1.ResourceClaim
}

func (c Change) Empty() bool { return len(c.devices) == 0 && len(c.claims) == 0 }

// ChangeTo is what tells this reading from after, a reading Allocate made
// from it.
func (d *Reading) ChangeTo(after *Reading) Change {
	var c Change
	eachDifference(&after.allocated, &d.allocated, func(id DeviceID) {
		if d.allocated.at(id) == "" {
			c.devices = append(c.devices, id)
		}
	})
	eachDifference(&after.claims, &d.claims, func(key string) {
		if _, ok := after.claims.get(key); !ok {
			return
		}
		if c.claims == nil {
			c.claims = map[string]*resourcev1.ResourceClaim{}
		}
		c.claims[key] = d.claims.at(key) // nil: a claim Allocate made
	})
	return c
}

// Undo is a new reading without a change: its devices free, its claims
// as they were.
func (d *Reading) Undo(c Change) *Reading {
	out := d.copyClaims()
	for _, id := range c.devices {
		out.allocated.del(id)
	}
	for key, claim := range c.claims {
		if claim == nil { // made by Allocate: gone again
			out.claims.del(key)
			continue
		}
		out.claims.set(key, claim)
	}
	return out
}

// Unallocate is what DRA would say had a pod's claims not been allocated:
// a new reading (this one is not changed) in which the devices of the
// claims it names or its templates made, reserved for no other pod, are
// free, and the claims ask again. It is how a host scores a running pod
// as before it was placed.
func (d *Reading) Unallocate(pod *v1.Pod) *Reading {
	var c Change
	released := map[string]bool{}
	for _, key := range d.podClaimKeys(pod) {
		claim := d.claims.at(key)
		if claim == nil || claim.Status.Allocation == nil || reservedForOthers(claim, pod) {
			continue
		}
		if c.claims == nil {
			c.claims = map[string]*resourcev1.ResourceClaim{}
		}
		free := claim.DeepCopy()
		free.Status.Allocation, free.Status.ReservedFor = nil, nil
		c.claims[key] = free
		released[key] = true
	}
	for id, key := range d.allocated.all() {
		if released[key] {
			c.devices = append(c.devices, id)
		}
	}
	return d.Undo(c)
}
