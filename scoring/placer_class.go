package scoring

import (
	"encoding/binary"
	mathbits "math/bits"
	"slices"

	"github.com/resfit/resfit/resource"
)

// placerClass is what a placer remembers of one task class.
type placerClass struct {
	key    string
	built  bool   // scored on every node once
	seen   uint64 // the table's clock when brought up to date
	freed  uint64 // the monotone filters' Freed summed, then
	totals []float64
	// tree is a tournament over the n rows: leaf n+r is row r, or when
	// infeasible -1 (leafStuck when a Monotone filter rejected it first);
	// node i in [1, n) is the better of nodes 2i and 2i+1, so node 1 is
	// the best row (for n = 1 node 1 is the one leaf).
	tree []int32
	// cols are the stable scorers' weighted contributions per row, kept
	// when the pipeline has volatile parts.
	cols [][]float64
	// stale marks (a bit a row) the rows that only filled up since they
	// were found feasible, under a lazy placer: feasible or not now.
	stale  []uint64
	nstale int
	newer  *placerClass
	older  *placerClass
}

// leafStuck is the leaf of a row that a Monotone filter rejected first.
const leafStuck = -2

// current returns the task's class with every node's stable results up to
// date: scored once, then again only where the row changed.
func (pl *Placer) current(task *Task) (*placerClass, error) {
	if err := pl.stable.prepare(task, pl.table, pl.batch); err != nil {
		return nil, err
	}
	c := pl.class(task)
	freed := pl.freed()
	// A class scored on every node before reads the rows changed since;
	// a new one (or one of another table size) is scored on every node.
	ok := c.built && len(c.totals) == pl.table.Len()
	if ok {
		pl.changed, ok = pl.table.ChangedSince(c.seen, pl.changed)
	}
	if !ok {
		if err := pl.rebuild(task, c); err != nil {
			return nil, err
		}
	} else if err := pl.update(task, c, pl.changed, freed == c.freed); err != nil {
		return nil, err
	}
	c.seen, c.freed = pl.table.Clock(), freed
	return c, nil
}

// freed sums the monotone filters' Freed: the counts only grow, so the sum
// stays as it was only when every count does.
func (pl *Placer) freed() uint64 {
	var sum uint64
	for _, m := range pl.monotone {
		sum += m.Freed()
	}
	return sum
}

// leaf is row r's tree leaf as the batch scored it at position i.
func (pl *Placer) leaf(b *Batch, i, r int) int32 {
	switch f := b.rejecter(i); {
	case f == 0:
		return int32(r)
	case pl.stuck[f]:
		return leafStuck
	default:
		return -1
	}
}

// rebuild scores every node for the class.
func (pl *Placer) rebuild(task *Task, c *placerClass) error {
	b := pl.batch
	n := pl.table.Len()
	workers := pl.workers
	if workers == 0 && n < ParallelRows {
		workers = 1
	}
	if err := pl.stable.evaluate(task, pl.table, nil, b, workers); err != nil {
		return err
	}
	if pl.volatile != nil {
		m := pl.stable.scorerCount()
		c.cols = slices.Grow(c.cols[:0], m)[:m]
		for j := range c.cols {
			c.cols[j] = append(c.cols[j][:0], b.column(j)...)
		}
	}
	c.totals = append(c.totals[:0], b.totalsView()...)
	c.tree = slices.Grow(c.tree[:0], 2*n)[:2*n]
	for i := range n {
		c.tree[n+i] = pl.leaf(b, i, i)
	}
	pl.playMatches(c)
	c.stale = slices.Grow(c.stale[:0], (n+63)/64)[:(n+63)/64]
	clear(c.stale)
	c.nstale = 0
	c.built = true
	return nil
}

// update rescores the rows changed since the class was last brought up to
// date, each once, and replays their matches up the tree. When grownOnly
// (no device given back since), a row that nothing has made room on since
// is left out if a Monotone filter rejected it, and under a lazy placer
// marked stale if it was feasible.
func (pl *Placer) update(task *Task, c *placerClass, changed []int, grownOnly bool) error {
	n := pl.table.Len()
	lazy := pl.lazy && grownOnly
	// ChangedSince lists each changed row once.
	rows := pl.rows[:0]
	for _, r := range changed {
		if grownOnly && pl.table.LastFreed(r) <= c.seen {
			leaf := c.tree[n+r]
			if leaf == leafStuck {
				continue
			}
			if lazy && leaf >= 0 {
				if bit := uint64(1) << (r % 64); c.stale[r/64]&bit == 0 {
					c.stale[r/64] |= bit
					c.nstale++
				}
				continue
			}
		}
		rows = append(rows, r)
	}
	pl.rows = rows
	return pl.rescoreRows(task, c, rows)
}

// isStale reports whether row r's result is a bound (see placerClass.stale).
func (c *placerClass) isStale(r int) bool {
	return c.nstale > 0 && c.stale[r/64]&(1<<(r%64)) != 0
}

// refresh scores one stale row again.
func (pl *Placer) refresh(task *Task, c *placerClass, r int) error {
	pl.rows = append(pl.rows[:0], r)
	return pl.rescoreRows(task, c, pl.rows)
}

// refreshAll scores every stale row again.
func (pl *Placer) refreshAll(task *Task, c *placerClass) error {
	if c.nstale == 0 {
		return nil
	}
	pl.rows = appendBits(pl.rows[:0], c.stale)
	return pl.rescoreRows(task, c, pl.rows)
}

// appendBits appends the index of every set bit of words (bit b of word w
// is index 64w+b), in order.
func appendBits(dst []int, words []uint64) []int {
	for w, bits := range words {
		for ; bits != 0; bits &= bits - 1 {
			dst = append(dst, w*64+mathbits.TrailingZeros64(bits))
		}
	}
	return dst
}

// rescoreRows scores the rows (each once, in any order) again, in one span
// of scattered rows, and takes their results in.
func (pl *Placer) rescoreRows(task *Task, c *placerClass, rows []int) error {
	n := pl.table.Len()
	if len(rows) == 0 {
		return nil // (evaluate reads nil rows as every row)
	}
	// Past about half the rows, scoring every node in one pass costs less
	// than scoring the changed ones.
	if len(rows) > n/2 {
		return pl.rebuild(task, c)
	}
	b := pl.batch
	if err := pl.stable.evaluate(task, pl.table, rows, b, 1); err != nil {
		return err
	}
	// A few rows replay their own matches up the tree; many are cheaper to
	// take in by playing the whole tree again once.
	replay := len(rows) <= n/16
	for i, r := range rows {
		pl.takeIn(c, b, i, r, replay)
	}
	if !replay {
		pl.playMatches(c)
	}
	return nil
}

// takeIn takes in row r's result, scored at position i of the batch, and
// replays its matches up the tree if asked to.
func (pl *Placer) takeIn(c *placerClass, b *Batch, i, r int, replay bool) {
	if c.isStale(r) {
		c.stale[r/64] &^= 1 << (r % 64)
		c.nstale--
	}
	for j, col := range c.cols {
		col[r] = b.Contribution(i, j)
	}
	c.totals[r] = b.Total(i)
	c.tree[len(c.totals)+r] = pl.leaf(b, i, r)
	if replay {
		pl.replay(c, r)
	}
}

// sum is row i's total over the pipeline's scorers in their order, the
// stable parts remembered, the volatile ones from vb.
func (pl *Placer) sum(c *placerClass, vb *Batch, i int) float64 {
	total := 0.0
	for _, col := range pl.columns {
		if col.volatile {
			total += vb.Contribution(i, col.index)
		} else {
			total += c.cols[col.index][i]
		}
	}
	return total
}

// class returns the task's class, most recently used now, making it (and
// forgetting the least recently used beyond the bound) when new.
func (pl *Placer) class(task *Task) *placerClass {
	pl.key = appendClassKey(pl.key[:0], task)
	for _, p := range pl.phased {
		pl.key = appendPhase(pl.key, p, task, pl.table)
	}
	c, ok := pl.classes[string(pl.key)]
	if ok {
		pl.unlink(c)
	} else {
		c = &placerClass{key: string(pl.key)}
		if len(pl.classes) >= pl.maxClasses {
			// The forgotten class's slices are the new one's.
			old := pl.oldest
			pl.unlink(old)
			delete(pl.classes, old.key)
			c.totals, c.tree, c.cols, c.stale = old.totals[:0], old.tree[:0], old.cols, old.stale
		}
		pl.classes[c.key] = c
	}
	c.older, c.newer = pl.newest, nil
	if pl.newest != nil {
		pl.newest.newer = c
	}
	pl.newest = c
	if pl.oldest == nil {
		pl.oldest = c
	}
	return c
}

func (pl *Placer) unlink(c *placerClass) {
	if c.newer != nil {
		c.newer.older = c.older
	} else {
		pl.newest = c.older
	}
	if c.older != nil {
		c.older.newer = c.newer
	} else {
		pl.oldest = c.newer
	}
	c.newer, c.older = nil, nil
}

// appendClassKey writes what makes two tasks score alike: requests (plain,
// non-zero, Koordinator), device request, accepted models and override.
func appendClassKey(b []byte, t *Task) []byte {
	vec := func(b []byte, v resource.Vector) []byte {
		if v == nil {
			return append(b, 0)
		}
		b = append(b, 1)
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
		return b
	}
	b = vec(b, t.Requests)
	b = vec(b, t.NonZeroRequests)
	b = vec(b, t.KoordinatorRequests)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Devices.Count))
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Devices.Each))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(t.Models)))
	b = append(b, t.Models...)
	return t.Override.AppendKey(b)
}
