package dra

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	"github.com/resfit/resfit/examples/internal/words"
)

// Unsatisfied says why a node cannot satisfy a pod's pending claims, as
// far as resfit can tell: kube's allocator says only that it cannot, so
// each request is put to it alone, and the first that fails alone is
// named (claim and request) with the devices of its class on the node:
// none selected, a pool not all listed, or how many there are and how
// many are wholly free against how many it asks. Where every request fits
// alone, they do not fit together (the devices, counters or capacity they
// share, or the claim's constraints). "" when the claims fit.
func (d *Reading) Unsatisfied(pod *v1.Pod, node string) (string, error) {
	if pinned, err := d.boundNodes(pod); err != nil {
		return "", err
	} else if pinned != nil && !pinned[node] {
		return "a claim of the pod is allocated already, and its allocation's nodeSelector does not select this node", nil
	}
	claims, err := d.pendingClaims(pod)
	if err != nil {
		return "", err
	}
	if _, ok, err := d.allocate(node, claims); err != nil || ok {
		return "", err
	}
	for _, c := range claims {
		for _, r := range c.claim.Spec.Devices.Requests {
			one := c.claim.DeepCopy()
			one.Spec.Devices.Requests, one.Spec.Devices.Constraints, one.Spec.Devices.Config = []resourcev1.DeviceRequest{r}, nil, nil
			one.UID = types.UID(string(one.UID) + "/" + r.Name)
			if _, ok, err := d.allocate(node, []pendingClaim{{key: c.key, claim: one}}); err != nil {
				// Alone, the request meets a device its selectors fail on
				// (all of them together stopped before it).
				return fmt.Sprintf("claim %s, request %s: %v", c.key, r.Name, err), nil
			} else if !ok {
				return fmt.Sprintf("claim %s, request %s: %s", c.key, r.Name, d.shortage(node, c.key, r)), nil
			}
		}
	}
	return "each request of the pod's claims fits the node alone, but not all together (the devices, counters or capacity they would share, or the claims' constraints)", nil
}

// shortage says what a node has for a request: the devices its class and
// its own selectors select there, and how many of them are wholly free
// (no claim holds it, nor a partition or share of it).
func (d *Reading) shortage(node string, key string, r resourcev1.DeviceRequest) string {
	if r.Exactly == nil {
		return fmt.Sprintf("none of its %d alternatives (firstAvailable) fits", len(r.FirstAvailable))
	}
	e := r.Exactly
	class, ok := d.classIndex(e.DeviceClassName)
	if !ok {
		return fmt.Sprintf("deviceclass %s does not exist", e.DeviceClassName)
	}
	req, err := d.request(r, key, "request "+r.Name)
	var own []dracel.CompilationResult
	if err == nil && req != nil && len(req.Alternatives) == 1 {
		own = req.Alternatives[0].selectors
	}
	u := d.usage()
	busy := d.busySets(node)
	var selected, unlisted, free, shareable int
	for _, dev := range d.devices[node] {
		if !slices.Contains(dev.Classes, class) || !selectsAll(own, dev.cel) {
			continue
		}
		selected++
		if dev.Shared {
			shareable++
		}
		switch {
		case dev.unusable:
			unlisted++
		case d.allocated.at(dev.ID) != "", dev.unit != "" && busy[dev.unit], u.capacity.at(dev.ID) != nil:
		default:
			free++
		}
	}
	what, selects := "deviceclass "+e.DeviceClassName, "selects"
	if len(e.Selectors) > 0 {
		what, selects = what+" and the request's selectors", "select"
	}
	share := e.Capacity != nil && len(e.Capacity.Requests) > 0
	switch {
	case selected == 0:
		return what + " " + selects + " no device on the node"
	case unlisted == selected:
		return fmt.Sprintf("the %s %s %s on the node lie in pools whose ResourceSlices are not all listed; kube's allocator uses none of them", words.Plural(selected, "device"), what, selects)
	case share && shareable == 0:
		return fmt.Sprintf("it asks for a share of a device, and none of the %s %s %s on the node may be shared (allowMultipleAllocations)", words.Plural(selected, "device"), what, selects)
	case share:
		return fmt.Sprintf("it asks for a share of a device, and none of the %s %s %s on the node has that much capacity left", words.Plural(selected, "device"), what, selects)
	case e.AllocationMode == resourcev1.DeviceAllocationModeAll:
		return fmt.Sprintf("it asks for all %s %s %s on the node, and %d of them are wholly free", words.Plural(selected, "device"), what, selects, free)
	}
	return fmt.Sprintf("it asks for %d; %s %s %s on the node, %d of them wholly free (no claim holds it or a part of it)", e.Count, what, selects, words.Plural(selected, "device"), free)
}
