package kubebridge

import (
	"math/bits"
	"unsafe"
)

// RowIndex maps a host's node object to its table row by the object's
// identity: kube-scheduler keeps one v1.Node per node until the node
// changes, and a Volcano session one NodeInfo per node, so a host that is
// asked about every node of every cycle finds the row from the object it
// is handed. An open-addressing table (linear probing, key and row side by
// side) keyed by the object's address costs a few nanoseconds where a Go
// map costs tens. The zero RowIndex is not ready: make one with
// NewRowIndex. It is not safe for concurrent changes; reads may run
// concurrently with each other.
type RowIndex[T any] struct {
	entries []rowEntry[T] // node nil: an empty slot
	n       int
	shift   uint // 64 - log2(len(entries))
	mask    uint64
}

// rowEntry keeps a key and its row side by side: one cache line per probe.
type rowEntry[T any] struct {
	node *T
	row  int32
}

// NewRowIndex sizes the table for capacity keys at a load of at most 0.7,
// where linear probing still finds a key in one or two probes.
func NewRowIndex[T any](capacity int) RowIndex[T] {
	size := 8
	for 7*size < 10*capacity {
		size *= 2
	}
	return RowIndex[T]{entries: make([]rowEntry[T], size), shift: uint(64 - bits.TrailingZeros(uint(size))), mask: uint64(size - 1)}
}

// slot is the node's home slot: Fibonacci hashing of its address (Go's
// heap does not move objects, and a Go map hashes a pointer key by its
// address too), whose top bits spread the aligned addresses of an
// allocator's size class over the table (2.3 ns a lookup among 5,000
// nodes, where maphash took 12).
func (x *RowIndex[T]) slot(node *T) uint64 {
	return uint64(uintptr(unsafe.Pointer(node))) * 0x9e3779b97f4a7c15 >> x.shift
}

// Get returns node's row.
func (x *RowIndex[T]) Get(node *T) (int32, bool) {
	for i := x.slot(node); ; i = (i + 1) & x.mask {
		switch e := x.entries[i]; e.node {
		case node:
			return e.row, true
		case nil:
			return 0, false
		}
	}
}

// Put sets node's row.
func (x *RowIndex[T]) Put(node *T, row int32) {
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
	x.entries[i] = rowEntry[T]{node, row}
	x.n++
}

// Remove drops node (nil, or a node not held: nothing), moving back the
// entries after it in its run so that every key stays reachable from its
// slot.
func (x *RowIndex[T]) Remove(node *T) {
	if node == nil {
		return
	}
	i := x.slot(node)
	for ; x.entries[i].node != node; i = (i + 1) & x.mask {
		if x.entries[i].node == nil {
			return
		}
	}
	x.entries[i] = rowEntry[T]{}
	x.n--
	for j := (i + 1) & x.mask; x.entries[j].node != nil; j = (j + 1) & x.mask {
		k := x.slot(x.entries[j].node)
		// The entry at j may move to the hole at i unless its home slot k
		// lies cyclically in (i, j].
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			x.entries[i], x.entries[j] = x.entries[j], rowEntry[T]{}
			i = j
		}
	}
}

func (x *RowIndex[T]) grow() {
	old := *x
	*x = NewRowIndex[T](2 * len(old.entries))
	for _, e := range old.entries {
		if e.node != nil {
			x.Put(e.node, e.row)
		}
	}
}
