package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/reservation"
)

// ReservePolicy is how a replay's reservation locks nodes
// (ChurnMoves.Reserve): one more node a round, the node with the most
// idle of the target's main resource first, until the locked nodes'
// allocatable covers its request; never a cluster lock.
var ReservePolicy = reservation.Policy{Scheme: reservation.SingleNode, Algorithm: reservation.IdleFirst}

// lockFilter is the replay's reservation filter in its pipeline: the
// round's reservation.Filter, or nothing while no node is locked. It is
// volatile (the locks change apart from the table) and a
// scoring.Excluder, so the placer passes over the locked rows and
// remembers the rest as before.
type lockFilter struct{ f *reservation.Filter }

func (l *lockFilter) Name() string   { return "reservation" }
func (l *lockFilter) Volatile() bool { return true }

func (l *lockFilter) FilterNodes(task *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	if l.f == nil {
		return nil
	}
	return l.f.FilterNodes(task, nodes, v)
}

func (l *lockFilter) Excluded(task *scoring.Task, dst []int) []int {
	if l.f == nil {
		return dst
	}
	return l.f.Excluded(task, dst)
}

func (l *lockFilter) Explain(task *scoring.Task, nodes *resource.Table, row, slot int) string {
	if l.f == nil {
		return ""
	}
	return l.f.Explain(task, nodes, row, slot)
}

// reserving is a replay's reservation between rounds.
type reserving struct {
	filter lockFilter
	state  reservation.State
	target int // the target pod, -1 for none
	// unlocked are the rows a lock let go of since the waiting pods were
	// last tried on them.
	unlocked []int
}

// ReserveStats are what the reservations did in the window: the targets
// elected, those of them that started while targets, and the node-hours
// the locks held.
type ReserveStats struct {
	Targets, Started int
	NodeHours        float64
}

// targetName names pod k as the reservation's target job; names sort as
// the pods arrived.
func targetName(k int) string { return fmt.Sprintf("pod-%09d", k) }

// clock is simulated time t (seconds) as the reservation package's time.
func clock(t float64) time.Time {
	return time.Unix(0, 0).Add(time.Duration(t * float64(time.Second)))
}

// reserve makes the round's reservation, after Volcano's job resource
// reservation (scoring/reservation): the waiting GPU pod that has waited
// longest is the target (reservation.Elect, Automatic: every pod has the
// same priority, so the longest wait wins); reservation.Step with
// ReservePolicy locks nodes for it, among those it would fit empty; no
// other pod is placed or moved onto a locked node (reservation.Filter in
// the replay's pipeline) until the target starts, which releases them
// (release), or another pod has waited longer. With drain moves, the
// candidates are the target in place and the waiting pods some node could
// be drained for now, and the nodes it may lock those (drainView): a
// reservation for a pod no node can be drained for would hold its nodes
// idle until pods leave on their own.
func (r *churn) reserve() error {
	heads := r.waitingHeads()
	var drain *drainView
	if r.spec.Moves.Method == Drain {
		drain = r.drainView()
		heads = drain.servable(heads)
	}
	jobs := make([]reservation.Job, len(heads))
	for i, k := range heads {
		jobs[i] = reservation.Job{Name: targetName(k), PendingSince: clock(r.pods[k].arrived)}
	}
	var t reservation.Target
	r.resv.target = -1
	if i, ok := reservation.Elect(jobs, clock(r.now), reservation.Election{Mode: reservation.Automatic}); ok {
		k := heads[i]
		task := new(scoring.Task)
		r.pods[k].pod.Task(task)
		p := r.pods[k].pod
		usable := func(row int) bool { return r.c.FitsEmpty(row, p) }
		if drain != nil {
			usable = func(row int) bool { return drain.usable(p, row) }
		}
		t = reservation.Target{Name: jobs[i].Name, Request: task.Requests, Status: reservation.Pending, Usable: usable}
		r.resv.target = k
	}
	s, err := reservation.Step(r.resv.state, ReservePolicy, clock(r.now), t, r.c.Table)
	if err != nil {
		return err
	}
	if r.now >= r.spec.WarmUp {
		if s.Target != "" && s.Target != r.resv.state.Target {
			r.res.Reserved.Targets++
		}
		r.res.Reserved.NodeHours += float64(len(s.Locked)) * r.spec.Moves.Every / 3600
	}
	r.unlock(s)
	return nil
}

// unlock makes s the reservation, and keeps the rows its locks let go of
// to try the waiting pods on them.
func (r *churn) unlock(s reservation.State) {
	if f := r.resv.filter.f; f != nil {
		for _, row := range f.Rows() {
			if !slices.Contains(s.Locked, r.c.Table.Name(row)) && !s.Cluster {
				r.resv.unlocked = append(r.resv.unlocked, row)
			}
		}
	}
	r.resv.state = s
	r.resv.filter.f = nil
	if s.Target != "" {
		r.resv.filter.f = reservation.NewFilter(s, r.c.Table)
	}
}

// retryUnlocked tries the waiting pods on the rows locks let go of.
func (r *churn) retryUnlocked() error {
	if r.resv == nil || len(r.resv.unlocked) == 0 {
		return nil
	}
	rows := r.resv.unlocked
	r.resv.unlocked = nil
	return r.retryRows(rows)
}

// release ends the reservation once its target, pod k, starts.
func (r *churn) release(k int) {
	if r.resv == nil || k != r.resv.target {
		return
	}
	if r.now >= r.spec.WarmUp && r.resv.state.Target != "" {
		r.res.Reserved.Started++
	}
	r.unlock(reservation.State{})
	r.resv.target = -1
}

// jobOf is pod k's job as the reservation filter reads it: the target's
// name for the target, "" for every other pod.
func (r *churn) jobOf(k int) string {
	if r.resv != nil && k == r.resv.target && r.resv.state.Target != "" {
		return r.resv.state.Target
	}
	return ""
}

// drainView answers, for drain moves, which rows a reservation may lock
// for a pod: those it would fit empty where drain would make it fit now —
// taken off in drainRound's order, the pods in its way that fit some
// other unlocked row now, the others left — and the rows locked already.
// It reads the cluster as it is when made, once for all it is asked: the
// pods of each row, and which pod shapes fit somewhere.
type drainView struct {
	r       *churn
	locked  []bool // per row
	on      [][]int
	movable []int8 // per shape (churnPod.shape): 0 not known yet, 1 fits some unlocked row, -1 not
	free    []int64
}

// drainView is the cluster as drain sees it now, for this round's
// reservation.
func (r *churn) drainView() *drainView {
	v := &drainView{r: r, locked: make([]bool, r.c.Table.Len()), movable: make([]int8, len(r.shapeIDs))}
	if f := r.resv.filter.f; f != nil {
		for _, row := range f.Rows() {
			v.locked[row] = true
		}
	}
	return v
}

// canMove reports whether pod q fits some unlocked row now.
func (v *drainView) canMove(q *churnPod) bool {
	if known := v.movable[q.shape]; known != 0 {
		return known > 0
	}
	v.movable[q.shape] = -1
	for row := range v.r.c.Table.Len() {
		if !v.locked[row] && v.r.c.Fits(row, q.pod) {
			v.movable[q.shape] = 1
			break
		}
	}
	return v.movable[q.shape] > 0
}

// usable reports whether the reservation may lock row for pod p.
func (v *drainView) usable(p Pod, row int) bool {
	r := v.r
	if !r.c.FitsEmpty(row, p) {
		return false
	}
	if v.locked[row] {
		return true
	}
	if v.on == nil {
		v.on = make([][]int, r.c.Table.Len())
		for k := range r.pods {
			if row := r.pods[k].row; row >= 0 {
				v.on[row] = append(v.on[row], k)
			}
		}
		for _, ks := range v.on {
			r.drainOrder(ks)
		}
	}
	alloc, used := r.c.Table.Allocatable(row), r.c.Table.Used(row)
	cpu, mem, gpu := used[slotCPU], used[slotMemory], used[slotGPU]
	v.free = append(v.free[:0], r.c.GPUs.Free(row)...)
	fits := func() bool {
		if !fitsAmounts(alloc, cpu, mem, gpu, p) {
			return false
		}
		n := 0
		for _, f := range v.free {
			if f >= p.GPUMilli {
				n++
			}
		}
		return n >= p.NumGPU
	}
	for _, k := range v.on[row] {
		if fits() {
			return true
		}
		q := &r.pods[k]
		if !v.canMove(q) {
			continue
		}
		cpu -= q.pod.MilliCPU
		mem -= q.pod.MemoryMiB << 20
		gpu -= q.pod.TotalMilliGPU()
		for _, h := range q.holds {
			v.free[h] += q.pod.GPUMilli
		}
	}
	return fits()
}

// servable keeps, of the waiting pods heads, the reservation's target and
// those for which some row is usable.
func (v *drainView) servable(heads []int) []int {
	var kept []int
	for _, k := range heads {
		if v.r.jobOf(k) != "" { // the target
			kept = append(kept, k)
			continue
		}
		for row := range v.r.c.Table.Len() {
			if v.usable(v.r.pods[k].pod, row) {
				kept = append(kept, k)
				break
			}
		}
	}
	return kept
}
