// Package defrag plans pod moves that win back a fragmented cluster: the
// fewest moves after which a pending task or gang fits (MakeRoom,
// MakeRoomGang); a budget of moves spent on pending tasks, the most
// devices per move first (Reclaim), with a bound on what any plan within
// the budget could win (BoundReclaim); the moves that most lower a cost
// summed over the nodes, such as the GPU the workload cannot use
// (GiveBack); and a bound on what no plan can win back, the device amount
// that shares leave unused on the devices they share (BoundShareWaste).
//
// A move takes a placed pod off its node and puts it where the pipeline
// the scheduler runs would put it then: its best feasible node other than
// the one it leaves (ties to the lower row, as Batch.Top orders), on the
// devices the scheduler would give it (Cluster.Device). The plan is
// therefore what the scheduler would do, move after move. A pod moves at
// most once in a plan; a pod that is not movable, or whose group's
// disruption budget is spent, does not move.
package defrag

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Cluster is what a plan is made on: the scheduler's pipeline, the table
// and device view it scores, and the pods placed on them.
type Cluster struct {
	Pipeline *scoring.Pipeline
	Table    *resource.Table
	// Devices is the device view the pipeline reads (its DeviceShare
	// filter, FGD), with the table's rows; nil when it reads none. A
	// pipeline with the DeviceShare filter needs it.
	Devices *resource.Devices
	Pods    []Pod
	// Device is the device a task sharing one (one device, less than a
	// whole one) takes on a row, as the scheduler chooses it (FGD's
	// frag.Scorer.Device, say); nil takes the tightest
	// (resource.Devices.Tightest). Whole devices are taken tightest first
	// (resource.Devices.AllocateInto).
	Device func(task *scoring.Task, row int) int
	// Placer, when not nil, is a placer over Pipeline and Table, without
	// PlacerOptions.Rank, which the planner asks where pods go (it keeps
	// what it scored across plans); nil, each plan makes its own.
	Placer *scoring.Placer
}

// Pod is a placed pod: its task, its node's row, the devices it holds
// there, whether it may move, its disruption group ("" none;
// Options.Budgets) and the limits its moves count against.
type Pod struct {
	Task *scoring.Task
	Row  int
	// Holds are the devices of Cluster.Devices the pod holds on its row,
	// Task.Devices.Each of each: Task.Devices.Count distinct devices, or
	// none without a device view.
	Holds   []int
	Movable bool
	Group   string
	// Limits are further groups a move of the pod counts against, each
	// with its budget in Options.Budgets like Group's: a descheduler's
	// limits of moves per node, namespace or workload ("node/gpu-a",
	// "namespace/train"). A pod moves only when every one of its groups
	// has moves left.
	Limits []string
}

// spendOn takes n moves of the pod out of the budgets of its groups that
// have one (a negative n gives them back).
func (p *Pod) spendOn(budgets map[string]int, n int) {
	if left, limited := budgets[p.Group]; limited {
		budgets[p.Group] = left - n
	}
	for _, g := range p.Limits {
		if left, limited := budgets[g]; limited {
			budgets[g] = left - n
		}
	}
}

// allowedBy reports whether each of the pod's groups that has a budget
// has a move left.
func (p *Pod) allowedBy(budgets map[string]int) bool {
	if left, limited := budgets[p.Group]; limited && left <= 0 {
		return false
	}
	for _, g := range p.Limits {
		if left, limited := budgets[g]; limited && left <= 0 {
			return false
		}
	}
	return true
}

// inGroup reports whether g is one of the pod's groups.
func (p *Pod) inGroup(g string) bool { return p.Group == g || slices.Contains(p.Limits, g) }

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
	// MaxStates stops the search after examining this many states (a cap
	// that, unlike Timeout, gives the same answer on any machine); 0 means
	// none.
	MaxStates int
	// ExactStates bounds the exhaustive search: at k moves it runs when
	// the movable pods, raised to the power k, are at most this many
	// sequences. Beyond it a plan is searched among those that move pods
	// off one node, making room the same way for a pod that has nowhere
	// else to go, and is minimal only when it meets the lower bound. 0
	// means DefaultExactStates; -1 never searches exhaustively.
	ExactStates int
}

// DefaultMaxMoves is MakeRoom's cap on moves unless told otherwise.
const DefaultMaxMoves = 2

// DefaultExactStates is Options.ExactStates unless told otherwise.
const DefaultExactStates = 1 << 16

// Move is one pod's move: its index in Cluster.Pods, the rows it leaves
// and goes to, and the devices it takes there.
type Move struct {
	Pod, From, To int
	Holds         []int
}

// Plan is MakeRoom's answer.
type Plan struct {
	// Moves, applied in order (Apply), make room: after them the task
	// fits, and the pipeline puts it on Row (a gang's tasks, placed in
	// order, on Rows; Row is the first's). Found reports whether a plan
	// was found within the caps.
	Moves []Move
	Row   int
	Rows  []int
	Found bool
	// Minimal reports that no plan with fewer moves exists (each pod
	// moving at most once, to where the pipeline puts it). Bound is the
	// fewest moves a plan may have, as far as the search proved it: with
	// Minimal, len(Moves); without a plan, more than MaxMoves when the
	// search proved that no plan within the cap exists.
	Minimal bool
	Bound   int
	// States counts the move sequences the search examined; Stopped
	// reports that a cap (Options.Timeout, Options.MaxStates) ended it.
	States  int
	Stopped bool
}

// MakeRoom finds the fewest moves of pods after which task fits on some
// node: MakeRoomGang with a gang of one.
func MakeRoom(c *Cluster, task *scoring.Task, opts Options) (Plan, error) {
	if task == nil {
		return Plan{}, errors.New("defrag: nil task")
	}
	return MakeRoomGang(c, []*scoring.Task{task}, opts)
}

// MakeRoomGang finds the fewest moves of pods after which a gang's tasks
// all fit, placed one after another in order as the scheduler would place
// them (each on its best feasible node, taking its devices there).
//
// It tries plans that move pods off one node for the first task that does
// not fit, the nodes that need the fewest first; a pod that has nowhere
// else to go gets room made for it the same way, with the moves left (a
// chain). Plans without chains come first, at each number of moves k
// from a lower bound up (the fewest pods some node must lose for a task's
// requests and devices to fit it) to the cap: a chain multiplies the
// states searched, and on a cluster of thousands of pods a search of
// every chain of 3 moves can spend the state cap that a plan of 7 pods
// off one node needed a few dozen of. Then, below the first such plan's
// moves, at each k from the bound up, plans that chain 1, 2, … moves,
// and, when affordable (Options.ExactStates), every sequence of k moves.
// The plan returned is the first found with the fewest moves; it is
// minimal when every smaller k was ruled out. A search stopped by a cap
// returns a plan without chains when it found one (Stopped set).
//
// MakeRoomGang changes c.Table and c.Devices while it searches and leaves
// them as they were; nothing else may use them meanwhile.
func MakeRoomGang(c *Cluster, gang []*scoring.Task, opts Options) (Plan, error) {
	if len(gang) == 0 || slices.Contains(gang, nil) {
		return Plan{}, errors.New("defrag: an empty gang or a nil task")
	}
	if opts.MaxMoves < 0 || opts.MaxStates < 0 {
		return Plan{}, fmt.Errorf("defrag: MaxMoves %d and MaxStates %d must be ≥ 0", opts.MaxMoves, opts.MaxStates)
	}
	if opts.MaxMoves == 0 {
		opts.MaxMoves = DefaultMaxMoves
	}
	if opts.ExactStates < -1 {
		return Plan{}, fmt.Errorf("defrag: ExactStates %d is below -1", opts.ExactStates)
	}
	if opts.ExactStates == 0 {
		opts.ExactStates = DefaultExactStates
	}
	s, err := newSearch(c)
	if err != nil {
		return Plan{}, err
	}
	s.gang = gang
	s.budgets = maps.Clone(opts.Budgets)
	s.maxStates = opts.MaxStates
	if opts.Timeout > 0 {
		s.deadline = time.Now().Add(opts.Timeout)
	}
	movable := 0
	for _, p := range c.Pods {
		if p.Movable {
			movable++
		}
	}
	s.limit = 0
	found, err := s.settle()
	if err != nil {
		return Plan{}, err
	}
	if found {
		return s.plan(true, 0), nil
	}
	proved := max(1, s.lowerBound())
	// Plans that chain no moves first, at every k up to the cap: they
	// cost a fraction of the states, and chains searched at a small k
	// must not spend the cap before a plan without them at a larger k is
	// seen. Such a plan is kept while shorter ones with chains are sought.
	var kept Plan
	for k := proved; k <= opts.MaxMoves && !s.stopped; k++ {
		s.limit, s.chains = k, 0
		found, err := s.gangFrom(0)
		if err != nil {
			return Plan{}, err
		}
		if found {
			kept = s.plan(false, proved)
			break
		}
	}
	for k := proved; k <= opts.MaxMoves; k++ {
		if kept.Found && k == len(kept.Moves) {
			kept.Minimal, kept.Bound, kept.States = proved == k, proved, s.states
			return kept, nil
		}
		s.limit = k
		var found bool
		for s.chains = 1; s.chains < k && err == nil && !found && !s.stopped; s.chains++ {
			found, err = s.gangFrom(0)
		}
		if err == nil && !found && !s.stopped && exhaustible(movable, k, opts.ExactStates) {
			if found, err = s.tryEveryPod(k); err == nil && !found && !s.stopped && proved == k {
				proved = k + 1
			}
		}
		switch {
		case err != nil:
			return Plan{}, err
		case found:
			return s.plan(proved == len(s.best), proved), nil
		case s.stopped && kept.Found:
			kept.Bound, kept.States, kept.Stopped = proved, s.states, true
			return kept, nil
		case s.stopped:
			return Plan{Row: -1, Bound: proved, States: s.states, Stopped: true}, nil
		}
	}
	return Plan{Row: -1, Bound: proved, States: s.states}, nil
}

// plan is the plan the search recorded.
func (s *search) plan(minimal bool, bound int) Plan {
	if minimal {
		bound = len(s.best)
	}
	return Plan{Moves: s.best, Row: s.rows[0], Rows: s.rows, Found: true, Minimal: minimal, Bound: bound, States: s.states}
}

// exhaustible reports whether movable^k ≤ limit.
func exhaustible(movable, k, limit int) bool {
	n := 1
	for range k {
		if n *= movable; n > limit {
			return false
		}
	}
	return true
}

// Apply makes a plan's moves on the cluster: its table, device view and
// pods (their rows and holdings). A move that no longer fits is an error,
// with the moves before it made.
func Apply(c *Cluster, plan Plan) error {
	s, err := newSearch(c)
	if err != nil {
		return err
	}
	for _, m := range plan.Moves {
		if m.Pod < 0 || m.Pod >= len(c.Pods) || c.Pods[m.Pod].Row != m.From || m.To < 0 || m.To >= c.Table.Len() {
			return fmt.Errorf("defrag: move %+v is not one of the cluster's pods from its row to a row of the table", m)
		}
		if err := s.takeOff(m.Pod); err != nil {
			return err
		}
		if err := s.putOn(m.Pod, m.To, m.Holds); err != nil {
			return err
		}
		c.Pods[m.Pod].Row, c.Pods[m.Pod].Holds = m.To, s.holds[m.Pod]
	}
	return nil
}
