package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
)

// ChurnMoves are the moves a replay with departures makes as it goes, in
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
//     (fragMultiPodRound), its evictions counted as moves;
//   - Drain (with Reserve): the nodes locked for the reservation's target
//     give up, round by round, the pods that keep it out, each where the
//     policy puts it among the other nodes (drainRound).
//
// A round makes at most what its allowance holds: PerHour × the pods
// running, an hour, accrued over the time since the last round and kept
// up to an hour's worth. A moved pod keeps its remaining lifetime.
//
// Reserve adds, with or without moves, a reservation for the GPU pod that
// has waited longest, made again every Every (see churn.reserve). Starve
// adds starvation control instead (churnstarve.go): every Every, the GPU
// pod that has waited longer than After (seconds), the largest first, is
// held the node it fits first, with backfill; with Drain, the pods in the
// held node's way move when waiting alone will not free it within Patience
// (seconds).
type ChurnMoves struct {
	Method          DefragMethod
	Every           float64
	K               int
	PerHour         float64
	Reserve         bool
	Starve          bool
	After, Patience float64
	// Holds bounds starvation control's holds at once (1, EASY's, when
	// below 1).
	Holds int
}

// Name is the moves as the tables name them: "none", "make-room k=2
// 1%/h every 10m", "make-room k=8 1%/h every 10m, reserve", "none,
// reserve every 10m".
func (m ChurnMoves) Name() string {
	reserve := ""
	if m.Reserve {
		reserve = fmt.Sprintf(", reserve every %gm", m.Every/60)
	}
	if m.Starve {
		reserve = fmt.Sprintf(", starve after %s", hours(m.After))
		if m.Holds > 1 {
			reserve += fmt.Sprintf(", %d holds", m.Holds)
		}
		if m.Method == Drain {
			reserve += fmt.Sprintf(" (patience %s)", hours(m.Patience))
		}
		if m.Method == NoMoves || m.Method == "" {
			reserve += fmt.Sprintf(" every %gm", m.Every/60)
		}
	}
	if m.Method == NoMoves || m.Method == "" {
		return string(NoMoves) + reserve
	}
	name := string(m.Method)
	if m.Method == MakeRoom {
		name += fmt.Sprintf(" k=%d", m.K)
	}
	name += fmt.Sprintf(" %g%%/h every %gm", 100*m.PerHour, m.Every/60)
	if m.Reserve {
		name += ", reserve"
	}
	return name + strings.TrimSuffix(reserve, fmt.Sprintf(", reserve every %gm", m.Every/60))
}

// hours writes seconds as a duration in hours or minutes: "2h", "30m".
func hours(s float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(time.Duration(s*float64(time.Second)).String(), "0s"), "0m")
}

// Check reports moves that cannot run.
func (m ChurnMoves) Check() error {
	switch m.Method {
	case NoMoves, "":
		if (m.Reserve || m.Starve) && (!(m.Every > 0) || math.IsInf(m.Every, 0)) {
			return fmt.Errorf("churn moves: reservations must be made a duration above 0 apart, got %v s", m.Every)
		}
		return m.checkStarve()
	case MakeRoom, GiveBack, FragMultiPod:
	case Drain:
		if !m.Reserve && !m.Starve {
			return fmt.Errorf("churn moves: %q moves pods off the nodes a reservation locks or starvation control holds, and needs one of them (Reserve, Starve)", Drain)
		}
	default:
		return fmt.Errorf("churn moves: method %q is not one of %q, %q, %q, %q, %q", m.Method, NoMoves, MakeRoom, GiveBack, FragMultiPod, Drain)
	}
	switch {
	case !(m.Every > 0) || math.IsInf(m.Every, 0):
		return fmt.Errorf("churn moves: rounds must be a duration above 0 apart, got %v s", m.Every)
	case m.Method == MakeRoom && m.K < 1:
		return fmt.Errorf("churn moves: k must be ≥ 1, got %d", m.K)
	case !(m.PerHour > 0 && m.PerHour <= 1):
		return fmt.Errorf("churn moves: the moves an hour must be a share of the running pods in (0, 1], got %v", m.PerHour)
	}
	return m.checkStarve()
}

// checkStarve reports starvation control's settings that cannot run.
func (m ChurnMoves) checkStarve() error {
	switch {
	case !m.Starve:
		return nil
	case m.Reserve:
		return fmt.Errorf("churn moves: a reservation (Reserve) and starvation control (Starve) both hold nodes; take one")
	case !(m.After >= 0) || math.IsInf(m.After, 0):
		return fmt.Errorf("churn moves: starvation control's waiting line must be a duration ≥ 0, got %v s", m.After)
	case !(m.Patience >= 0) || math.IsInf(m.Patience, 0):
		return fmt.Errorf("churn moves: starvation control's patience must be a duration ≥ 0, got %v s", m.Patience)
	}
	return nil
}

func (m ChurnMoves) active() bool {
	return m.moving() || m.Reserve || m.Starve
}

// moving reports whether rounds make moves.
func (m ChurnMoves) moving() bool {
	return m.Method == MakeRoom || m.Method == GiveBack || m.Method == FragMultiPod || m.Method == Drain
}

// MoveStats are what the moves did in the window: pods moved, and the
// waiting pods the rounds placed (their count and GPUs, in milli-GPU).
type MoveStats struct {
	Moves, Placed  int
	PlacedMilliGPU int64
}

// round makes one round of moves at the current time.
func (r *churn) round() error {
	m := r.spec.Moves
	if m.Reserve {
		if err := r.reserve(); err != nil {
			return fmt.Errorf("reservation at %.0f s: %w", r.now, err)
		}
	}
	if m.Starve {
		if err := r.starveRound(); err != nil {
			return fmt.Errorf("starvation control at %.0f s: %w", r.now, err)
		}
	}
	if !m.moving() {
		return nil
	}
	r.allowance.PerHour = m.PerHour
	budget := r.allowance.Accrue(r.running, time.Duration(m.Every*float64(time.Second)))
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
	switch m.Method {
	case FragMultiPod:
		moved, err = r.fragMultiPodRound(budget)
	case Drain:
		if m.Starve {
			moved, err = r.starveDrain(budget)
		} else {
			moved, err = r.drainRound(budget)
		}
	default:
		moved, err = r.planRound(heads, budget)
	}
	if err != nil {
		return fmt.Errorf("%s at %.0f s: %w", m.Name(), r.now, err)
	}
	r.allowance.Spend(moved)
	if r.now >= r.spec.WarmUp {
		r.res.Moved.Moves += moved
		r.res.Moved.Placed += r.starts - starts
		r.res.Moved.PlacedMilliGPU += r.startedMilli - milli
	}
	return nil
}

// Round is the round of moves the replay's moves make (make-room or
// give-back) within a budget, as defrag.PlanRound makes it: the rule, with
// the settings, a descheduler running every Every with the same budget
// follows.
func (m ChurnMoves) Round(budget int, cost func(row int) float64) defrag.Round {
	mode := defrag.RoundMakeRoom
	if m.Method == GiveBack {
		mode = defrag.RoundGiveBack
	}
	round := defrag.NewRound(mode, budget, m.K, RoundHeads)
	round.Movable = true
	if mode == defrag.RoundGiveBack {
		round.Cost = cost
	}
	return round
}

// waitingHeads are the first waiting pod of each shape that asks for a GPU,
// the longest waiting first.
func (r *churn) waitingHeads() []int {
	var heads []int
	for _, q := range r.queues {
		if len(q) > 0 && r.pods[q[0]].pod.NumGPU > 0 {
			heads = append(heads, q[0])
		}
	}
	slices.SortFunc(heads, func(a, b int) int { return cmp.Compare(r.pods[a].arrived, r.pods[b].arrived) })
	return heads
}

// planningCluster is the cluster as the planners see it: the running pods,
// all movable, and for each its index in r.pods.
func (r *churn) planningCluster() (*defrag.Cluster, []int) {
	dc := &defrag.Cluster{Pipeline: r.pipe, Table: r.c.Table, Devices: r.c.GPUs, Placer: r.placer}
	if s := fgdScorer(r.pipe); s != nil {
		dc.Device = func(task *scoring.Task, row int) int { return s.Device(task, r.c.Table, row) }
	}
	var index []int
	for k := range r.pods {
		cp := &r.pods[k]
		if cp.row < 0 {
			continue
		}
		task := new(scoring.Task)
		cp.pod.Task(task)
		dc.Pods = append(dc.Pods, defrag.Pod{Task: task, Row: cp.row, Holds: cp.holds, Movable: true})
		index = append(index, k)
	}
	return dc, index
}

// RoundHeads bounds what a round plans for: the RoundHeads waiting heads
// that have waited longest, at most (under overload some hundred shapes
// wait, and a search for each every round would take minutes of a
// replay's time).
const RoundHeads = 8

// planRound makes a round of make-room or give-back moves for the waiting
// heads (defrag.PlanRound, on the replay's own table and device view),
// takes its moves into the replay's pods (each keeps its departure),
// starts the heads it placed, and tries the waiting pods on the rows the
// moves left.
func (r *churn) planRound(heads []int, budget int) (int, error) {
	dc, index := r.planningCluster()
	pending := make([]*scoring.Task, len(heads))
	for n, k := range heads {
		pending[n] = new(scoring.Task)
		r.pods[k].pod.Task(pending[n])
		pending[n].Job = r.jobOf(k)
	}
	c := r.c
	plan, err := defrag.PlanRound(dc, pending, r.spec.Moves.Round(budget, func(row int) float64 {
		return c.NodeFragmentation(r.measure, row)
	}))
	if err != nil {
		return 0, err
	}
	var left []int
	start := func(placed []defrag.RoundPlaced) {
		for _, p := range placed {
			r.startPlaced(heads, p)
			index = append(index, heads[p.Task])
		}
	}
	start(plan.Fit)
	for _, step := range plan.Steps {
		mv := step.Move
		k := index[mv.Pod]
		r.offRow(k, mv.From)
		r.onRow[mv.To] = append(r.onRow[mv.To], k)
		cp := &r.pods[k]
		cp.row, cp.holds = mv.To, slices.Clone(mv.Holds)
		r.refreshFrag(mv.From)
		r.refreshFrag(mv.To)
		left = append(left, mv.From)
		start(step.LetsIn)
	}
	return len(plan.Steps), r.retryRows(left)
}

// startPlaced starts a waiting head a round placed, where it put it.
func (r *churn) startPlaced(heads []int, p defrag.RoundPlaced) {
	k := heads[p.Task]
	r.dequeue(k)
	r.begin(k, p.Row, p.Holds, r.now)
}

// dequeue takes waiting pod k, the first of its shape's queue, out of it.
func (r *churn) dequeue(k int) {
	q := r.queueOf[r.pods[k].shape]
	if len(r.queues[q]) == 0 || r.queues[q][0] != k {
		panic(fmt.Sprintf("churn: pod %d is not the first of its queue", k)) // a programming error
	}
	r.queues[q] = r.queues[q][1:]
	r.waited(k)
}

// dequeueAt takes waiting pod k out of its shape's queue, wherever it is
// in it (a target of starvation control starts on its held node ahead of
// the pods of its shape that wait elsewhere).
func (r *churn) dequeueAt(k int) {
	q := r.queueOf[r.pods[k].shape]
	i := slices.Index(r.queues[q], k)
	if i < 0 {
		panic(fmt.Sprintf("churn: pod %d is not in its queue", k)) // a programming error
	}
	r.queues[q] = slices.Delete(r.queues[q], i, i+1)
	r.waited(k)
}

// waited counts pod k, taken out of its queue, as waiting no more.
func (r *churn) waited(k int) {
	r.waiting--
	if r.pods[k].pod.NumGPU > 0 {
		r.gpuWait--
		r.waitMilli -= r.pods[k].pod.TotalMilliGPU()
	}
}

// retryRows retries the waiting pods on the rows moves left.
func (r *churn) retryRows(rows []int) error {
	slices.Sort(rows)
	for _, row := range slices.Compact(rows) {
		if err := r.retry(row); err != nil {
			return err
		}
	}
	return nil
}

// fragMultiPodRound is the FGD paper's simulator's descheduler
// (FragMultiPod) within the budget: the most fragmented node gives up the
// pod whose leaving lowers its fragmentation most (by a whole milli-GPU at
// least), and goes back to the heap, until the budget is spent or no node
// gains; then the evicted pods are placed again in eviction order, each
// where the policy puts it, with what it had left of its lifetime (one
// that fits nowhere waits for room, at the back of its shape's queue);
// then the waiting pods are tried on the nodes the evictions left.
func (r *churn) fragMultiPodRound(budget int) (int, error) {
	c := r.c
	onRow := make([][]int, c.Table.Len())
	for k := range r.pods {
		if row := r.pods[k].row; row >= 0 {
			onRow[row] = append(onRow[row], k)
		}
	}
	evicted, left, err := fragMultiPod(r.nodeFrag, onRow, budget, func(k, row int) (float64, error) {
		cp := &r.pods[k]
		if err := c.Remove(row, cp.pod, cp.holds); err != nil {
			return 0, err
		}
		f := c.NodeFragmentation(r.measure, row)
		return f, c.Restore(row, cp.pod, cp.holds)
	}, func(k, _ int) error { return r.evict(k) })
	if err != nil {
		return 0, err
	}
	for _, k := range evicted {
		r.pods[k].pod.Task(&r.task)
		r.task.Job = ""
		row, err := r.placer.Best(&r.task)
		if err != nil {
			return 0, err
		}
		if row < 0 {
			r.wait(k)
			continue
		}
		if err := r.start(k, row, r.now); err != nil {
			return 0, err
		}
	}
	return len(evicted), r.retryRows(left)
}

// Drain is the churn replay's moves for a reservation (ChurnMoves.Reserve):
// the nodes locked for its target give up, round by round, the pods that
// keep the target out (drainRound).
const Drain DefragMethod = "drain"

// drainOrder sorts pods (indices into r.pods) in the order drain takes
// them off a node: the most GPU first, then the most cpu, then the
// earliest.
func (r *churn) drainOrder(pods []int) {
	slices.SortFunc(pods, func(a, b int) int {
		pa, pb := r.pods[a].pod, r.pods[b].pod
		return cmp.Or(cmp.Compare(pb.TotalMilliGPU(), pa.TotalMilliGPU()), cmp.Compare(pb.MilliCPU, pa.MilliCPU), cmp.Compare(a, b))
	})
}

// drainRound moves, within the budget, pods off the nodes locked for the
// reservation's target while the target does not fit there: on each locked
// node, the pods holding the most GPU first (then the most cpu), each that
// fits on another node to where the policy puts it (the lock keeps it off
// the locked ones), keeping what it had left of its lifetime; a pod that
// fits nowhere else stays. Then the waiting pods are tried on the locked
// nodes: the target first, as it has waited longest.
func (r *churn) drainRound(budget int) (int, error) {
	if r.resv == nil || r.resv.filter.f == nil || r.resv.target < 0 {
		return 0, nil
	}
	target := r.pods[r.resv.target].pod
	moved := 0
	var left, on []int
	for _, row := range r.resv.filter.f.Rows() {
		on = on[:0]
		for k := range r.pods {
			if r.pods[k].row == row {
				on = append(on, k)
			}
		}
		r.drainOrder(on)
		for _, k := range on {
			if moved == budget || r.c.Fits(row, target) {
				break
			}
			r.pods[k].pod.Task(&r.task)
			r.task.Job = ""
			to, err := r.placer.Best(&r.task)
			if err != nil {
				return moved, err
			}
			if to < 0 {
				continue
			}
			if err := r.evict(k); err != nil {
				return moved, err
			}
			if err := r.start(k, to, r.now); err != nil {
				return moved, err
			}
			moved++
			left = append(left, row)
		}
	}
	return moved, r.retryRows(left)
}

// floor computes the floors now (ChurnSpec.Floor), while GPU pods wait (0
// while none do): the least GPU the shares can leave unused on the GPUs
// they share, after any plan; and, for plans of Floor × the running pods
// moves, the larger of that and the idle GPU less what the waiting pods
// could take after such a plan (at most all they ask for).
func (r *churn) floor() error {
	if r.now < r.spec.WarmUp {
		return nil
	}
	r.floorCount++
	if r.gpuWait == 0 {
		return nil
	}
	var tasks []*scoring.Task
	for _, q := range r.queues {
		if len(q) > 0 && r.pods[q[0]].pod.NumGPU > 0 { // the bound counts each shape's pieces as often as they fit
			t := new(scoring.Task)
			r.pods[q[0]].pod.Task(t)
			tasks = append(tasks, t)
		}
	}
	asked := r.waitMilli
	dc, _ := r.planningCluster()
	limit, err := defrag.BoundReclaim(dc, tasks, nil)
	if err != nil {
		return fmt.Errorf("floor at %.0f s: %w", r.now, err)
	}
	moves := int(r.spec.Floor * float64(r.running))
	idle := float64(r.c.CapacityMilliGPU - r.allocated)
	waste, err := defrag.BoundShareWaste(dc, tasks)
	if err != nil {
		return fmt.Errorf("share floor at %.0f s: %w", r.now, err)
	}
	floor := max(0, idle-float64(min(limit.Within(moves), asked)), float64(waste))
	r.floorSum += floor
	r.shareFloorSum += float64(waste)
	if r.floorSeen != nil {
		r.floorSeen(idle, floor, float64(waste))
	}
	return nil
}
