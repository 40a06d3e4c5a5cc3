package scoring

import (
	"fmt"
	"math"
)

// best is the class's best feasible row, or -1.
func (c *placerClass) best() int {
	if len(c.totals) == 0 || c.tree[1] < 0 {
		return -1
	}
	return int(c.tree[1])
}

// playMatches plays every match of the class's tree from its leaves up.
// (With volatile parts the tree is read for a task they are indifferent
// to, so it is kept then too.)
func (pl *Placer) playMatches(c *placerClass) {
	n := len(c.totals)
	for i := n - 1; i >= 1; i-- {
		c.tree[i] = pl.winner(c.totals, c.tree[2*i], c.tree[2*i+1])
	}
}

// replay plays row r's matches up the tree after its leaf changed. Where a
// match has the same winner as before and that winner is not row r,
// everything above it is as it was: it stops there.
func (pl *Placer) replay(c *placerClass, r int) {
	for k := (len(c.totals) + r) >> 1; k >= 1; k >>= 1 {
		w := pl.winner(c.totals, c.tree[2*k], c.tree[2*k+1])
		if w == c.tree[k] && int(w) != r {
			break
		}
		c.tree[k] = w
	}
}

// better orders rows i and j, of totals ti and tj: higher total, then
// lower rank (row), as Batch.Top orders.
func (pl *Placer) better(ti float64, i int, tj float64, j int) bool {
	if ti != tj {
		return ti > tj
	}
	if pl.rank != nil {
		return pl.rank[i] < pl.rank[j]
	}
	return i < j
}

// treeKey orders a row of the total for the tree, leaf being the row or
// negative (none): the total's bits plus one (totals are +0 or more, never
// −0, so their bits order as they do), and 0 for none, worked out without
// a branch.
func treeKey(total float64, leaf int32) uint64 {
	return (math.Float64bits(total) + 1) &^ uint64(int64(leaf)>>63)
}

// winner is the better of two rows, either of which may be negative
// (none; one of them when both are), as better orders them. It is worked
// out without a branch on the outcome, which a tournament's matches make
// unpredictable: the higher treeKey wins, and equal keys of two rows go to
// the lower rank (row).
func (pl *Placer) winner(totals []float64, a, b int32) int32 {
	ia, ib := a&^(a>>31), b&^(b>>31) // max(a, 0), max(b, 0)
	ka, kb := treeKey(totals[ia], a), treeKey(totals[ib], b)
	ra, rb := int(a), int(b)
	if pl.rank != nil {
		ra, rb = pl.rank[ia], pl.rank[ib]
	}
	var higher, equal, lower uint8
	if ka > kb {
		higher = 1
	}
	if ka == kb {
		equal = 1 // two rows of equal totals, or none at all
	}
	if ra < rb {
		lower = 1
	}
	w := b
	if higher|equal&lower != 0 {
		w = a
	}
	return w
}

// bestWithVolatile runs the volatile filters and scorers on every node
// and picks the best node feasible for both parts, its total summed over
// the pipeline's scorers in their order (as the pipeline sums it, so the
// totals are the same to the last bit). A stale best (see placerClass.stale)
// is checked again and the pick made again, until the best is not stale;
// after a few rounds every stale row is checked.
func (pl *Placer) bestWithVolatile(task *Task, c *placerClass) (int, error) {
	vb := pl.vbatch
	if err := pl.volatile.Score(task, pl.table, vb); err != nil {
		return -1, err
	}
	for round := 0; ; round++ {
		best, total := pl.pickVolatile(c, vb)
		if best < 0 || !c.isStale(best) {
			pl.total = total
			return best, nil
		}
		if err := pl.recheck(task, c, best, round); err != nil {
			return -1, err
		}
	}
}

// bestRemembered is the class's best row as its tree has it, once no
// stale row (see placerClass.stale) comes out best: a stale best is
// checked again, until the best is not stale; after a few rounds every
// stale row is checked.
func (pl *Placer) bestRemembered(task *Task, c *placerClass) (int, error) {
	for round := 0; ; round++ {
		best := c.best()
		if best < 0 || !c.isStale(best) {
			if best >= 0 {
				pl.total = c.totals[best]
			}
			return best, nil
		}
		if err := pl.recheck(task, c, best, round); err != nil {
			return -1, err
		}
	}
}

// recheck scores a stale best row again, in the first staleRounds rounds
// of a pick; after them, every stale row.
func (pl *Placer) recheck(task *Task, c *placerClass, best, round int) error {
	if round < staleRounds {
		return pl.refresh(task, c, best)
	}
	return pl.refreshAll(task, c)
}

// bestExcluding is the class's best row once the rows the excluders list
// for the task are taken out of its tree; they are put back before it
// returns.
func (pl *Placer) bestExcluding(task *Task, c *placerClass) (int, error) {
	if err := pl.exclude(task); err != nil {
		return -1, err
	}
	n := len(c.totals)
	pl.masked = pl.masked[:0]
	for _, r := range pl.excluded {
		if c.tree[n+r] >= 0 {
			c.tree[n+r] = -1
			pl.replay(c, r)
			pl.masked = append(pl.masked, r)
		}
	}
	row := c.best()
	if row >= 0 {
		pl.total = c.totals[row]
	}
	for i := len(pl.masked) - 1; i >= 0; i-- {
		r := pl.masked[i]
		c.tree[n+r] = int32(r)
		pl.replay(c, r)
	}
	return row, nil
}

// exclude lists in pl.excluded the rows the excluders reject for the task,
// and checks that each is a row of the table.
func (pl *Placer) exclude(task *Task) error {
	pl.excluded = pl.excluded[:0]
	n := pl.table.Len()
	for _, x := range pl.excluders {
		from := len(pl.excluded)
		pl.excluded = x.Excluded(task, pl.excluded)
		for _, r := range pl.excluded[from:] {
			if r < 0 || r >= n {
				return fmt.Errorf("placer: filter %s excluded row %d of a %d-row table", x.Name(), r, n)
			}
		}
	}
	return nil
}

// staleRounds is how many stale bests a pick (recheck) checks one by one
// before it checks every stale row.
const staleRounds = 4

// pickVolatile is the best row feasible for the class's stable results and
// the volatile batch, and its total.
func (pl *Placer) pickVolatile(c *placerClass, vb *Batch) (int, float64) {
	n := pl.table.Len()
	best, bestTotal := -1, 0.0
	leaves := c.tree[n : 2*n]
	if pl.stable.scorerCount() == 0 && pl.volatile.filterCount() == 0 {
		// Every score is volatile and every filter stable: a node's total
		// is the volatile batch's, summed in the same order. A node's
		// treeKey is worked out without a branch on feasibility, and only
		// the rare node whose key is at least the best's so far is looked
		// at.
		var top uint64
		for i, t := range vb.totalsView() {
			key := treeKey(t, leaves[i])
			if key >= top && key != 0 && (key > top || pl.better(t, i, t, best)) {
				best, top = i, key
			}
		}
		if best < 0 {
			return -1, 0
		}
		return best, math.Float64frombits(top - 1)
	}
	for i := range n {
		if leaves[i] < 0 || !vb.Feasible(i) {
			continue
		}
		total := pl.sum(c, vb, i)
		if best < 0 || pl.better(total, i, bestTotal, best) {
			best, bestTotal = i, total
		}
	}
	return best, bestTotal
}
