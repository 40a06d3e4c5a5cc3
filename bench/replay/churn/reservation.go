package churn

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/reservation"
)

// Reservation is Volcano's job resource reservation in a replay
// (scoring/reservation, Volcano's elect-and-lock design; not starvation
// control, scoring/starvation, which the descheduler's reserve mode
// runs): every Every seconds, the GPU pod that has waited longest is the
// target, and nodes are locked for it (ReservePolicy) until it starts.
// Every 0: no reservation.
type Reservation struct {
	Every float64
}

func (o Reservation) on() bool { return o.Every != 0 }

// Check reports a reservation that cannot run.
func (o Reservation) Check() error {
	if !(o.Every >= 0) || math.IsInf(o.Every, 0) {
		return fmt.Errorf("churn reservation: reservations must be made a duration above 0 apart, got %v s", o.Every)
	}
	return nil
}

// ReservePolicy is how a replay's reservation locks nodes: one more node
// a round, the node with the most idle of the target's main resource
// first, until the locked nodes' allocatable covers its request; never a
// cluster lock.
var ReservePolicy = reservation.Policy{Scheme: reservation.SingleNode, Algorithm: reservation.IdleFirst}

// ReserveStats are what the reservations did in the window: the targets
// elected, those of them that started while targets, and the node-hours
// the locks held.
type ReserveStats struct {
	Targets, Started int
	NodeHours        float64
}

// Columns are reserve_targets, reserve_started and reserve_node_hours.
func (x ReserveStats) Columns() []Column {
	return []Column{{"reserve_targets", count(x.Targets)}, {"reserve_started", count(x.Started)}, {"reserve_node_hours", decimal(x.NodeHours)}}
}

// Reserved is what the reservation did.
func (res *Result) Reserved() ReserveStats { return reportOf[ReserveStats](res) }

// reserving is a replay's reservation between rounds.
type reserving struct {
	periodic
	r      *replay
	opts   Reservation
	drains bool // the moves drain what it locks (Drain)
	filter lockFilter
	state  reservation.State
	target int // the target pod, -1 for none
	stats  ReserveStats
}

func newReserving(r *replay, opts Reservation, drains bool) *reserving {
	return &reserving{periodic: roundsEvery(opts.Every), r: r, opts: opts, drains: drains, target: -1}
}

func (x *reserving) report() Report { return x.stats }

func (x *reserving) on(e event) error {
	switch e.kind {
	case podPlacing:
		e.task.Job = x.jobOf(e.pod)
	case podStarted:
		x.release(e.pod)
	}
	return nil
}

// round makes the round's reservation, after Volcano's job resource
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
func (x *reserving) round() error {
	x.next()
	if err := x.reserve(); err != nil {
		return fmt.Errorf("reservation at %.0f s: %w", x.r.now, err)
	}
	return nil
}

func (x *reserving) reserve() error {
	r := x.r
	heads := r.waitingHeads()
	var drain *drainView
	if x.drains {
		drain = x.drainView()
		heads = drain.servable(heads)
	}
	jobs := make([]reservation.Job, len(heads))
	for i, k := range heads {
		jobs[i] = reservation.Job{Name: podName(k), PendingSince: clock(r.pods[k].arrived)}
	}
	var t reservation.Target
	x.target = -1
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
		x.target = k
	}
	s, err := reservation.Step(x.state, ReservePolicy, clock(r.now), t, r.c.Table)
	if err != nil {
		return err
	}
	if r.measuring() {
		if s.Target != "" && s.Target != x.state.Target {
			x.stats.Targets++
		}
		x.stats.NodeHours += float64(len(s.Locked)) * x.opts.Every / 3600
	}
	x.unlock(s)
	return nil
}

// unlock makes s the reservation, and has the waiting pods tried on the
// rows its locks let go of.
func (x *reserving) unlock(s reservation.State) {
	r := x.r
	if f := x.filter.f; f != nil {
		for _, row := range f.Rows() {
			if !slices.Contains(s.Locked, r.c.Table.Name(row)) && !s.Cluster {
				r.retryLater(row)
			}
		}
	}
	x.state = s
	x.filter.f = nil
	if s.Target != "" {
		x.filter.f = reservation.NewFilter(s, r.c.Table)
	}
}

// release ends the reservation once its target, pod k, starts.
func (x *reserving) release(k int) {
	if k != x.target {
		return
	}
	if x.r.measuring() && x.state.Target != "" {
		x.stats.Started++
	}
	x.unlock(reservation.State{})
	x.target = -1
}

// jobOf is pod k's job as the reservation filter reads it: the target's
// name for the target, "" for every other pod.
func (x *reserving) jobOf(k int) string {
	if k == x.target && x.state.Target != "" {
		return x.state.Target
	}
	return ""
}

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

// drainOrder sorts pods (indices into r.pods) in the order drain takes
// them off a node: the most GPU first, then the most cpu, then the
// earliest.
func (x *reserving) drainOrder(pods []int) {
	slices.SortFunc(pods, func(a, b int) int {
		pa, pb := x.r.pods[a].pod, x.r.pods[b].pod
		return cmp.Or(cmp.Compare(pb.TotalMilliGPU(), pa.TotalMilliGPU()), cmp.Compare(pb.MilliCPU, pa.MilliCPU), cmp.Compare(a, b))
	})
}

// drain moves, within the budget, pods off the nodes locked for the
// target while the target does not fit there: on each locked node, the
// pods holding the most GPU first (then the most cpu), each that fits on
// another node to where the policy puts it (the lock keeps it off the
// locked ones), keeping what it had left of its lifetime; a pod that fits
// nowhere else stays. Then the waiting pods are tried on the locked
// nodes: the target first, as it has waited longest.
func (x *reserving) drain(budget int) (int, error) {
	r := x.r
	if x.filter.f == nil || x.target < 0 {
		return 0, nil
	}
	target := r.pods[x.target].pod
	moved := 0
	var left, on []int
	for _, row := range x.filter.f.Rows() {
		on = on[:0]
		for k := range r.pods {
			if r.pods[k].row == row {
				on = append(on, k)
			}
		}
		x.drainOrder(on)
		n, err := r.drainRow(row, target, on, budget-moved)
		moved += n
		if err != nil {
			return moved, err
		}
		if n > 0 {
			left = append(left, row)
		}
	}
	return moved, r.retryRows(left)
}

// drainView answers, for drain moves, which rows a reservation may lock
// for a pod: those it would fit empty where drain would make it fit now —
// taken off in drain's order, the pods in its way that fit some other
// unlocked row now, the others left — and the rows locked already. It
// reads the cluster as it is when made, once for all it is asked: the
// pods of each row, and which pod shapes fit somewhere.
type drainView struct {
	x       *reserving
	locked  []bool // per row
	on      [][]int
	movable []int8 // per shape (pod.shape): 0 not known yet, 1 fits some unlocked row, -1 not
	free    []int64
}

// drainView is the cluster as drain sees it now, for this round's
// reservation.
func (x *reserving) drainView() *drainView {
	r := x.r
	v := &drainView{x: x, locked: make([]bool, r.c.Table.Len()), movable: make([]int8, len(r.shapeIDs))}
	if f := x.filter.f; f != nil {
		for _, row := range f.Rows() {
			v.locked[row] = true
		}
	}
	return v
}

// canMove reports whether pod q fits some unlocked row now.
func (v *drainView) canMove(q *podState) bool {
	if known := v.movable[q.shape]; known != 0 {
		return known > 0
	}
	r := v.x.r
	v.movable[q.shape] = -1
	for row := range r.c.Table.Len() {
		if !v.locked[row] && r.c.Fits(row, q.pod) {
			v.movable[q.shape] = 1
			break
		}
	}
	return v.movable[q.shape] > 0
}

// usable reports whether the reservation may lock row for pod p.
func (v *drainView) usable(p sim.Pod, row int) bool {
	r := v.x.r
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
			v.x.drainOrder(ks)
		}
	}
	alloc, used := r.c.Table.Allocatable(row), r.c.Table.Used(row)
	cpu, mem, gpu := used[sim.SlotCPU], used[sim.SlotMemory], used[sim.SlotGPU]
	v.free = append(v.free[:0], r.c.GPUs.Free(row)...)
	fits := func() bool {
		if !sim.FitsAmounts(alloc, cpu, mem, gpu, p) {
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
		if v.x.jobOf(k) != "" { // the target
			kept = append(kept, k)
			continue
		}
		for row := range v.x.r.c.Table.Len() {
			if v.usable(v.x.r.pods[k].pod, row) {
				kept = append(kept, k)
				break
			}
		}
	}
	return kept
}
