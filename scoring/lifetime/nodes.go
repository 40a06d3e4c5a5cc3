package lifetime

import (
	"math"
	"sync"
)

// Nodes is each row's expected empty time, the view a Scorer reads: what
// a Tracker keeps up to date. It is safe for concurrent use.
type Nodes struct {
	mu   sync.RWMutex
	now  float64
	rows []rowEnds
	// pods and unknown count the pods over every row, and those of them
	// whose end is not known.
	pods, unknown int
	// model is what the Tracker keeping the view learns into (nil for a
	// view no Tracker keeps): whether a pod has ended (Ended).
	model *Model
}

// rowEnds is what a row's pods say of its empty time: the latest of the
// known ends, and how many of its pods end when from what.
type rowEnds struct {
	latest float64
	// pods are its pods; by source, how many of them end when from what.
	pods     int32
	bySource [Lindy + 1]int32
}

// Empty is what is known of when a row empties.
type Empty struct {
	// At is the latest expected end of its pods whose end is known (0 for
	// a row without pods).
	At float64
	// Pods are the row's pods, and Declared, Learned, Lindy and Unknown
	// how many of them end when from what.
	Pods, Declared, Learned, Lindy, Unknown int
}

// NewNodes is a view of rows rows, all empty, at time 0.
func NewNodes(rows int) *Nodes { return &Nodes{rows: make([]rowEnds, rows)} }

// Now is the time the view was last brought to (Tracker.Advance).
func (v *Nodes) Now() float64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.now
}

// Row is what is known of when row empties; a row outside the view is
// an empty one.
func (v *Nodes) Row(row int) Empty {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if row < 0 || row >= len(v.rows) {
		return Empty{}
	}
	r := v.rows[row]
	return Empty{At: r.latest, Pods: int(r.pods), Declared: int(r.bySource[Declared]),
		Learned: int(r.bySource[Learned]), Lindy: int(r.bySource[Lindy]), Unknown: int(r.bySource[Unknown])}
}

// Known reports whether the end of some pod the view follows is known:
// declared, learned, or guessed from how long it has run (Lindy).
func (v *Nodes) Known() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.known()
}

// Ended reports whether some pod has been seen to end: the Model of the
// Tracker that keeps the view has learned a lifetime (Model.Ended). A
// view no Tracker keeps has seen none.
func (v *Nodes) Ended() bool { return v.model != nil && v.model.Ended() }

// known is Known under the read lock.
func (v *Nodes) known() bool { return v.pods > v.unknown }

// count adds delta pods of source src to row, under the write lock.
func (v *Nodes) count(row int, src Source, delta int32) {
	r := &v.rows[row]
	r.bySource[src] += delta
	if src == Unknown {
		v.unknown += int(delta)
	}
}

// remaining is, under the read lock, how long row has until it empties,
// from now: 0 for a row without pods (or outside the view), +Inf when a
// pod's end is not known.
func (v *Nodes) remaining(row int) float64 {
	if row >= len(v.rows) {
		return 0
	}
	r := &v.rows[row]
	switch {
	case r.pods == 0:
		return 0
	case r.bySource[Unknown] > 0:
		return math.Inf(1)
	}
	return max(r.latest-v.now, 0)
}
