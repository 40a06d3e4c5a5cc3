package scoring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	mathbits "math/bits"
	"slices"

	"github.com/resfit/resfit/resource"
)

// Volatile is implemented by a Scorer or Filter whose result for a node
// can change while the node's table row does not: one that draws random
// numbers, reads state that changes apart from the table (a reservation's
// locks), or looks at other nodes or at the task's name or job. A Placer
// remembers every other scorer's and filter's result for a node until the
// node's row changes; when a pipeline has a component whose Volatile
// reports true, the placer scores every node for every task instead.
type Volatile interface {
	Volatile() bool
}

// Monotone is implemented by a Filter that keeps rejecting a node while
// nothing makes room on it: having rejected a task on a node, it rejects
// it again after any changes that only fill the node up, that is, while
// the node's resource.Table.LastFreed stays where it was and Freed
// returns what it returned then. Freed counts the changes to what else
// the filter reads (a device view: resource.Devices.Freed) that may have
// made room; a filter that reads only the table returns 0.
//
// A Placer skips a changed node that such a filter rejected for a task
// class, without scoring it again, while both hold: placing tasks one
// after another, most changes only fill nodes up, and a node that a class
// does not fit stays out of its way.
type Monotone interface {
	Filter
	Freed() uint64
}

func isVolatile(x any) bool {
	v, ok := x.(Volatile)
	return ok && v.Volatile()
}

func notScattered(x any) bool {
	s, ok := x.(Scattered)
	return !ok || !s.Scattered()
}

// anyPart reports whether test holds for a filter or scorer of the
// pipeline.
func (p *Pipeline) anyPart(test func(any) bool) bool {
	for _, f := range p.filters {
		if test(f) {
			return true
		}
	}
	for _, s := range p.scorers {
		if test(s.Scorer) {
			return true
		}
	}
	return false
}

// Volatile reports whether a filter or scorer of the pipeline is volatile
// (see the Volatile interface).
func (p *Pipeline) Volatile() bool { return p.anyPart(isVolatile) }

// scattered reports whether every filter and scorer of the pipeline takes
// spans of scattered rows (see Scattered).
func (p *Pipeline) scattered() bool { return !p.anyPart(notScattered) }

// PlacerOptions configure a Placer.
type PlacerOptions struct {
	// Devices is the device view that Bind takes a task's devices
	// (Task.Devices) from, tightest first (resource.Devices.Allocate); its
	// rows are the table's. nil: Bind changes only the table.
	Devices *resource.Devices
	// Rank breaks ties between nodes of equal total: the lower rank wins.
	// nil means the lower row, as Batch.Top orders. Otherwise it holds one
	// distinct rank per table row (copied); a table that grows or shrinks
	// needs a new Placer.
	Rank []int
	// MaxClasses bounds the task classes remembered; the least recently
	// used is forgotten first. 0 means DefaultMaxClasses.
	MaxClasses int
	// Workers is how many goroutines score every node for a class seen
	// for the first time (Pipeline.ScoreParallel). 0 means GOMAXPROCS for
	// a table of ParallelRows rows or more and 1 below; 1 never starts one.
	Workers int
}

// ParallelRows is the fewest rows a Placer with PlacerOptions.Workers 0
// scores on several cores.
const ParallelRows = 2048

// DefaultMaxClasses is how many task classes a Placer remembers unless
// told otherwise: at 16 bytes per node and class, 64 classes of a
// 100,000-node table take 100 MB.
const DefaultMaxClasses = 64

// A Placer places tasks one after another on a table: for each the best
// feasible node, which it then binds the task to. Tasks with identical
// requests (plain, non-zero and Koordinator), device request, accepted
// device models and Volcano override form a class; the placer scores a node for a class once, and
// again only when the node's row changed (resource.Table.ChangedSince),
// and keeps the class's nodes in a tournament tree whose root is the best
// feasible one, ordered as Batch.Top orders (highest total, then lower
// row) or by PlacerOptions.Rank. Placing a task then costs O(changed rows × log N)
// after its class's first, instead of scoring every node. The placements
// are exactly those of scoring every node for every task, as long as every
// filter and scorer is a function of the task's class and the node's row
// (see Scorer), or is Volatile: the volatile ones run on every node for
// every task, the others are remembered as before, and a node's total is
// summed over all of them in the pipeline's order, so it is the pipeline's
// to the last bit.
//
// Changes to the table made by others (SetUsed, Add, Remove, ...) are
// seen through resource.Table.ChangedSince; a change to the device view must come with a
// change to the same row of the table (as Bind makes them), or the placer
// will not notice it. A changed node that a Monotone filter (NodeResourcesFit,
// DeviceShare) rejected for a class is not scored again for it while
// nothing has made room on the node (resource.Table.LastFreed,
// resource.Devices.Freed): a node that fills up stays out of the way of
// the classes it did not fit. The rows that changed are scored in one call
// to each filter and scorer, as a span of scattered rows, when every one
// the placer remembers implements Scattered (every built-in one does), and
// in contiguous runs otherwise.
//
// Memory: 16 bytes and a bit per node for each remembered class (plus 8
// per non-volatile scorer when the pipeline has volatile parts), at most
// MaxClasses classes, plus a batch or two for the table. A Placer is stateful
// and not safe for concurrent use; it changes the table and the device
// view, which nothing else may change during a call.
type Placer struct {
	pipe    *Pipeline
	table   *resource.Table
	devices *resource.Devices
	rank    []int
	// stable is what the classes remember: the pipeline, or when it has
	// volatile parts, its other filters and scorers; batch is its batch.
	stable *Pipeline
	batch  *Batch
	// volatile, when not nil, is the pipeline's volatile filters and
	// scorers, run on every node for every task into vbatch; columns says
	// where each of the pipeline's scorers is, in order.
	volatile *Pipeline
	vbatch   *Batch
	columns  []scorerColumn
	// monotone are the stable filters that implement Monotone, and
	// stuck[f] says whether stable filter f (index+1, as Verdicts number
	// them) is one of them.
	monotone []Monotone
	stuck    []bool
	// scattered says every stable filter and scorer takes spans of
	// scattered rows (Scattered): the changed rows are then scored in one
	// span, gathered into gather.
	scattered bool
	gather    gathered
	// lazy says the pipeline has volatile parts and remembers nothing but
	// Monotone filters: a node that only filled up may only have become
	// infeasible, so it is checked again only when it comes out best
	// (placerClass.stale).
	lazy bool
	// vtotals and vleaves are what Scores returns when there are volatile
	// parts.
	vtotals []float64
	vleaves []int32

	classes    map[string]*placerClass
	maxClasses int
	workers    int
	newest     *placerClass // most recently used; the list runs to the oldest
	oldest     *placerClass

	total   float64 // the total of the row Best last returned
	key     []byte
	changed []int
	marks   []uint64 // update's set of changed rows, one bit a row
	rows    []int    // update's changed rows
}

// scorerColumn places one of a pipeline's scorers in a Placer's split:
// column index of the volatile or the stable pipeline.
type scorerColumn struct {
	volatile bool
	index    int
}

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

// NewPlacer returns a placer for a pipeline and the table it places on
// (built for the pipeline's schema).
func NewPlacer(p *Pipeline, table *resource.Table, opts PlacerOptions) (*Placer, error) {
	if p == nil || table == nil {
		return nil, errors.New("placer: nil pipeline or table")
	}
	if table.Schema() != p.schema {
		return nil, errors.New("placer: the table was built for another schema than the pipeline")
	}
	if opts.Devices != nil && opts.Devices.Len() != table.Len() {
		return nil, fmt.Errorf("placer: the device view has %d nodes, the table %d", opts.Devices.Len(), table.Len())
	}
	if opts.MaxClasses < 0 {
		return nil, fmt.Errorf("placer: MaxClasses must be ≥ 0, got %d", opts.MaxClasses)
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("placer: Workers must be ≥ 0, got %d", opts.Workers)
	}
	pl := &Placer{
		pipe: p, table: table, devices: opts.Devices, stable: p,
		classes: map[string]*placerClass{}, maxClasses: opts.MaxClasses, workers: opts.Workers,
	}
	if p.Volatile() {
		if err := pl.split(); err != nil {
			return nil, err
		}
	}
	pl.batch = pl.stable.NewBatch(table.Len())
	pl.stuck = make([]bool, len(pl.stable.filters)+1)
	pl.lazy = pl.volatile != nil && len(pl.stable.scorers) == 0
	pl.scattered = pl.stable.scattered()
	for i, f := range pl.stable.filters {
		if m, ok := f.(Monotone); ok {
			pl.monotone = append(pl.monotone, m)
			pl.stuck[i+1] = true
		} else {
			pl.lazy = false
		}
	}
	if pl.maxClasses == 0 {
		pl.maxClasses = DefaultMaxClasses
	}
	if opts.Rank != nil {
		if len(opts.Rank) != table.Len() {
			return nil, fmt.Errorf("placer: Rank has %d entries, the table %d rows", len(opts.Rank), table.Len())
		}
		seen := make(map[int]bool, len(opts.Rank))
		for row, r := range opts.Rank {
			if seen[r] {
				return nil, fmt.Errorf("placer: Rank[%d] = %d is not distinct", row, r)
			}
			seen[r] = true
		}
		pl.rank = slices.Clone(opts.Rank)
	}
	return pl, nil
}

// split divides the pipeline into what classes remember and what is run
// for every task.
func (pl *Placer) split() error {
	var stableF, volatileF []Filter
	for _, f := range pl.pipe.filters {
		if isVolatile(f) {
			volatileF = append(volatileF, f)
		} else {
			stableF = append(stableF, f)
		}
	}
	var stableS, volatileS []WeightedScorer
	for _, s := range pl.pipe.scorers {
		if isVolatile(s.Scorer) {
			pl.columns = append(pl.columns, scorerColumn{volatile: true, index: len(volatileS)})
			volatileS = append(volatileS, s)
		} else {
			pl.columns = append(pl.columns, scorerColumn{index: len(stableS)})
			stableS = append(stableS, s)
		}
	}
	var err error
	if pl.stable, err = NewPipeline(pl.pipe.schema, stableF, stableS); err != nil {
		return err
	}
	if pl.volatile, err = NewPipeline(pl.pipe.schema, volatileF, volatileS); err != nil {
		return err
	}
	pl.vbatch = pl.volatile.NewBatch(pl.table.Len())
	return nil
}

// Place finds the best node for the task and binds the task to it. It
// returns the row, or -1 (and changes nothing) when no node is feasible.
func (pl *Placer) Place(task *Task) (int, error) {
	row, err := pl.Best(task)
	if err != nil || row < 0 {
		return row, err
	}
	return row, pl.Bind(task, row)
}

// Best returns the row of the best feasible node for the task, or -1 when
// there is none, without binding it.
func (pl *Placer) Best(task *Task) (int, error) {
	if pl.rank != nil && len(pl.rank) != pl.table.Len() {
		return -1, fmt.Errorf("placer: the table has %d rows, Rank %d; build a new Placer", pl.table.Len(), len(pl.rank))
	}
	pl.total = 0
	c, err := pl.current(task)
	if err != nil {
		return -1, err
	}
	if pl.volatile != nil {
		return pl.bestWithVolatile(task, c)
	}
	row := c.best()
	if row >= 0 {
		pl.total = c.totals[row]
	}
	return row, nil
}

// isStale reports whether row r's result is a bound (see placerClass.stale).
func (c *placerClass) isStale(r int) bool {
	return c.nstale > 0 && c.stale[r/64]&(1<<(r%64)) != 0
}

// refresh scores one stale row again.
func (pl *Placer) refresh(task *Task, c *placerClass, r int) error {
	bit := uint64(1) << (r % 64)
	pl.marks[r/64] |= bit
	err := pl.rescore(task, c, r, r+1, false)
	pl.marks[r/64] &^= bit
	return err
}

// refreshAll scores every stale row again.
func (pl *Placer) refreshAll(task *Task, c *placerClass) error {
	if c.nstale == 0 {
		return nil
	}
	for w, bits := range c.stale {
		pl.marks[w] |= bits
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

// leafStuck is the leaf of a row that a Monotone filter rejected first.
const leafStuck = -2

// leaf is row r's tree leaf as the batch scored it at position i.
func (pl *Placer) leaf(b *Batch, i, r int) int32 {
	switch f := b.rejectedBy[i]; {
	case f == 0:
		return int32(r)
	case pl.stuck[f]:
		return leafStuck
	default:
		return -1
	}
}

// Scores is every node's result for one task, as a Placer keeps them: a
// read-only view, valid until the next call on the placer or change to its
// table, and safe for concurrent reads until then.
type Scores struct {
	totals []float64
	leaves []int32 // the row when feasible, -1 when not
}

// Len is the number of nodes.
func (s Scores) Len() int { return len(s.totals) }

// Feasible reports whether node row passed every filter.
func (s Scores) Feasible(row int) bool { return s.leaves[row] >= 0 }

// Total is node row's total score (0 when infeasible), the pipeline's
// Batch.Total to the last bit.
func (s Scores) Total(row int) float64 { return s.totals[row] }

// Scores returns every node's result for the task, as Pipeline.Score would
// give them, without binding anything: what a scheduler that ranks nodes
// itself (kube-scheduler's Score) asks for. Like Best it scores a node for
// the task's class once and again only when its row changed; a pipeline's
// volatile parts run on every node.
func (pl *Placer) Scores(task *Task) (Scores, error) {
	c, err := pl.current(task)
	if err != nil {
		return Scores{}, err
	}
	if err := pl.refreshAll(task, c); err != nil {
		return Scores{}, err
	}
	n := pl.table.Len()
	if pl.volatile == nil {
		return Scores{totals: c.totals, leaves: c.tree[n : 2*n]}, nil
	}
	vb := pl.vbatch
	if err := pl.volatile.Score(task, pl.table, vb); err != nil {
		return Scores{}, err
	}
	pl.vtotals = slices.Grow(pl.vtotals[:0], n)[:n]
	pl.vleaves = slices.Grow(pl.vleaves[:0], n)[:n]
	for i := range n {
		pl.vtotals[i], pl.vleaves[i] = 0, -1
		if c.tree[n+i] < 0 || !vb.Feasible(i) {
			continue
		}
		pl.vtotals[i], pl.vleaves[i] = pl.sum(c, vb, i), int32(i)
	}
	return Scores{totals: pl.vtotals, leaves: pl.vleaves}, nil
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

// Total is the total score of the node the last Best or Place returned
// (0 when it returned -1): the pipeline's Batch.Total for that node.
func (pl *Placer) Total() float64 { return pl.total }

// best is the class's best feasible row, or -1.
func (c *placerClass) best() int {
	if len(c.totals) == 0 || c.tree[1] < 0 {
		return -1
	}
	return int(c.tree[1])
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
		var err error
		if round < staleRounds {
			err = pl.refresh(task, c, best)
		} else {
			err = pl.refreshAll(task, c)
		}
		if err != nil {
			return -1, err
		}
	}
}

// staleRounds is how many stale bests bestWithVolatile checks one by one
// before it checks every stale row.
const staleRounds = 4

// pickVolatile is the best row feasible for the class's stable results and
// the volatile batch, and its total.
func (pl *Placer) pickVolatile(c *placerClass, vb *Batch) (int, float64) {
	n := pl.table.Len()
	best, bestTotal := -1, 0.0
	leaves := c.tree[n : 2*n]
	if len(pl.stable.scorers) == 0 && len(pl.volatile.filters) == 0 {
		// Every score is volatile and every filter stable: a node's total
		// is the volatile batch's, summed in the same order. A node's
		// treeKey is worked out without a branch on feasibility, and only
		// the rare node whose key is at least the best's so far is looked
		// at.
		var top uint64
		for i, t := range vb.totals[:n] {
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

// rebuild scores every node for the class.
func (pl *Placer) rebuild(task *Task, c *placerClass) error {
	b := pl.batch
	n := pl.table.Len()
	workers := pl.workers
	if workers == 0 && n < ParallelRows {
		workers = 1
	}
	var err error
	if workers == 1 {
		err = pl.stable.scoreSpan(task, Span{Table: pl.table, Start: 0, End: n}, b, &b.verdicts)
	} else {
		err = pl.stable.scoreParallel(task, pl.table, b, workers)
	}
	if err != nil {
		return err
	}
	if pl.volatile != nil {
		c.cols = slices.Grow(c.cols[:0], len(pl.stable.scorers))[:len(pl.stable.scorers)]
		for j := range c.cols {
			c.cols[j] = append(c.cols[j][:0], b.columns[j*n:(j+1)*n]...)
		}
	}
	c.totals = append(c.totals[:0], b.totals[:n]...)
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

// playMatches plays every match of the class's tree from its leaves up.
// With volatile parts only the leaves are read, and it plays none.
func (pl *Placer) playMatches(c *placerClass) {
	if pl.volatile != nil {
		return
	}
	n := len(c.totals)
	for i := n - 1; i >= 1; i-- {
		c.tree[i] = pl.winner(c.totals, c.tree[2*i], c.tree[2*i+1])
	}
}

// update rescores the rows changed since the class was last brought up to
// date, each once, and replays their matches up the tree. When grownOnly
// (no device given back since), a row that nothing has made room on since
// is left out if a Monotone filter rejected it, and under a lazy placer
// marked stale if it was feasible.
func (pl *Placer) update(task *Task, c *placerClass, changed []int, grownOnly bool) error {
	n := pl.table.Len()
	words := (n + 63) / 64
	if len(pl.marks) < words {
		pl.marks = make([]uint64, words)
		pl.rows = make([]int, 0, n)
	}
	marks := pl.marks[:words]
	lazy := pl.lazy && grownOnly
	// ChangedSince lists each changed row once.
	rows := pl.rows[:0]
	for _, r := range changed {
		bit := uint64(1) << (r % 64)
		if grownOnly && pl.table.LastFreed(r) <= c.seen {
			leaf := c.tree[n+r]
			if leaf == leafStuck {
				continue
			}
			if lazy && leaf >= 0 {
				if c.stale[r/64]&bit == 0 {
					c.stale[r/64] |= bit
					c.nstale++
				}
				continue
			}
		}
		marks[r/64] |= bit
		rows = append(rows, r)
	}
	// Runs of contiguous rows need the rows in order; a span of scattered
	// rows takes them in any (the tree's matches come out the same).
	if !pl.scattered {
		slices.Sort(rows)
	}
	pl.rows = rows
	return pl.rescoreRows(task, c, rows)
}

// rescoreRows scores the rows (each once, marked in pl.marks; in order
// unless the placer takes scattered rows) again and unmarks them: in one
// span of scattered rows, or in contiguous runs.
func (pl *Placer) rescoreRows(task *Task, c *placerClass, rows []int) error {
	n := pl.table.Len()
	marks := pl.marks
	// Past about half the rows, scoring every node in one pass costs less
	// than scoring the changed ones.
	if len(rows) > n/2 {
		for _, r := range rows {
			marks[r/64] &^= 1 << (r % 64)
		}
		return pl.rebuild(task, c)
	}
	// A few rows replay their own matches up the tree; many are cheaper to
	// take in by playing the whole tree again once. (With volatile parts
	// only the leaves are read: neither.)
	replay := len(rows) <= n/16 && pl.volatile == nil
	var err error
	if pl.scattered {
		err = pl.rescoreScattered(task, c, rows, replay)
	} else {
		err = pl.rescoreRuns(task, c, rows, replay)
	}
	for _, r := range rows {
		marks[r/64] &^= 1 << (r % 64)
	}
	if err == nil && !replay {
		pl.playMatches(c)
	}
	return err
}

// rescoreRuns scores the rows (in order) in runs: rows at most spanGap
// apart share one call to the pipeline (the rows between are scored too,
// and their results left unused), which costs less than a call per row.
func (pl *Placer) rescoreRuns(task *Task, c *placerClass, rows []int, replay bool) error {
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end]-rows[end-1] <= spanGap+1 {
			end++
		}
		if err := pl.rescore(task, c, rows[start], rows[end-1]+1, replay); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// spanGap is how many unchanged rows update scores to join two runs of
// changed ones: a row costs less to score than a call to the pipeline.
const spanGap = 3

// rescore scores rows [lo, hi) and takes in the results of those marked
// changed, replaying their matches up the tree if asked to.
func (pl *Placer) rescore(task *Task, c *placerClass, lo, hi int, replay bool) error {
	b := pl.batch
	if err := pl.stable.scoreSpan(task, Span{Table: pl.table, Start: lo, End: hi}, b, &b.verdicts); err != nil {
		return err
	}
	for r := lo; r < hi; r++ {
		if pl.marks[r/64]&(1<<(r%64)) != 0 {
			pl.takeIn(c, b, r, r, replay)
		}
	}
	return nil
}

// rescoreScattered scores the rows in one span of scattered rows and takes
// in their results, replaying their matches up the tree if asked to.
func (pl *Placer) rescoreScattered(task *Task, c *placerClass, rows []int, replay bool) error {
	b := pl.batch
	pl.gather.gather(pl.table, rows)
	if err := pl.stable.scoreSpan(task, Span{Table: pl.table, End: len(rows), gather: &pl.gather}, b, &b.verdicts); err != nil {
		return err
	}
	for i, r := range rows {
		pl.takeIn(c, b, i, r, replay)
	}
	return nil
}

// takeIn takes in row r's result, scored at position i of the batch, and
// replays its matches up the tree if asked to.
func (pl *Placer) takeIn(c *placerClass, b *Batch, i, r int, replay bool) {
	n := pl.table.Len()
	if c.isStale(r) {
		c.stale[r/64] &^= 1 << (r % 64)
		c.nstale--
	}
	for j, col := range c.cols {
		col[r] = b.Contribution(i, j)
	}
	c.totals[r] = b.totals[i]
	k := n + r
	c.tree[k] = pl.leaf(b, i, r)
	if !replay {
		return
	}
	// Replay the matches up the tree. Where a match has the same winner as
	// before and that winner is not row r, everything above it is as it
	// was: stop there.
	for k >>= 1; k >= 1; k >>= 1 {
		w := pl.winner(c.totals, c.tree[2*k], c.tree[2*k+1])
		if w == c.tree[k] && int(w) != r {
			break
		}
		c.tree[k] = w
	}
}

// Bind binds the task to a row: its requests are added to the row's used
// amounts (resource.Table.AddUsed) and its devices taken from the device
// view, tightest first. On error nothing changes.
func (pl *Placer) Bind(task *Task, row int) error {
	if task == nil {
		return errors.New("placer: nil task")
	}
	if pl.devices != nil && task.Devices.Count > 0 {
		if row < 0 || row >= pl.devices.Len() {
			return fmt.Errorf("placer: row %d is outside [0, %d)", row, pl.devices.Len())
		}
		if !pl.devices.Fits(row, task.Devices) {
			return fmt.Errorf("placer: task %q's devices do not fit on %s", task.Name, pl.table.Name(row))
		}
	}
	if err := pl.table.AddUsed(row, task.Requests, task.NonZeroRequests, false); err != nil {
		return fmt.Errorf("placer: binding task %q: %w", task.Name, err)
	}
	if pl.devices != nil && task.Devices.Count > 0 {
		if _, err := pl.devices.Allocate(row, task.Devices); err != nil {
			return fmt.Errorf("placer: binding task %q: %w", task.Name, err) // Fits said yes: unreachable
		}
	}
	return nil
}

// PlaceGang places a job's tasks as a unit, in order: when at least
// minMember of them find a node it returns each task's row (-1 for one
// that found none); when fewer do, it unbinds those it placed, so that the
// table's and the device view's amounts are as before, and returns nil.
func (pl *Placer) PlaceGang(tasks []*Task, minMember int) ([]int, error) {
	type undo struct {
		task *Task
		row  int
		free []int64
	}
	var done []undo
	rollback := func() error {
		var errs []error
		for i := len(done) - 1; i >= 0; i-- {
			u := done[i]
			errs = append(errs, pl.table.AddUsed(u.row, u.task.Requests, u.task.NonZeroRequests, true))
			if u.free != nil {
				errs = append(errs, pl.devices.SetFree(u.row, u.free))
			}
		}
		return errors.Join(errs...)
	}
	rows := make([]int, len(tasks))
	placed := 0
	for i, t := range tasks {
		row, err := pl.Best(t)
		if err != nil {
			return nil, errors.Join(err, rollback())
		}
		rows[i] = row
		if row < 0 {
			continue
		}
		u := undo{task: t, row: row}
		if pl.devices != nil && t.Devices.Count > 0 {
			u.free = slices.Clone(pl.devices.Free(row))
		}
		if err := pl.Bind(t, row); err != nil {
			return nil, errors.Join(err, rollback())
		}
		done = append(done, u)
		placed++
	}
	if placed < minMember {
		return nil, rollback()
	}
	return rows, nil
}

// Forget drops every remembered class.
func (pl *Placer) Forget() {
	clear(pl.classes)
	pl.newest, pl.oldest = nil, nil
}

// Classes is the number of task classes remembered.
func (pl *Placer) Classes() int { return len(pl.classes) }

// class returns the task's class, most recently used now, making it (and
// forgetting the least recently used beyond the bound) when new.
func (pl *Placer) class(task *Task) *placerClass {
	pl.key = appendClassKey(pl.key[:0], task)
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
