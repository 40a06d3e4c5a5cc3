package scoring

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/resfit/resfit/resource"
)

// This file holds what a filter or scorer is, apart from how a Pipeline
// or a Placer drives them: the two interfaces, the span of nodes they are
// handed, the verdicts a filter writes, the optional contracts that tell
// a Placer what it may remember (Volatile, Phased, Excluder, Monotone,
// Learner),
// and the one that tells a host which scorers rank nothing for a task
// (Indifferent).

// Scorer scores one task on every node of a span: out[i] for row
// nodes.Row(i), each in [0, MaxScore()]. It must not allocate. MaxScore
// must be finite and ≥ 0; the pipeline checks every score against it and
// turns one outside the range (NaN included) into an error that names the
// scorer and the node.
//
// A node's score must depend only on the task's class (its Requests,
// NonZeroRequests, KoordinatorRequests, Devices, Models and Override) and on the
// node's table row, or on state kept per row that changes only together
// with the row (resource.Table.Version), such as a device view that is
// changed along with the table: a Placer remembers each node's score until
// its row changes. A scorer for which that is not true (random, shared
// state, other nodes, the task's name) implements Volatile.
type Scorer interface {
	Name() string
	MaxScore() float64
	ScoreNodes(task *Task, nodes Span, out []float64) error
}

// Filter rejects the nodes of a span a task must not go to: it calls
// v.Reject(i, slot) for row nodes.Row(i), naming the resource concerned
// (or -1). It must not allocate. Its verdict on a node must depend only on what a
// Scorer's score may depend on, or it implements Volatile.
type Filter interface {
	Name() string
	FilterNodes(task *Task, nodes Span, v *Verdicts) error
	// Explain says in a sentence why it rejected the task on the table's
	// row, given the slot it named. It is called only when asked (see
	// Batch.Reason), so rejecting stays cheap.
	Explain(task *Task, nodes *resource.Table, row, slot int) string
}

// Volatile is implemented by a Scorer or Filter whose result for a node
// can change while the node's table row does not: one that draws random
// numbers, reads state that changes apart from the table (a reservation's
// locks), or looks at other nodes or at the task's name or job. A Placer
// remembers every other scorer's and filter's result for a node until the
// node's row changes, and runs the volatile ones on every node for every
// task.
type Volatile interface {
	Volatile() bool
}

// Excluder is implemented by a Volatile Filter that rejects, for a task,
// only rows it can list, such as a reservation's locked nodes: Excluded
// appends them to dst, and FilterNodes rejects exactly those of its span.
// A Placer whose only volatile parts are Excluders goes on remembering
// everything else and passes over the listed rows, where it would
// otherwise run the filter on every node for every task. Excluded must
// not allocate beyond growing dst.
type Excluder interface {
	Filter
	Excluded(task *Task, dst []int) []int
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

// Indifferent is implemented by a Scorer that, for some tasks, adds
// nothing: Indifferent(task) true promises that ScoreNodes scores every
// node of every span 0 for the task, until the task changes. Such a scorer
// ranks nothing for the task, and a host that runs each scorer as a
// plugin of its own (kube-scheduler) may leave it out of the task's cycle
// with the same outcome to the digit. The lifetime term is indifferent to
// a task whose end is not known.
type Indifferent interface {
	Indifferent(task *Task) bool
}

// Learner is implemented by a Scorer or Filter that learns from the tasks
// a host places, such as FGD learning the workload's typical pods: the host
// calls Pipeline.Observe with each task it places. A learner's results
// change as it learns, so it is Volatile too.
type Learner interface {
	Observe(task *Task)
}

// Phased is implemented by a Volatile Scorer whose scores change apart
// from the table only when its phase does: a tie-breaker that scores one
// way until anything is known of when pods end and another way after
// (lifetime.UntilKnown). Phased() true promises that, for tasks of one
// class (see Scorer) for which AppendPhase appends the same bytes, a
// node's score is a function of the class and the node's row, as a stable
// scorer's is. A Placer then remembers the scorer's scores per class and
// phase, and scores it again only on the rows that changed, where it would
// score every node for every task; a host that knows nothing of phases
// runs it as any volatile scorer, with the same outcome. AppendPhase
// appends to key what names the phase the scorer scores the task in on
// the table now (a function of the task, the table and the scorer's own
// state), allocating nothing beyond what growing key takes.
type Phased interface {
	Volatile
	Phased() bool
	AppendPhase(key []byte, task *Task, table *resource.Table) []byte
}

// appendPhase appends p's phase for the task on the table after its
// length (4 bytes, little-endian), so that a key of several phases reads
// back one way.
func appendPhase(key []byte, p Phased, task *Task, table *resource.Table) []byte {
	at := len(key)
	key = p.AppendPhase(append(key, 0, 0, 0, 0), task, table)
	binary.LittleEndian.PutUint32(key[at:], uint32(len(key)-at-4))
	return key
}

func isVolatile(x any) bool {
	v, ok := x.(Volatile)
	return ok && v.Volatile()
}

// isPhased reports whether x is a Volatile scorer a Placer may remember
// per phase (see Phased).
func isPhased(x any) bool {
	p, ok := x.(Phased)
	return ok && p.Volatile() && p.Phased()
}

// Span is the nodes a filter or scorer is handed: Len of them, node i
// being table row Row(i), its amounts row i of Rows and NonZeroRows. The
// rows may be a contiguous run of the table (a pipeline splits a table
// across workers) or scattered rows (a Placer's changed ones, their
// amounts copied out in that order), so a filter or scorer reads its
// nodes only through these methods.
type Span struct {
	table      *resource.Table
	start, end int
	// gather, when not nil, makes the span one of scattered rows: node i
	// is row gather.rows[i], and its amounts are copied into gather's
	// views; start is then 0 and end the number of rows.
	gather *gathered
}

// NewSpan is the span of rows [start, end) of a table, for calling a
// filter or scorer directly. It panics unless 0 ≤ start ≤ end ≤
// table.Len(), as slicing does.
func NewSpan(table *resource.Table, start, end int) Span {
	if start < 0 || start > end || end > table.Len() {
		panic(fmt.Sprintf("scoring.NewSpan: rows [%d, %d) of a table of %d", start, end, table.Len()))
	}
	return Span{table: table, start: start, end: end}
}

// Table is the table the span's rows are in.
func (s Span) Table() *resource.Table { return s.table }

// Len is the number of nodes.
func (s Span) Len() int { return s.end - s.start }

// Row is node i's row in the table.
func (s Span) Row(i int) int {
	if s.gather != nil {
		return s.gather.rows[i]
	}
	return s.start + i
}

// Rows is the span's view with plain used amounts: node i's amounts are
// the view's row i.
func (s Span) Rows() resource.Rows {
	if s.gather != nil {
		return s.gather.plain
	}
	return s.slice(s.table.Rows())
}

// NonZeroRows is the span's view with non-zero used amounts.
func (s Span) NonZeroRows() resource.Rows {
	if s.gather != nil {
		return s.gather.nonZero
	}
	return s.slice(s.table.NonZeroRows())
}

func (s Span) slice(r resource.Rows) resource.Rows {
	lo, hi := s.start*r.Stride, s.end*r.Stride
	v := resource.Rows{Stride: r.Stride, Allocatable: r.Allocatable[lo:hi], Used: r.Used[lo:hi]}
	if c := r.Columns; c.Has() {
		v.Columns = resource.Columns{Stride: c.Stride, Allocatable: c.Allocatable[s.start:], Used: c.Used[s.start:]}
	}
	return v
}

// gathered is the rows of a span of scattered rows, with their amounts
// copied out of the table in that order.
type gathered struct {
	rows             []int
	plain, nonZero   resource.Rows
	alloc, used, nzu []int64 // the views' storage
}

// gather copies the table's rows into g, in the order given, and returns
// the span of them.
func (g *gathered) gather(t *resource.Table, rows []int) Span {
	plain, nonZero := t.Rows(), t.NonZeroRows()
	k := plain.Stride
	m := len(rows) * k
	g.rows = rows
	g.alloc = slices.Grow(g.alloc[:0], m)[:m]
	g.used = slices.Grow(g.used[:0], m)[:m]
	for i, r := range rows {
		copy(g.alloc[i*k:i*k+k], plain.Allocatable[r*k:r*k+k])
		copy(g.used[i*k:i*k+k], plain.Used[r*k:r*k+k])
	}
	g.plain = resource.Rows{Stride: k, Allocatable: g.alloc, Used: g.used}
	g.nonZero = g.plain
	if m > 0 && &nonZero.Used[0] != &plain.Used[0] {
		g.nzu = slices.Grow(g.nzu[:0], m)[:m]
		for i, r := range rows {
			copy(g.nzu[i*k:i*k+k], nonZero.Used[r*k:r*k+k])
		}
		g.nonZero.Used = g.nzu
	}
	return Span{table: t, end: len(rows), gather: g}
}

// Verdicts collects the filters' rejections for one span of a batch;
// indices are relative to the span.
type Verdicts struct {
	rejectedBy []uint16 // index+1 of the rejecting filter; 0 means feasible
	slots      []int16  // the resource the filter named, where rejected
	filter     uint16
}

// Feasible reports whether node i of the span is still feasible.
func (v *Verdicts) Feasible(i int) bool { return v.rejectedBy[i] == 0 }

// Reject marks node i infeasible for the current filter, naming a resource
// slot (or -1), unless an earlier filter already rejected it.
func (v *Verdicts) Reject(i, slot int) {
	if v.rejectedBy[i] == 0 {
		v.rejectedBy[i] = v.filter
		v.slots[i] = int16(slot)
	}
}
