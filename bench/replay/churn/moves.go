package churn

import (
	"fmt"
	"math"
	"time"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
	"github.com/resfit/resfit/scoring/frag"
)

// Moves are the moves a replay with departures makes as it goes, in
// rounds every Every seconds of simulated time, through resfit's planners
// (scoring/defrag) as the arrival-only pass calls them:
//
//   - MakeRoom: the waiting GPU pods that have waited longest, the first
//     of each shape (RoundHeads of them), each with the fewest moves (at
//     most K) after which it fits (defrag.MakeRoom), then placed there;
//   - GiveBack: defrag.GiveBack over the FGD measure of the replay's
//     typical classes, the waiting GPU pods (the first of each shape,
//     longest waiting first, RoundHeads of them) as its pending tasks,
//     each move to where the policy puts the pod;
//   - FragMultiPod: the FGD paper's simulator's descheduler
//     (sim.DescheduleFragMultiPod), its evictions counted as moves;
//   - Drain (with a Reservation or Starvation): the nodes held give up,
//     round by round, the pods that keep their target out.
//
// A round makes at most what its allowance holds: PerHour × the pods
// running, an hour, accrued over the time since the last round and kept
// up to an hour's worth. A moved pod keeps its remaining lifetime.
type Moves struct {
	Method  sim.DefragMethod
	Every   float64
	K       int
	PerHour float64
}

// Drain is the moves that drain the nodes a reservation locks or
// starvation control holds: the pods that keep the target out move, the
// largest first, each where the policy puts it among the other nodes.
const Drain sim.DefragMethod = "drain"

// RoundHeads bounds what a round plans for: the RoundHeads waiting heads
// that have waited longest, at most (under overload some hundred shapes
// wait, and a search for each every round would take minutes of a
// replay's time).
const RoundHeads = 8

// moving reports whether rounds make moves.
func (m Moves) moving() bool {
	return m.Method == sim.MakeRoom || m.Method == sim.GiveBack || m.Method == sim.FragMultiPod || m.Method == Drain
}

// name is the moves as the tables name them: "make-room k=2 1%/h every
// 10m" (the method alone for none).
func (m Moves) name() string {
	if !m.moving() {
		return string(sim.NoMoves)
	}
	name := string(m.Method)
	if m.Method == sim.MakeRoom {
		name += fmt.Sprintf(" k=%d", m.K)
	}
	return name + fmt.Sprintf(" %g%%/h every %gm", 100*m.PerHour, m.Every/60)
}

// Check reports moves that cannot run.
func (m Moves) Check() error {
	switch m.Method {
	case sim.NoMoves, "":
		return nil
	case sim.MakeRoom, sim.GiveBack, sim.FragMultiPod, Drain:
	default:
		return fmt.Errorf("churn moves: method %q is not one of %q, %q, %q, %q, %q", m.Method, sim.NoMoves, sim.MakeRoom, sim.GiveBack, sim.FragMultiPod, Drain)
	}
	switch {
	case !(m.Every > 0) || math.IsInf(m.Every, 0):
		return fmt.Errorf("churn moves: rounds must be a duration above 0 apart, got %v s", m.Every)
	case m.Method == sim.MakeRoom && m.K < 1:
		return fmt.Errorf("churn moves: k must be ≥ 1, got %d", m.K)
	case !(m.PerHour > 0 && m.PerHour <= 1):
		return fmt.Errorf("churn moves: the moves an hour must be a share of the running pods in (0, 1], got %v", m.PerHour)
	}
	return nil
}

// Round is the round of moves the replay's moves make (make-room or
// give-back) within a budget, as defrag.PlanRound makes it: the rule, with
// the settings, a descheduler running every Every with the same budget
// follows.
func (m Moves) Round(budget int, cost func(row int) float64) defrag.Round {
	mode := defrag.RoundMakeRoom
	if m.Method == sim.GiveBack {
		mode = defrag.RoundGiveBack
	}
	round := defrag.NewRound(mode, budget, m.K, RoundHeads)
	round.Movable = true
	if mode == defrag.RoundGiveBack {
		round.Cost = cost
	}
	return round
}

// MoveStats are what the moves did in the window: pods moved, and the
// waiting pods the rounds placed (their count and GPUs, in milli-GPU).
type MoveStats struct {
	Moves, Placed  int
	PlacedMilliGPU int64
}

// Columns are moves_made, moved_in_pods and moved_in_milli_gpu.
func (x MoveStats) Columns() []Column {
	return []Column{{"moves_made", count(x.Moves)}, {"moved_in_pods", count(x.Placed)}, {"moved_in_milli_gpu", count(x.PlacedMilliGPU)}}
}

// Moved is what the moves did.
func (res *Result) Moved() MoveStats { return reportOf[MoveStats](res) }

// drainer drains the nodes it holds for its targets within a budget of
// moves, and says how many it made: the reservation and starvation
// control, for Drain.
type drainer interface {
	drain(budget int) (int, error)
}

// moving makes the rounds of moves.
type moving struct {
	periodic
	r         *replay
	opts      Moves
	allowance defrag.Allowance
	// measure is give-back's cost and fragMultiPod's; holder drains for
	// Drain.
	measure *frag.Measure
	holder  drainer
	stats   MoveStats
}

func newMoving(r *replay, opts Moves, m *frag.Measure, holder drainer) *moving {
	x := &moving{r: r, opts: opts, measure: m, holder: holder, periodic: roundsEvery(0)}
	if opts.moving() {
		x.periodic = roundsEvery(opts.Every)
	}
	return x
}

// round makes one round of moves at the current time, within the
// allowance, while GPU pods wait.
func (m *moving) round() error {
	m.next()
	r := m.r
	m.allowance.PerHour = m.opts.PerHour
	budget := m.allowance.Accrue(r.running, time.Duration(m.opts.Every*float64(time.Second)))
	if budget < 1 || r.gpuWait == 0 {
		return nil
	}
	heads := r.waitingHeads()
	if len(heads) == 0 {
		return nil
	}
	starts, milli := r.starts, r.startedMilli
	var moved int
	var err error
	switch m.opts.Method {
	case sim.FragMultiPod:
		moved, err = m.fragMultiPod(budget)
	case Drain:
		moved, err = m.holder.drain(budget)
	default:
		moved, err = m.plan(heads, budget)
	}
	if err != nil {
		return fmt.Errorf("%s at %.0f s: %w", m.opts.name(), r.now, err)
	}
	m.allowance.Spend(moved)
	if r.measuring() {
		m.stats.Moves += moved
		m.stats.Placed += r.starts - starts
		m.stats.PlacedMilliGPU += r.startedMilli - milli
	}
	return nil
}

func (m *moving) report() Report { return m.stats }

// plan makes a round of make-room or give-back moves for the waiting
// heads (defrag.PlanRound, on the replay's own table and device view),
// takes its moves into the replay's pods (each keeps its departure),
// starts the heads it placed, and tries the waiting pods on the rows the
// moves left.
func (m *moving) plan(heads []int, budget int) (int, error) {
	r := m.r
	dc, index := r.planningCluster()
	pending := make([]*scoring.Task, len(heads))
	for n, k := range heads {
		pending[n] = new(scoring.Task)
		r.pods[k].pod.Task(pending[n])
		if err := r.fire(event{kind: podPlacing, pod: k, row: -1, task: pending[n]}); err != nil {
			return 0, err
		}
	}
	c := r.c
	plan, err := defrag.PlanRound(dc, pending, m.opts.Round(budget, func(row int) float64 {
		return c.NodeFragmentation(m.measure, row)
	}))
	if err != nil {
		return 0, err
	}
	start := func(placed []defrag.RoundPlaced) error {
		for _, p := range placed {
			if err := r.startPlaced(heads[p.Task], p.Row, p.Holds); err != nil {
				return err
			}
			index = append(index, heads[p.Task])
		}
		return nil
	}
	if err := start(plan.Fit); err != nil {
		return 0, err
	}
	var left []int
	for _, step := range plan.Steps {
		mv := step.Move
		if err := r.moveTo(index[mv.Pod], mv.To, mv.Holds); err != nil {
			return 0, err
		}
		left = append(left, mv.From)
		if err := start(step.LetsIn); err != nil {
			return 0, err
		}
	}
	return len(plan.Steps), r.retryRows(left)
}

// fragMultiPod is the FGD paper's simulator's descheduler within the
// budget (sim.DescheduleFragMultiPod): then the evicted pods are placed
// again in eviction order, each where the policy puts it, with what it
// had left of its lifetime (one that fits nowhere waits for room, at the
// back of its shape's queue); then the waiting pods are tried on the
// nodes the evictions left.
func (m *moving) fragMultiPod(budget int) (int, error) {
	r := m.r
	c := r.c
	onRow := make([][]int, c.Table.Len())
	frags := make([]float64, c.Table.Len())
	for row := range frags {
		frags[row] = c.NodeFragmentation(m.measure, row)
	}
	for k := range r.pods {
		if row := r.pods[k].row; row >= 0 {
			onRow[row] = append(onRow[row], k)
		}
	}
	evicted, left, err := sim.DescheduleFragMultiPod(frags, onRow, budget, func(k, row int) (float64, error) {
		cp := &r.pods[k]
		if err := c.Remove(row, cp.pod, cp.holds); err != nil {
			return 0, err
		}
		f := c.NodeFragmentation(m.measure, row)
		return f, c.Restore(row, cp.pod, cp.holds)
	}, func(k, _ int) error { return r.evict(k) })
	if err != nil {
		return 0, err
	}
	for _, k := range evicted {
		row, err := r.bestMove(k)
		if err != nil {
			return 0, err
		}
		if row < 0 {
			if err := r.wait(k); err != nil {
				return 0, err
			}
			continue
		}
		if err := r.start(k, row, r.now); err != nil {
			return 0, err
		}
	}
	return len(evicted), r.retryRows(left)
}
