package dra

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// Request is one device request of a pod's claims that the pod still
// has to be given: the claim is not allocated yet.
type Request struct {
	// Claim is the claim, namespace/name, or for a claim its template
	// has not made yet, the template's.
	Claim string
	// Name is the request's name in the claim.
	Name string
	// Alternatives are what the request accepts, in order of preference:
	// one for exactly, the subrequests of firstAvailable.
	Alternatives []Alternative
}

// Alternative is one way to satisfy a request: Count devices of a class
// (every device of it on the node with All), each selected by the
// request's own selectors too.
type Alternative struct {
	Class     string
	Count     int64
	All       bool
	class     int // Class's index in Reading.Classes
	selectors []dracel.CompilationResult
	// capacity reports capacity requests (KEP-5075): a share of a device.
	capacity bool
	// Capacity is what a device's capacities the request asks for, by
	// name (a share of a device), nil when it asks for none.
	Capacity map[resourcev1.QualifiedName]kres.Quantity
}

// ClaimRequests are the device requests of a pod's claims that are not
// allocated yet, in the order of spec.resourceClaims and of the requests in
// each claim. A claim named by the pod is looked up among the claims read;
// one made from a template is the claim the pod's status names, or while
// there is none the template itself. A claim already allocated asks for
// nothing more (its devices are counted as used where they are); a
// request with admin access takes nothing. A claim or template that is
// missing or malformed is an error naming the pod, or the claim, and the
// field.
func (d *Reading) ClaimRequests(pod *v1.Pod) ([]Request, error) {
	claims, err := d.pendingClaims(pod)
	if err != nil {
		return nil, err
	}
	var out []Request
	for _, c := range claims {
		key := c.key
		if c.template != "" {
			key = c.template
		}
		for j, r := range c.claim.Spec.Devices.Requests {
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

// pendingClaims are a pod's claims not allocated yet, in the order of
// spec.resourceClaims (PodRequests' rules); a template's claim not made
// yet is made from the template, as the ResourceClaim controller makes it,
// unless a what-if allocation made it already (madeClaimKey).
func (d *Reading) pendingClaims(pod *v1.Pod) ([]pendingClaim, error) {
	var out []pendingClaim
	generated := generatedClaims(pod)
	for i, pc := range pod.Spec.ResourceClaims {
		field := fmt.Sprintf("pod %s/%s: spec.resourceClaims[%d]", pod.Namespace, pod.Name, i)
		switch {
		case pc.ResourceClaimName != nil && pc.ResourceClaimTemplateName != nil:
			return nil, fmt.Errorf("%s: both resourceClaimName and resourceClaimTemplateName", field)
		case pc.ResourceClaimName != nil:
			key := pod.Namespace + "/" + *pc.ResourceClaimName
			c, ok := d.claims.get(key)
			if !ok {
				return nil, fmt.Errorf("%s.resourceClaimName: no resourceclaim %s", field, key)
			}
			if c.Status.Allocation == nil {
				out = append(out, pendingClaim{key: key, claim: withDefaults(c)})
			}
		case pc.ResourceClaimTemplateName != nil:
			key := madeClaimKey(pod, pc.Name)
			if name, ok := generated[pc.Name]; ok {
				if _, ok := d.claims.get(pod.Namespace + "/" + name); ok {
					key = pod.Namespace + "/" + name
				}
			}
			if c, ok := d.claims.get(key); ok {
				if c.Status.Allocation == nil {
					out = append(out, pendingClaim{key: key, claim: withDefaults(c)})
				}
				continue
			}
			template := pod.Namespace + "/" + *pc.ResourceClaimTemplateName
			t, ok := d.templates[template]
			if !ok {
				return nil, fmt.Errorf("%s.resourceClaimTemplateName: no resourceclaimtemplate %s", field, template)
			}
			made := &resourcev1.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name + "-" + pc.Name, UID: types.UID("resfit:" + key)},
				Spec:       *t.Spec.Spec.DeepCopy(),
			}
			out = append(out, pendingClaim{key: key, claim: withDefaults(made), template: template})
		default:
			return nil, fmt.Errorf("%s: neither resourceClaimName nor resourceClaimTemplateName", field)
		}
	}
	ext, err := d.extendedClaim(pod)
	if err != nil {
		return nil, err
	}
	if ext != nil {
		out = append(out, *ext) // last, as kube-scheduler allocates it
	}
	return out, nil
}

// withDefaults is a claim with the defaults the API server gives a
// request's fields (an exact count of 1 where neither mode nor count is
// set) where a claim read from elsewhere (a snapshot, a test) lacks them:
// the allocator, like the API, expects them set. The claim is copied only
// when one is missing.
func withDefaults(c *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
	missing := func(mode resourcev1.DeviceAllocationMode, count int64) bool {
		return mode == "" || (mode == resourcev1.DeviceAllocationModeExactCount && count == 0)
	}
	needs := false
	for _, r := range c.Spec.Devices.Requests {
		if r.Exactly != nil {
			needs = needs || missing(r.Exactly.AllocationMode, r.Exactly.Count)
		}
		for _, s := range r.FirstAvailable {
			needs = needs || missing(s.AllocationMode, s.Count)
		}
	}
	if !needs {
		return c
	}
	c = c.DeepCopy()
	set := func(mode *resourcev1.DeviceAllocationMode, count *int64) {
		if *mode == "" {
			*mode = resourcev1.DeviceAllocationModeExactCount
		}
		if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
			*count = 1
		}
	}
	for i := range c.Spec.Devices.Requests {
		r := &c.Spec.Devices.Requests[i]
		if r.Exactly != nil {
			set(&r.Exactly.AllocationMode, &r.Exactly.Count)
		}
		for j := range r.FirstAvailable {
			set(&r.FirstAvailable[j].AllocationMode, &r.FirstAvailable[j].Count)
		}
	}
	return c
}

// request reads one request of a claim (or template) key; nil when it
// takes nothing (admin access).
func (d *Reading) request(r resourcev1.DeviceRequest, key, field string) (*Request, error) {
	req := &Request{Claim: key, Name: r.Name}
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
		if alt.capacity = e.Capacity != nil && len(e.Capacity.Requests) > 0; alt.capacity {
			alt.Capacity = e.Capacity.Requests
		}
		req.Alternatives = []Alternative{alt}
	default:
		for k, s := range r.FirstAvailable {
			alt, err := d.alternative(s.DeviceClassName, s.AllocationMode, s.Count, s.Selectors, key, fmt.Sprintf("%s.firstAvailable[%d]", field, k))
			if err != nil {
				return nil, err
			}
			if alt.capacity = s.Capacity != nil && len(s.Capacity.Requests) > 0; alt.capacity {
				alt.Capacity = s.Capacity.Requests
			}
			req.Alternatives = append(req.Alternatives, alt)
		}
	}
	return req, nil
}

func (d *Reading) alternative(class string, mode resourcev1.DeviceAllocationMode, count int64, selectors []resourcev1.DeviceSelector, key, field string) (Alternative, error) {
	index, ok := d.classIndex(class)
	if !ok {
		return Alternative{}, fmt.Errorf("resourceclaim %s: %s.deviceClassName: no deviceclass %q", key, field, class)
	}
	alt := Alternative{Class: class, class: index}
	switch mode {
	case "", resourcev1.DeviceAllocationModeExactCount:
		if count < 0 {
			return Alternative{}, fmt.Errorf("resourceclaim %s: %s.count: %d is negative", key, field, count)
		}
		alt.Count = max(count, 1) // 1 when unset, as the API defaults it
	case resourcev1.DeviceAllocationModeAll:
		alt.All = true
	default:
		return Alternative{}, fmt.Errorf("resourceclaim %s: %s.allocationMode: %q is neither ExactCount nor All", key, field, mode)
	}
	compiler := dracel.GetCompiler(d.celFeatures())
	for i, s := range selectors {
		if s.CEL == nil {
			return Alternative{}, fmt.Errorf("resourceclaim %s: %s.selectors[%d]: no cel selector", key, field, i)
		}
		compiled := compiler.CompileCELExpression(s.CEL.Expression, dracel.Options{})
		if compiled.Error != nil {
			return Alternative{}, fmt.Errorf("resourceclaim %s: %s.selectors[%d].cel.expression: %v", key, field, i, compiled.Error)
		}
		alt.selectors = append(alt.selectors, compiled)
	}
	return alt, nil
}

// requestClass is the device class of a claim's request, by the name an
// allocation result gives it: request, or request/subrequest.
func requestClass(c *resourcev1.ResourceClaim, name string) string {
	request, sub, _ := strings.Cut(name, "/")
	for _, r := range c.Spec.Devices.Requests {
		switch {
		case r.Name != request:
		case r.Exactly != nil:
			return r.Exactly.DeviceClassName
		default:
			for _, s := range r.FirstAvailable {
				if s.Name == sub {
					return s.DeviceClassName
				}
			}
		}
	}
	return ""
}

// Selectors is how many CEL selectors of its own the alternative has.
func (a Alternative) Selectors() int { return len(a.selectors) }

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

// PodClaimKeys are the keys (namespace/name) of the ResourceClaims a pod
// names, directly or through a template (the claim its status says the
// template made); complete is false when some template's claim is not in
// its status yet. A host that is told which claims changed
// (Reader.ReadClaims) names a reserved pod's claims by it.
func PodClaimKeys(pod *v1.Pod) (keys []string, complete bool) {
	return claimKeysOf(pod, nil)
}

// podClaimKeys are the claims (namespace/name) a pod names, or its
// templates made as its status says, or a what-if allocation made
// (madeClaimKey).
func (d *Reading) podClaimKeys(pod *v1.Pod) []string {
	keys, _ := claimKeysOf(pod, func(key string) bool { return d.claims.at(key) != nil })
	return keys
}

// claimKeysOf is PodClaimKeys; a template's claim not in the pod's status
// is the what-if allocation's (madeClaimKey) where made says it exists.
func claimKeysOf(pod *v1.Pod, made func(key string) bool) (keys []string, complete bool) {
	generated := generatedClaims(pod)
	complete = true
	for _, pc := range pod.Spec.ResourceClaims {
		switch {
		case pc.ResourceClaimName != nil:
			keys = append(keys, pod.Namespace+"/"+*pc.ResourceClaimName)
		case generated[pc.Name] != "":
			keys = append(keys, pod.Namespace+"/"+generated[pc.Name])
		case made != nil && made(madeClaimKey(pod, pc.Name)):
			keys = append(keys, madeClaimKey(pod, pc.Name))
		default:
			complete = false
		}
	}
	return keys, complete
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
