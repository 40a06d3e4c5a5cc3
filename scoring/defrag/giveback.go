package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/resfit/resfit/scoring"
)

// GiveBackOptions bound GiveBack.
type GiveBackOptions struct {
	// Moves is the most moves to make.
	Moves int
	// Budgets are the disruptions each group allows, as in Options.
	Budgets map[string]int
	// Candidates is how many of the costliest nodes each step looks at
	// for a pod to move; 0 means DefaultCandidates.
	Candidates int
	// Pending are tasks waiting for room, none of which fits now. With
	// them GiveBack goes in rounds: after each move it works out what
	// they would take if placed then, in order, each where the pipeline
	// puts it (Step.Takes); at the end of a round (Moves made, no move
	// lowering the cost, or Patience run out) it keeps the round's moves
	// up to the first after which they take the most, takes back the
	// rest, and places them (as Reclaim places one: a pod of the cluster,
	// Movable and Group as given). The next round starts from there with
	// the moves left; a round that lets none in is taken back whole and
	// ends it.
	Pending []*scoring.Task
	// Patience, with Pending, ends a round after this many moves in a row
	// did not raise the most the tasks would take; 0 never ends one for
	// that.
	Patience int
	Movable  bool
	Group    string
}

// DefaultCandidates is GiveBackOptions.Candidates unless told otherwise.
const DefaultCandidates = 16

// Step is one move GiveBack made and what it lowered the total cost by.
// With pending tasks, Takes is the device amount those still waiting
// would take placed after it, and the last step a round keeps lists those
// it placed (indices into GiveBackOptions.Pending, in order).
type Step struct {
	Move
	Gain   float64
	Takes  int64
	Placed []int
}

// GiveBack makes up to opts.Moves moves on the cluster, one at a time,
// each the move that most lowers the cost summed over the nodes, among the
// pods on the opts.Candidates costliest nodes (each pod to where the
// pipeline puts it, at most once); it stops early when no such move lowers
// the cost. cost(row) reads the node as the cluster holds it when called,
// such as FGD's fragmentation of the node (frag.Measure.NodeModel over
// the table's free cpu and the device view's free amounts). The moves are
// made as Apply makes them, and returned in order with their gains.
//
// With pending tasks (GiveBackOptions.Pending) the cost guides the moves
// and the tasks say how many are worth making: each round keeps its moves
// up to the first after which the tasks take the most, and places them
// there.
//
// Each step is greedy, the best single move; with pending tasks a round
// looks ahead to its last move and keeps the best prefix, so that moves
// that pay only together are kept together.
func GiveBack(c *Cluster, cost func(row int) float64, opts GiveBackOptions) ([]Step, error) {
	if cost == nil {
		return nil, errors.New("defrag: nil cost")
	}
	if opts.Moves < 0 || opts.Candidates < 0 || opts.Patience < 0 {
		return nil, fmt.Errorf("defrag: Moves %d, Candidates %d and Patience %d must be ≥ 0", opts.Moves, opts.Candidates, opts.Patience)
	}
	if slices.Contains(opts.Pending, nil) {
		return nil, errors.New("defrag: a nil pending task")
	}
	s, err := newSearch(c)
	if err != nil {
		return nil, err
	}
	for _, task := range opts.Pending {
		if row, err := s.placer.Best(task); err != nil || row >= 0 {
			return nil, cmp.Or(err, fmt.Errorf("defrag: pending task %s fits with no move (on row %d): place it first", task.Name, row))
		}
	}
	s.budgets = maps.Clone(opts.Budgets)
	g := &giveBack{s: s, cost: cost, opts: opts, candidates: cmp.Or(opts.Candidates, DefaultCandidates)}
	for i := range opts.Pending {
		g.waiting = append(g.waiting, i)
	}
	for {
		steps, err := g.round(opts.Moves - len(g.steps))
		g.steps = append(g.steps, steps...)
		if err != nil || len(opts.Pending) == 0 || len(steps) == 0 || len(g.waiting) == 0 {
			return g.steps, err
		}
	}
}

// giveBack is GiveBack's state across rounds.
type giveBack struct {
	s          *search
	cost       func(row int) float64
	opts       GiveBackOptions
	candidates int
	steps      []Step
	waiting    []int // the pending tasks not placed, indices into opts.Pending
}

// round makes up to moves moves, each the best single one; with pending
// tasks it keeps them up to the first after which the waiting tasks take
// the most, and places those.
func (g *giveBack) round(moves int) ([]Step, error) {
	s, c := g.s, g.s.c
	costs := make([]float64, c.Table.Len())
	for row := range costs {
		costs[row] = g.cost(row)
	}
	rows := make([]int, len(costs))
	pending := make([]*scoring.Task, len(g.waiting))
	for n, i := range g.waiting {
		pending[n] = g.opts.Pending[i]
	}
	var steps []Step
	var most int64
	keep, useless := 0, 0 // the steps up to the first of the most; moves since
	for len(steps) < moves && (g.opts.Patience == 0 || len(pending) == 0 || useless < g.opts.Patience) {
		for row := range rows {
			rows[row] = row
		}
		slices.SortStableFunc(rows, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
		best, found, err := g.bestMove(rows[:min(g.candidates, len(rows))], costs)
		if err != nil || !found {
			if err != nil {
				return steps, err
			}
			break
		}
		// The same move again, now kept. The step is the move as made:
		// a pipeline that scores at random may put the pod elsewhere
		// this time.
		if ok, err := s.move(best.Pod); err != nil || !ok {
			return steps, cmp.Or(err, fmt.Errorf("defrag: pod %d no longer moves", best.Pod))
		}
		c.Pods[best.Pod].Row, c.Pods[best.Pod].Holds = s.row[best.Pod], s.holds[best.Pod]
		best.To, best.Holds = s.row[best.Pod], slices.Clone(s.holds[best.Pod])
		from, to := g.cost(best.From), g.cost(best.To)
		best.Gain = costs[best.From] + costs[best.To] - from - to
		costs[best.From], costs[best.To] = from, to
		if len(pending) > 0 {
			bound, in, err := s.placeEach(pending, false)
			if err = errors.Join(err, s.unbindAll(bound)); err != nil {
				return steps, err
			}
			var takes int64
			for _, n := range in {
				takes += pending[n].Devices.Total()
			}
			best.Takes = takes
			if useless++; takes > most {
				useless, most, keep = 0, takes, len(steps)+1
			}
		}
		steps = append(steps, best)
	}
	if len(pending) == 0 {
		return steps, nil
	}
	// Take back the moves after the first that lets the waiting tasks
	// take the most, then place them.
	for len(steps) > keep {
		m := steps[len(steps)-1]
		if err := s.undoLast(); err != nil {
			return steps, err
		}
		c.Pods[m.Pod].Row, c.Pods[m.Pod].Holds = s.row[m.Pod], s.holds[m.Pod]
		steps = steps[:len(steps)-1]
	}
	if keep == 0 {
		return steps, nil
	}
	// The tasks placed are the cluster's pods from now on, for the search
	// too.
	bound, in, err := s.placeEach(pending, false)
	if err != nil {
		return steps, errors.Join(err, s.unbindAll(bound))
	}
	placed := make([]bool, len(pending))
	for k, n := range in {
		placed[n] = true
		steps[keep-1].Placed = append(steps[keep-1].Placed, g.waiting[n])
		s.addPlaced(bound[k], g.opts.Movable, g.opts.Group)
	}
	still := g.waiting[:0]
	for n, i := range g.waiting {
		if !placed[n] {
			still = append(still, i)
		}
	}
	g.waiting = still
	return steps, nil
}

// bestMove tries every movable pod on the rows (each where the pipeline
// puts it, then back) and returns the move that most lowers the cost.
func (g *giveBack) bestMove(rows []int, costs []float64) (Step, bool, error) {
	s := g.s
	best, found := Step{}, false
	for _, row := range rows {
		for _, i := range slices.Clone(s.onRow[row]) {
			if !s.mayMove(i) {
				continue
			}
			ok, err := s.move(i)
			if err != nil || !ok {
				if err != nil {
					return best, false, err
				}
				continue
			}
			m := s.path[len(s.path)-1]
			gain := costs[m.From] + costs[m.To] - g.cost(m.From) - g.cost(m.To)
			if gain > best.Gain {
				best, found = Step{Move: Move{Pod: m.Pod, From: m.From, To: m.To, Holds: slices.Clone(m.Holds)}, Gain: gain}, true
			}
			if err := s.undoLast(); err != nil {
				return best, false, err
			}
		}
	}
	return best, found, nil
}
