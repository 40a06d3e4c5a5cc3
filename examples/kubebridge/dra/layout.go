package dra

import (
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"

	"github.com/resfit/resfit/resource"
)

// draRead holds what is worked out once per reading of the classes and
// devices (readings that share them share it): the layouts, by unit.
type draRead struct {
	layouts sync.Map // unit → *unitLayout
}

// unitLayout is a counter set as a layout, with the counters' names and
// multipliers in the layout's order; layout nil when it has none.
type unitLayout struct {
	layout *resource.Layout
	names  []string
	scale  []*big.Int
	shares bool
}

// partType is a device's partition type ("" for none): the attribute its
// slice names, else its driver's profile attribute.
func partType(s *resourcev1.ResourceSlice, dev resourcev1.Device) string {
	attr := func(name string) string {
		for _, key := range []string{name, s.Spec.Driver + "/" + name} {
			if a, ok := dev.Attributes[resourcev1.QualifiedName(key)]; ok && a.StringValue != nil {
				return *a.StringValue
			}
		}
		return ""
	}
	if name := partitionTypeAttribute(s.Spec); name != "" {
		if domain, short, ok := strings.Cut(name, "/"); ok && domain == s.Spec.Driver {
			name = short
		}
		return attr(name)
	}
	return attr("profile")
}

// partitionTypeAttribute is a slice's spec.partitionTypeAttribute, ""
// when it names none. The field is new in Kubernetes v1.37's API; it is
// read by name, so that kubebridge builds against v1.36's too (the API
// the Volcano release resfit's Volcano host builds with pins), where a
// slice has none.
func partitionTypeAttribute(spec resourcev1.ResourceSliceSpec) string {
	f := reflect.ValueOf(spec).FieldByName("PartitionTypeAttribute")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String {
		return ""
	}
	return f.Elem().String()
}

// layoutOf is a node's unit as a layout, made once per reading; units
// alike (GPUs of one kind) share one.
func (d *Reading) layoutOf(node, unit string) *unitLayout {
	if d.read == nil {
		return d.makeLayout(node, unit)
	}
	if l, ok := d.read.layouts.Load(unit); ok {
		return l.(*unitLayout)
	}
	return d.read.share(unit, d.makeLayout(node, unit))
}

// share keeps a layout made for a key, or the one made before it for a
// unit alike.
func (r *draRead) share(key string, ul *unitLayout) *unitLayout {
	if ul.layout != nil {
		alike, _ := r.layouts.LoadOrStore("alike:"+ul.signature(), ul)
		ul = alike.(*unitLayout)
	}
	l, _ := r.layouts.LoadOrStore(key, ul)
	return l.(*unitLayout)
}

// signature says what a layout is: its counters' names, units and
// amounts, its parts' types and consumption, and whether it is of shares.
func (ul *unitLayout) signature() string {
	var b strings.Builder
	l := ul.layout
	fmt.Fprint(&b, ul.names, ul.scale, l.Counters(), l.Parts())
	for p := range l.Parts() {
		fmt.Fprintf(&b, "|%q%v", l.Part(p).Type, l.Part(p).Consumes)
	}
	if ul.shares {
		b.WriteString("|shares")
	}
	return b.String()
}

// makeLayout makes a unit's layout from its set and the node's devices
// that consume from it.
func (d *Reading) makeLayout(node, unit string) *unitLayout {
	set := d.sets[unit]
	ul := &unitLayout{}
	var devs []Device
	for _, dev := range d.devices[node] {
		if dev.unit != unit {
			continue
		}
		if dev.otherSets {
			return ul
		}
		devs = append(devs, dev)
	}
	for name := range set {
		ul.names = append(ul.names, name)
	}
	slices.Sort(ul.names)
	counters := make([]int64, len(ul.names))
	ul.scale = make([]*big.Int, len(ul.names))
	for k, name := range ul.names {
		total := ratOf(set[name].Value)
		m := new(big.Int).Set(total.Denom())
		for _, dev := range devs {
			if c, ok := dev.consumes[name]; ok {
				m = lcm(m, ratOf(c.Value).Denom())
			}
		}
		if total.Cmp(big.NewRat(1, 1)) <= 0 && m.Cmp(big.NewInt(1)) != 0 {
			return ul // a slot consumed in fractions
		}
		v, ok := scaled(total, m)
		if !ok {
			return ul
		}
		counters[k], ul.scale[k] = v, m
	}
	var parts []resource.Part
	for _, dev := range devs {
		if dev.partType == "" {
			continue
		}
		consumes := make([]int64, len(ul.names))
		for k, name := range ul.names {
			if c, ok := dev.consumes[name]; ok {
				v, ok := scaled(ratOf(c.Value), ul.scale[k])
				if !ok {
					return ul
				}
				consumes[k] = v
			}
		}
		parts = append(parts, resource.Part{Type: dev.partType, Consumes: consumes})
	}
	if len(counters) == 0 {
		return ul
	}
	l, err := resource.NewLayout(counters, parts)
	if err != nil {
		return ul // a counter set too large for a layout, or a device consuming more than its set has
	}
	ul.layout = l
	return ul
}

// leftOf is what the claims leave of a unit's counters (or capacities),
// in its layout's units (what they use rounded up), none below 0.
func leftOf[K ~string](ul *unitLayout, used map[K]*big.Rat) []int64 {
	left := ul.layout.Counters()
	for k, name := range ul.names {
		if u := used[K(name)]; u != nil {
			v := new(big.Rat).Mul(u, new(big.Rat).SetInt(ul.scale[k]))
			q, r := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
			if r.Sign() > 0 {
				q.Add(q, big.NewInt(1))
			}
			if q.Cmp(big.NewInt(left[k])) >= 0 {
				left[k] = 0
			} else {
				left[k] -= q.Int64()
			}
		}
	}
	return left
}

// partitioned is a node's units (each given by its first device) that
// have layouts, as the device view records them
// (resource.Devices.SetPartitioned), by their index among the node's
// units; and a key that tells two readings' apart.
func (d *Reading) partitioned(node string, units []*Device) ([]resource.Partitioned, string) {
	var out []resource.Partitioned
	var key strings.Builder
	for j, dev := range units {
		var ul *unitLayout
		var left []int64
		switch {
		case dev.unit != "":
			if ul = d.layoutOf(node, dev.unit); ul.layout != nil {
				left = leftOf(ul, d.usage().counters.at(dev.unit))
			}
		case dev.Shared && d.features.ConsumableCapacity && !d.usage().whole.at(dev.ID):
			if ul = d.shareLayoutOf(*dev); ul.layout != nil {
				left = leftOf(ul, d.usage().capacity.at(dev.ID))
			}
		}
		if ul == nil || ul.layout == nil {
			continue
		}
		out = append(out, resource.Partitioned{Device: j, Layout: ul.layout, Left: left})
		fmt.Fprintf(&key, "%d:%p:%v;", j, ul.layout, left)
	}
	return out, key.String()
}

// shareLayoutOf is a shareable device as a share layout, made once per
// reading.
func (d *Reading) shareLayoutOf(dev Device) *unitLayout {
	key := "share:" + dev.ID.String()
	if d.read == nil {
		return makeShareLayout(dev.capacity)
	}
	if l, ok := d.read.layouts.Load(key); ok {
		return l.(*unitLayout)
	}
	return d.read.share(key, makeShareLayout(dev.capacity))
}

// makeShareLayout makes a share layout of capacities.
func makeShareLayout(capacity map[resourcev1.QualifiedName]kres.Quantity) *unitLayout {
	ul := &unitLayout{shares: true}
	for name := range capacity {
		ul.names = append(ul.names, string(name))
	}
	slices.Sort(ul.names)
	values := make([]int64, len(ul.names))
	ul.scale = make([]*big.Int, len(ul.names))
	for k, name := range ul.names {
		total := ratOf(capacity[resourcev1.QualifiedName(name)])
		for _, m := range []int64{1000, 1} {
			if v, ok := scaled(total, big.NewInt(m)); ok && new(big.Rat).Mul(total, big.NewRat(m, 1)).IsInt() {
				values[k], ul.scale[k] = v, big.NewInt(m)
				break
			}
		}
		if ul.scale[k] == nil {
			return ul
		}
	}
	if len(values) == 0 {
		return ul
	}
	l, err := resource.NewShareLayout(values, ul.consumes)
	if err != nil {
		return ul
	}
	ul.layout = l
	return ul
}

// consumes is what a share of a type (shareType) consumes of each of the
// layout's capacities; false when the type does not name each of them
// once, or an amount is not whole in the layout's units.
func (ul *unitLayout) consumes(typ string) ([]int64, bool) {
	out := make([]int64, len(ul.names))
	parts := strings.Split(typ, ",")
	if len(parts) != len(ul.names) {
		return nil, false
	}
	for k, part := range parts {
		name, text, ok := strings.Cut(part, "=")
		if !ok || name != ul.names[k] {
			return nil, false
		}
		q, err := kres.ParseQuantity(text)
		if err != nil {
			return nil, false
		}
		r := ratOf(q)
		if !new(big.Rat).Mul(r, new(big.Rat).SetInt(ul.scale[k])).IsInt() {
			return nil, false
		}
		if out[k], ok = scaled(r, ul.scale[k]); !ok {
			return nil, false
		}
	}
	return out, true
}

// shareType is a share's type: what it consumes of each capacity, by name
// in order, each amount in its canonical form ("memory=10Gi").
func shareType(consumed map[resourcev1.QualifiedName]kres.Quantity) string {
	names := make([]string, 0, len(consumed))
	for name := range consumed {
		names = append(names, string(name))
	}
	slices.Sort(names)
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		q := consumed[resourcev1.QualifiedName(name)]
		if r := ratOf(q); r.IsInt() && r.Num().IsInt64() {
			q = *kres.NewQuantity(r.Num().Int64(), kres.BinarySI)
		}
		b.WriteString(name + "=" + q.String())
	}
	return b.String()
}
