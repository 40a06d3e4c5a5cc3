package dra

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resfit/resfit/resource"
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

// ratOne and ratZero are the shares left of a unit nothing uses and of one
// in use whole: left and unitLeft return them, read-only, instead of a new
// Rat for each device.
var ratOne, ratZero = big.NewRat(1, 1), new(big.Rat)

// left is the share of a whole that is left once used of it is consumed,
// in [0, 1]; a whole of 0, or nothing used, leaves all of it. The Rat
// returned may be shared: it is not to be changed.
func left(whole, used *big.Rat) *big.Rat {
	if whole.Sign() <= 0 || used == nil {
		return ratOne
	}
	l := new(big.Rat).Sub(whole, used)
	l.Quo(l, whole)
	switch {
	case l.Sign() < 0:
		return ratZero
	case l.Cmp(ratOne) > 0:
		return ratOne
	}
	return l
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

// NodeUnits is what a node's DRA devices of a device view's resource are
// (Reading.NodeUnits): its units (Amounts': a device, or a GPU with
// partitions once), each with what is left of it, and those that divide
// into parts. The zero value is a node without such devices.
type NodeUnits struct {
	// Left is what is left of each unit, as a share of the whole
	// (unitLeft).
	Left []*big.Rat
	// Model is the units' productName model, "" when they differ or one is
	// not a model resfit reads (resource.ValidateModel).
	Model string
	// Parts are the units that divide into parts, with their layouts and
	// counters left (partitioned); PartsKey tells two readings' apart.
	Parts    []resource.Partitioned
	PartsKey string
	// Err says that the node publishes more units than resfit reads of a
	// node (resource.MaxDevicesPerNode): the first are counted.
	Err error
}

// Free is what is left of each unit in a device view where a device is
// per: ⌊left·per⌋, whole only when nothing of it is used.
func (u NodeUnits) Free(per int64) []int64 {
	free := make([]int64, len(u.Left))
	for j, l := range u.Left {
		free[j] = floorTimes(l, per)
	}
	return free
}

// Same reports whether two readings of a node give the same units.
func (u NodeUnits) Same(o NodeUnits) bool {
	return slices.EqualFunc(u.Left, o.Left, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 }) && u.Model == o.Model && u.PartsKey == o.PartsKey
}

// NodeUnits reads a node's devices of a view's resource.
func (d *Reading) NodeUnits(node, name string) NodeUnits {
	devs := d.viewDevices(node, name)
	var u NodeUnits
	var seen unitSet
	units := make([]*Device, 0, len(devs))
	past := 0 // units past resource.MaxDevicesPerNode
	for _, dev := range devs {
		if dev.unusable || !seen.add(dev) {
			continue
		}
		if len(u.Left) == resource.MaxDevicesPerNode {
			past++
			continue
		}
		units = append(units, dev)
		if len(u.Left) == 0 {
			u.Model = dev.Model
		}
		if dev.Model != u.Model || resource.ValidateModel(dev.Model) != nil {
			u.Model = ""
		}
		u.Left = append(u.Left, d.unitLeft(dev, d.sets))
	}
	if len(u.Left) == 0 {
		return NodeUnits{}
	}
	u.Parts, u.PartsKey = d.partitioned(node, units)
	if past > 0 {
		u.Err = fmt.Errorf("node %s: %d devices of %s in its ResourceSlices, more than the %d resfit reads of a node: the first %d are counted", node, len(u.Left)+past, name, resource.MaxDevicesPerNode, resource.MaxDevicesPerNode)
	}
	return u
}
