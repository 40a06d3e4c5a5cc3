package scoring

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/resfit/resfit/resource"
)

// The Placer is in three files: this one, its API; placer_class.go, what
// it remembers per task class and how it brings that up to date;
// placer_tree.go, the tournament that finds a class's best node. It runs
// the pipeline only through Pipeline.evaluate and reads results only
// through Batch's methods.

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
// to the last bit. Two kinds of volatile scorer cost no more than a
// stable one: a Phased scorer is remembered per phase, the phase being
// part of the task's class, and for a task that every volatile scorer is
// Indifferent to (with no volatile filter) nothing volatile runs and the
// remembered totals are the pipeline's, the volatile ones adding zeros.
//
// Changes to the table made by others (SetUsed, Add, Remove, ...) are
// seen through resource.Table.ChangedSince; a change to the device view must come with a
// change to the same row of the table (as Bind makes them), or the placer
// will not notice it. A changed node that a Monotone filter (NodeResourcesFit,
// DeviceShare) rejected for a class is not scored again for it while
// nothing has made room on the node (resource.Table.LastFreed,
// resource.Devices.Freed): a node that fills up stays out of the way of
// the classes it did not fit. The rows that changed are scored in one call
// to each filter and scorer, as a span of scattered rows.
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
	// stuck[f] says whether stable filter number f (index+1, as Verdicts
	// number them) is one of them.
	monotone []Monotone
	stuck    []bool
	// lazy says the pipeline has volatile parts and remembers nothing but
	// Monotone filters: a node that only filled up may only have become
	// infeasible, so it is checked again only when it comes out best
	// (placerClass.stale).
	lazy bool
	// vtotals and vleaves are what Scores returns when there are volatile
	// parts.
	vtotals []float64
	vleaves []int32
	// phased are the stable scorers that are Phased: a class is
	// remembered per phase of theirs.
	phased []Phased
	// excluders, when not nil, are the pipeline's volatile parts, all of
	// them Excluders (volatile is then nil); excluded and masked are the
	// rows they list for a task and those of them Best took out of the
	// tree.
	excluders        []Excluder
	excluded, masked []int

	classes    map[string]*placerClass
	maxClasses int
	workers    int
	newest     *placerClass // most recently used; the list runs to the oldest
	oldest     *placerClass

	total   float64 // the total of the row Best last returned
	key     []byte
	changed []int
	rows    []int // the rows update or refresh scores again
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
		pipe: p, table: table, devices: opts.Devices,
		classes: map[string]*placerClass{}, maxClasses: cmp.Or(opts.MaxClasses, DefaultMaxClasses), workers: opts.Workers,
	}
	var err error
	if pl.stable, pl.volatile, pl.columns, err = p.split(); err != nil {
		return nil, err
	}
	if xs, ok := pl.volatile.excluders(); ok {
		pl.excluders, pl.volatile = xs, nil
	}
	for _, s := range pl.stable.scorers {
		if isPhased(s.Scorer) {
			pl.phased = append(pl.phased, s.Scorer.(Phased))
		}
	}
	pl.batch = pl.stable.NewBatch(table.Len())
	if pl.volatile != nil {
		pl.vbatch = pl.volatile.NewBatch(table.Len())
	}
	pl.monotone, pl.stuck = pl.stable.monotone()
	pl.lazy = pl.volatile != nil && pl.stable.scorerCount() == 0 && len(pl.monotone) == pl.stable.filterCount()
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
	if pl.volatile != nil && !pl.volatileIndifferent(task) {
		return pl.bestWithVolatile(task, c)
	}
	if pl.excluders != nil {
		return pl.bestExcluding(task, c)
	}
	return pl.bestRemembered(task, c)
}

// volatileIndifferent reports whether the pipeline's volatile parts add
// nothing for the task: no filters, and every scorer of some weight
// Indifferent to it (Pipeline.Indifferent). Each node's total is then the
// total of its remembered results, to the last bit (a sum with zeros
// left out), and the placer places as if there were no volatile parts.
func (pl *Placer) volatileIndifferent(task *Task) bool {
	return pl.volatile.filterCount() == 0 && pl.volatile.Indifferent(task)
}

// Total is the total score of the node the last Best or Place returned
// (0 when it returned -1): the pipeline's Batch.Total for that node.
func (pl *Placer) Total() float64 { return pl.total }

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

// Clone is a copy of the results that stays valid whatever the placer does
// next: for a host that reads them after it lets other calls reach the
// placer.
func (s Scores) Clone() Scores {
	return Scores{totals: slices.Clone(s.totals), leaves: slices.Clone(s.leaves)}
}

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
	if pl.excluders == nil && (pl.volatile == nil || pl.volatileIndifferent(task)) {
		return Scores{totals: c.totals, leaves: c.tree[n : 2*n]}, nil
	}
	if pl.volatile == nil {
		if err := pl.exclude(task); err != nil {
			return Scores{}, err
		}
		pl.vtotals = append(pl.vtotals[:0], c.totals...)
		pl.vleaves = append(pl.vleaves[:0], c.tree[n:2*n]...)
		for _, r := range pl.excluded {
			pl.vtotals[r], pl.vleaves[r] = 0, -1
		}
		return Scores{totals: pl.vtotals, leaves: pl.vleaves}, nil
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

// Bind binds the task to a row: its requests are added to the row's used
// amounts (resource.Table.AddUsed) and its devices taken from the device
// view, tightest first (parts of a type, Task.Partition, first fit:
// resource.Devices.TakePart). On error nothing changes.
func (pl *Placer) Bind(task *Task, row int) error {
	if task == nil {
		return errors.New("placer: nil task")
	}
	if pl.devices != nil && task.Devices.Count > 0 {
		if row < 0 || row >= pl.devices.Len() {
			return fmt.Errorf("placer: row %d is outside [0, %d)", row, pl.devices.Len())
		}
		fits := pl.devices.Fits(row, task.Devices)
		if task.Partition != "" {
			fits = pl.devices.FitsPart(row, task.Partition, task.Devices.Count)
		}
		if !fits {
			return fmt.Errorf("placer: task %q's devices do not fit on %s", task.Name, pl.table.Name(row))
		}
	}
	if err := pl.table.AddUsed(row, task.Requests, task.NonZeroRequests, false); err != nil {
		return fmt.Errorf("placer: binding task %q: %w", task.Name, err)
	}
	if pl.devices != nil && task.Devices.Count > 0 {
		var err error
		if task.Partition != "" {
			_, err = pl.devices.TakePart(row, task.Partition, task.Devices.Count, nil)
		} else {
			_, err = pl.devices.Allocate(row, task.Devices)
		}
		if err != nil {
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
		task  *Task
		row   int
		free  []int64
		parts []resource.Partitioned
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
			if u.parts != nil {
				errs = append(errs, pl.devices.SetPartitioned(u.row, u.parts))
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
			u.parts = pl.devices.ClonePartitioned(row)
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
