package defrag

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/resfit/resfit/scoring"
)

// BoundShareWaste bounds from below the device amount left unused on the
// devices that hold shares, whatever the moves: every share the cluster's
// pods hold (a device of which a pod takes less than the whole) stays
// placed on some device, and any of the pending tasks' shares may be
// added, each as often as it helps. What a device holding shares does not
// hold is lost to every task that needs a whole device, and to every
// share larger than the gap; the bound is the least that loss can be over
// every way of putting the shares on devices. It counts devices alone:
// nodes, cpu, memory, device models, the filters, which pods may move and
// that a pod's shares take distinct devices are all ignored, so it holds
// for any plan of any number of moves (and can be below what any plan
// reaches).
//
// It is the linear relaxation of bin packing with the devices as bins
// (Gilmore and Gomory's, equal to Valério de Carvalho's arc-flow bound),
// worked on its dual: a value v(s) for each share size s such that no set
// of shares that fits on one device is worth more than the device, where a
// pending share counts at least its size. The waste is then at least
// Σ r(s)·(v(s) − s) over the sizes held, r(s) of each. The dual is solved
// by adding, one at a time, the set of shares (a knapsack over the device,
// by dynamic programming) the values so far overprice; the values are then
// scaled back toward their least (0, or a pending share's size) until no
// set is overpriced in exact terms,
// so the bound holds whatever the floating point did: the values are
// rounded down to multiples of 2⁻²⁰ of a grid step and checked, and the
// bound summed, in integers. It is rounded up to the grid (a waste is a
// whole number of steps).
//
// The cluster needs a device view; amounts are worked on the grid of their
// greatest common divisor, at most MaxWasteGrid steps a device.
func BoundShareWaste(c *Cluster, pending []*scoring.Task) (int64, error) {
	if c == nil || c.Devices == nil {
		return 0, errors.New("defrag: BoundShareWaste needs a cluster with a device view")
	}
	per := c.Devices.PerDevice()
	held := map[int64]int{}
	for i, p := range c.Pods {
		if p.Task == nil {
			return 0, fmt.Errorf("defrag: pod %d has no task", i)
		}
		r := p.Task.Devices
		if r.Count == 0 {
			continue
		}
		if r.Count < 0 || r.Each <= 0 || r.Each > per {
			return 0, fmt.Errorf("defrag: pod %d (%s) holds %d devices of %d each, of a device of %d", i, p.Task.Name, r.Count, r.Each, per)
		}
		if r.Each < per {
			held[r.Each] += r.Count
		}
	}
	var optional []int64
	for _, t := range pending {
		if t == nil {
			return 0, errors.New("defrag: a nil pending task")
		}
		r := t.Devices
		if r.Count == 0 {
			continue
		}
		if r.Count < 0 || r.Each <= 0 || r.Each > per {
			return 0, fmt.Errorf("defrag: pending task %s asks for %d devices of %d each, of a device of %d", t.Name, r.Count, r.Each, per)
		}
		if r.Each < per {
			optional = append(optional, r.Each)
		}
	}
	return shareWaste(per, held, optional)
}

// MaxWasteGrid is the finest grid BoundShareWaste works on: a device's
// amount divided by the greatest common divisor of the amounts involved.
// Its knapsacks run over the grid, and its integers hold a device's worth
// times the grid's steps times 2²⁰.
const MaxWasteGrid = 1 << 12

// maxShares bounds the shares BoundShareWaste sums in integers.
const maxShares = 1 << 24

// shareWaste is BoundShareWaste on the sizes: held[s] shares of s must be
// placed on devices of per, any number of each optional size may be.
func shareWaste(per int64, held map[int64]int, optional []int64) (int64, error) {
	total := 0
	for _, n := range held {
		total += n
	}
	if total == 0 {
		return 0, nil
	}
	if total > maxShares {
		return 0, fmt.Errorf("defrag: %d shares held, more than the %d BoundShareWaste counts in integers", total, maxShares)
	}
	step := per
	for s := range held {
		step = gcd(step, s)
	}
	for _, s := range optional {
		step = gcd(step, s)
	}
	if per/step > MaxWasteGrid {
		return 0, fmt.Errorf("defrag: a device of %d on a grid of %d is more than %d steps", per, step, MaxWasteGrid)
	}
	w := newWastePacking(int(per/step), held, optional, step)
	bound, err := w.solve()
	if err != nil {
		return 0, err
	}
	return step * bound, nil
}

// wastePacking is shareWaste's dual on the grid: the sizes (held first,
// then the optional sizes not held), what must be held of each, and the
// least value each may take (its size when optional, 0 otherwise).
type wastePacking struct {
	capacity int
	size     []int
	count    []float64
	low      []float64
	held     int // sizes [0, held) are held
	// rows are the sets of shares the dual is held to so far, counts per
	// held size; rhs what each may be worth beyond the low values.
	rows [][]float64
	rhs  []float64
}

// newWastePacking is the dual of packing held (a count per size) and any
// of optional, on a grid of step, capacity steps a device.
func newWastePacking(capacity int, held map[int64]int, optional []int64, step int64) *wastePacking {
	w := &wastePacking{capacity: capacity}
	sizes := make([]int64, 0, len(held))
	for s := range held {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	for _, s := range sizes {
		w.size = append(w.size, int(s/step))
		w.count = append(w.count, float64(held[s]))
		w.low = append(w.low, 0)
	}
	w.held = len(sizes)
	for _, s := range optional {
		i := slices.Index(sizes, s)
		if i >= 0 {
			w.low[i] = float64(s / step)
			continue
		}
		if !slices.Contains(w.size[w.held:], int(s/step)) {
			w.size = append(w.size, int(s/step))
			w.low = append(w.low, float64(s/step))
		}
	}
	return w
}

// maxCuts bounds the sets of shares added to the dual; past it the values
// found so far, made feasible, give the bound.
const maxCuts = 400

// solve returns the bound in grid steps: the dual's value at values the
// knapsack finds no set overpriced by, certified.
func (w *wastePacking) solve() (int64, error) {
	for i := range w.held { // each size alone, as often as it fits
		n := w.capacity / w.size[i]
		row := make([]float64, w.held)
		row[i] = float64(n)
		w.add(row, float64(w.capacity)-float64(n)*w.low[i])
	}
	extra := make([]float64, w.held)
	for range maxCuts {
		var err error
		if extra, err = w.solveRestricted(); err != nil {
			return 0, err
		}
		value, set := w.price(w.values(extra))
		if value <= float64(w.capacity)*(1+1e-9) {
			break
		}
		row := make([]float64, w.held)
		low := 0.0
		for i, n := range set {
			if i < w.held {
				row[i] = float64(n)
			}
			low += float64(n) * w.low[i]
		}
		w.add(row, float64(w.capacity)-low)
	}
	return w.certify(extra), nil
}

func (w *wastePacking) add(row []float64, rhs float64) {
	w.rows = append(w.rows, row)
	w.rhs = append(w.rhs, rhs)
}

// values are the sizes' values, extra over the low values.
func (w *wastePacking) values(extra []float64) []float64 {
	v := slices.Clone(w.low)
	for i, e := range extra {
		v[i] += e
	}
	return v
}

// solveRestricted maximises Σ count·extra over the extra values ≥ 0 that
// keep every set so far within its device (maxWithin).
func (w *wastePacking) solveRestricted() ([]float64, error) {
	extra, err := maxWithin(w.count, w.rows, w.rhs)
	if err != nil {
		return nil, fmt.Errorf("defrag: the share waste's linear program: %w", err)
	}
	for i := range extra { // a basic value a rounding below 0
		extra[i] = max(extra[i], 0)
	}
	return extra, nil
}

// maxWithin maximises c·x over x ≥ 0 with rows·x ≤ rhs, rhs ≥ 0: the
// simplex method on a dense tableau, from the slacks, entering by Bland's
// rule (the lowest column that gains), so it cannot cycle. It is small
// (a row per set of shares, a column per size) and solved afresh for each
// set added; its answer is only a candidate, which certify makes sound.
func maxWithin(c []float64, rows [][]float64, rhs []float64) ([]float64, error) {
	const eps = 1e-9
	m, n := len(rows), len(c)
	width := n + m + 1 // the variables, the slacks, the right-hand side
	t := make([]float64, (m+1)*width)
	at := func(i, j int) *float64 { return &t[i*width+j] }
	basis := make([]int, m)
	for i, row := range rows {
		copy(t[i*width:], row)
		*at(i, n+i) = 1
		*at(i, width-1) = rhs[i]
		basis[i] = n + i
	}
	for j, x := range c { // the objective row: reduced costs, to be made ≥ 0
		*at(m, j) = -x
	}
	for range 1000 * (m + n) {
		enter := -1
		for j := range n + m {
			if *at(m, j) < -eps {
				enter = j
				break
			}
		}
		if enter < 0 {
			x := make([]float64, n)
			for i, b := range basis {
				if b < n {
					x[b] = *at(i, width-1)
				}
			}
			return x, nil
		}
		leave := -1
		for i := range m {
			if a := *at(i, enter); a > eps {
				r, best := *at(i, width-1)/a, 0.0
				if leave >= 0 {
					best = *at(leave, width-1) / *at(leave, enter)
				}
				if leave < 0 || r < best-eps || r <= best+eps && basis[i] < basis[leave] {
					leave = i
				}
			}
		}
		if leave < 0 {
			return nil, errors.New("unbounded")
		}
		pivot := *at(leave, enter)
		for j := range width {
			*at(leave, j) /= pivot
		}
		for i := range m + 1 {
			if f := *at(i, enter); i != leave && f != 0 {
				for j := range width {
					*at(i, j) -= f * *at(leave, j)
				}
			}
		}
		basis[leave] = enter
	}
	return nil, errors.New("no optimum within the pivots allowed")
}

// price is the most a set of shares that fits on one device is worth at
// values v (any number of each size: an unbounded knapsack over the
// grid), and that set, a count per size.
func (w *wastePacking) price(v []float64) (float64, []int) {
	best := make([]float64, w.capacity+1)
	last := make([]int, w.capacity+1)
	for f := 1; f <= w.capacity; f++ {
		best[f], last[f] = best[f-1], -1
		for i, s := range w.size {
			if s <= f && best[f-s]+v[i] > best[f] {
				best[f], last[f] = best[f-s]+v[i], i
			}
		}
	}
	set := make([]int, len(w.size))
	for f := w.capacity; f > 0; {
		if last[f] < 0 {
			f--
			continue
		}
		set[last[f]]++
		f -= w.size[last[f]]
	}
	return best[w.capacity], set
}

// scale is the denominator of the values the bound is certified at:
// they are rounded down to multiples of 1/scale of a grid step, so that
// the check that no set of shares is overpriced, and the bound, are worked
// in integers.
const scale = 1 << 20

// certify is the bound at the largest t in [0, 1] (to within 2⁻⁴⁰) at
// which the values low + t·extra, rounded down to multiples of 1/scale,
// price no set of shares above its device, checked in integers. At t = 0
// the values are the low ones, at which every set is worth at most its
// size, so 0 always is. It is the dual's value there, exactly, rounded up
// to a whole grid step (a waste is a whole number of them).
func (w *wastePacking) certify(extra []float64) int64 {
	vals := make([]int64, len(w.size))
	at := func(t float64) []int64 {
		for i := range w.size {
			vals[i] = int64(w.low[i]) * scale
			if i < len(extra) {
				// A value above the device's is never feasible (the share
				// alone fits): clamped, the integers cannot overflow.
				vals[i] += int64(math.Floor(t * min(max(extra[i], 0), float64(w.capacity)) * scale))
			}
		}
		return vals
	}
	ok := func(t float64) bool { return w.intPrice(at(t)) <= int64(w.capacity)*scale }
	t := 1.0
	if !ok(1) {
		lo, hi := 0.0, 1.0
		for range 40 {
			mid := (lo + hi) / 2
			if ok(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		t = lo
	}
	at(t)
	var num int64
	for i := range w.held {
		num += int64(w.count[i]) * (vals[i] - int64(w.size[i])*scale)
	}
	if num <= 0 {
		return 0
	}
	return (num + scale - 1) / scale
}

// intPrice is price in integers, the worth alone.
func (w *wastePacking) intPrice(v []int64) int64 {
	best := make([]int64, w.capacity+1)
	for f := 1; f <= w.capacity; f++ {
		best[f] = best[f-1]
		for i, s := range w.size {
			if s <= f {
				best[f] = max(best[f], best[f-s]+v[i])
			}
		}
	}
	return best[w.capacity]
}
