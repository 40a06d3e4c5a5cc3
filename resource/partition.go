package resource

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
)

// Partitionable devices: a GPU that divides into partitions (MIG), as
// Kubernetes' DRA publishes it (KEP-4815): the GPU has counters (its
// multiprocessors, memory, memory slices), and each partition it can be
// divided into consumes some of each, at one placement; a partition can be
// taken while every counter it consumes has that much left. What a device
// view's amount per device cannot say (whether a 3g.40gb still fits an
// A100 with half of its memory free depends on which memory slices are
// free) a Layout and the counters left say exactly. A device that claims
// share (KEP-5075: its capacities consumed share by share) is a layout of
// its capacities whose parts are shares of any size (NewShareLayout).

// Part is one partition a device can be divided into: its type (a MIG
// profile, "3g.40gb") and what it consumes of each of the layout's
// counters, at one placement.
type Part struct {
	Type     string
	Consumes []int64
}

// Layout is how a kind of device divides: the counters a whole device has
// and the parts it can be divided into, in the order an allocator tries
// them (Kubernetes': the order its driver lists the devices). It is
// immutable and safe for concurrent use.
type Layout struct {
	counters []int64
	parts    []Part
	types    []string // distinct, ascending
	byType   [][]int  // parts of types[k], in order
	measured []bool   // the counters Free reads
	// share, for a layout of shares, says what a share of a type
	// consumes; resolved remembers its answers (type → []int64, nil for
	// a type that is no share of the device).
	share    func(typ string) ([]int64, bool)
	resolved sync.Map
}

// MaxLayoutCounters and MaxLayoutParts bound a layout (NVIDIA publishes
// some fifteen counters and two dozen MIG placements per GPU).
const (
	MaxLayoutCounters = 64
	MaxLayoutParts    = 256
)

// NewLayout checks a layout: 1 to MaxLayoutCounters counters, each in
// [0, MaxAmount]; at most MaxLayoutParts parts, each of a type that is not
// empty and consuming, of each counter, 0 to all of it.
func NewLayout(counters []int64, parts []Part) (*Layout, error) {
	if len(counters) == 0 || len(counters) > MaxLayoutCounters {
		return nil, fmt.Errorf("layout: 1 to %d counters, got %d", MaxLayoutCounters, len(counters))
	}
	if len(parts) > MaxLayoutParts {
		return nil, fmt.Errorf("layout: at most %d parts, got %d", MaxLayoutParts, len(parts))
	}
	for k, c := range counters {
		if c < 0 || c > MaxAmount {
			return nil, fmt.Errorf("layout: counters[%d]: must be in [0, %d], got %d", k, MaxAmount, c)
		}
	}
	l := &Layout{counters: slices.Clone(counters), parts: make([]Part, len(parts))}
	for p, part := range parts {
		if part.Type == "" {
			return nil, fmt.Errorf("layout: parts[%d].type: empty", p)
		}
		if len(part.Consumes) != len(counters) {
			return nil, fmt.Errorf("layout: parts[%d] (%s).consumes: %d counters, the layout has %d", p, part.Type, len(part.Consumes), len(counters))
		}
		for k, c := range part.Consumes {
			if c < 0 || c > counters[k] {
				return nil, fmt.Errorf("layout: parts[%d] (%s).consumes[%d]: must be in [0, %d], got %d", p, part.Type, k, counters[k], c)
			}
		}
		l.parts[p] = Part{Type: part.Type, Consumes: slices.Clone(part.Consumes)}
		l.types = append(l.types, part.Type)
	}
	slices.Sort(l.types)
	l.types = slices.Compact(l.types)
	l.byType = make([][]int, len(l.types))
	for p, part := range l.parts {
		k, _ := slices.BinarySearch(l.types, part.Type)
		l.byType[k] = append(l.byType[k], p)
	}
	// Free reads the counters above 1, or every counter when none is: a
	// counter of 1 is a slot (NVIDIA publishes a GPU's memory slices so),
	// which says where a part goes, not how much of the device it uses.
	l.measured = make([]bool, len(counters))
	slots := true
	for _, c := range counters {
		slots = slots && c <= 1
	}
	for k, c := range counters {
		l.measured[k] = slots || c > 1
	}
	return l, nil
}

// NewShareLayout is the layout of a device that several claims share, its
// capacities the counters (each in [0, MaxAmount]): a part of it is a
// share of any size, whose type share resolves to what it consumes of
// each capacity (false for a type that is no share of this device; a
// consumption that is not one amount per capacity, each in [0, the
// capacity], is none either). share must be safe for concurrent use and
// give the same answer for a type every time: its answers are remembered.
// Free reads every capacity.
func NewShareLayout(capacities []int64, share func(typ string) ([]int64, bool)) (*Layout, error) {
	if share == nil {
		return nil, fmt.Errorf("layout: no share rule")
	}
	l, err := NewLayout(capacities, nil)
	if err != nil {
		return nil, err
	}
	for k := range l.measured {
		l.measured[k] = true
	}
	l.share = share
	return l, nil
}

// shareOf is what a share of the type consumes, nil when the layout has no
// share rule or the type is no share of it.
func (l *Layout) shareOf(typ string) []int64 {
	if l.share == nil {
		return nil
	}
	if c, ok := l.resolved.Load(typ); ok {
		return c.([]int64)
	}
	c, ok := l.share(typ)
	if !ok || l.CheckLeft(c) != nil {
		c = nil
	} else {
		c = slices.Clone(c)
	}
	l.resolved.Store(typ, c)
	return c
}

// Fit is what a part of the type that the counters left can take consumes:
// the first such part's consumption, in the layout's order, or a share's;
// false when none fits. The slice is the layout's: read it.
func (l *Layout) Fit(typ string, left []int64) ([]int64, bool) {
	return l.FitType(l.TypeOf(typ), left)
}

// PartType is a type of part as a layout resolves it (TypeOf): the index
// of its parts, or what a share of it consumes.
type PartType struct {
	index int
	share []int64
}

// TypeOf resolves a type in the layout once, for a caller that asks about
// it on many devices of the layout (FitType).
func (l *Layout) TypeOf(typ string) PartType {
	if k := l.typeIndex(typ); k >= 0 {
		return PartType{index: k}
	}
	return PartType{index: -1, share: l.shareOf(typ)}
}

// FitType is Fit for a type this layout resolved (TypeOf).
func (l *Layout) FitType(t PartType, left []int64) ([]int64, bool) {
	if t.index >= 0 {
		for _, p := range l.byType[t.index] {
			if l.PartFits(p, left) {
				return l.parts[p].Consumes, true
			}
		}
		return nil, false
	}
	if t.share == nil {
		return nil, false
	}
	for k, v := range t.share {
		if v > left[k] {
			return nil, false
		}
	}
	return t.share, true
}

// Counters is what a whole device has of each counter (a copy).
func (l *Layout) Counters() []int64 { return slices.Clone(l.counters) }

// Parts is the number of parts.
func (l *Layout) Parts() int { return len(l.parts) }

// Part is part p (its Consumes a view: read it).
func (l *Layout) Part(p int) Part { return l.parts[p] }

// Types are the parts' distinct types, ascending (a copy).
func (l *Layout) Types() []string { return slices.Clone(l.types) }

// CheckLeft reports whether left is a state of the layout's counters: one
// amount per counter, each in [0, what a whole device has].
func (l *Layout) CheckLeft(left []int64) error {
	if len(left) != len(l.counters) {
		return fmt.Errorf("layout: %d counters left, the layout has %d", len(left), len(l.counters))
	}
	for k, c := range left {
		if c < 0 || c > l.counters[k] {
			return fmt.Errorf("layout: counter %d: left must be in [0, %d], got %d", k, l.counters[k], c)
		}
	}
	return nil
}

// PartFits reports whether part p can be taken with the counters left:
// every counter it consumes has that much left.
func (l *Layout) PartFits(p int, left []int64) bool {
	for k, c := range l.parts[p].Consumes {
		if c > left[k] {
			return false
		}
	}
	return true
}

// typeIndex is the index of a type in l.types, -1 when no part has it.
func (l *Layout) typeIndex(typ string) int {
	k, ok := slices.BinarySearch(l.types, typ)
	if !ok {
		return -1
	}
	return k
}

// FirstFit is the first part of the type, in the layout's order, that the
// counters left can take; -1 when none can (or no part has the type).
func (l *Layout) FirstFit(typ string, left []int64) int {
	k := l.typeIndex(typ)
	if k < 0 {
		return -1
	}
	for _, p := range l.byType[k] {
		if l.PartFits(p, left) {
			return p
		}
	}
	return -1
}

// Free is what is left of a device whose counters have left, in a device
// view's units of perDevice a whole device: the scarcest of its counters
// above 1 (or of all, when every counter is a slot of 1), the share left
// of what a whole device has, times perDevice, rounded down, so that a
// device is whole only when nothing of it is used. A counter a whole
// device has none of leaves all of it. left must pass CheckLeft.
func (l *Layout) Free(left []int64, perDevice int64) int64 {
	free := perDevice
	for k, total := range l.counters {
		if !l.measured[k] || total == 0 {
			continue
		}
		// ⌊perDevice × left / total⌋ in 128 bits: both factors are at
		// most MaxAmount.
		hi, lo := bits.Mul64(uint64(perDevice), uint64(left[k]))
		q, _ := bits.Div64(hi, lo, uint64(total))
		free = min(free, int64(q))
	}
	return free
}

// Take returns the counters left once part p is taken from left (a new
// slice); the part must fit (PartFits).
func (l *Layout) Take(p int, left []int64) []int64 {
	return minus(left, l.parts[p].Consumes)
}

// minus is left less what is consumed, a new slice.
func minus(left, consumes []int64) []int64 {
	after := slices.Clone(left)
	for k, c := range consumes {
		after[k] -= c
	}
	return after
}

// Partitioned is one of a node's devices that divides into parts: its
// index among the node's devices in a Devices view, its layout, and what
// is left of each of the layout's counters.
type Partitioned struct {
	Device int
	Layout *Layout
	Left   []int64
}

// SetPartitioned records which of node i's devices divide into parts, with
// their layouts and counters left, in the order an allocator tries them
// (replacing what was recorded): each device once, with a layout and a
// state of its counters (Layout.CheckLeft); each device's free amount
// becomes what its counters leave (Layout.Free). The devices' other
// changes (Take, Allocate, SetFree, Return) do not change what is
// recorded: a host that holds partitioned devices sets them again when
// they change. It counts as a change (Version), and as freeing (Freed)
// when a free amount rises. SetCount and Remove forget, or move, them with
// the node's devices.
func (d *Devices) SetPartitioned(i int, units []Partitioned) error {
	if err := d.checkRow(i); err != nil {
		return err
	}
	free := slices.Clone(d.Free(i))
	seen := make(map[int]bool, len(units))
	for u, p := range units {
		switch {
		case p.Device < 0 || p.Device >= len(free):
			return fmt.Errorf("devices %s: node row %d: partitioned[%d]: no device %d", d.name, i, u, p.Device)
		case seen[p.Device]:
			return fmt.Errorf("devices %s: node row %d: partitioned[%d]: device %d listed twice", d.name, i, u, p.Device)
		case p.Layout == nil:
			return fmt.Errorf("devices %s: node row %d: partitioned[%d]: no layout", d.name, i, u)
		}
		if err := p.Layout.CheckLeft(p.Left); err != nil {
			return fmt.Errorf("devices %s: node row %d: partitioned[%d]: %w", d.name, i, u, err)
		}
		seen[p.Device] = true
		free[p.Device] = p.Layout.Free(p.Left, d.perDevice)
	}
	kept := make([]Partitioned, len(units))
	for u, p := range units {
		kept[u] = Partitioned{Device: p.Device, Layout: p.Layout, Left: slices.Clone(p.Left)}
	}
	if len(kept) == 0 {
		kept = nil
	}
	if err := d.SetFree(i, free); err != nil {
		return err
	}
	d.parts[i] = kept
	return nil
}

// Partitioned is what SetPartitioned recorded for node i, a view into d:
// read it. None for a node whose devices do not divide. It panics on a
// row outside [0, Len()), as Free does.
func (d *Devices) Partitioned(i int) []Partitioned {
	return d.parts[i]
}

// FitsPart reports whether node i has count devices that can each take a
// part of the type (Layout.Fit).
func (d *Devices) FitsPart(i int, typ string, count int) bool {
	if count <= 0 {
		return true
	}
	n := 0
	var layout *Layout
	var t PartType
	for _, p := range d.Partitioned(i) {
		if p.Layout != layout { // the type resolved once per layout
			layout, t = p.Layout, p.Layout.TypeOf(typ)
		}
		if _, ok := p.Layout.FitType(t, p.Left); ok {
			if n++; n >= count {
				return true
			}
		}
	}
	return false
}

// TakePart takes a part of the type on count of node i's devices that
// divide: on each device in turn (the order SetPartitioned gave) that can
// take one, the first that fits (Layout.Fit), as kube's DRA allocator
// picks. It appends the devices it took from to dst[:0]; when
// fewer than count devices can take a part, it is an error and nothing
// changes.
func (d *Devices) TakePart(i int, typ string, count int, dst []int) ([]int, error) {
	dst = dst[:0]
	if err := d.checkRow(i); err != nil {
		return dst, err
	}
	if count < 0 || count > MaxDevicesPerNode {
		return dst, fmt.Errorf("devices %s: count must be in [0, %d], got %d", d.name, MaxDevicesPerNode, count)
	}
	if !d.FitsPart(i, typ, count) {
		return dst, fmt.Errorf("devices %s: node row %d has fewer than %d devices that can take a %s part", d.name, i, count, typ)
	}
	units := slices.Clone(d.parts[i])
	for u, p := range units {
		if len(dst) == count {
			break
		}
		if c, ok := p.Layout.Fit(typ, p.Left); ok {
			units[u].Left = minus(p.Left, c)
			dst = append(dst, p.Device)
		}
	}
	return dst, d.SetPartitioned(i, units)
}

// ClonePartitioned is a copy of what SetPartitioned recorded for node i
// that later changes do not touch, to give back with SetPartitioned.
func (d *Devices) ClonePartitioned(i int) []Partitioned {
	out := slices.Clone(d.Partitioned(i))
	for u := range out {
		out[u].Left = slices.Clone(out[u].Left)
	}
	return out
}
