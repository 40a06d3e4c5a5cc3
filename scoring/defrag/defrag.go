// Package defrag plans pod moves that win back a fragmented cluster: the
// fewest moves after which a pending task fits (MakeRoom).
//
// A move takes a placed pod off its node and puts it where the pipeline
// the scheduler runs would put it then: its best feasible node other than
// the one it leaves (ties to the lower row, as Batch.Top orders). The plan
// is therefore what the scheduler would do, move after move. A pod moves
// at most once in a plan; a pod that is not movable, or whose group's
// disruption budget is spent, does not move.
//
// This first version plans on a table alone: a move changes the table
// rows, not a device view, since it does not take the pods' device
// holdings yet. A pipeline with the DeviceShare filter is refused; one
// whose scorers read a device view (FGD) scores with the view as it is.
package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Pod is a placed pod: its task, its node's row, whether it may move, and
// its disruption group ("" none; Options.Budgets).
type Pod struct {
	Task    *scoring.Task
	Row     int
	Movable bool
	Group   string
}

// Options bound a plan.
type Options struct {
	// MaxMoves is the most moves a plan may make; 0 means DefaultMaxMoves.
	MaxMoves int
	// Budgets are the disruptions each group allows (a
	// PodDisruptionBudget's disruptionsAllowed); a group not listed allows
	// any number.
	Budgets map[string]int
	// Timeout stops the search; 0 means none. A search stopped by it
	// returns the best plan found and the bound it reached.
	Timeout time.Duration
}

// DefaultMaxMoves is MakeRoom's cap on moves unless told otherwise.
const DefaultMaxMoves = 2

// Move is one pod's move: its index in the pods given, and the rows it
// leaves and goes to.
type Move struct {
	Pod, From, To int
}

// Plan is MakeRoom's answer.
type Plan struct {
	// Moves, applied in order, make room: after them the task fits on Row.
	// Found reports whether a plan was found within the caps.
	Moves []Move
	Row   int
	Found bool
	// Minimal reports that no plan with fewer moves exists (each pod
	// moving at most once, to where the pipeline puts it); Bound is the
	// fewest moves any plan may have, as far as the search went: with
	// Minimal, len(Moves); without a plan, the moves a plan would need at
	// least (MaxMoves+1 when the search ran to the cap).
	Minimal bool
	Bound   int
	// States counts the states the search examined.
	States int
}

// MakeRoom finds the fewest moves of pods after which task fits on some
// node of the table, by iterative deepening over move sequences: every
// sequence of k moves is tried (pruned by a lower bound: the fewest pods a
// node must lose for the task's requests to fit it) before any of k+1, so
// the first plan found is minimal. The table is not changed. pipe must be
// built for the table's schema; a pipeline with the DeviceShare filter is
// an error (see the package documentation).
func MakeRoom(pipe *scoring.Pipeline, table *resource.Table, pods []Pod, task *scoring.Task, opts Options) (Plan, error) {
	if pipe == nil || table == nil || task == nil {
		return Plan{}, errors.New("defrag: nil pipeline, table or task")
	}
	if slices.Contains(pipe.FilterNames(), scoring.DeviceShare) {
		return Plan{}, errors.New("defrag: the pipeline checks devices one by one (DeviceShare), which a plan on the table alone cannot keep")
	}
	if opts.MaxMoves < 0 {
		return Plan{}, fmt.Errorf("defrag: MaxMoves %d is negative", opts.MaxMoves)
	}
	if opts.MaxMoves == 0 {
		opts.MaxMoves = DefaultMaxMoves
	}
	for i, p := range pods {
		if p.Task == nil || p.Row < 0 || p.Row >= table.Len() {
			return Plan{}, fmt.Errorf("defrag: pod %d: no task, or row %d outside the table's %d", i, p.Row, table.Len())
		}
	}
	s := &search{pipe: pipe, pods: pods, task: task, budgets: maps.Clone(opts.Budgets)}
	var err error
	if s.table, err = copyTable(table); err != nil {
		return Plan{}, err
	}
	if opts.Timeout > 0 {
		s.deadline = time.Now().Add(opts.Timeout)
	}
	s.batch = pipe.NewBatch(table.Len())
	s.checked = pipe.CheckedAmounts()
	s.moved = make([]bool, len(pods))
	for k := 0; k <= opts.MaxMoves; k++ {
		found, err := s.try(k)
		if err != nil {
			return Plan{}, err
		}
		if found {
			return Plan{Moves: s.best, Row: s.row, Found: true, Minimal: !s.stopped, Bound: k, States: s.states}, nil
		}
		if s.stopped {
			return Plan{Row: -1, Bound: k, States: s.states}, nil
		}
	}
	return Plan{Row: -1, Bound: opts.MaxMoves + 1, States: s.states}, nil
}

// search is MakeRoom's state: the table as the moves so far leave it.
type search struct {
	pipe     *scoring.Pipeline
	table    *resource.Table
	batch    *scoring.Batch
	pods     []Pod
	task     *scoring.Task
	budgets  map[string]int // what each limited group has left
	moved    []bool
	path     []Move
	best     []Move
	row      int
	states   int
	deadline time.Time
	stopped  bool
	// checked are the slots the pipeline's fit filter checks (the bound's
	// resources); none, no bound.
	checked []int
}

// try looks for a plan of exactly k more moves from the current state
// (fewer were tried before).
func (s *search) try(k int) (bool, error) {
	s.states++
	if !s.deadline.IsZero() && time.Now().After(s.deadline) {
		s.stopped = true
	}
	if s.stopped {
		return false, nil
	}
	if k == 0 {
		row, err := s.fits()
		if err != nil || row < 0 {
			return false, err
		}
		s.best, s.row = append([]Move(nil), s.path...), row
		return true, nil
	}
	if s.lowerBound() > k {
		return false, nil
	}
	for i := range s.pods {
		left, limited := s.budgets[s.pods[i].Group]
		if s.moved[i] || !s.pods[i].Movable || limited && left == 0 {
			continue
		}
		to, err := s.target(i)
		if err != nil {
			return false, err
		}
		if to < 0 {
			continue
		}
		if err := s.move(i, to, false); err != nil {
			return false, err
		}
		found, err := s.try(k - 1)
		if undo := s.move(i, to, true); undo != nil && err == nil {
			err = undo
		}
		if found || err != nil {
			return found, err
		}
	}
	return false, nil
}

// fits is the best row for the task now, -1 when none is feasible.
func (s *search) fits() (int, error) {
	if err := s.pipe.Score(s.task, s.table, s.batch); err != nil {
		return -1, err
	}
	top := s.batch.Top(1, nil)
	if len(top) == 0 {
		return -1, nil
	}
	return top[0], nil
}

// target is where the pipeline puts pod i once off its node: its best
// feasible row other than its own, -1 when none.
func (s *search) target(i int) (int, error) {
	p := s.pods[i]
	from := s.current(i)
	if err := s.table.AddUsed(from, p.Task.Requests, p.Task.NonZeroRequests, true); err != nil {
		return -1, err
	}
	err := s.pipe.Score(p.Task, s.table, s.batch)
	if again := s.table.AddUsed(from, p.Task.Requests, p.Task.NonZeroRequests, false); again != nil && err == nil {
		err = again
	}
	if err != nil {
		return -1, err
	}
	for _, row := range s.batch.Top(2, nil) {
		if row != from {
			return row, nil
		}
	}
	return -1, nil
}

// current is pod i's row in the current state.
func (s *search) current(i int) int {
	for _, m := range s.path {
		if m.Pod == i {
			return m.To
		}
	}
	return s.pods[i].Row
}

// move applies pod i's move to row to, or takes it back (undo).
func (s *search) move(i, to int, undo bool) error {
	p := s.pods[i]
	from := p.Row // a pod moves once: from its own row
	if undo {
		from, to = to, from
	}
	if err := s.table.AddUsed(from, p.Task.Requests, p.Task.NonZeroRequests, true); err != nil {
		return err
	}
	if err := s.table.AddUsed(to, p.Task.Requests, p.Task.NonZeroRequests, false); err != nil {
		return err
	}
	spent := 1
	if undo {
		s.moved[i] = false
		s.path = s.path[:len(s.path)-1]
		spent = -1
	} else {
		s.moved[i] = true
		s.path = append(s.path, Move{Pod: i, From: p.Row, To: to})
	}
	if left, limited := s.budgets[p.Group]; limited {
		s.budgets[p.Group] = left - spent
	}
	return nil
}

// lowerBound is the fewest moves that can let the task fit: over the
// rows, the fewest of the pods on a row (movable, not yet moved) whose
// requests, taken off, leave room for the task's in every resource the
// fit filter checks, found largest first resource by resource (a bound: it
// ignores the other filters, and that the pods must go somewhere). 0
// without a fit filter.
func (s *search) lowerBound() int {
	if len(s.checked) == 0 {
		return 0
	}
	best := len(s.pods) + 1
	req := s.task.Requests
	for row := range s.table.Len() {
		alloc, used := s.table.Allocatable(row), s.table.Used(row)
		need := 0
		for _, r := range s.checked {
			q := req[r]
			if q == 0 {
				continue // the filter checks what the task asks for
			}
			deficit := used[r] + q - alloc[r]
			if deficit <= 0 {
				continue
			}
			if q > alloc[r] {
				need = len(s.pods) + 1
				break
			}
			need = max(need, s.coverWith(row, r, deficit))
		}
		best = min(best, need)
	}
	return best
}

// coverWith is the fewest movable pods now on row whose requests of
// resource r add up to deficit, largest first (len(pods)+1 when they
// cannot).
func (s *search) coverWith(row, r int, deficit int64) int {
	var sizes []int64
	for i, p := range s.pods {
		if !s.moved[i] && p.Movable && s.current(i) == row && p.Task.Requests[r] > 0 {
			sizes = append(sizes, p.Task.Requests[r])
		}
	}
	slices.SortFunc(sizes, func(a, b int64) int { return cmp.Compare(b, a) }) // largest first
	for n, size := range sizes {
		deficit -= size
		if deficit <= 0 {
			return n + 1
		}
	}
	return len(s.pods) + 1
}

// copyTable copies a table: its rows' names and amounts.
func copyTable(t *resource.Table) (*resource.Table, error) {
	c := resource.NewTable(t.Schema(), t.Len())
	for i := range t.Len() {
		if _, err := c.Add(t.Name(i), t.Allocatable(i), t.Used(i)); err != nil {
			return nil, err
		}
		if err := c.SetNonZeroUsed(i, t.NonZeroUsed(i)); err != nil {
			return nil, err
		}
	}
	return c, nil
}
