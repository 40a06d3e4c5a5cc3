package kubebridge

import (
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/resource"
)

// WithDRA makes the writer hold each device class's resource as DRA says,
// on every node that does not report that resource itself: allocatable,
// the class's devices on the node; used, those claims hold. Call it before
// writing rows, and again with each new reading of DRA; then write the
// rows again, but for a reading Allocate or Unallocate made from the last
// one (the same classes and devices), whose changed rows' used amounts
// are enough.
func (w *RowWriter) WithDRA(d *dra.Reading) *RowWriter {
	if w.dra != nil && d != nil && w.dra.SameDevices(d) {
		w.dra = d
		return w
	}
	w.dra, w.draSlots, w.backed = d, nil, map[string]uint64{}
	if d != nil {
		w.draSlots = d.ClassSlots(w.schema)
	}
	return w
}

// DRAAllocatable puts what DRA says into a node's allocatable amounts, for
// a host that reads them itself (as Allocatable does): each class's
// resource that the node leaves at 0. Call it for a row before DRAUsed.
func (w *RowWriter) DRAAllocatable(node string, alloc resource.Vector) {
	w.amendAllocatable(node, alloc)
}

// DRAUsed puts what DRA says into a node's used amounts, for a host that
// reads them itself (as SetUsed does): the resources DRA backs there.
func (w *RowWriter) DRAUsed(node string, used resource.Vector) { w.amendUsed(node, used) }

// amendAllocatable puts DRA's allocatable amounts in the slots of a node's
// allocatable vector that the node leaves at 0, and remembers which.
func (w *RowWriter) amendAllocatable(node string, alloc resource.Vector) {
	if len(w.draSlots) == 0 {
		return
	}
	var backed uint64
	for _, cs := range w.draSlots {
		if alloc[cs.Slot] != 0 {
			continue
		}
		if a, _ := w.dra.CanonicalAmounts(node, cs.Class); a > 0 {
			alloc[cs.Slot] = resource.Clamp(a)
			backed |= 1 << cs.Slot
		}
	}
	if backed == 0 {
		delete(w.backed, node)
	} else {
		w.backed[node] = backed
	}
}

// amendUsed puts DRA's used amounts in a node's slots that DRA backs.
func (w *RowWriter) amendUsed(node string, used resource.Vector) {
	backed := w.backed[node]
	if backed == 0 {
		return
	}
	for _, cs := range w.draSlots {
		if backed&(1<<cs.Slot) != 0 {
			_, u := w.dra.CanonicalAmounts(node, cs.Class)
			used[cs.Slot] = resource.Clamp(u)
		}
	}
}
