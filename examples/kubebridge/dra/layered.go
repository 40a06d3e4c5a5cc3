package dra

import (
	"iter"
	"maps"
)

// layered is a map that successive DRA readings share: a base that no
// reading changes once it is made, under a top holding the entries the
// readings since it was made changed (a removed entry is a tombstone). A
// reading made from another by a few changes (next) copies the top, not
// the base, so re-reading DRA after a claim's allocation costs what
// changed rather than a copy of every held device. next flattens the two
// into a new base once the top outgrows the square root of the base (and
// a floor of flattenFloor entries), so that a copy costs at most that and
// a lookup at most two map probes.
//
// A layered map is written only while the reading that owns it is being
// made; a reading once returned only reads it, and is safe for concurrent
// use.
type layered[K comparable, V any] struct {
	base *layerBase[K, V]
	top  map[K]topEntry[V]
	n    int // the keys in all
}

// layerBase is a base map, by pointer so that two layered maps can tell
// that they share it.
type layerBase[K comparable, V any] struct{ m map[K]V }

// topEntry is a top entry: a value, or a tombstone over the base's.
type topEntry[V any] struct {
	v    V
	gone bool
}

// flattenFloor is the top's size below which next never flattens.
const flattenFloor = 32

// get is the value of a key, and whether it is present.
func (m *layered[K, V]) get(k K) (V, bool) {
	if e, ok := m.top[k]; ok {
		return e.v, !e.gone
	}
	if m.base == nil {
		var zero V
		return zero, false
	}
	v, ok := m.base.m[k]
	return v, ok
}

// at is the value of a key; the zero value when it is absent.
func (m *layered[K, V]) at(k K) V {
	v, _ := m.get(k)
	return v
}

// set sets a key's value.
func (m *layered[K, V]) set(k K, v V) {
	if _, ok := m.get(k); !ok {
		m.n++
	}
	if m.top == nil {
		m.top = map[K]topEntry[V]{}
	}
	m.top[k] = topEntry[V]{v: v}
}

// del removes a key.
func (m *layered[K, V]) del(k K) {
	if _, ok := m.get(k); !ok {
		return
	}
	m.n--
	if m.base != nil {
		if _, under := m.base.m[k]; under {
			if m.top == nil {
				m.top = map[K]topEntry[V]{}
			}
			m.top[k] = topEntry[V]{gone: true}
			return
		}
	}
	delete(m.top, k)
}

// len is the number of keys.
func (m *layered[K, V]) len() int { return m.n }

// all are the keys and their values, in no order.
func (m *layered[K, V]) all() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for k, e := range m.top {
			if !e.gone && !yield(k, e.v) {
				return
			}
		}
		if m.base == nil {
			return
		}
		for k, v := range m.base.m {
			if _, over := m.top[k]; over {
				continue
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// next is a copy of the map for a new reading to change: the top copied
// over the same base, or, when the top has grown too big, both flattened
// into a new base.
func (m *layered[K, V]) next() layered[K, V] {
	if m.base == nil || len(m.top) > flattenFloor && len(m.top)*len(m.top) > len(m.base.m) {
		base := make(map[K]V, m.n)
		for k, v := range m.all() {
			base[k] = v
		}
		return layered[K, V]{base: &layerBase[K, V]{base}, n: m.n}
	}
	return layered[K, V]{base: m.base, top: maps.Clone(m.top), n: m.n}
}

// eachDifference calls f with every key present in only one of two maps or
// with a different value in each: over their tops alone when they share a
// base, else over both whole.
func eachDifference[K, V comparable](a, b *layered[K, V], f func(K)) {
	differs := func(k K) bool {
		va, oka := a.get(k)
		vb, okb := b.get(k)
		return oka != okb || va != vb
	}
	if a.base != nil && a.base == b.base {
		for k := range a.top {
			if differs(k) {
				f(k)
			}
		}
		for k := range b.top {
			if _, both := a.top[k]; !both && differs(k) {
				f(k)
			}
		}
		return
	}
	for k := range a.all() {
		if differs(k) {
			f(k)
		}
	}
	for k := range b.all() {
		if _, ok := a.get(k); !ok {
			f(k)
		}
	}
}

// layeredOf is a layered map whose base is m, which it keeps.
func layeredOf[K comparable, V any](m map[K]V) layered[K, V] {
	return layered[K, V]{base: &layerBase[K, V]{m}, n: len(m)}
}

// listed remembers the objects of a list, to tell cheaply whether the next
// list holds the same ones: a map probe per object, nothing allocated.
type listed[T any] struct {
	index  map[*T]int
	marks  []uint64 // by index: the check that last found the object
	checks uint64
}

// keep remembers a list's objects.
func (l *listed[T]) keep(list []*T) {
	l.index = make(map[*T]int, len(list))
	for _, x := range list {
		if _, ok := l.index[x]; !ok && x != nil {
			l.index[x] = len(l.index)
		}
	}
	l.marks = make([]uint64, len(l.index))
}

// same reports whether list holds the objects last kept, each once, and
// no other (nor nil).
func (l *listed[T]) same(list []*T) bool {
	if l.index == nil || len(list) != len(l.index) {
		return false
	}
	l.checks++
	for _, x := range list {
		i, ok := l.index[x]
		if !ok || l.marks[i] == l.checks {
			return false
		}
		l.marks[i] = l.checks
	}
	return true
}
