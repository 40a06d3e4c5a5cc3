// Package reservation stops big jobs from starving: it elects a target job,
// picks nodes to reserve for it, locks them cycle after cycle, and offers a
// filter that keeps every other job's tasks off the locked nodes, after
// Volcano's job resource reservation design.
//
// It is Volcano's design, not resfit's starvation control: no host of
// resfit runs it. The descheduler's reserve mode and the replay's -starve
// run package starvation (EASY backfilling: a held node that other pods
// may backfill where they cannot delay the target, and drain); the
// replay's -reserve runs this package, to compare. A lock here keeps
// every other job off, and drains nothing by itself.
//
// All state is explicit: State goes into Step and a new State comes out;
// the caller passes the time. Nothing reads a clock or keeps a global.
package reservation

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Job is a job waiting to be scheduled, as the election sees it.
type Job struct {
	Name     string
	Priority int32
	// Request is the job's whole request (all its tasks).
	Request resource.Vector
	// PendingSince is when the job started waiting.
	PendingSince time.Time
	// Marked is set by the caller for a job a user named as target (Volcano
	// uses an annotation).
	Marked bool
}

// Mode is how the target job is recognised.
type Mode uint8

const (
	// Automatic elects the job with the highest priority, then the longest
	// wait.
	Automatic Mode = iota
	// Custom elects among jobs over a standard line: a marked job first;
	// else jobs requesting more than MinRequest of some resource or waiting
	// longer than MinWait.
	Custom
)

// Election configures target-job election.
type Election struct {
	Mode Mode
	// MinRequest: in Custom mode a job whose request exceeds it in any
	// resource where it is > 0 is a candidate. nil means no request line.
	MinRequest resource.Vector
	// MinWait: in Custom mode a job waiting longer is a candidate; 0 means
	// no waiting line.
	MinWait time.Duration
}

// Elect picks the target job, or reports that there is none.
//
// Automatic: every job is a candidate; the highest Priority wins, then the
// earliest PendingSince, then the smallest Name.
//
// Custom: if any job is Marked, the candidates are the marked jobs, ordered
// as in Automatic. Otherwise the candidates are the jobs over a line; the
// highest Priority wins, then the job furthest over its line (the largest
// of request/MinRequest over the resources and wait/MinWait), then the
// earliest PendingSince, then the smallest Name. Ties never depend on the
// input order.
func Elect(jobs []Job, now time.Time, e Election) (int, bool) {
	type candidate struct {
		i      int
		excess float64
	}
	var cands []candidate
	if e.Mode == Custom {
		for i, j := range jobs {
			if j.Marked {
				cands = append(cands, candidate{i, 0})
			}
		}
		if len(cands) == 0 {
			for i, j := range jobs {
				if x, ok := overLine(j, now, e); ok {
					cands = append(cands, candidate{i, x})
				}
			}
		}
	} else {
		for i := range jobs {
			cands = append(cands, candidate{i, 0})
		}
	}
	if len(cands) == 0 {
		return -1, false
	}
	best := slices.MinFunc(cands, func(a, b candidate) int {
		ja, jb := jobs[a.i], jobs[b.i]
		if c := cmp.Compare(jb.Priority, ja.Priority); c != 0 {
			return c
		}
		if c := cmp.Compare(b.excess, a.excess); c != 0 {
			return c
		}
		if c := ja.PendingSince.Compare(jb.PendingSince); c != 0 {
			return c
		}
		return cmp.Compare(ja.Name, jb.Name)
	})
	return best.i, true
}

// overLine reports whether a job is over a Custom line, and by how much.
func overLine(j Job, now time.Time, e Election) (float64, bool) {
	excess, over := 0.0, false
	for i, line := range e.MinRequest {
		if line > 0 && i < len(j.Request) && j.Request[i] > line {
			over = true
			excess = max(excess, float64(j.Request[i])/float64(line))
		}
	}
	if e.MinWait > 0 {
		if wait := now.Sub(j.PendingSince); wait > e.MinWait {
			over = true
			excess = max(excess, float64(wait)/float64(e.MinWait))
		}
	}
	return excess, over
}

// MainResource is the slot a job's request weighs most on: the largest
// request/total (the job's dominant resource). -1 when it requests nothing.
// It panics if request and total have different lengths, a programming
// error (Step checks the target's request against the table's schema).
func MainResource(request, total []int64) int {
	if len(request) != len(total) {
		panic(fmt.Sprintf("reservation.MainResource: %d requested amounts, %d total", len(request), len(total)))
	}
	best, slot := 0.0, -1
	for i, r := range request {
		if r <= 0 {
			continue
		}
		share := math.Inf(1)
		if total[i] > 0 {
			share = float64(r) / float64(total[i])
		}
		if share > best {
			best, slot = share, i
		}
	}
	return slot
}

// Algorithm is how nodes are ranked for a reservation.
type Algorithm uint8

const (
	// SpecificationFirst ranks nodes by their allocatable amount of the
	// main resource.
	SpecificationFirst Algorithm = iota
	// IdleFirst ranks nodes by their idle amount (allocatable − used).
	IdleFirst
)

// amount is what a node offers under the algorithm (never negative).
func amount(alg Algorithm, nodes *resource.Table, row, main int) int64 {
	a := nodes.Allocatable(row)[main]
	if alg == IdleFirst {
		a -= nodes.Used(row)[main]
	}
	return max(a, 0)
}

// ranked returns the rows in algorithm order: larger amount first, then
// name, skipping rows where skip is set.
func ranked(alg Algorithm, nodes *resource.Table, main int, skip func(row int) bool) []int {
	rows := make([]int, 0, nodes.Len())
	for r := 0; r < nodes.Len(); r++ {
		if skip == nil || !skip(r) {
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(a, b int) int {
		if c := cmp.Compare(amount(alg, nodes, b, main), amount(alg, nodes, a, main)); c != 0 {
			return c
		}
		return cmp.Compare(nodes.Name(a), nodes.Name(b))
	})
	return rows
}

// searchBudget bounds the search for the closest total; past it the best
// set found so far is returned (always one of the fewest nodes).
const searchBudget = 200_000

// SelectNodes picks nodes to reserve for a request of need units of the main
// resource: the fewest nodes whose amounts (see Algorithm) add up to at
// least need, and among sets of that size the one whose total is closest to
// need. Ties go to the set found first, which prefers larger nodes, then
// names in order. ok is false when all the nodes together do not cover
// need. The search is exact unless it takes more than 200,000 steps.
func SelectNodes(nodes *resource.Table, main int, need int64, alg Algorithm) (rows []int, ok bool) {
	return selectNodes(nodes, main, need, alg, nil)
}

// selectNodes is SelectNodes over the rows skip does not skip (nil: all).
func selectNodes(nodes *resource.Table, main int, need int64, alg Algorithm, skip func(row int) bool) (rows []int, ok bool) {
	if main < 0 || main >= nodes.Stride() {
		return nil, need <= 0
	}
	if need <= 0 {
		return nil, true
	}
	order := ranked(alg, nodes, main, skip)
	var sum int64
	n := 0
	for n < len(order) && sum < need {
		sum += amount(alg, nodes, order[n], main)
		n++
	}
	if sum < need {
		return nil, false
	}
	// Group equal amounts: a set is how many of each amount it takes.
	type group struct {
		amount int64
		rows   []int
	}
	var groups []group
	for _, r := range order {
		a := amount(alg, nodes, r, main)
		if len(groups) > 0 && groups[len(groups)-1].amount == a {
			groups[len(groups)-1].rows = append(groups[len(groups)-1].rows, r)
		} else {
			groups = append(groups, group{a, []int{r}})
		}
	}
	take := make([]int, len(groups))
	best := make([]int, len(groups))
	bestSum := sum // the top n are one answer
	for i, left := 0, n; left > 0; i++ {
		c := min(left, len(groups[i].rows))
		best[i] = c
		left -= c
	}
	// bound returns the sum of the r largest (or smallest) amounts from
	// group gi on.
	bound := func(gi, r int, largest bool) int64 {
		var s int64
		if largest {
			for g := gi; g < len(groups) && r > 0; g++ {
				c := min(r, len(groups[g].rows))
				s += int64(c) * groups[g].amount
				r -= c
			}
		} else {
			for g := len(groups) - 1; g >= gi && r > 0; g-- {
				c := min(r, len(groups[g].rows))
				s += int64(c) * groups[g].amount
				r -= c
			}
		}
		return s
	}
	steps := 0
	var search func(gi, left int, s int64)
	search = func(gi, left int, s int64) {
		steps++
		if steps > searchBudget {
			return
		}
		if left == 0 {
			if s >= need && s < bestSum {
				bestSum = s
				copy(best, take)
			}
			return
		}
		if gi == len(groups) || s+bound(gi, left, true) < need || s+bound(gi, left, false) >= bestSum {
			return
		}
		for c := min(left, len(groups[gi].rows)); c >= 0; c-- {
			take[gi] = c
			search(gi+1, left-c, s+int64(c)*groups[gi].amount)
		}
		take[gi] = 0
	}
	search(0, n, 0)
	for i, c := range best {
		rows = append(rows, groups[i].rows[:c]...)
	}
	return rows, true
}

// Scheme is how many nodes a reservation locks.
type Scheme uint8

const (
	// SingleNode locks one more node each cycle — the best-ranked unlocked
	// one — until the locked nodes' allocatable covers the request.
	SingleNode Scheme = iota
	// MultiNode locks a set at once: the SelectNodes set, topped up with
	// the next-ranked nodes to Policy.Nodes or Policy.Percent of the
	// cluster.
	MultiNode
	// ClusterLock locks every node.
	ClusterLock
)

// Policy configures locking; Validate says what it accepts.
type Policy struct {
	Scheme    Scheme
	Algorithm Algorithm
	// Nodes and Percent size a MultiNode lock: at least this many nodes,
	// or this share of the cluster (0..1), whichever is more.
	Nodes   int
	Percent float64
	// Timeout escalates to ClusterLock when the target has waited this
	// long since it was elected; 0 never escalates.
	Timeout time.Duration
}

// Validate checks a policy: a known Scheme and Algorithm, Nodes ≥ 0,
// Percent a share in [0, 1], Timeout ≥ 0.
func (p Policy) Validate() error {
	var errs []string
	if p.Scheme > ClusterLock {
		errs = append(errs, fmt.Sprintf("scheme: unknown scheme %d", p.Scheme))
	}
	if p.Algorithm > IdleFirst {
		errs = append(errs, fmt.Sprintf("algorithm: unknown algorithm %d", p.Algorithm))
	}
	if p.Nodes < 0 {
		errs = append(errs, fmt.Sprintf("nodes: must be ≥ 0, got %d", p.Nodes))
	}
	if !(p.Percent >= 0 && p.Percent <= 1) {
		errs = append(errs, fmt.Sprintf("percent: must be a share in [0, 1], got %v", p.Percent))
	}
	if p.Timeout < 0 {
		errs = append(errs, fmt.Sprintf("timeout: must be ≥ 0, got %v", p.Timeout))
	}
	if errs != nil {
		return fmt.Errorf("reservation policy: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Status is the target job's state as the caller sees it.
type Status uint8

const (
	Pending Status = iota
	Running
	Deleted
)

// Target is the elected job and its state this cycle.
type Target struct {
	Name    string
	Request resource.Vector
	Status  Status
	// Usable reports whether the job's tasks could run on a table row
	// once it is empty: the design's "nodes which can satisfy these pods".
	// SingleNode and MultiNode lock no other row, and a row locked counts
	// toward the request only while it is usable; a cluster lock still
	// locks every row. nil: every row is usable, as Volcano's design
	// states the schemes.
	Usable func(row int) bool
}

// usable is t.Usable, every row when it is nil.
func (t Target) usable(row int) bool { return t.Usable == nil || t.Usable(row) }

// State is a reservation between cycles. The zero State reserves nothing.
type State struct {
	Target string
	// Since is when the target was elected.
	Since time.Time
	// Locked holds the locked nodes' names, sorted.
	Locked []string
	// Cluster is set when every node is locked.
	Cluster bool
}

// Step advances a reservation by one scheduling cycle and returns the new
// state; s is not modified.
//
//   - A running or deleted target releases everything (the zero State).
//   - A target other than s.Target starts a new reservation at now.
//   - Once now − Since reaches Policy.Timeout the lock becomes a cluster
//     lock.
//   - Otherwise the Scheme decides which nodes to add (see Scheme).
func Step(s State, p Policy, now time.Time, t Target, nodes *resource.Table) (State, error) {
	if err := p.Validate(); err != nil {
		return s, err
	}
	if t.Status == Running || t.Status == Deleted || t.Name == "" {
		return State{}, nil
	}
	if err := nodes.Schema().Check(t.Request); err != nil {
		return s, fmt.Errorf("reservation: target %q request: %w", t.Name, err)
	}
	if s.Target != t.Name {
		s = State{Target: t.Name, Since: now}
	}
	next := State{Target: s.Target, Since: s.Since, Locked: slices.Clone(s.Locked), Cluster: s.Cluster}
	if next.Cluster || p.Scheme == ClusterLock || (p.Timeout > 0 && now.Sub(s.Since) >= p.Timeout) {
		next.Cluster = true
		next.Locked = next.Locked[:0]
		for r := 0; r < nodes.Len(); r++ {
			next.Locked = append(next.Locked, nodes.Name(r))
		}
		slices.Sort(next.Locked)
		return next, nil
	}
	rows := nodes.Rows()
	total := make([]int64, rows.Stride)
	for i, a := range rows.Allocatable {
		// Saturate: 1024 nodes at the largest amount would wrap int64.
		total[i%rows.Stride] = min(total[i%rows.Stride], math.MaxInt64-a) + a
	}
	main := MainResource(t.Request, total)
	if main < 0 {
		return next, nil
	}
	need := t.Request[main]
	locked := map[string]bool{}
	for _, n := range next.Locked {
		locked[n] = true
	}
	switch p.Scheme {
	case SingleNode:
		var potential int64
		for r := 0; r < nodes.Len(); r++ {
			if locked[nodes.Name(r)] && t.usable(r) {
				potential += nodes.Allocatable(r)[main]
			}
		}
		if potential < need {
			if rows := ranked(p.Algorithm, nodes, main, func(r int) bool { return locked[nodes.Name(r)] || !t.usable(r) }); len(rows) > 0 {
				next.Locked = append(next.Locked, nodes.Name(rows[0]))
			}
		}
	case MultiNode:
		if len(next.Locked) > 0 {
			break
		}
		want := max(p.Nodes, int(math.Ceil(p.Percent*float64(nodes.Len()))))
		unusable := func(r int) bool { return !t.usable(r) }
		rows, _ := selectNodes(nodes, main, need, p.Algorithm, unusable)
		chosen := map[int]bool{}
		for _, r := range rows {
			chosen[r] = true
		}
		for _, r := range ranked(p.Algorithm, nodes, main, unusable) {
			if len(rows) >= want {
				break
			}
			if !chosen[r] {
				rows = append(rows, r)
			}
		}
		for _, r := range rows {
			next.Locked = append(next.Locked, nodes.Name(r))
		}
	}
	slices.Sort(next.Locked)
	return next, nil
}

// Filter keeps every task that is not of the target job off the locked
// nodes. Build one per cycle from the cycle's State and add it to the
// pipeline with scoring.Pipeline.WithFilters. It is a scoring.Excluder: a
// scoring.Placer passes over the locked rows without running it on every
// node.
type Filter struct {
	target string
	locked []bool // by table row
	rows   []int  // the locked rows, in order
}

// NewFilter resolves the state's locked node names to rows of the table.
func NewFilter(s State, nodes *resource.Table) *Filter {
	f := &Filter{target: s.Target, locked: make([]bool, nodes.Len())}
	names := map[string]bool{}
	for _, n := range s.Locked {
		names[n] = true
	}
	for r := range f.locked {
		f.locked[r] = s.Cluster || names[nodes.Name(r)]
		if f.locked[r] {
			f.rows = append(f.rows, r)
		}
	}
	return f
}

// Name is "reservation".
func (f *Filter) Name() string { return "reservation" }

// Volatile is true: the verdict depends on the task's job and on the
// locks, which change apart from the table, so a scoring.Placer must not
// remember it.
func (f *Filter) Volatile() bool { return true }

// FilterNodes rejects the locked nodes for a task of any job but the
// target.
func (f *Filter) FilterNodes(task *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	if len(f.locked) != nodes.Table().Len() {
		return fmt.Errorf("reservation filter built for %d nodes, table has %d", len(f.locked), nodes.Table().Len())
	}
	if f.target == "" || task.Job == f.target {
		return nil
	}
	for i := range nodes.Len() {
		if f.locked[nodes.Row(i)] {
			v.Reject(i, -1)
		}
	}
	return nil
}

// Rows returns the locked rows, in order; the slice is the filter's.
func (f *Filter) Rows() []int { return f.rows }

// Excluded appends the locked rows to dst for a task of any job but the
// target.
func (f *Filter) Excluded(task *scoring.Task, dst []int) []int {
	if f.target == "" || task.Job == f.target {
		return dst
	}
	return append(dst, f.rows...)
}

// Explain says whom the node is reserved for.
func (f *Filter) Explain(*scoring.Task, *resource.Table, int, int) string {
	return fmt.Sprintf("node reserved for target job %s", f.target)
}
