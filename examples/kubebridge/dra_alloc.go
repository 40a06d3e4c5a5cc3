package kubebridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// Which devices a pod's claims take on a node is what kube-scheduler's own
// structured allocator (k8s.io/dynamic-resource-allocation/structured)
// picks there: resfit calls it, with the features kube-scheduler runs it
// with, on the slices, classes and allocated state the reading holds, as
// kube-scheduler's DynamicResources plugin gathers them. So counters of
// partitionable devices (KEP-4815: a device is available while every
// counter it consumes has room), pools that are incomplete, consumable
// capacity (KEP-5075: request policies, what each share consumed), the
// request's own selectors, firstAvailable and All are decided as kube
// decides them, and the devices resfit says a claim takes are the ones
// kube's allocator will give it.

// DefaultAllocatorFeatures are the allocator's features that Kubernetes
// v1.37 enables by default and that every version of the allocator
// resfit's hosts are built with knows: admin access, prioritized lists,
// partitionable devices, device taints, binding conditions with device
// status, and consumable capacity. A host running kube-scheduler passes
// its own (DRAReader.Features).
func DefaultAllocatorFeatures() structured.Features {
	return structured.Features{
		AdminAccess:            true,
		PrioritizedList:        true,
		PartitionableDevices:   true,
		DeviceTaints:           true,
		DeviceBindingAndStatus: true,
		ConsumableCapacity:     true,
	}
}

// classList lists the device classes read, as the allocator asks for them.
type classList map[string]*resourcev1.DeviceClass

func (l classList) List() ([]*resourcev1.DeviceClass, error) {
	out := make([]*resourcev1.DeviceClass, 0, len(l))
	for _, c := range l {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *resourcev1.DeviceClass) int { return compareStrings(a.Name, b.Name) })
	return out, nil
}

func (l classList) Get(name string) (*resourcev1.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclasses"), name)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// draAllocator is a reading's allocator, made when first asked for: one
// per reading, since what is allocated is part of it. Allocate is safe
// for concurrent use, as kube-scheduler calls it from its parallel
// filters.
type draAllocator struct {
	once      sync.Once
	allocator structured.Allocator
	err       error
}

// allocator is the reading's allocator.
func (d *DRA) allocator() (structured.Allocator, error) {
	d.alloc.once.Do(func() {
		cache := dracel.NewCache(10, d.celFeatures())
		d.alloc.allocator, d.alloc.err = structured.NewAllocator(context.Background(), d.features, d.allocatedState(), d.classObjs, d.sliceObjs, cache)
	})
	return d.alloc.allocator, d.alloc.err
}

// allocatedState is what the reading's claims hold, as kube-scheduler's
// claim tracker gathers it: a device held whole by a result without a
// share ID (admin access holds nothing), or, with consumable capacity, a
// share of a device (its share ID) and the capacity it consumed.
func (d *DRA) allocatedState() structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, c := range d.claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if d.features.ConsumableCapacity && r.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return state
}

// pendingClaim is a claim of a pod still to be allocated: a claim the pod
// names, or the claim a template of it makes (made here from the template
// as the ResourceClaim controller makes it while it is not made yet).
type pendingClaim struct {
	key   string // the claim's namespace/name; a template's claim's: madeClaimKey
	claim *resourcev1.ResourceClaim
	// template is the template's namespace/name for a claim made from it
	// here, "" otherwise.
	template string
}

// madeClaimKey is the key under which a what-if allocation keeps the claim
// a pod's template makes before the cluster has made it: namespace/pod/
// claim, which no claim's namespace/name is.
func madeClaimKey(pod *v1.Pod, claimName string) string {
	return pod.Namespace + "/" + pod.Name + "/" + claimName
}

// allocate is what kube's allocator gives a pod's pending claims on a
// node: a result per claim, or ok false when the node cannot satisfy them.
// An error is one the allocator reports for the claims or classes
// themselves (a CEL runtime error, say), not the node.
func (d *DRA) allocate(node string, claims []pendingClaim) (results []resourcev1.AllocationResult, ok bool, err error) {
	if len(claims) == 0 {
		return nil, true, nil
	}
	a, err := d.allocator()
	if err != nil {
		return nil, false, err
	}
	objs := make([]*resourcev1.ResourceClaim, len(claims))
	for i, c := range claims {
		objs[i] = c.claim
	}
	results, err = a.Allocate(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, objs)
	switch {
	case errors.Is(err, structured.ErrFailedAllocationOnNode), err == nil && len(results) == 0:
		return nil, false, nil // the allocator found no devices for them here
	case err != nil:
		return nil, false, fmt.Errorf("node %s: %w", node, err)
	case len(results) != len(claims):
		return nil, false, fmt.Errorf("node %s: the allocator gave %d results for %d claims", node, len(results), len(claims))
	}
	return results, true, nil
}
