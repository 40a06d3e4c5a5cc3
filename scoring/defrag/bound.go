package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/resfit/resfit/scoring"
)

// ReclaimLimit bounds what pending tasks can take of a device view after
// moves (BoundReclaim).
type ReclaimLimit struct {
	// Now bounds the device amount the pending tasks can take with no
	// move.
	Now int64
	// Gains bound what each further move can add, largest first: the
	// most a plan of k moves can take is Now plus the first k (Within).
	Gains []int64
}

// Within is the most device amount the pending tasks can take after at
// most moves moves.
func (l ReclaimLimit) Within(moves int) int64 {
	total := l.Now
	for _, g := range l.Gains[:min(max(moves, 0), len(l.Gains))] {
		total += g
	}
	return total
}

// MaxBoundGrid is the finest grid BoundReclaim works on: a device's amount
// divided by the greatest common divisor of the amounts involved.
const MaxBoundGrid = 1 << 20

// BoundReclaim bounds, for any plan whatever, the device amount the
// pending tasks can take after moves of the cluster's pods, each pod
// moving at most once (within the budgets: a group not listed allows any
// number), however the moves and placements are chosen and in whatever
// order. It counts devices alone: every device of a pending task is a
// piece that may go on any device with room for it, on any node, and cpu,
// memory, models, the filters and the pipeline's choice are ignored. That
// is why it bounds every plan, and why it can be far above what any plan
// reaches.
//
// Let u(f) be the most a device with f free can hold of the pending
// tasks' pieces (any number of each: a knapsack), and U the sum of u over
// the devices. Placing a piece of e on a device lowers U by at least e, so
// what the pending tasks take is at most U now plus what the moves raise
// it by. A pod holding c devices of e each, moved, raises U by at most
// c·δ(e), where δ(e) = max over f of (u(f+e) − u(f)) less the min over f
// of (u(f) − u(f−e)): what its old devices gain less what its new ones
// must lose. Now is U; Gains are the movable pods' c·δ(e) where positive,
// largest first, as many of a limited group as its budget allows.
//
// The cluster needs a device view; amounts are worked on the grid of
// their greatest common divisor, at most MaxBoundGrid steps a device.
func BoundReclaim(c *Cluster, pending []*scoring.Task, budgets map[string]int) (ReclaimLimit, error) {
	if c == nil || c.Table == nil || c.Devices == nil {
		return ReclaimLimit{}, errors.New("defrag: BoundReclaim needs a cluster with a device view")
	}
	if slices.Contains(pending, nil) {
		return ReclaimLimit{}, errors.New("defrag: a nil pending task")
	}
	d := c.Devices
	per := d.PerDevice()
	step := per
	for row := range d.Len() {
		for _, f := range d.Free(row) {
			step = gcd(step, f)
		}
	}
	var pieces []int64
	for _, t := range pending {
		if t.Devices.Count > 0 {
			if t.Devices.Each <= 0 || t.Devices.Each > per {
				return ReclaimLimit{}, fmt.Errorf("defrag: pending task %s asks for %d of a device of %d", t.Name, t.Devices.Each, per)
			}
			pieces = append(pieces, t.Devices.Each)
			step = gcd(step, t.Devices.Each)
		}
	}
	for i, p := range c.Pods {
		if p.Task == nil {
			return ReclaimLimit{}, fmt.Errorf("defrag: pod %d has no task", i)
		}
		if e := p.Task.Devices.Each; p.Movable && p.Task.Devices.Count > 0 {
			if e <= 0 || e > per {
				return ReclaimLimit{}, fmt.Errorf("defrag: pod %d (%s) holds %d of a device of %d", i, p.Task.Name, e, per)
			}
			step = gcd(step, e)
		}
	}
	if per/step > MaxBoundGrid {
		return ReclaimLimit{}, fmt.Errorf("defrag: a device of %d on a grid of %d is more than %d steps", per, step, MaxBoundGrid)
	}
	u := knapsack(int(per/step), pieces, step)
	var l ReclaimLimit
	for row := range d.Len() {
		for _, f := range d.Free(row) {
			l.Now += step * u[f/step]
		}
	}
	deltas := map[int64]int64{}
	type gain struct {
		pod   int
		value int64
	}
	var gains []gain
	for i, p := range c.Pods {
		r := p.Task.Devices
		if !p.Movable || r.Count == 0 {
			continue
		}
		dlt, ok := deltas[r.Each]
		if !ok {
			dlt = delta(u, int(r.Each/step))
			deltas[r.Each] = dlt
		}
		if v := step * dlt * int64(r.Count); v > 0 {
			gains = append(gains, gain{i, v})
		}
	}
	slices.SortStableFunc(gains, func(a, b gain) int { return cmp.Compare(b.value, a.value) })
	left := maps.Clone(budgets)
	for _, g := range gains {
		p := &c.Pods[g.pod]
		if !p.allowedBy(left) {
			continue
		}
		p.spendOn(left, 1)
		l.Gains = append(l.Gains, g.value)
	}
	return l, nil
}

// knapsack is u on the grid: u[f] is the most, in steps, that pieces (any
// number of each) fill of f steps.
func knapsack(n int, pieces []int64, step int64) []int64 {
	var sizes []int
	for _, p := range pieces {
		if s := int(p / step); !slices.Contains(sizes, s) {
			sizes = append(sizes, s)
		}
	}
	u := make([]int64, n+1)
	for f := 1; f <= n; f++ {
		u[f] = u[f-1]
		for _, s := range sizes {
			if s <= f {
				u[f] = max(u[f], u[f-s]+int64(s))
			}
		}
	}
	return u
}

// delta is δ(e) on the grid: the most u(f+e) − u(f) less the least
// u(f) − u(f−e).
func delta(u []int64, e int) int64 {
	n := len(u) - 1
	gain, loss := int64(0), int64(n)
	for f := 0; f+e <= n; f++ {
		gain = max(gain, u[f+e]-u[f])
		loss = min(loss, u[f+e]-u[f])
	}
	return gain - loss
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
