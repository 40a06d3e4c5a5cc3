package dra

import (
	"maps"
	"math/big"
	"sync"
	"sync/atomic"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
)

// draUsage is what a reading's claims consume: whole devices, the
// capacity shares consumed of each device, and the counters allocated
// devices consume of each counter set. Readings made one from another
// share most of it (layered); an entry's map and numbers are never
// changed once made.
type draUsage struct {
	whole    layered[DeviceID, bool]
	capacity layered[DeviceID, map[resourcev1.QualifiedName]*big.Rat]
	counters layered[string, map[string]*big.Rat] // by unit (driver/pool/set)
}

// usageOnce is a reading's usage: worked out when first asked for, or
// set when the reading is made from one whose usage was (usageFrom).
type usageOnce struct {
	once  sync.Once
	made  atomic.Bool
	usage draUsage
}

// done is the usage when it is worked out, else nil.
func (o *usageOnce) done() *draUsage {
	if o.made.Load() {
		return &o.usage
	}
	return nil
}

// set makes u the usage.
func (o *usageOnce) set(u draUsage) {
	o.once.Do(func() {
		o.usage = u
		o.made.Store(true)
	})
}

// serials hands out readings' serials.
var serials atomic.Uint64

// newSerial is a serial no reading has.
func newSerial() uint64 { return serials.Add(1) }

// add adds q, times sign (1 or -1), to the named entry of m, as a new
// number (the old one may be another reading's).
func add[K comparable](m map[K]*big.Rat, name K, q kres.Quantity, sign int) {
	r := ratOf(q)
	if sign < 0 {
		r.Neg(r)
	}
	if old := m[name]; old != nil {
		r.Add(r, old)
	}
	m[name] = r
}

// isSlot reports a counter of at most 1: a slot (a memory slice).
func isSlot(c resourcev1.Counter) bool { return c.Value.Cmp(*kres.NewQuantity(1, kres.DecimalSI)) <= 0 }

// isSlots reports a counter set of slots alone.
func isSlots(set map[string]resourcev1.Counter) bool {
	for _, c := range set {
		if !isSlot(c) {
			return false
		}
	}
	return true
}

// usage is what the reading's claims consume.
func (d *Reading) usage() *draUsage {
	d.units.once.Do(func() {
		whole, capacity, counters := map[DeviceID]bool{}, map[DeviceID]map[resourcev1.QualifiedName]*big.Rat{}, map[string]map[string]*big.Rat{}
		devices := map[DeviceID]*Device{}
		for _, list := range d.devices {
			for i := range list {
				devices[list[i].ID] = &list[i]
			}
		}
		d.eachHeld(func(r resourcev1.DeviceRequestAllocationResult) {
			id := DeviceID{r.Driver, r.Pool, r.Device}
			dev := devices[id]
			switch {
			case dev == nil: // on no node's list
			case dev.unit != "":
				dev.eachUse(func(set string, consumes map[string]resourcev1.Counter) {
					if counters[set] == nil {
						counters[set] = map[string]*big.Rat{}
					}
					for name, c := range consumes {
						add(counters[set], name, c.Value, 1)
					}
				})
			case r.ShareID != nil && d.features.ConsumableCapacity:
				if capacity[id] == nil {
					capacity[id] = map[resourcev1.QualifiedName]*big.Rat{}
				}
				for name, q := range r.ConsumedCapacity {
					add(capacity[id], name, q, 1)
				}
			default:
				whole[id] = true
			}
		})
		d.units.usage = draUsage{whole: layeredOf(whole), capacity: layeredOf(capacity), counters: layeredOf(counters)}
		d.units.made.Store(true)
	})
	return &d.units.usage
}

// usageFrom is the usage of a reading made from one of usage u by removing
// claims and adding others: u with what the removed claims' results
// consume taken away and the added ones' put in, as usage counts them; it
// copies only the entries they touch. The reading's devices are u's
// reading's, and no device a removed claim holds is held by another
// (Reader.applyClaims reads every claim otherwise).
func (d *Reading) usageFrom(u *draUsage, removed, added []*resourcev1.ResourceClaim) draUsage {
	out := draUsage{whole: u.whole.next(), capacity: u.capacity.next(), counters: u.counters.next()}
	apply := func(c *resourcev1.ResourceClaim, sign int) {
		if c.Status.Allocation == nil {
			return
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := DeviceID{r.Driver, r.Pool, r.Device}
			dev := d.device(id)
			switch {
			case dev == nil:
			case dev.unit != "":
				dev.eachUse(func(set string, consumes map[string]resourcev1.Counter) {
					m := maps.Clone(out.counters.at(set))
					if m == nil {
						m = map[string]*big.Rat{}
					}
					for name, c := range consumes {
						add(m, name, c.Value, sign)
					}
					out.counters.set(set, m)
				})
			case r.ShareID != nil && d.features.ConsumableCapacity:
				m := maps.Clone(out.capacity.at(id))
				if m == nil {
					m = map[resourcev1.QualifiedName]*big.Rat{}
				}
				for name, q := range r.ConsumedCapacity {
					add(m, name, q, sign)
				}
				out.capacity.set(id, m)
			case sign > 0:
				out.whole.set(id, true)
			default:
				out.whole.del(id)
			}
		}
	}
	for _, c := range removed {
		apply(c, -1)
	}
	for _, c := range added {
		apply(c, 1)
	}
	return out
}

// device is the device of an ID, nil when it is on no node's list.
func (d *Reading) device(id DeviceID) *Device {
	node, ok := d.nodeOf[id]
	if !ok {
		return nil
	}
	list := d.devices[node]
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

// unitLeft is what is left of a device's unit, as a share of the whole:
// its scarcest capacity or counter. The Rat returned may be shared: it is
// not to be changed.
func (d *Reading) unitLeft(dev *Device, sets map[string]map[string]resourcev1.Counter) *big.Rat {
	u := d.usage()
	least := ratOne
	scarcer := func(l *big.Rat) {
		if l != ratOne && l.Cmp(least) < 0 { // least is at most 1
			least = l
		}
	}
	switch {
	case dev.unit != "":
		set := sets[dev.unit]
		slots := isSlots(set)
		used := u.counters.at(dev.unit)
		for name, c := range set {
			if (slots || !isSlot(c)) && used[name] != nil { // a counter nothing uses leaves all of it
				scarcer(left(ratOf(c.Value), used[name]))
			}
		}
	case u.whole.at(dev.ID):
		return ratZero
	case dev.Shared:
		used := u.capacity.at(dev.ID)
		for name, value := range dev.capacity {
			if used[name] != nil {
				scarcer(left(ratOf(value), used[name]))
			}
		}
	}
	return least
}
