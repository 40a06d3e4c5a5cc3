package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
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
}

// DefaultCandidates is GiveBackOptions.Candidates unless told otherwise.
const DefaultCandidates = 16

// Step is one move GiveBack made and what it lowered the total cost by.
type Step struct {
	Move
	Gain float64
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
// It is greedy: a step takes the best single move and never looks ahead.
func GiveBack(c *Cluster, cost func(row int) float64, opts GiveBackOptions) ([]Step, error) {
	if cost == nil {
		return nil, errors.New("defrag: nil cost")
	}
	if opts.Moves < 0 || opts.Candidates < 0 {
		return nil, fmt.Errorf("defrag: Moves %d and Candidates %d must be ≥ 0", opts.Moves, opts.Candidates)
	}
	s, err := newSearch(c)
	if err != nil {
		return nil, err
	}
	s.budgets = maps.Clone(opts.Budgets)
	candidates := cmp.Or(opts.Candidates, DefaultCandidates)
	costs := make([]float64, c.Table.Len())
	for row := range costs {
		costs[row] = cost(row)
	}
	rows := make([]int, len(costs))
	var steps []Step
	for len(steps) < opts.Moves {
		for row := range rows {
			rows[row] = row
		}
		slices.SortStableFunc(rows, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
		best := Step{Gain: 0}
		found := false
		for _, row := range rows[:min(candidates, len(rows))] {
			for _, i := range slices.Clone(s.onRow[row]) {
				if !s.may(i) {
					continue
				}
				ok, err := s.move(i)
				if err != nil {
					return steps, err
				}
				if !ok {
					continue
				}
				m := s.path[len(s.path)-1]
				gain := costs[m.From] + costs[m.To] - cost(m.From) - cost(m.To)
				if gain > best.Gain {
					best, found = Step{Move: Move{Pod: m.Pod, From: m.From, To: m.To, Holds: slices.Clone(m.Holds)}, Gain: gain}, true
				}
				if err := s.back(); err != nil {
					return steps, err
				}
			}
		}
		if !found {
			break
		}
		// The same move again (the pipeline puts the pod where it did),
		// now kept.
		if ok, err := s.move(best.Pod); err != nil || !ok {
			return steps, cmp.Or(err, fmt.Errorf("defrag: pod %d no longer moves", best.Pod))
		}
		c.Pods[best.Pod].Row, c.Pods[best.Pod].Holds = s.row[best.Pod], s.holds[best.Pod]
		costs[best.From], costs[best.To] = cost(best.From), cost(best.To)
		steps = append(steps, best)
	}
	return steps, nil
}
