package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/resfit/resfit/scoring"
)

// ReclaimOptions bound Reclaim.
type ReclaimOptions struct {
	// Moves is the most moves in all.
	Moves int
	// MaxMoves is the most moves for one task; 0 means DefaultMaxMoves.
	MaxMoves int
	// Budgets are the disruptions each group allows, as in Options; the
	// moves of every plan count against them.
	Budgets map[string]int
	// MaxStates caps each plan's search (Options.MaxStates); 0 none.
	MaxStates int
	// Movable and Group are what a task Reclaim places becomes among the
	// cluster's pods.
	Movable bool
	Group   string
}

// Reclaimed is a pending task Reclaim placed: its index among the pending
// tasks, the plan that made room for it (Plan.Row is where it went), and
// its devices' total, the gain.
type Reclaimed struct {
	Task int
	Plan Plan
	Gain int64
}

// Reclaim spends up to opts.Moves moves on the pending tasks, the most
// device amount per move first: at each step, for every pending task (one
// search per task shape), the fewest moves after which it fits
// (MakeRoom, without the exhaustive search); of those within the moves
// left, it takes the plan of the most devices per move (a task that fits
// with none first, then the earlier task), makes its moves (Apply) and
// places the task where the pipeline puts it, on the devices the
// scheduler gives it, as a pod of the cluster. It stops when no pending
// task has a plan within the moves left. The placed tasks are returned in
// order, each with its plan.
//
// The gain is the device amount a task asks for (Task.Devices.Total),
// what a GPU cluster wants back; a task without devices gains nothing but
// is placed all the same when it fits with no move.
func Reclaim(c *Cluster, pending []*scoring.Task, opts ReclaimOptions) ([]Reclaimed, error) {
	if slices.Contains(pending, nil) {
		return nil, errors.New("defrag: a nil pending task")
	}
	if opts.Moves < 0 || opts.MaxMoves < 0 || opts.MaxStates < 0 {
		return nil, fmt.Errorf("defrag: Moves %d, MaxMoves %d and MaxStates %d must be ≥ 0", opts.Moves, opts.MaxMoves, opts.MaxStates)
	}
	perTask := cmp.Or(opts.MaxMoves, DefaultMaxMoves)
	budgets := maps.Clone(opts.Budgets)
	left := opts.Moves
	placed := make([]bool, len(pending))
	keys := make([]string, len(pending))
	namer := &search{keys: map[string]string{}}
	for i, t := range pending {
		keys[i] = namer.shapeKey(t)
	}
	var out []Reclaimed
	for {
		type choice struct {
			task int
			plan Plan
		}
		var best *choice
		plans := map[string]*Plan{} // this step's plan per shape, nil when none
		for i, t := range pending {
			if placed[i] {
				continue
			}
			plan, seen := plans[keys[i]]
			if !seen {
				p, err := MakeRoom(c, t, Options{MaxMoves: max(1, min(perTask, left)), Budgets: budgets, ExactStates: -1, MaxStates: opts.MaxStates})
				if err != nil {
					return out, err
				}
				if p.Found && len(p.Moves) <= left {
					plan = &p
				}
				plans[keys[i]] = plan
			}
			if plan == nil {
				continue
			}
			if best == nil || better(t, plan, pending[best.task], &best.plan) {
				best = &choice{i, *plan}
			}
			if len(plan.Moves) == 0 {
				break // none does better than no move
			}
		}
		if best == nil {
			return out, nil
		}
		if err := Apply(c, best.plan); err != nil {
			return out, err
		}
		for _, m := range best.plan.Moves {
			c.Pods[m.Pod].spendOn(budgets, 1)
		}
		left -= len(best.plan.Moves)
		task := pending[best.task]
		if err := place(c, task, best.plan.Row, opts.Movable, opts.Group); err != nil {
			return out, err
		}
		placed[best.task] = true
		out = append(out, Reclaimed{Task: best.task, Plan: best.plan, Gain: task.Devices.Total()})
	}
}

// better reports whether plan a for task ta gains more per move than plan
// b for tb (no move at all beats any).
func better(ta *scoring.Task, a *Plan, tb *scoring.Task, b *Plan) bool {
	na, nb := len(a.Moves), len(b.Moves)
	if na == 0 || nb == 0 {
		return na == 0 && nb > 0
	}
	// ga/na > gb/nb, in whole numbers.
	return ta.Devices.Total()*int64(nb) > tb.Devices.Total()*int64(na)
}

// place binds task to row as the scheduler would (its requests, and its
// devices as Cluster.Device or the tightest give them) and adds it to the
// cluster's pods.
func place(c *Cluster, task *scoring.Task, row int, movable bool, group string) error {
	s, err := newSearch(c)
	if err != nil {
		return err
	}
	b, err := s.bind(task, row, nil)
	if err != nil {
		return err
	}
	s.addPlaced(b, movable, group)
	return nil
}
