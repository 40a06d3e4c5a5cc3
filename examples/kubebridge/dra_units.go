package kubebridge

import (
	"math/big"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
)

// What is left of a node's units (Amounts' units: a device that consumes
// no counters, or a counter set, a GPU with partitions) is what the
// device view holds for them: a unit no claim touches is whole; one a
// claim holds whole (a dedicated device, a whole GPU beside its
// partitions) has nothing left; a shareable device has, of each capacity,
// what its shares have not consumed; a counter set has, of each counter,
// what its allocated partitions have not consumed. What is left of a unit
// is its scarcest part: the least, over its capacities or counters, of
// what is left as a share of the whole. A counter of 1 is a slot (NVIDIA
// publishes a GPU's memory slices so): it says where a partition goes,
// not how much of the GPU is used, and counts only for a set of slots
// alone.

// draUsage is what a reading's claims consume: whole devices, the
// capacity shares consumed of each device, and the counters allocated
// devices consume of each counter set.
type draUsage struct {
	whole    map[DeviceID]bool
	capacity map[DeviceID]map[resourcev1.QualifiedName]*big.Rat
	counters map[string]map[string]*big.Rat // by unit (driver/pool/set)
}

// usageOnce computes a reading's usage when first asked for.
type usageOnce struct {
	once  sync.Once
	usage draUsage
}

// ratOf is a quantity as an exact rational.
func ratOf(q kres.Quantity) *big.Rat {
	dec := q.AsDec()
	r := new(big.Rat).SetInt(dec.UnscaledBig())
	pow := func(n int64) *big.Rat {
		return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil))
	}
	if scale := int64(dec.Scale()); scale < 0 {
		return r.Mul(r, pow(-scale))
	}
	return r.Quo(r, pow(int64(dec.Scale())))
}

// add adds q to the named entry of m.
func add[K comparable](m map[K]*big.Rat, name K, q kres.Quantity) {
	if m[name] == nil {
		m[name] = new(big.Rat)
	}
	m[name].Add(m[name], ratOf(q))
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
func (d *DRA) usage() *draUsage {
	d.units.once.Do(func() {
		u := draUsage{whole: map[DeviceID]bool{}, capacity: map[DeviceID]map[resourcev1.QualifiedName]*big.Rat{}, counters: map[string]map[string]*big.Rat{}}
		devices := map[DeviceID]*DRADevice{}
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
				if u.counters[dev.unit] == nil {
					u.counters[dev.unit] = map[string]*big.Rat{}
				}
				for name, c := range dev.consumes {
					add(u.counters[dev.unit], name, c.Value)
				}
			case r.ShareID != nil && d.features.ConsumableCapacity:
				if u.capacity[id] == nil {
					u.capacity[id] = map[resourcev1.QualifiedName]*big.Rat{}
				}
				for name, q := range r.ConsumedCapacity {
					add(u.capacity[id], name, q)
				}
			default:
				u.whole[id] = true
			}
		})
		d.units.usage = u
	})
	return &d.units.usage
}

// left is the share of a whole that is left once used of it is consumed,
// in [0, 1]; a whole of 0 leaves all of it.
func left(whole, used *big.Rat) *big.Rat {
	if whole.Sign() <= 0 || used == nil {
		return big.NewRat(1, 1)
	}
	l := new(big.Rat).Sub(whole, used)
	l.Quo(l, whole)
	switch {
	case l.Sign() < 0:
		return new(big.Rat)
	case l.Cmp(big.NewRat(1, 1)) > 0:
		return big.NewRat(1, 1)
	}
	return l
}

// unitLeft is what is left of a device's unit, as a share of the whole:
// its scarcest capacity or counter.
func (d *DRA) unitLeft(dev DRADevice, sets map[string]map[string]resourcev1.Counter) *big.Rat {
	u := d.usage()
	least := big.NewRat(1, 1)
	scarcer := func(l *big.Rat) {
		if l.Cmp(least) < 0 {
			least = l
		}
	}
	switch {
	case dev.unit != "":
		set := sets[dev.unit]
		slots := isSlots(set)
		for name, c := range set {
			if slots || !isSlot(c) {
				scarcer(left(ratOf(c.Value), u.counters[dev.unit][name]))
			}
		}
	case u.whole[dev.ID]:
		return new(big.Rat)
	case dev.Shared:
		for name, value := range dev.capacity {
			scarcer(left(ratOf(value), u.capacity[dev.ID][name]))
		}
	}
	return least
}
