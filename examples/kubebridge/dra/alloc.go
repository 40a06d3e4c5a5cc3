package dra

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// DefaultAllocatorFeatures are the allocator's features that Kubernetes
// v1.37 enables by default and that every version of the allocator
// resfit's hosts are built with knows: admin access, prioritized lists,
// partitionable devices, device taints, binding conditions with device
// status, and consumable capacity. A host running kube-scheduler passes
// its own (Reader.Features).
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
	slices.SortFunc(out, func(a, b *resourcev1.DeviceClass) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (l classList) Get(name string) (*resourcev1.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclasses"), name)
}

// draAllocator is a reading's allocators, made when first asked for:
// one per node, on the slices of the pools that node has and of those
// offered to many nodes, and on what is allocated of them (so that one
// node's allocation reads neither every slice of the cluster nor every
// share allocated in it, which kube's allocator, made for the whole
// cluster, does for each node). What it decides is what the one allocator
// for the whole cluster decides: a node's allocation uses no other pool.
// Allocate is safe for concurrent use, as kube-scheduler calls it from its
// parallel filters.
type draAllocator struct {
	once  sync.Once
	err   error
	cache *dracel.Cache
	// pools are the newest slices of every pool; nodePools, the pools
	// each node has slices of; shared, the pools of slices that name no
	// node (offered to many, or device by device).
	pools     map[poolID][]*resourcev1.ResourceSlice
	nodePools map[string][]poolID
	shared    []poolID
	state     structured.AllocatedState

	mu sync.Mutex
	// ready says the tables above are made; sharedPools, that some pool
	// is offered to many nodes.
	ready, sharedPools bool
	nodes              map[string]*nodeAllocator
	// results are what the node allocators gave, by node and the claims
	// asked (resultKey): a pod of a kind seen before costs a lookup.
	results map[string]*nodeResult
}

// nodeResult is one node's allocation of some claims, made once.
type nodeResult struct {
	once    sync.Once
	results []resourcev1.AllocationResult
	ok      bool
	err     error
}

// carry makes a reading's allocators from an earlier reading's, when the
// two share their devices and differ only in the allocations of the
// nodes changed: the allocators and results of the other nodes stay
// valid, since each node's allocator reads only its own pools. Pools
// offered to many nodes make every node's depend on them: nothing is
// carried then.
func (a *draAllocator) carry(earlier *draAllocator, changed []string) {
	earlier.mu.Lock()
	defer earlier.mu.Unlock()
	if !earlier.ready || earlier.sharedPools {
		return
	}
	skip := make(map[string]bool, len(changed))
	for _, n := range changed {
		skip[n] = true
	}
	a.nodes, a.results = map[string]*nodeAllocator{}, map[string]*nodeResult{}
	for n, na := range earlier.nodes {
		if !skip[n] {
			a.nodes[n] = na
		}
	}
	for k, r := range earlier.results {
		if node, _, _ := strings.Cut(k, "\x00"); !skip[node] {
			a.results[k] = r
		}
	}
}

type poolID struct{ driver, pool string }

// nodeAllocator is one node's allocator, made once.
type nodeAllocator struct {
	once      sync.Once
	allocator structured.Allocator
	err       error
}

// allocator is the allocator for a node.
func (d *Reading) allocator(node string) (structured.Allocator, error) {
	a := d.alloc
	a.once.Do(func() {
		a.cache = dracel.NewCache(10, d.celFeatures())
		a.pools, a.nodePools = map[poolID][]*resourcev1.ResourceSlice{}, map[string][]poolID{}
		if a.nodes == nil {
			a.nodes, a.results = map[string]*nodeAllocator{}, map[string]*nodeResult{}
		}
		seen := map[string]map[poolID]bool{}
		for _, s := range d.sliceObjs {
			id := poolID{s.Spec.Driver, s.Spec.Pool.Name}
			a.pools[id] = append(a.pools[id], s)
			node := ""
			if s.Spec.NodeName != nil {
				node = *s.Spec.NodeName
			}
			if seen[node] == nil {
				seen[node] = map[poolID]bool{}
			}
			if !seen[node][id] {
				seen[node][id] = true
				if node == "" {
					a.shared = append(a.shared, id)
				} else {
					a.nodePools[node] = append(a.nodePools[node], id)
				}
			}
		}
		a.state = d.allocatedState()
		a.mu.Lock()
		a.ready, a.sharedPools = true, len(a.shared) > 0
		a.mu.Unlock()
	})
	a.mu.Lock()
	na := a.nodes[node]
	if na == nil {
		na = new(nodeAllocator)
		a.nodes[node] = na
	}
	a.mu.Unlock()
	na.once.Do(func() {
		ids := append(slices.Clone(a.nodePools[node]), a.shared...)
		var objs []*resourcev1.ResourceSlice
		in := map[poolID]bool{}
		for _, id := range ids {
			if !in[id] {
				in[id] = true
				objs = append(objs, a.pools[id]...)
			}
		}
		na.allocator, na.err = structured.NewAllocator(context.Background(), d.features, stateOf(a.state, in), d.classObjs, objs, a.cache)
	})
	return na.allocator, na.err
}

// stateOf is what is allocated of the pools given.
func stateOf(all structured.AllocatedState, pools map[poolID]bool) structured.AllocatedState {
	has := func(id structured.DeviceID) bool { return pools[poolID{id.Driver.String(), id.Pool.String()}] }
	state := newAllocatedState()
	for id := range all.AllocatedDevices {
		if has(id) {
			state.AllocatedDevices.Insert(id)
		}
	}
	for id := range all.AllocatedSharedDeviceIDs {
		if has(id.GetDeviceID()) {
			state.AllocatedSharedDeviceIDs.Insert(id)
		}
	}
	for id, c := range all.AggregatedCapacity {
		if has(id) {
			state.AggregatedCapacity[id] = c
		}
	}
	return state
}

// allocatedState is what the reading's claims hold, as kube-scheduler's
// claim tracker gathers it: a device held whole by a result without a
// share ID (admin access holds nothing), or, with consumable capacity, a
// share of a device (its share ID) and the capacity it consumed.
func (d *Reading) allocatedState() structured.AllocatedState {
	state := newAllocatedState()
	d.eachHeld(func(r resourcev1.DeviceRequestAllocationResult) {
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if d.features.ConsumableCapacity && r.ShareID != nil {
			state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
			return
		}
		state.AllocatedDevices.Insert(id)
	})
	return state
}

// newAllocatedState is an empty allocated state.
func newAllocatedState() structured.AllocatedState {
	return structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
}

// eachHeld calls held with every allocation result of the reading's claims
// that holds a device (admin access holds none).
func (d *Reading) eachHeld(held func(resourcev1.DeviceRequestAllocationResult)) {
	for _, c := range d.claims.all() {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.AdminAccess == nil || !*r.AdminAccess {
				held(r)
			}
		}
	}
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

// failedClass is the error of a class the claims ask for whose selector
// failed on a device (ClassErrors). Such a class selects nothing on any
// node here; kube-scheduler's filter fails the pod's whole scheduling
// cycle with that error on the node of that device, so no node takes the
// pod, which an error on every node says too.
func (d *Reading) failedClass(claims []pendingClaim) error {
	failed := func(name string) error {
		if i, ok := d.classIndex(name); ok {
			return d.classErrs[i]
		}
		return nil
	}
	for _, c := range claims {
		for _, r := range c.claim.Spec.Devices.Requests {
			if r.Exactly != nil {
				if err := failed(r.Exactly.DeviceClassName); err != nil {
					return err
				}
			}
			for _, s := range r.FirstAvailable {
				if err := failed(s.DeviceClassName); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// resultKey names what a node's allocator is asked: the node and the
// claims' specs (their protobuf encoding). Claims alike ask alike: pods
// made from one template share what the allocator gave on a node as long
// as the reading (or the node's part of it, carry) is the same.
func resultKey(node string, claims []pendingClaim) (string, error) {
	var b strings.Builder
	b.WriteString(node)
	for _, c := range claims {
		spec, err := c.claim.Spec.Marshal()
		if err != nil {
			return "", fmt.Errorf("resourceclaim %s: spec: %w", c.key, err)
		}
		b.WriteByte(0)
		b.Write(spec)
	}
	return b.String(), nil
}

// allocate is what kube's allocator gives a pod's pending claims on a
// node: a result per claim, or ok false when the node cannot satisfy them.
// An error is one the allocator reports for the claims or classes
// themselves (a CEL runtime error, say), not the node. Asked again for the
// same claims on the same node, it answers from what it gave (the results
// are shared: not to be changed).
func (d *Reading) allocate(node string, claims []pendingClaim) (results []resourcev1.AllocationResult, ok bool, err error) {
	if len(claims) == 0 {
		return nil, true, nil
	}
	if err := d.failedClass(claims); err != nil {
		return nil, false, err
	}
	a, err := d.allocator(node)
	if err != nil {
		return nil, false, err
	}
	key, err := resultKey(node, claims)
	if err != nil {
		return nil, false, err
	}
	d.alloc.mu.Lock()
	r := d.alloc.results[key]
	if r == nil {
		r = new(nodeResult)
		d.alloc.results[key] = r
	}
	d.alloc.mu.Unlock()
	r.once.Do(func() {
		objs := make([]*resourcev1.ResourceClaim, len(claims))
		for i, c := range claims {
			objs[i] = c.claim
		}
		ctx, cancel := context.WithTimeout(context.Background(), d.filterTimeout)
		defer cancel()
		results, err := a.Allocate(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, objs)
		switch {
		case errors.Is(err, structured.ErrFailedAllocationOnNode), err == nil && len(results) == 0:
			// the allocator found no devices for them here
		case errors.Is(err, context.DeadlineExceeded):
			r.err = fmt.Errorf("node %s: timed out trying to allocate devices (after %v, kube-scheduler's DynamicResources filterTimeout)", node, d.filterTimeout)
		case err != nil:
			r.err = fmt.Errorf("node %s: %w", node, err)
		case len(results) != len(claims):
			r.err = fmt.Errorf("node %s: the allocator gave %d results for %d claims", node, len(results), len(claims))
		default:
			r.results, r.ok = results, true
		}
	})
	return r.results, r.ok, r.err
}

// celFeatures are the CEL features the allocator compiles selectors with.
func (d *Reading) celFeatures() dracel.Features {
	return dracel.Features{EnableConsumableCapacity: d.features.ConsumableCapacity}
}
