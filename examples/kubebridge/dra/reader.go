package dra

import (
	"cmp"
	"fmt"
	v1 "k8s.io/api/core/v1"
	"maps"
	"slices"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
)

// Reader reads a cluster's DRA objects again and again, as a host that
// keeps them across scheduling cycles does (Read's rules), reusing what
// did not change: the classes while the same DeviceClass objects are
// listed, a slice's devices and the classes that select them while the
// same ResourceSlice object is listed (informers replace an object that
// changes), and the whole device table while the same slices are; of the
// claims, it reads those whose objects changed, and applies them to the
// last reading's tables, which the new reading shares (layered). ReadClaims
// reads claims a host was told changed, listing nothing. The zero value is
// ready; it is not safe for concurrent use (the readings it returns are).
type Reader struct {
	// Features are the allocator's features (kube-scheduler's feature
	// gates, as its DynamicResources plugin turns them into the
	// allocator's); nil is DefaultAllocatorFeatures.
	Features *structured.Features
	// FilterTimeout bounds the allocator's search for one pod's claims on
	// one node, as kube-scheduler's DynamicResources filterTimeout does
	// (its selectors' CEL may cost up to kube's limit on every device): 0
	// is kube-scheduler's default, DefaultFilterTimeout. A search that
	// runs out is an error for the pod on that node, as kube-scheduler's
	// Filter fails the scheduling cycle with it.
	FilterTimeout time.Duration

	last       *Reading
	classObjs  []*resourcev1.DeviceClass
	sliceObjs  []*resourcev1.ResourceSlice // the newest generation's, as last read
	sliceCache map[*resourcev1.ResourceSlice][]Device
	slices     listed[resourcev1.ResourceSlice] // every slice last listed
	// claimObjs are the claims last read, each with what it holds; holders
	// counts the claims holding each held device, and sharers are the keys
	// of those claims for a device that several hold (shares of it). The
	// readings change them in place; listing numbers the readings.
	claimObjs map[*resourcev1.ResourceClaim]*claimRead
	holders   map[DeviceID]int
	sharers   map[DeviceID][]string
	listing   uint64
	// pending are the copies of claims with a pending allocation the last
	// readings made (WithPendingAllocations), by claim key, kept so that a
	// claim whose pending allocation stays is the same object at the next.
	pending map[string]pendingCopy
}

// pendingCopy is a claim's copy with its pending allocation.
type pendingCopy struct{ of, copy *resourcev1.ResourceClaim }

// keepPending is the copy of claim c with a pending allocation to read:
// copied, or the copy kept in prev when it is of the same object with the
// same allocation. It keeps the copy in r.pending.
func (r *Reader) keepPending(prev map[string]pendingCopy, c, copied *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
	key := c.Namespace + "/" + c.Name
	if k, ok := prev[key]; ok && k.of == c && k.copy.Status.Allocation == copied.Status.Allocation {
		copied = k.copy
	}
	if r.pending == nil {
		r.pending = map[string]pendingCopy{}
	}
	r.pending[key] = pendingCopy{c, copied}
	return copied
}

// claimRead is what a claim object says: its key (namespace/name) and the
// devices its allocation holds (admin access holds none), with whether it
// holds each as a share (a result with a share ID); listed is the
// reader's listing that last listed it.
type claimRead struct {
	key    string
	held   []DeviceID
	share  []bool
	listed uint64
}

// maxClaimChanges bounds the claims changed since the last reading that
// Read applies to a copy of its tables; more, and it reads every claim.
const maxClaimChanges = 256

// Read reads the objects (Read). A reading that keeps the last one's
// classes and devices shares them (Reading.ChangedNodes tells which nodes'
// allocations changed).
func (r *Reader) Read(objects Objects) (*Reading, error) {
	d := &Reading{templates: map[string]*resourcev1.ResourceClaimTemplate{}, alloc: new(draAllocator), units: new(usageOnce), serial: newSerial()} // readClaims makes the claims' tables
	d.features = DefaultAllocatorFeatures()
	d.filterTimeout = cmp.Or(r.FilterTimeout, DefaultFilterTimeout)
	if r.Features != nil {
		d.features = *r.Features
	}
	d.nodes = objects.Nodes
	if r.last != nil && r.last.features != d.features {
		r.last = nil // read everything again under the new features
	}
	sameClasses := r.last != nil && samePointers(r.classObjs, objects.Classes)
	if sameClasses {
		d.classes, d.classErrs, d.classObjs = r.last.classes, r.last.classErrs, r.last.classObjs
	} else if err := d.readClasses(objects.Classes); err != nil {
		return nil, err
	} else {
		d.classErrs = make([]error, len(d.classes))
	}
	sameList := sameClasses && r.slices.same(objects.Slices)
	newest := r.sliceObjs
	if !sameList {
		var err error
		if newest, err = newestSlices(objects.Slices); err != nil {
			return nil, err
		}
	}
	d.sliceObjs = newest
	if sameList || sameClasses && samePointers(r.sliceObjs, newest) {
		d.read, d.devices, d.nodeOf, d.sets = r.last.read, r.last.devices, r.last.nodeOf, r.last.sets
	} else {
		cache := r.sliceCache
		if !sameClasses || cache == nil {
			cache = map[*resourcev1.ResourceSlice][]Device{}
		}
		next := make(map[*resourcev1.ResourceSlice][]Device, len(newest))
		d.classErrs = slices.Clone(d.classErrs) // the last reading's are its own
		if err := d.readSlices(newest, cache, next); err != nil {
			return nil, err
		}
		d.read = new(draRead)
		r.sliceCache = next
	}
	if err := r.readClaims(d, objects.Claims); err != nil {
		return nil, err
	}
	if r.last != nil && d.read == r.last.read && d.changedFrom != 0 && d.changedFrom == r.last.serial {
		d.alloc.carry(r.last.alloc, d.changed) // the other nodes' allocators stay
	}
	for _, t := range objects.Templates {
		if t != nil {
			d.templates[t.Namespace+"/"+t.Name] = t
		}
	}
	r.last, r.classObjs, r.sliceObjs = d, slices.Clone(objects.Classes), newest
	if !sameList {
		r.slices.keep(objects.Slices)
	}
	return d, nil
}

// samePointers reports whether two lists hold the same objects, in any
// order.
func samePointers[T any](a, b []*T) bool {
	if len(a) != len(b) {
		return false
	}
	set := make(map[*T]bool, len(a))
	for _, x := range a {
		set[x] = true
	}
	for _, x := range b {
		if !set[x] {
			return false
		}
	}
	return true
}

// ChangedNodes are the nodes whose devices' allocations differ between an
// earlier reading and this one, when both share their classes and devices
// (same reports it); a host then writes only those rows again.
func (d *Reading) ChangedNodes(earlier *Reading) (nodes []string, same bool) {
	if earlier == nil || d.read != earlier.read {
		return nil, false
	}
	if d.changedFrom != 0 && d.changedFrom == earlier.serial {
		return d.changed, true
	}
	changed := map[string]bool{}
	eachDifference(&d.allocated, &earlier.allocated, func(id DeviceID) { changed[d.nodeOf[id]] = true })
	delete(changed, "") // devices on no node
	return slices.Sorted(maps.Keys(changed)), true
}

// WithPendingAllocations are the claims as a scheduler holds them between
// its decision and the API's: each claim the scheduler has allocated in
// memory (pending(uid) non-nil, as kube-scheduler's and Volcano's
// ResourceClaimTracker.GetPendingAllocation answer) with that allocation
// in place of its status's. The claims are not changed; one with a pending
// allocation is a copy. Every host reads a scheduler's claims through it,
// since the tracker's List leaves the pending allocations out.
func WithPendingAllocations(claims []*resourcev1.ResourceClaim, pending func(types.UID) *resourcev1.AllocationResult) []*resourcev1.ResourceClaim {
	return withPending(claims, pending, nil)
}

// withPending is WithPendingAllocations; each copy it makes goes through
// made, when not nil, which may give another object of the same content
// in its place.
func withPending(claims []*resourcev1.ResourceClaim, pending func(types.UID) *resourcev1.AllocationResult, made func(claim, copied *resourcev1.ResourceClaim) *resourcev1.ResourceClaim) []*resourcev1.ResourceClaim {
	out := claims
	for i, c := range claims {
		if c == nil || c.UID == "" {
			continue
		}
		a := pending(c.UID)
		if a == nil {
			continue
		}
		if &out[0] == &claims[0] {
			out = slices.Clone(claims)
		}
		copied := *c
		copied.Status.Allocation = a
		out[i] = &copied
		if made != nil {
			out[i] = made(c, out[i])
		}
	}
	return out
}

// Listers are how a scheduler lists its DRA objects: kube-scheduler's
// and Volcano's SharedDRAManager give them as method values
// (ResourceSlices().ListWithDeviceTaintRules, DeviceClasses().List,
// ResourceClaims().List and ResourceClaims().GetPendingAllocation).
type Listers struct {
	Slices  func() ([]*resourcev1.ResourceSlice, error)
	Classes func() ([]*resourcev1.DeviceClass, error)
	Claims  func() ([]*resourcev1.ResourceClaim, error)
	Pending func(types.UID) *resourcev1.AllocationResult
	// Templates, when not nil, lists the ResourceClaimTemplates, for a
	// host that plans for pods whose claims are not made yet (a
	// descheduler); Pending, when nil, is none.
	Templates func() ([]*resourcev1.ResourceClaimTemplate, error)
	// Nodes, when not nil, lists the nodes (Objects.Nodes).
	Nodes func() ([]*v1.Node, error)
}

// ReadFrom reads what a scheduler holds (Read): its slices, classes, and
// claims with the allocations it made in memory (WithPendingAllocations);
// nil when it holds no slices and no classes (a cluster without DRA).
func (r *Reader) ReadFrom(l Listers) (*Reading, error) {
	slices, err := l.Slices()
	if err != nil {
		return nil, fmt.Errorf("listing resourceslices: %w", err)
	}
	classes, err := l.Classes()
	if err != nil {
		return nil, fmt.Errorf("listing deviceclasses: %w", err)
	}
	if len(slices) == 0 && len(classes) == 0 {
		return nil, nil
	}
	claims, err := l.Claims()
	if err != nil {
		return nil, fmt.Errorf("listing resourceclaims: %w", err)
	}
	o := Objects{Slices: slices, Classes: classes, Claims: claims}
	if l.Pending != nil {
		prev := r.pending
		r.pending = nil
		o.Claims = withPending(claims, l.Pending, func(c, copied *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
			return r.keepPending(prev, c, copied)
		})
	}
	if l.Templates != nil {
		if o.Templates, err = l.Templates(); err != nil {
			return nil, fmt.Errorf("listing resourceclaimtemplates: %w", err)
		}
	}
	if l.Nodes != nil {
		if o.Nodes, err = l.Nodes(); err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
	}
	return r.Read(o)
}
