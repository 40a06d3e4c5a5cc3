package kubebridge

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// DRARequest is one device request of a pod's claims that the pod still
// has to be given: the claim is not allocated yet.
type DRARequest struct {
	// Claim is the claim, namespace/name, or for a claim its template
	// has not made yet, the template's.
	Claim string
	// Name is the request's name in the claim.
	Name string
	// Alternatives are what the request accepts, in order of preference:
	// one for exactly, the subrequests of firstAvailable.
	Alternatives []DRAAlternative
}

// DRAAlternative is one way to satisfy a request: Count devices of a class
// (every device of it on the node with All), each selected by the
// request's own selectors too.
type DRAAlternative struct {
	Class     string
	Count     int64
	All       bool
	class     int // Class's index in DRA.Classes
	selectors []dracel.CompilationResult
}

// PodRequests are the device requests of a pod's claims that are not
// allocated yet, in the order of spec.resourceClaims and of the requests in
// each claim. A claim named by the pod is looked up among the claims read;
// one made from a template is the claim the pod's status names, or while
// there is none the template itself. A claim already allocated asks for
// nothing more (its devices are counted as used where they are); a
// request with admin access takes nothing. A claim or template that is
// missing or malformed is an error naming the pod, or the claim, and the
// field.
func (d *DRA) PodRequests(pod *v1.Pod) ([]DRARequest, error) {
	var out []DRARequest
	generated := generatedClaims(pod)
	for i, pc := range pod.Spec.ResourceClaims {
		field := fmt.Sprintf("pod %s/%s: spec.resourceClaims[%d]", pod.Namespace, pod.Name, i)
		var spec *resourcev1.ResourceClaimSpec
		var key string
		switch {
		case pc.ResourceClaimName != nil && pc.ResourceClaimTemplateName != nil:
			return nil, fmt.Errorf("%s: both resourceClaimName and resourceClaimTemplateName", field)
		case pc.ResourceClaimName != nil:
			key = pod.Namespace + "/" + *pc.ResourceClaimName
			c, ok := d.claims[key]
			if !ok {
				return nil, fmt.Errorf("%s.resourceClaimName: no resourceclaim %s", field, key)
			}
			if c.Status.Allocation != nil {
				continue
			}
			spec = &c.Spec
		case pc.ResourceClaimTemplateName != nil:
			if name, ok := generated[pc.Name]; ok {
				if c, ok := d.claims[pod.Namespace+"/"+name]; ok {
					if c.Status.Allocation != nil {
						continue
					}
					key, spec = pod.Namespace+"/"+name, &c.Spec
					break
				}
			}
			key = pod.Namespace + "/" + *pc.ResourceClaimTemplateName
			t, ok := d.templates[key]
			if !ok {
				return nil, fmt.Errorf("%s.resourceClaimTemplateName: no resourceclaimtemplate %s", field, key)
			}
			spec = &t.Spec.Spec
		default:
			return nil, fmt.Errorf("%s: neither resourceClaimName nor resourceClaimTemplateName", field)
		}
		for j, r := range spec.Devices.Requests {
			req, err := d.request(r, key, fmt.Sprintf("spec.devices.requests[%d]", j))
			if err != nil {
				return nil, err
			}
			if req != nil {
				out = append(out, *req)
			}
		}
	}
	return out, nil
}

// request reads one request of a claim (or template) key; nil when it
// takes nothing (admin access).
func (d *DRA) request(r resourcev1.DeviceRequest, key, field string) (*DRARequest, error) {
	req := &DRARequest{Claim: key, Name: r.Name}
	switch {
	case (r.Exactly == nil) == (len(r.FirstAvailable) == 0):
		return nil, fmt.Errorf("resourceclaim %s: %s: exactly one of exactly and firstAvailable", key, field)
	case r.Exactly != nil:
		if r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return nil, nil
		}
		e := r.Exactly
		alt, err := d.alternative(e.DeviceClassName, e.AllocationMode, e.Count, e.Selectors, key, field+".exactly")
		if err != nil {
			return nil, err
		}
		req.Alternatives = []DRAAlternative{alt}
	default:
		for k, s := range r.FirstAvailable {
			alt, err := d.alternative(s.DeviceClassName, s.AllocationMode, s.Count, s.Selectors, key, fmt.Sprintf("%s.firstAvailable[%d]", field, k))
			if err != nil {
				return nil, err
			}
			req.Alternatives = append(req.Alternatives, alt)
		}
	}
	return req, nil
}

func (d *DRA) alternative(class string, mode resourcev1.DeviceAllocationMode, count int64, selectors []resourcev1.DeviceSelector, key, field string) (DRAAlternative, error) {
	index, ok := d.classIndex(class)
	if !ok {
		return DRAAlternative{}, fmt.Errorf("resourceclaim %s: %s.deviceClassName: no deviceclass %q", key, field, class)
	}
	alt := DRAAlternative{Class: class, class: index}
	switch mode {
	case "", resourcev1.DeviceAllocationModeExactCount:
		if count < 0 {
			return DRAAlternative{}, fmt.Errorf("resourceclaim %s: %s.count: %d is negative", key, field, count)
		}
		alt.Count = max(count, 1) // 1 when unset, as the API defaults it
	case resourcev1.DeviceAllocationModeAll:
		alt.All = true
	default:
		return DRAAlternative{}, fmt.Errorf("resourceclaim %s: %s.allocationMode: %q is neither ExactCount nor All", key, field, mode)
	}
	compiler := dracel.GetCompiler(dracel.Features{})
	for i, s := range selectors {
		if s.CEL == nil {
			return DRAAlternative{}, fmt.Errorf("resourceclaim %s: %s.selectors[%d]: no cel selector", key, field, i)
		}
		compiled := compiler.CompileCELExpression(s.CEL.Expression, dracel.Options{})
		if compiled.Error != nil {
			return DRAAlternative{}, fmt.Errorf("resourceclaim %s: %s.selectors[%d].cel.expression: %v", key, field, i, compiled.Error)
		}
		alt.selectors = append(alt.selectors, compiled)
	}
	return alt, nil
}

// Fit is what a pod's requests take on a node, by class (in the order of
// Classes): each request by its first alternative the node can still
// satisfy — enough free devices of the class that its selectors select,
// and for All every such device free and at least one — as the allocator
// tries them, the requests one after the other on what the earlier ones
// left. ok is false when some request has no alternative the node can
// satisfy. A device is free when no claim holds it; a device several
// claims may share is free to every request.
func (d *DRA) Fit(node string, requests []DRARequest) (take []int64, ok bool) {
	take = make([]int64, len(d.classes))
	ok = d.fit(node, requests, func(_ int, alt DRAAlternative, ids []DeviceID) {
		take[alt.class] += int64(len(ids))
	})
	if !ok {
		return nil, false
	}
	return take, true
}

// fit tries the requests on a node as Fit does, telling chosen, for each
// request in order, the alternative and the devices it takes (the first
// free ones of the node's, in order).
func (d *DRA) fit(node string, requests []DRARequest, chosen func(request int, alt DRAAlternative, ids []DeviceID)) bool {
	var taken []DeviceID // a node has a few devices
	devices := d.devices[node]
	for i, r := range requests {
		satisfied := false
		for _, alt := range r.Alternatives {
			var free []DeviceID
			all, busy := 0, false
			for _, dev := range devices {
				if !slices.Contains(dev.Classes, alt.class) || !selectsAll(alt.selectors, dev.cel) {
					continue
				}
				all++
				if (d.allocated[dev.ID] != "" || slices.Contains(taken, dev.ID)) && !dev.Shared {
					busy = true
					continue
				}
				free = append(free, dev.ID)
			}
			need := alt.Count
			if alt.All {
				if all == 0 || busy {
					continue
				}
				need = int64(all)
			}
			if int64(len(free)) < need {
				continue
			}
			taken = append(taken, free[:need]...)
			chosen(i, alt, free[:need])
			satisfied = true
			break
		}
		if !satisfied {
			return false
		}
	}
	return true
}

// Allocate is what DRA would say once a pod's claims not yet allocated
// were allocated on a node, as Fit chooses their devices: a new DRA (this
// one is not changed) in which the devices are held by the claims, and
// the pod's claims ask for nothing more. A node that cannot satisfy them
// is an error. It is how a host that places pods itself (a what-if) counts
// a placed pod's devices.
func (d *DRA) Allocate(pod *v1.Pod, node string) (*DRA, error) {
	requests, err := d.PodRequests(pod)
	if err != nil {
		return nil, err
	}
	out := *d
	out.allocated = maps.Clone(d.allocated)
	out.claims = maps.Clone(d.claims)
	results := map[string]*resourcev1.ResourceClaim{}
	ok := d.fit(node, requests, func(i int, alt DRAAlternative, ids []DeviceID) {
		r := requests[i]
		for _, id := range ids {
			if out.allocated[id] == "" {
				out.allocated[id] = r.Claim
			}
		}
		old, named := d.claims[r.Claim] // else a template's claim, not made yet
		if !named {
			return
		}
		c := results[r.Claim]
		if c == nil {
			c = old.DeepCopy()
			c.Status.Allocation = &resourcev1.AllocationResult{}
			results[r.Claim] = c
		}
		for _, id := range ids {
			c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
				resourcev1.DeviceRequestAllocationResult{Request: r.Name, Driver: id.Driver, Pool: id.Pool, Device: id.Device})
		}
	})
	if !ok {
		return nil, fmt.Errorf("pod %s/%s: its resource claims cannot be satisfied on node %s", pod.Namespace, pod.Name, node)
	}
	maps.Copy(out.claims, results)
	return &out, nil
}

// draChange is what Allocate changed: the devices it made held, and the
// claims it replaced, as they were.
type draChange struct {
	devices []DeviceID
	claims  map[string]*resourcev1.ResourceClaim
}

func (c draChange) empty() bool { return len(c.devices) == 0 && len(c.claims) == 0 }

// changeTo is what tells this reading from after, a reading Allocate made
// from it.
func (d *DRA) changeTo(after *DRA) draChange {
	var c draChange
	for id := range after.allocated {
		if d.allocated[id] == "" {
			c.devices = append(c.devices, id)
		}
	}
	for key, claim := range after.claims {
		if old := d.claims[key]; old != claim {
			if c.claims == nil {
				c.claims = map[string]*resourcev1.ResourceClaim{}
			}
			c.claims[key] = old
		}
	}
	return c
}

// undo is a new reading without a change: its devices free, its claims
// as they were.
func (d *DRA) undo(c draChange) *DRA {
	out := *d
	out.allocated = maps.Clone(d.allocated)
	for _, id := range c.devices {
		delete(out.allocated, id)
	}
	out.claims = maps.Clone(d.claims)
	maps.Copy(out.claims, c.claims)
	return &out
}

// Unallocate is what DRA would say had a pod's claims not been allocated:
// a new reading (this one is not changed) in which the devices of the
// claims it names or its templates made, reserved for no other pod, are
// free, and the claims ask again. It is how a host scores a running pod
// as before it was placed.
func (d *DRA) Unallocate(pod *v1.Pod) *DRA {
	var c draChange
	released := map[string]bool{}
	for _, key := range podClaimKeys(pod) {
		claim := d.claims[key]
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
	for id, key := range d.allocated {
		if released[key] {
			c.devices = append(c.devices, id)
		}
	}
	return d.undo(c)
}

// generatedClaims are the names of the claims a pod's templates made, by
// the pod's name for the claim, as its status says.
func generatedClaims(pod *v1.Pod) map[string]string {
	generated := map[string]string{}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			generated[s.Name] = *s.ResourceClaimName
		}
	}
	return generated
}

// podClaimKeys are the claims (namespace/name) a pod names, or its
// templates made as its status says.
func podClaimKeys(pod *v1.Pod) []string {
	var keys []string
	generated := generatedClaims(pod)
	for _, pc := range pod.Spec.ResourceClaims {
		switch {
		case pc.ResourceClaimName != nil:
			keys = append(keys, pod.Namespace+"/"+*pc.ResourceClaimName)
		case generated[pc.Name] != "":
			keys = append(keys, pod.Namespace+"/"+generated[pc.Name])
		}
	}
	return keys
}

// reservedForOthers reports whether a claim is reserved for a consumer
// other than the pod.
func reservedForOthers(claim *resourcev1.ResourceClaim, pod *v1.Pod) bool {
	for _, r := range claim.Status.ReservedFor {
		if r.Name != pod.Name || (pod.UID != "" && r.UID != "" && r.UID != pod.UID) {
			return true
		}
	}
	return false
}
