package dra

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
)

// readClaims reads the claims into d: when few of them changed since the
// last reading (other objects listed, or none), by applying the changes to
// the last reading's tables (layered: what they share is not copied),
// which also tells which nodes changed (ChangedNodes); otherwise every
// claim. Finding the changes takes a map probe per listed claim and, when
// some claim is gone, a pass over the last ones; nothing is copied.
func (r *Reader) readClaims(d *Reading, claims []*resourcev1.ResourceClaim) error {
	if r.claimObjs == nil || r.last == nil {
		return r.readEveryClaim(d, claims)
	}
	r.listing++
	var added []*resourcev1.ResourceClaim
	var reads []*claimRead
	seen := 0
	for _, c := range claims {
		if c == nil {
			continue
		}
		if read, ok := r.claimObjs[c]; ok {
			if read.listed != r.listing {
				read.listed = r.listing
				seen++
			}
			continue
		}
		if slices.Contains(added, c) {
			continue
		}
		read, err := readClaim(c)
		if err != nil {
			return err
		}
		added, reads = append(added, c), append(reads, &read)
		if len(added) > maxClaimChanges {
			return r.readEveryClaim(d, claims)
		}
	}
	if len(r.claimObjs)-seen > maxClaimChanges {
		return r.readEveryClaim(d, claims)
	}
	var removed []*resourcev1.ResourceClaim
	if len(r.claimObjs) > seen { // some claims are gone: which
		for c, read := range r.claimObjs {
			if read.listed != r.listing {
				removed = append(removed, c)
			}
		}
	}
	if !r.applyClaims(d, added, reads, removed) {
		return r.readEveryClaim(d, claims)
	}
	return nil
}

// applyClaims makes d's claims the last reading's with the removed claims
// gone and the added ones (read: reads) in, and notes the nodes whose
// allocations changed. It reports false, having changed nothing, when a
// removed claim holds whole a device another claim holds too (no state of
// a cluster; a full reading says what it makes of it).
func (r *Reader) applyClaims(d *Reading, added []*resourcev1.ResourceClaim, reads []*claimRead, removed []*resourcev1.ResourceClaim) bool {
	for _, c := range removed {
		read := r.claimObjs[c]
		for i, id := range read.held {
			if r.holders[id] > 1 && !(read.share[i] && d.features.ConsumableCapacity) {
				return false
			}
		}
	}
	last := r.last
	d.claims, d.allocated = last.claims.next(), last.allocated.next()
	changed := map[string]bool{}
	for _, c := range removed {
		read := r.claimObjs[c]
		if d.claims.at(read.key) == c {
			d.claims.del(read.key)
		}
		for i, id := range read.held {
			if read.share[i] { // what is left of the device changes
				changed[d.nodeOf[id]] = true
			}
			if r.holders[id] <= 1 {
				delete(r.holders, id)
				d.allocated.del(id)
				changed[d.nodeOf[id]] = true
				continue
			}
			r.holders[id]--
			keys := r.sharers[id]
			keys = slices.Delete(keys, slices.Index(keys, read.key), slices.Index(keys, read.key)+1)
			r.sharers[id] = keys
			if first := slices.Min(keys); d.allocated.at(id) != first {
				d.allocated.set(id, first) // of several, the first by key
				changed[d.nodeOf[id]] = true
			}
			if len(keys) == 1 {
				delete(r.sharers, id)
			}
		}
		delete(r.claimObjs, c)
	}
	for i, c := range added {
		read := reads[i]
		read.listed = r.listing
		d.claims.set(read.key, c)
		r.claimObjs[c] = read
		for j, id := range read.held {
			r.noteHolder(id, read.key, d.allocated.at(id))
			if cur := d.allocated.at(id); cur == "" || read.key < cur {
				d.allocated.set(id, read.key)
				changed[d.nodeOf[id]] = true
			}
			if read.share[j] {
				changed[d.nodeOf[id]] = true
			}
		}
	}
	delete(changed, "")
	d.changedFrom, d.changed = last.serial, slices.Sorted(maps.Keys(changed))
	if u := last.units.done(); u != nil {
		d.units.set(d.usageFrom(u, removed, added))
	}
	return true
}

// noteHolder counts one more claim, of that key, holding a device whose
// holder so far (the only one, when there is one) is first.
func (r *Reader) noteHolder(id DeviceID, key, first string) {
	switch r.holders[id]++; r.holders[id] {
	case 1:
	case 2:
		if r.sharers == nil {
			r.sharers = map[DeviceID][]string{}
		}
		r.sharers[id] = []string{first, key}
	default:
		r.sharers[id] = append(r.sharers[id], key)
	}
}

// ReadClaims is a new reading made from the last one (Read's, ReadFrom's or
// ReadClaims') in which the claims of the given keys (namespace/name) are
// the given objects, nil for a claim gone, and every other claim, class and
// slice is as it was: how a host that is told which claims changed (an
// informer's events, the claims of a pod it reserved) reads DRA again in
// the time of what changed, listing nothing. Claims that did not change
// may be given. A claim the scheduler has allocated in memory (pending, as
// in Listers, non-nil for it) reads with that allocation
// (WithPendingAllocations). The reading shares the last one's classes and
// devices (ChangedNodes). A claim under another key, or a malformed
// allocation, is an error naming the claim, and so is calling it before
// any reading.
func (r *Reader) ReadClaims(claims map[string]*resourcev1.ResourceClaim, pending func(types.UID) *resourcev1.AllocationResult) (*Reading, error) {
	last := r.last
	if last == nil || r.claimObjs == nil {
		return nil, errors.New("Reader.ReadClaims: no reading to start from")
	}
	r.listing++
	given := claims
	claims = make(map[string]*resourcev1.ResourceClaim, len(given))
	for key, c := range given {
		var a *resourcev1.AllocationResult
		if c != nil && c.UID != "" && pending != nil {
			a = pending(c.UID)
		}
		if a == nil {
			delete(r.pending, key)
		} else {
			copied := *c
			copied.Status.Allocation = a
			c = r.keepPending(r.pending, c, &copied)
		}
		claims[key] = c
	}
	var added, removed []*resourcev1.ResourceClaim
	var reads []*claimRead
	full := false // a claim object listed under two keys: read every claim
	for _, key := range slices.Sorted(maps.Keys(claims)) {
		c, old := claims[key], last.claims.at(key)
		if c == old {
			continue
		}
		if c != nil {
			read, err := readClaim(c)
			if err != nil {
				return nil, err
			}
			if read.key != key {
				return nil, fmt.Errorf("resourceclaim %s: given as %s", read.key, key)
			}
			_, known := r.claimObjs[c]
			full = full || known
			added, reads = append(added, c), append(reads, &read)
		}
		if old != nil {
			removed = append(removed, old)
		}
	}
	d := *last
	d.alloc, d.units, d.serial = new(draAllocator), new(usageOnce), newSerial()
	if full || !r.applyClaims(&d, added, reads, removed) {
		all := slices.Collect(maps.Keys(r.claimObjs))
		all = slices.DeleteFunc(all, func(c *resourcev1.ResourceClaim) bool { return slices.Contains(removed, c) })
		if err := r.readEveryClaim(&d, append(all, added...)); err != nil {
			return nil, err
		}
	}
	if d.changedFrom == last.serial {
		d.alloc.carry(last.alloc, d.changed) // the other nodes' allocators stay
	}
	r.last = &d
	return &d, nil
}

// readEveryClaim reads every claim into d's tables. On an error the reader
// forgets the claims, and reads every one the next time.
func (r *Reader) readEveryClaim(d *Reading, claims []*resourcev1.ResourceClaim) error {
	d.changedFrom, d.changed = 0, nil
	byKey, allocated := map[string]*resourcev1.ResourceClaim{}, map[DeviceID]string{}
	objs := make(map[*resourcev1.ResourceClaim]*claimRead, len(claims))
	r.holders, r.sharers = map[DeviceID]int{}, nil
	for _, c := range claims {
		if c == nil {
			continue
		}
		if _, dup := objs[c]; dup {
			continue
		}
		read, ok := r.claimObjs[c]
		if !ok {
			fresh, err := readClaim(c)
			if err != nil {
				r.claimObjs, r.holders, r.sharers = nil, nil, nil
				return err
			}
			read = &fresh
		}
		read.listed = r.listing
		objs[c] = read
		byKey[read.key] = c
		for _, id := range read.held {
			r.noteHolder(id, read.key, allocated[id])
			if cur, held := allocated[id]; !held || read.key < cur {
				allocated[id] = read.key // of several, the first by key
			}
		}
	}
	d.claims, d.allocated = layeredOf(byKey), layeredOf(allocated)
	r.claimObjs = objs
	return nil
}

// readClaim reads what a claim holds; a malformed allocation result is an
// error naming the claim and the field.
func readClaim(c *resourcev1.ResourceClaim) (claimRead, error) {
	read := claimRead{key: c.Namespace + "/" + c.Name}
	if c.Status.Allocation == nil {
		return read, nil
	}
	for i, r := range c.Status.Allocation.Devices.Results {
		field := fmt.Sprintf("status.allocation.devices.results[%d]", i)
		switch {
		case r.Driver == "":
			return claimRead{}, fmt.Errorf("resourceclaim %s: %s.driver: empty", read.key, field)
		case r.Pool == "":
			return claimRead{}, fmt.Errorf("resourceclaim %s: %s.pool: empty", read.key, field)
		case r.Device == "":
			return claimRead{}, fmt.Errorf("resourceclaim %s: %s.device: empty", read.key, field)
		}
		if err := checkConsumed(read.key, field, r); err != nil {
			return claimRead{}, err
		}
		if r.AdminAccess != nil && *r.AdminAccess {
			continue
		}
		read.held = append(read.held, DeviceID{r.Driver, r.Pool, r.Device})
		read.share = append(read.share, r.ShareID != nil)
	}
	return read, nil
}
