package sim

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"

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
//     (fragMultiPodRound), its evictions counted as moves.
//
// A round makes at most what its allowance holds: PerHour × the pods
// running, an hour, accrued over the time since the last round and kept
// up to an hour's worth. A moved pod keeps its remaining lifetime.
type ChurnMoves struct {
	Method  DefragMethod
	Every   float64
	K       int
	PerHour float64
}

// Name is the moves as the tables name them: "none", "make-room k=2,
// 1%/h, every 10m".
func (m ChurnMoves) Name() string {
	if m.Method == NoMoves || m.Method == "" {
		return string(NoMoves)
	}
	name := string(m.Method)
	if m.Method == MakeRoom {
		name += fmt.Sprintf(" k=%d", m.K)
	}
	return name + fmt.Sprintf(" %g%%/h every %gm", 100*m.PerHour, m.Every/60)
}

// Check reports moves that cannot run.
func (m ChurnMoves) Check() error {
	switch m.Method {
	case NoMoves, "":
		return nil
	case MakeRoom, GiveBack, FragMultiPod:
	default:
		return fmt.Errorf("churn moves: method %q is not one of %q, %q, %q, %q", m.Method, NoMoves, MakeRoom, GiveBack, FragMultiPod)
	}
	switch {
	case !(m.Every > 0) || math.IsInf(m.Every, 0):
		return fmt.Errorf("churn moves: rounds must be a duration above 0 apart, got %v s", m.Every)
	case m.Method == MakeRoom && m.K < 1:
		return fmt.Errorf("churn moves: k must be ≥ 1, got %d", m.K)
	case !(m.PerHour > 0 && m.PerHour <= 1):
		return fmt.Errorf("churn moves: the moves an hour must be a share of the running pods in (0, 1], got %v", m.PerHour)
	}
	return nil
}

func (m ChurnMoves) active() bool {
	return m.Method == MakeRoom || m.Method == GiveBack || m.Method == FragMultiPod
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
	r.allowance = min(r.allowance+m.PerHour*float64(r.running)*m.Every/3600, m.PerHour*float64(r.running))
	budget := int(r.allowance)
	if budget < 1 || r.gpuWait == 0 {
		return nil
	}
	heads := r.waitingHeads()
	if len(heads) == 0 {
		return nil
	}
	heads = heads[:min(len(heads), RoundHeads)]
	starts, milli := r.starts, r.startedMilli
	var moved int
	var err error
	switch m.Method {
	case MakeRoom:
		dc, index := r.planningCluster()
		moved, err = r.makeRoomRound(dc, index, heads, budget)
	case GiveBack:
		dc, index := r.planningCluster()
		moved, err = r.giveBackRound(dc, index, heads, budget)
	case FragMultiPod:
		moved, err = r.fragMultiPodRound(budget)
	}
	if err != nil {
		return fmt.Errorf("%s at %.0f s: %w", m.Name(), r.now, err)
	}
	r.allowance -= float64(moved)
	if r.now >= r.spec.WarmUp {
		r.res.Moved.Moves += moved
		r.res.Moved.Placed += r.starts - starts
		r.res.Moved.PlacedMilliGPU += r.startedMilli - milli
	}
	return nil
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

// synced takes the planners' moves into the replay's pods (their rows and
// GPUs; their departures stay), and returns how many moved and the rows
// they left.
func (r *churn) synced(dc *defrag.Cluster, index []int) (int, []int) {
	moved := 0
	var left []int
	for i, k := range index {
		cp := &r.pods[k]
		p := dc.Pods[i]
		if p.Row == cp.row && slices.Equal(p.Holds, cp.holds) {
			continue
		}
		from := cp.row
		cp.row, cp.holds = p.Row, slices.Clone(p.Holds)
		r.refreshFrag(from)
		r.refreshFrag(p.Row)
		if from != p.Row {
			moved++
			left = append(left, from)
		}
	}
	return moved, left
}

// RoundHeads bounds what a round plans for: the RoundHeads waiting heads
// that have waited longest, at most (under overload some hundred shapes
// wait, and a search for each every round would take minutes of a
// replay's time).
const RoundHeads = 8

// makeRoomRound gives the waiting heads room, the longest waiting first,
// within the budget.
func (r *churn) makeRoomRound(dc *defrag.Cluster, index, heads []int, budget int) (moved int, err error) {
	var left []int
	for _, k := range heads {
		if budget < 1 {
			break
		}
		task := new(scoring.Task)
		r.pods[k].pod.Task(task)
		plan, err := defrag.MakeRoom(dc, task, defrag.Options{MaxMoves: min(r.spec.Moves.K, budget), ExactStates: -1, MaxStates: PlanStates})
		if err != nil {
			return moved, err
		}
		if !plan.Found {
			continue
		}
		if err := defrag.Apply(dc, plan); err != nil {
			return moved, err
		}
		n, from := r.synced(dc, index)
		moved, budget, left = moved+n, budget-n, append(left, from...)
		r.dequeue(k)
		if err := r.start(k, plan.Row, r.now); err != nil {
			return moved, err
		}
		dc.Pods = append(dc.Pods, defrag.Pod{Task: task, Row: plan.Row, Holds: r.pods[k].holds, Movable: true})
		index = append(index, k)
	}
	return moved, r.retryRows(left)
}

// giveBackRound lowers the fragmentation with moves, within the budget,
// keeping those that let waiting heads in (defrag.GiveBack with them as
// its pending tasks), and places those.
func (r *churn) giveBackRound(dc *defrag.Cluster, index, heads []int, budget int) (int, error) {
	pending := make([]*scoring.Task, len(heads))
	for n, k := range heads {
		pending[n] = new(scoring.Task)
		r.pods[k].pod.Task(pending[n])
	}
	c := r.c
	steps, err := defrag.GiveBack(dc, func(row int) float64 {
		return r.measure.NodeModel(c.FreeCPU(row), c.GPUs.Free(row), c.GPUs.Model(row))
	}, defrag.GiveBackOptions{Moves: budget, Pending: pending, Movable: true})
	if err != nil {
		return 0, err
	}
	moved, left := r.synced(dc, index)
	// The pods GiveBack placed are the cluster's pods after the running
	// ones, in the order it placed them.
	next := len(index)
	for _, s := range steps {
		for _, n := range s.Placed {
			k := heads[n]
			p := dc.Pods[next]
			next++
			r.dequeue(k)
			r.begin(k, p.Row, p.Holds, r.now)
		}
	}
	return moved, r.retryRows(left)
}

// dequeue takes waiting pod k, the first of its shape's queue, out of it.
func (r *churn) dequeue(k int) {
	q := r.shapes[shapeOf(r.pods[k].pod)]
	if len(r.queues[q]) == 0 || r.queues[q][0] != k {
		panic(fmt.Sprintf("churn: pod %d is not the first of its queue", k)) // a programming error
	}
	r.queues[q] = r.queues[q][1:]
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
	h := make(fragHeap, 0, c.Table.Len())
	for row := range c.Table.Len() {
		h = append(h, nodeFrag{row, r.nodeFrag[row]})
	}
	heap.Init(&h)
	var evicted, left []int
	for budget > 0 && h.Len() > 0 {
		top := heap.Pop(&h).(nodeFrag)
		victim, drop := -1, int64(0)
		for _, k := range onRow[top.row] {
			cp := &r.pods[k]
			if err := c.Remove(top.row, cp.pod, cp.holds); err != nil {
				return 0, err
			}
			f := r.measure.NodeModel(c.FreeCPU(top.row), c.GPUs.Free(top.row), c.GPUs.Model(top.row))
			if err := c.Restore(top.row, cp.pod, cp.holds); err != nil {
				return 0, err
			}
			if d := int64(top.frag - f); d > drop {
				victim, drop = k, d
			}
		}
		if victim < 0 {
			continue
		}
		if err := r.evict(victim); err != nil {
			return 0, err
		}
		onRow[top.row] = slices.DeleteFunc(onRow[top.row], func(k int) bool { return k == victim })
		evicted, left = append(evicted, victim), append(left, top.row)
		heap.Push(&h, nodeFrag{top.row, r.nodeFrag[top.row]})
		budget--
	}
	for _, k := range evicted {
		r.pods[k].pod.Task(&r.task)
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

// floor computes the floor now (ChurnSpec.Floor): the idle GPU less what
// the waiting pods could take after a plan of Floor × the running pods
// moves, at most all they ask for, while GPU pods wait (0 while none do).
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
	r.floorSum += max(0, float64(r.c.CapacityMilliGPU-r.allocated)-float64(min(limit.Within(moves), asked)))
	return nil
}
