package resource

import "fmt"

// Table holds many nodes' allocatable and used amounts as two dense
// row-major matrices: node i's amount of slot j is at i*Stride()+j. Scorers
// walk these matrices directly, so scoring a task against every node touches
// contiguous memory and no maps. The table keeps the same amounts column by
// column too (Rows.Columns), for kernels that score several nodes at once:
// twice the memory, written by every change.
//
// A Table is plain data: reads may run concurrently, but a change (Add,
// SetUsed) must not run alongside anything else.
//
// Node rows are indices in [0, Len()). The accessors that return a value
// (Name, Allocatable, Used, Version) panic on a row outside that range, as
// indexing a slice does; the methods that return an error (SetUsed,
// SetNonZeroUsed) report it.
type Table struct {
	schema      *Schema
	names       []string
	allocatable []int64
	used        []int64
	// nonZeroUsed is used summed with kube-scheduler's non-zero defaults;
	// nil until SetNonZeroUsed is first called, and used stands in for it.
	nonZeroUsed []int64
	// cols are the same matrices column by column.
	cols columns
	// clock numbers the table's changes; versions[i] is the number of row
	// i's last change (see Version).
	clock    uint64
	versions []uint64
	// freed[i] is the number of the last change that may have made room
	// on row i (see LastFreed).
	freed []uint64
	// The rows in the order of their last change (see ChangedSince):
	// newest is the row changed last, older[i] the row changed before row
	// i and newer[i] the one after (-1 past either end).
	newest       int32
	older, newer []int32
	// largest is each resource's largest allocatable amount over the rows
	// (Largest), kept as rows are added, set and removed.
	largest []int64
}

// Rows is a read-only, row-major view of many nodes for batch scorers:
// node i's amount of slot j is at i*Stride+j in each slice. Columns, when
// its Stride is not 0, holds the same amounts column by column.
type Rows struct {
	Stride      int
	Allocatable []int64
	Used        []int64
	Columns     Columns
}

// Columns is a read-only, column-major view of the nodes of a Rows: node
// i's amount of slot j is at j*Stride+i in each slice, for i below the
// number of the Rows' nodes. A view without columns has Stride 0.
type Columns struct {
	Stride      int
	Allocatable []int64
	Used        []int64
}

// Has reports whether the view holds columns.
func (c Columns) Has() bool { return c.Stride > 0 }

// Holds reports whether the columns hold n nodes of k resources each.
func (c Columns) Holds(n, k int) bool {
	least := (k-1)*c.Stride + n
	return c.Has() && k > 0 && c.Stride >= n && len(c.Allocatable) >= least && len(c.Used) >= least
}

// columns is a table's matrices column by column: slot j's amounts of the
// nodes at j*stride, stride being the nodes there is room for (0 before
// the first, then at least 8). nonZero is nil while the table's
// nonZeroUsed is.
type columns struct {
	stride               int
	alloc, used, nonZero []int64
}

// set writes v as node i's column entries in m.
func (c *columns) set(m []int64, i int, v []int64) {
	for j, x := range v {
		m[j*c.stride+i] = x
	}
}

// grow makes room for n nodes of k amounts, keeping the first have.
func (c *columns) grow(n, have, k int) {
	if n <= c.stride {
		return
	}
	stride := max(8, 2*c.stride, n)
	re := func(m []int64) []int64 {
		if m == nil {
			return nil
		}
		to := make([]int64, k*stride)
		for j := range k {
			copy(to[j*stride:j*stride+have], m[j*c.stride:j*c.stride+have])
		}
		return to
	}
	c.alloc, c.used, c.nonZero = re(c.alloc), re(c.used), re(c.nonZero)
	if c.alloc == nil {
		c.alloc, c.used = make([]int64, k*stride), make([]int64, k*stride)
	}
	c.stride = stride
}

// fromRows fills a column matrix from a row-major one of n nodes.
func (c *columns) fromRows(rows []int64, n, k int) []int64 {
	m := make([]int64, k*c.stride)
	for i := range n {
		for j := range k {
			m[j*c.stride+i] = rows[i*k+j]
		}
	}
	return m
}

// RowsOf builds a view over caller-owned matrices, checking their shape.
func RowsOf(stride int, allocatable, used []int64) (Rows, error) {
	if stride <= 0 || len(allocatable)%stride != 0 || len(used) != len(allocatable) {
		return Rows{}, fmt.Errorf("rows: matrices of %d and %d amounts are not rows of %d", len(allocatable), len(used), stride)
	}
	return Rows{Stride: stride, Allocatable: allocatable, Used: used}, nil
}

// NewTable returns an empty table with room for capacity nodes (a hint: a
// capacity below 0 is 0). It panics if schema is nil, a programming error:
// the caller ignored NewSchema's error.
func NewTable(schema *Schema, capacity int) *Table {
	if schema == nil {
		panic("resource.NewTable: nil schema")
	}
	capacity = max(capacity, 0)
	k := schema.Len()
	t := &Table{
		schema:      schema,
		names:       make([]string, 0, capacity),
		allocatable: make([]int64, 0, capacity*k),
		used:        make([]int64, 0, capacity*k),
		newest:      -1,
		largest:     make([]int64, k),
	}
	t.cols.grow(capacity, 0, k)
	return t
}

// Add appends a node and returns its row. Both vectors must pass
// Schema.Check; used may exceed allocatable (a node can be overcommitted).
func (t *Table) Add(name string, allocatable, used Vector) (int, error) {
	if err := t.schema.Check(allocatable); err != nil {
		return 0, fmt.Errorf("node %q allocatable: %w", name, err)
	}
	if used == nil {
		used = make(Vector, t.schema.Len())
	}
	if err := t.schema.Check(used); err != nil {
		return 0, fmt.Errorf("node %q used: %w", name, err)
	}
	t.names = append(t.names, name)
	t.older, t.newer = append(t.older, -1), append(t.newer, -1)
	v := t.tick(len(t.names) - 1)
	t.versions = append(t.versions, v)
	t.freed = append(t.freed, v)
	t.allocatable = append(t.allocatable, allocatable...)
	t.used = append(t.used, used...)
	if t.nonZeroUsed != nil {
		t.nonZeroUsed = append(t.nonZeroUsed, used...)
	}
	i := len(t.names) - 1
	t.cols.grow(i+1, i, t.schema.Len())
	t.cols.set(t.cols.alloc, i, allocatable)
	t.cols.set(t.cols.used, i, used)
	if t.cols.nonZero != nil {
		t.cols.set(t.cols.nonZero, i, used)
	}
	for j, a := range allocatable {
		t.largest[j] = max(t.largest[j], a)
	}
	return i, nil
}

// AddQuantities appends a node given as quantities by name ("cpu": "64",
// "nvidia.com/gpu": "8"); used may be nil.
func (t *Table) AddQuantities(name string, allocatable, used map[string]string) (int, error) {
	a, err := t.schema.Parse(allocatable)
	if err != nil {
		return 0, fmt.Errorf("node %q allocatable: %w", name, err)
	}
	u, err := t.schema.Parse(used)
	if err != nil {
		return 0, fmt.Errorf("node %q used: %w", name, err)
	}
	return t.Add(name, a, u)
}

// SetNonZeroUsed records node i's used amounts summed with the non-zero
// defaults (see PodRequests), which kube-scheduler's and Koordinator's
// scores use. Nodes never given one use their plain used amounts.
func (t *Table) SetNonZeroUsed(i int, used Vector) error {
	if i < 0 || i >= len(t.names) {
		return fmt.Errorf("node row %d is outside [0, %d)", i, len(t.names))
	}
	if err := t.schema.Check(used); err != nil {
		return fmt.Errorf("node %q non-zero used: %w", t.names[i], err)
	}
	t.separateNonZero()
	k := t.schema.Len()
	row := t.nonZeroUsed[i*k : (i+1)*k]
	t.change(i, lowers(row, used))
	copy(row, used)
	t.cols.set(t.cols.nonZero, i, used)
	return nil
}

// SetUsed replaces node i's used amounts, as after a binding.
func (t *Table) SetUsed(i int, used Vector) error {
	if i < 0 || i >= len(t.names) {
		return fmt.Errorf("node row %d is outside [0, %d)", i, len(t.names))
	}
	if err := t.schema.Check(used); err != nil {
		return fmt.Errorf("node %q used: %w", t.names[i], err)
	}
	t.change(i, lowers(t.Used(i), used))
	copy(t.Used(i), used)
	t.cols.set(t.cols.used, i, used)
	return nil
}

// separateNonZero gives the table non-zero used amounts of their own,
// equal to the plain ones, if it has none yet.
func (t *Table) separateNonZero() {
	if t.nonZeroUsed != nil {
		return
	}
	t.nonZeroUsed = append(make([]int64, 0, cap(t.used)), t.used...)
	t.cols.nonZero = t.cols.fromRows(t.used, len(t.names), t.schema.Len())
}

// AddUsed adds a task's requests to node i's used amounts, as a binding
// does: requests to the plain ones, and nonZero (the requests with the
// non-zero defaults; nil means requests) to the non-zero ones. It takes
// requests away instead when release is true (undoing a binding); an
// amount may not go below 0 or above MaxAmount. It is one change (one
// Version), and allocates only the first time the non-zero amounts come
// to differ from the plain ones.
func (t *Table) AddUsed(i int, requests, nonZero Vector, release bool) error {
	if i < 0 || i >= len(t.names) {
		return fmt.Errorf("node row %d is outside [0, %d)", i, len(t.names))
	}
	if err := t.schema.Check(requests); err != nil {
		return fmt.Errorf("node %q: requests: %w", t.names[i], err)
	}
	if nonZero == nil {
		nonZero = requests
	} else if err := t.schema.Check(nonZero); err != nil {
		return fmt.Errorf("node %q: non-zero requests: %w", t.names[i], err)
	}
	sign := int64(1)
	if release {
		sign = -1
	}
	used, zeroUsed := t.Used(i), t.NonZeroUsed(i)
	separate := t.nonZeroUsed != nil
	for j := range requests {
		u := used[j] + sign*requests[j]
		z := zeroUsed[j] + sign*nonZero[j]
		if u < 0 || u > MaxAmount || z < 0 || z > MaxAmount {
			return fmt.Errorf("node %q: %s used would leave [0, %d]", t.names[i], t.schema.Name(j), int64(MaxAmount))
		}
		if !separate && nonZero[j] != requests[j] {
			separate = true
		}
	}
	if separate && t.nonZeroUsed == nil {
		t.separateNonZero()
		zeroUsed = t.NonZeroUsed(i)
	}
	for j := range requests {
		used[j] += sign * requests[j]
		if t.nonZeroUsed != nil {
			zeroUsed[j] += sign * nonZero[j]
		}
	}
	t.cols.set(t.cols.used, i, used)
	if t.nonZeroUsed != nil {
		t.cols.set(t.cols.nonZero, i, zeroUsed)
	}
	t.change(i, release)
	return nil
}

// SetAllocatable replaces node i's allocatable amounts, as after a node
// update.
func (t *Table) SetAllocatable(i int, allocatable Vector) error {
	if i < 0 || i >= len(t.names) {
		return fmt.Errorf("node row %d is outside [0, %d)", i, len(t.names))
	}
	if err := t.schema.Check(allocatable); err != nil {
		return fmt.Errorf("node %q allocatable: %w", t.names[i], err)
	}
	// New allocatable amounts count as freeing, raised or not: a node
	// update is rare, and a score may make anything of it (a resource gone
	// to 0 drops out of kube-scheduler's).
	t.change(i, true)
	old := t.Allocatable(i)
	for j, a := range allocatable {
		switch {
		case a >= t.largest[j]:
			t.largest[j] = a
		case old[j] == t.largest[j]:
			old[j] = a // it may have been the largest: look again
			t.relargest(j)
		}
	}
	copy(old, allocatable)
	t.cols.set(t.cols.alloc, i, allocatable)
	return nil
}

// Remove deletes node i. The last node moves into row i (and gets a new
// version), so rows stay dense; it returns the old row of the node now at
// i, which is i itself when i was the last row.
func (t *Table) Remove(i int) (int, error) {
	n := len(t.names)
	if i < 0 || i >= n {
		return 0, fmt.Errorf("node row %d is outside [0, %d)", i, n)
	}
	last, k := n-1, t.schema.Len()
	t.unlink(last)
	var gone []int // the resources whose largest amount was node i's
	for j, a := range t.allocatable[i*k : (i+1)*k] {
		if a == t.largest[j] && a > 0 {
			gone = append(gone, j)
		}
	}
	if i != last {
		t.names[i] = t.names[last]
		copy(t.allocatable[i*k:(i+1)*k], t.allocatable[last*k:])
		copy(t.used[i*k:(i+1)*k], t.used[last*k:])
		if t.nonZeroUsed != nil {
			copy(t.nonZeroUsed[i*k:(i+1)*k], t.nonZeroUsed[last*k:])
			t.cols.set(t.cols.nonZero, i, t.nonZeroUsed[i*k:(i+1)*k])
		}
		t.cols.set(t.cols.alloc, i, t.allocatable[i*k:(i+1)*k])
		t.cols.set(t.cols.used, i, t.used[i*k:(i+1)*k])
		t.change(i, true)
	}
	t.names = t.names[:last]
	t.older, t.newer = t.older[:last], t.newer[:last]
	t.versions = t.versions[:last]
	t.freed = t.freed[:last]
	t.allocatable = t.allocatable[:last*k]
	t.used = t.used[:last*k]
	if t.nonZeroUsed != nil {
		t.nonZeroUsed = t.nonZeroUsed[:last*k]
	}
	for _, j := range gone {
		t.relargest(j)
	}
	return last, nil
}

// relargest finds resource j's largest allocatable amount again, over
// every row: after the row that held it lowered it or left.
func (t *Table) relargest(j int) {
	k, m := t.schema.Len(), int64(0)
	for i := j; i < len(t.allocatable); i += k {
		m = max(m, t.allocatable[i])
	}
	t.largest[j] = m
}

// Largest is the table's largest node, each resource taken apart: its
// largest allocatable amount over the rows (0 for a table without rows).
// It is kept as rows change, so reading it costs nothing; a row set or
// removed that held a resource's largest amount costs a pass over the
// rows for that resource. The view is for reading, and changes with the
// table.
func (t *Table) Largest() Vector { return t.largest }

// change numbers a change to row i (its Version), and when it may have
// made room there, marks it so (LastFreed).
func (t *Table) change(i int, freed bool) {
	t.versions[i] = t.tick(i)
	if freed {
		t.freed[i] = t.versions[i]
	}
}

// lowers reports whether any amount of to is below the one in from: a
// used amount lowered.
func lowers(from, to Vector) bool {
	for j, x := range to {
		if x < from[j] {
			return true
		}
	}
	return false
}

// tick numbers a change to row i and makes it the newest changed row.
func (t *Table) tick(i int) uint64 {
	t.clock++
	if int(t.newest) != i {
		t.unlink(i)
		t.older[i], t.newer[i] = t.newest, -1
		if t.newest >= 0 {
			t.newer[t.newest] = int32(i)
		}
		t.newest = int32(i)
	}
	return t.clock
}

// unlink takes row i out of the order of changes.
func (t *Table) unlink(i int) {
	o, n := t.older[i], t.newer[i]
	if o >= 0 {
		t.newer[o] = n
	}
	if n >= 0 {
		t.older[n] = o
	} else if int(t.newest) == i {
		t.newest = o
	}
	t.older[i], t.newer[i] = -1, -1
}

// Clock is the number of the table's latest change (0 for a table never
// changed): every change (Add, SetUsed, AddUsed, SetNonZeroUsed,
// SetAllocatable, Remove) advances it by one.
func (t *Table) Clock() uint64 { return t.clock }

// ChangedSince appends to dst[:0] the rows changed after the table's clock
// stood at since, each once, the most recently changed first (a row that
// Remove filled with the last node counts as changed; the row it emptied
// is gone). It takes time in proportion to the rows it lists, however many
// changes each had: the table keeps its rows in the order of their last
// change. It reports false, with nothing appended, for a reading ahead of
// the clock; the caller then treats every row as changed. It allocates
// only when dst is too small.
func (t *Table) ChangedSince(since uint64, dst []int) ([]int, bool) {
	dst = dst[:0]
	if since > t.clock {
		return dst, false
	}
	for r := t.newest; r >= 0 && t.versions[r] > since; r = t.older[r] {
		dst = append(dst, int(r))
	}
	return dst, true
}

// Version is a number that changes whenever node i's row changes (Add,
// SetUsed, AddUsed, SetNonZeroUsed, SetAllocatable, or Remove moving another
// node into the row) and is never reused within the table, so that a cache of
// what a row implies can tell when to recompute. The views that
// Allocatable, Used and Rows return are for reading: writing through them
// bypasses Version and leaves the table's columns behind its rows.
func (t *Table) Version(i int) uint64 { return t.versions[i] }

// LastFreed is the number of the last change that may have made room on
// node i: one that lowered a used amount (SetUsed, SetNonZeroUsed, AddUsed
// releasing), set its allocatable amounts (SetAllocatable), or put the
// node in its row (Add, or Remove moving it). A change that only fills the
// node up (AddUsed adding, SetUsed raising amounts) leaves it as it was,
// so a task that did not fit the node when the clock stood at c still
// does not fit while LastFreed(i) ≤ c (see scoring.Monotone).
func (t *Table) LastFreed(i int) uint64 { return t.freed[i] }

// Schema returns the table's schema.
func (t *Table) Schema() *Schema { return t.schema }

// Len is the number of nodes.
func (t *Table) Len() int { return len(t.names) }

// Stride is the row length, the schema's length.
func (t *Table) Stride() int { return t.schema.Len() }

// Name returns node i's name.
func (t *Table) Name(i int) string { return t.names[i] }

// Allocatable returns node i's allocatable amounts, a read-only view into
// the table.
func (t *Table) Allocatable(i int) Vector {
	k := t.schema.Len()
	return t.allocatable[i*k : (i+1)*k : (i+1)*k]
}

// Used returns node i's used amounts, a read-only view into the table.
func (t *Table) Used(i int) Vector {
	k := t.schema.Len()
	return t.used[i*k : (i+1)*k : (i+1)*k]
}

// NonZeroUsed returns node i's non-zero used amounts (see
// SetNonZeroUsed), a view into the table: the plain ones for a table never
// given any.
func (t *Table) NonZeroUsed(i int) Vector {
	k := t.schema.Len()
	return t.nonZeroUsedMatrix()[i*k : (i+1)*k : (i+1)*k]
}

// Rows returns the table's view with the plain used amounts, with its
// columns.
func (t *Table) Rows() Rows {
	return Rows{Stride: t.schema.Len(), Allocatable: t.allocatable, Used: t.used,
		Columns: Columns{Stride: t.cols.stride, Allocatable: t.cols.alloc, Used: t.cols.used}}
}

// NonZeroRows returns the table's view with the non-zero used amounts (see
// SetNonZeroUsed), with its columns.
func (t *Table) NonZeroRows() Rows {
	r := t.Rows()
	r.Used = t.nonZeroUsedMatrix()
	if t.cols.nonZero != nil {
		r.Columns.Used = t.cols.nonZero
	}
	return r
}

// nonZeroUsedMatrix returns the non-zero used matrix, or the used matrix
// when no node has one.
func (t *Table) nonZeroUsedMatrix() []int64 {
	if t.nonZeroUsed != nil {
		return t.nonZeroUsed
	}
	return t.used
}
