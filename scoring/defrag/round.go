package defrag

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/resfit/resfit/scoring"
)

// RoundMode is how a round of moves (Round) chooses its moves.
type RoundMode string

// The modes of a round.
const (
	// RoundMakeRoom gives each pending task, in order, the fewest moves
	// after which it fits (MakeRoom), within the moves left.
	RoundMakeRoom RoundMode = "make-room"
	// RoundGiveBack makes the moves that most lower a cost summed over the
	// nodes, keeping those that let pending tasks in (GiveBack).
	RoundGiveBack RoundMode = "give-back"
)

// Round is one round of moves for pending tasks, the rule a descheduler
// follows each time it runs and the churn replay (bench/replay) every few
// minutes of simulated time, so that the two make the same moves on the
// same cluster:
//
//   - RoundMakeRoom: for each of the first Tasks pending tasks, in the
//     order given, the fewest moves after which it fits, at most PerTask
//     and at most the moves the round has left (MakeRoom; a search its
//     cap stopped gives the plan without chains it found, which may have
//     more moves than one with chains it did not reach); when there is
//     such a plan its moves are made and the task placed where the
//     pipeline then puts it; a task without one is passed over. Tasks of
//     one job (Task.Job, a pod group) are a gang: at its first task's
//     turn, the fewest moves after which all of them fit, placed in
//     order (MakeRoomGang), or none is placed; PerTask bounds the
//     gang's plan, and a gang cut by Tasks is passed over. The round ends
//     when its moves are spent.
//   - RoundGiveBack: GiveBack within Moves, with the cost, and the first
//     Tasks pending tasks (which must not fit now) as its pending tasks,
//     but for a gang's: GiveBack places pending tasks one by one, and a
//     gang placed in part holds room none of it can use.
//
// Budgets are the disruptions each group allows over the whole round.
type Round struct {
	Mode RoundMode
	// Moves is the most moves the round makes.
	Moves int
	// PerTask is the most moves for one task (make-room); 0 means
	// DefaultMaxMoves.
	PerTask int
	// Tasks is how many pending tasks the round plans for, the first ones;
	// 0 means all.
	Tasks int
	// Cost is give-back's cost of a node (GiveBack); make-room reads none.
	Cost    func(row int) float64
	Budgets map[string]int
	// MaxStates caps each search (Options.MaxStates); 0 none. ExactStates
	// is Options.ExactStates; 0 means DefaultExactStates, -1 no exhaustive
	// search (a plan found by moving pods off one node, chained, as
	// Reclaim searches). Timeout stops each search (Options.Timeout).
	MaxStates, ExactStates int
	Timeout                time.Duration
	// Candidates is give-back's (GiveBackOptions.Candidates).
	Candidates int
	// Movable and Group are what a task the round places becomes among
	// the cluster's pods.
	Movable bool
	Group   string
}

// RoundStates caps each search of a round made by NewRound: a cap that
// gives the same plan on any machine, unlike a time limit.
const RoundStates = 100_000

// NewRound is a round with the search a descheduler's run and the churn
// replay's rounds share (so that the replay says what the descheduler
// would do): plans found by moving pods off one node, chained where a
// moved pod needs room (no exhaustive search: on thousands of pods it
// would try every single move first), each search capped at RoundStates.
// Cost, Budgets, Timeout, Movable and Group are left for the caller.
func NewRound(mode RoundMode, moves, perTask, tasks int) Round {
	return Round{Mode: mode, Moves: moves, PerTask: perTask, Tasks: tasks, ExactStates: -1, MaxStates: RoundStates}
}

// Check reports a round that cannot run.
func (r Round) Check() error {
	switch {
	case r.Mode != RoundMakeRoom && r.Mode != RoundGiveBack:
		return fmt.Errorf("defrag: round mode %q is not %q or %q", r.Mode, RoundMakeRoom, RoundGiveBack)
	case r.Moves < 0 || r.PerTask < 0 || r.Tasks < 0 || r.MaxStates < 0 || r.Candidates < 0 || r.ExactStates < -1 || r.Timeout < 0:
		return fmt.Errorf("defrag: a round's Moves %d, PerTask %d, Tasks %d, MaxStates %d, Candidates %d and Timeout %s must be ≥ 0, ExactStates %d ≥ -1",
			r.Moves, r.PerTask, r.Tasks, r.MaxStates, r.Candidates, r.Timeout, r.ExactStates)
	case r.Mode == RoundGiveBack && r.Cost == nil:
		return errors.New("defrag: a give-back round needs a cost")
	}
	return nil
}

// RoundPlan is what a round did, in order: the pending tasks it placed
// before any move (none, when the host placed first the pods that fit),
// then its steps.
type RoundPlan struct {
	Fit   []RoundPlaced
	Steps []RoundStep
}

// RoundStep is a move of a round and what it did: the move (its Pod
// indexes Cluster.Pods as they were when it was made: a task the round
// placed is a pod of the cluster from then on, the pods before the round
// then the tasks placed, in order, which a later move may move); in
// give-back mode how much it lowered the cost summed over the nodes
// (Step.Gain); and the pending tasks placed once it was made, before the
// next move.
type RoundStep struct {
	Move   Move
	Gain   float64
	LetsIn []RoundPlaced
}

// RoundPlaced is a pending task a round placed: its index among the
// pending tasks, its pod's index in Cluster.Pods, where it went and the
// devices it took there.
type RoundPlaced struct {
	Task, Pod, Row int
	Holds          []int
}

// Moves are the plan's moves, in order.
func (p *RoundPlan) Moves() []Move {
	out := make([]Move, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Move
	}
	return out
}

// Placed are the pending tasks the plan placed, in order.
func (p *RoundPlan) Placed() []RoundPlaced {
	out := slices.Clone(p.Fit)
	for _, s := range p.Steps {
		out = append(out, s.LetsIn...)
	}
	return out
}

// placed adds a task placed after the plan's moves so far.
func (p *RoundPlan) placed(t RoundPlaced) {
	if len(p.Steps) == 0 {
		p.Fit = append(p.Fit, t)
		return
	}
	last := &p.Steps[len(p.Steps)-1]
	last.LetsIn = append(last.LetsIn, t)
}

// PlanRound makes a round of moves on the cluster (Round), as Apply makes
// them, and places the pending tasks it lets in as pods of the cluster;
// it returns what it did, in order, for a host to carry out. An error
// leaves the cluster with the moves and placements before it made.
func PlanRound(c *Cluster, pending []*scoring.Task, r Round) (*RoundPlan, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("defrag: nil cluster")
	}
	if slices.Contains(pending, nil) {
		return nil, errors.New("defrag: a nil pending task")
	}
	// A gang cut by Tasks is not planned for: its tasks within are
	// passed over.
	cut := map[string]bool{}
	if r.Tasks > 0 && len(pending) > r.Tasks {
		for _, task := range pending[r.Tasks:] {
			cut[task.Job] = task.Job != ""
		}
		pending = pending[:r.Tasks]
	}
	if r.Mode == RoundGiveBack {
		return giveBackRound(c, pending, cut, r)
	}
	plan := &RoundPlan{}
	budgets := maps.Clone(r.Budgets)
	planned := make([]bool, len(pending))
	for n, task := range pending {
		planned[n] = cut[task.Job]
	}
	for n := range pending {
		left := r.Moves - len(plan.Steps)
		if left < 1 {
			break
		}
		if planned[n] {
			continue
		}
		gang := gangAt(pending, n)
		tasks := make([]*scoring.Task, len(gang))
		for i, m := range gang {
			planned[m], tasks[i] = true, pending[m]
		}
		p, err := MakeRoomGang(c, tasks, Options{MaxMoves: min(cmp.Or(r.PerTask, DefaultMaxMoves), left), Budgets: budgets,
			MaxStates: r.MaxStates, ExactStates: r.ExactStates, Timeout: r.Timeout})
		if err != nil {
			return plan, err
		}
		if !p.Found {
			continue
		}
		if err := Apply(c, p); err != nil {
			return plan, err
		}
		for _, m := range p.Moves {
			c.Pods[m.Pod].spendOn(budgets, 1)
		}
		for _, m := range p.Moves {
			plan.Steps = append(plan.Steps, RoundStep{Move: m})
		}
		for i, m := range gang {
			if err := place(c, pending[m], p.Rows[i], r.Movable, r.Group); err != nil {
				return plan, err
			}
			last := len(c.Pods) - 1
			plan.placed(RoundPlaced{Task: m, Pod: last, Row: p.Rows[i], Holds: c.Pods[last].Holds})
		}
	}
	return plan, nil
}

// gangAt is the gang of pending task n, as indices into pending: the tasks
// of its job from n on, or n alone when it has no job.
func gangAt(pending []*scoring.Task, n int) []int {
	gang := []int{n}
	if job := pending[n].Job; job != "" {
		for m := n + 1; m < len(pending); m++ {
			if pending[m].Job == job {
				gang = append(gang, m)
			}
		}
	}
	return gang
}

// giveBackRound is a give-back round.
func giveBackRound(c *Cluster, pending []*scoring.Task, cut map[string]bool, r Round) (*RoundPlan, error) {
	before := len(c.Pods)
	jobs := map[string]int{}
	for _, task := range pending {
		jobs[task.Job]++
	}
	var alone []int // the pending tasks GiveBack may place: a gang's are not
	for n, task := range pending {
		if task.Job == "" || jobs[task.Job] == 1 && !cut[task.Job] {
			alone = append(alone, n)
		}
	}
	tasks := make([]*scoring.Task, len(alone))
	for i, n := range alone {
		tasks[i] = pending[n]
	}
	steps, err := GiveBack(c, r.Cost, GiveBackOptions{Moves: r.Moves, Budgets: r.Budgets, Candidates: r.Candidates,
		Pending: tasks, Movable: r.Movable, Group: r.Group})
	plan := &RoundPlan{}
	next := before
	for _, s := range steps {
		plan.Steps = append(plan.Steps, RoundStep{Move: s.Move, Gain: s.Gain})
		for _, i := range s.Placed {
			p := c.Pods[next]
			plan.placed(RoundPlaced{Task: alone[i], Pod: next, Row: p.Row, Holds: p.Holds})
			next++
		}
	}
	return plan, err
}

// Allowance is a budget of moves that accrues with time, as a
// descheduler running on a schedule spends it: PerHour × the pods running
// an hour, accrued over the time since it was last accrued and kept up to
// an hour's worth. It is stateful and not safe for concurrent use.
type Allowance struct {
	// PerHour is the moves an hour, as a share of the running pods, in
	// [0, 1].
	PerHour float64
	held    float64
}

// Check reports an allowance that cannot accrue.
func (a *Allowance) Check() error {
	if !(a.PerHour >= 0 && a.PerHour <= 1) {
		return fmt.Errorf("defrag: the moves an hour must be a share of the running pods in [0, 1], got %v", a.PerHour)
	}
	return nil
}

// Accrue adds what elapsed earns with running pods (nothing when elapsed
// is negative), and returns the whole moves the allowance holds.
func (a *Allowance) Accrue(running int, elapsed time.Duration) int {
	hour := a.PerHour * float64(running)
	a.held = min(a.held+hour*max(elapsed, 0).Seconds()/3600, hour)
	if !(a.held >= 0) || math.IsInf(a.held, 0) { // PerHour out of range
		a.held = 0
	}
	return int(a.held)
}

// Spend takes moves made out of the allowance.
func (a *Allowance) Spend(moves int) { a.held -= float64(moves) }
