package churn

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/starvation"
)

// Starvation is starvation control in a replay (scoring/starvation, EASY
// backfilling with holds, what the descheduler's reserve mode runs; not
// Volcano's job reservation, Reservation): every Every seconds, the GPU
// pod that has waited longer than After, the largest first, is held the
// node it fits first, up to Holds nodes at once (1, EASY's, when below
// 1), with backfill; with Drain moves, the pods in a held node's way move
// when waiting alone will not free it within Patience (seconds). Every 0:
// no starvation control.
type Starvation struct {
	Every, After, Patience float64
	Holds                  int
}

func (o Starvation) on() bool { return o.Every != 0 }

// Check reports starvation control's settings that cannot run.
func (o Starvation) Check() error {
	switch {
	case !(o.Every >= 0) || math.IsInf(o.Every, 0):
		return fmt.Errorf("churn starvation control: rounds must be a duration above 0 apart, got %v s", o.Every)
	case !(o.After >= 0) || math.IsInf(o.After, 0):
		return fmt.Errorf("churn moves: starvation control's waiting line must be a duration ≥ 0, got %v s", o.After)
	case !(o.Patience >= 0) || math.IsInf(o.Patience, 0):
		return fmt.Errorf("churn moves: starvation control's patience must be a duration ≥ 0, got %v s", o.Patience)
	}
	return nil
}

// StarveStats are what starvation control did in the window: the targets
// elected, those that started while targets, the node-hours held, the
// pods drained off held nodes, and the pods placed on held nodes beside
// their targets (backfilled).
type StarveStats struct {
	Targets, Started int
	NodeHours        float64
	Drained          int
	Backfilled       int
}

// Columns are starve_targets, starve_started, starve_node_hours,
// starve_drained and starve_backfilled.
func (x StarveStats) Columns() []Column {
	return []Column{{"starve_targets", count(x.Targets)}, {"starve_started", count(x.Started)}, {"starve_node_hours", decimal(x.NodeHours)},
		{"starve_drained", count(x.Drained)}, {"starve_backfilled", count(x.Backfilled)}}
}

// Starved is what starvation control did.
func (res *Result) Starved() StarveStats { return reportOf[StarveStats](res) }

// starving is a replay's starvation control between rounds: its holds,
// a node each, and which row each holds.
type starving struct {
	periodic
	r      *replay
	opts   Starvation
	filter holdFilter
	holds  []*activeHold
	onRow  map[int]*activeHold
	stats  StarveStats
}

func newStarving(r *replay, opts Starvation) *starving {
	x := &starving{periodic: roundsEvery(opts.Every), r: r, opts: opts, onRow: map[int]*activeHold{}}
	x.filter.x = x
	return x
}

func (x *starving) report() Report { return x.stats }

func (x *starving) on(e event) error {
	switch e.kind {
	case rowRoom:
		return x.startTarget(e.row)
	case podStarted:
		x.release(e.pod)
	}
	return nil
}

// activeHold is a row held for a target pod.
type activeHold struct {
	target int
	hold   starvation.Hold
	// row is the held row; version its table version when the hold was
	// planned (planned again when it changes); pods the replay's pods in
	// the order of the node view the hold was planned on.
	row     int
	version uint64
	pods    []int
}

// holdFilter keeps pods off each held row unless starvation.Hold.Admits
// them (the target always). It is volatile (the holds change apart from
// the table) and a scoring.Excluder, so the placer passes over the held
// rows a pod may not take and remembers the rest as before.
type holdFilter struct{ x *starving }

func (f *holdFilter) Name() string   { return "starvation" }
func (f *holdFilter) Volatile() bool { return true }

func (f *holdFilter) FilterNodes(_ *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	x := f.x
	if len(x.holds) == 0 {
		return nil
	}
	for i := range nodes.Len() {
		if h := x.onRow[nodes.Row(i)]; h != nil && !x.admits(h, x.r.placing) {
			v.Reject(i, -1)
		}
	}
	return nil
}

func (f *holdFilter) Excluded(_ *scoring.Task, dst []int) []int {
	for _, h := range f.x.holds {
		if !f.x.admits(h, f.x.r.placing) {
			dst = append(dst, h.row)
		}
	}
	return dst
}

func (f *holdFilter) Explain(_ *scoring.Task, _ *resource.Table, row, _ int) string {
	if h := f.x.onRow[row]; h != nil {
		return fmt.Sprintf("held for %s, which it would delay", h.hold.Target)
	}
	return "held"
}

// admits reports whether pod k may go to the row h holds now (no pod's
// own placement, k < 0, may not).
func (x *starving) admits(h *activeHold, k int) bool {
	if k < 0 || k == h.target {
		return k >= 0
	}
	r := x.r
	if err := x.replan(h); err != nil {
		return false
	}
	cp := &r.pods[k]
	p := x.pod(k)
	p.End = time.Time{}
	if !math.IsNaN(cp.declared) {
		end := r.now + cp.declared
		if !math.IsNaN(cp.started) { // evicted: it runs what it had left
			end = cp.declaredEnd() + r.now - cp.evicted
		}
		p.End = clock(end)
	}
	if cp.pod.Shared() {
		dev := -1
		if r.device != nil {
			dev = r.device(h.row, cp.pod)
		}
		if dev < 0 {
			dev = r.c.GPUs.Tightest(h.row, cp.pod.GPUMilli)
		}
		if dev < 0 {
			return false
		}
		p.Holds = []starvation.DeviceHold{{Device: dev, Amount: cp.pod.GPUMilli}}
	}
	return h.hold.Admits(p, x.node(h.row, nil), clock(r.now))
}

// pod is pod k as starvation control sees it, with the devices it holds
// and its declared end when it runs.
func (x *starving) pod(k int) starvation.Pod {
	cp := &x.r.pods[k]
	p := starvation.Pod{Name: podName(k), Devices: resource.DeviceRequest{Count: cp.pod.NumGPU, Each: cp.pod.GPUMilli},
		Request: resource.Vector{cp.pod.MilliCPU, cp.pod.MemoryMiB << 20, cp.pod.TotalMilliGPU()}}
	if cp.pod.NumGPU == 0 {
		p.Devices = resource.DeviceRequest{}
	}
	for _, j := range cp.holds {
		p.Holds = append(p.Holds, starvation.DeviceHold{Device: j, Amount: cp.pod.GPUMilli})
	}
	if cp.row >= 0 && !math.IsNaN(cp.declared) {
		p.End = clock(cp.declaredEnd())
	}
	return p
}

// node is row as starvation control sees it: its amounts, its GPUs' free
// amounts and its pods (their indices in r.pods appended to pods when not
// nil).
func (x *starving) node(row int, pods *[]int) starvation.Node {
	c := x.r.c
	n := starvation.Node{Name: c.Table.Name(row), Allocatable: c.Table.Allocatable(row), Used: c.Table.Used(row),
		DeviceFree: c.GPUs.Free(row)}
	for _, k := range x.r.onRow[row] {
		n.Pods = append(n.Pods, x.pod(k))
		if pods != nil {
			*pods = append(*pods, k)
		}
	}
	return n
}

// waiting is waiting pod k as starvation control sees it.
func (x *starving) waiting(k int) starvation.Waiting {
	return starvation.Waiting{Pod: x.pod(k), Since: clock(x.r.pods[k].arrived)}
}

// replan plans hold h again when its row changed since.
func (x *starving) replan(h *activeHold) error {
	if x.r.c.Table.Version(h.row) == h.version {
		return nil
	}
	return x.plan(h, h.row)
}

// plan makes h hold row for its target, planned on the row as it is now.
func (x *starving) plan(h *activeHold, row int) error {
	h.pods = h.pods[:0]
	n := x.node(row, &h.pods)
	hold, err := starvation.Plan(x.waiting(h.target), n, row, clock(x.r.now), sim.SlotGPU)
	if err != nil {
		return err
	}
	h.hold, h.row, h.version = hold, row, x.r.c.Table.Version(row)
	return nil
}

// startTarget starts the target of the hold on row there, when it fits
// now, wherever it is in its shape's queue.
func (x *starving) startTarget(row int) error {
	r := x.r
	h := x.onRow[row]
	if h == nil || !r.c.Fits(row, r.pods[h.target].pod) {
		return nil
	}
	k := h.target
	at, err := r.best(k)
	if err != nil || at < 0 {
		return err
	}
	r.dequeueAt(k)
	return r.start(k, at, r.now)
}

// release ends the hold of a target, pod k, once it starts, and counts a
// pod started beside a target on its held row. The row it held takes the
// waiting pods that fit it at the loop's next event (retryLater): the
// target may have started elsewhere, and the hold kept them off.
func (x *starving) release(k int) {
	r := x.r
	if h := x.onRow[r.pods[k].row]; h != nil && h.target != k && r.measuring() {
		x.stats.Backfilled++
	}
	for i, h := range x.holds {
		if h.target == k {
			if r.measuring() {
				x.stats.Started++
			}
			delete(x.onRow, h.row)
			x.holds = slices.Delete(x.holds, i, i+1)
			r.retryLater(h.row)
			return
		}
	}
}

// round keeps a hold for each of up to Holds targets: the holds whose
// targets still wait over the line stay (planned afresh on the node each
// fits first, among the nodes not held for another), and the next pods
// over the line, in starvation.Rank's order, get one each; a target that
// fits its held node now is placed there.
func (x *starving) round() error {
	x.next()
	if err := x.hold(); err != nil {
		return fmt.Errorf("starvation control at %.0f s: %w", x.r.now, err)
	}
	return nil
}

func (x *starving) hold() error {
	r := x.r
	if r.measuring() {
		x.stats.NodeHours += float64(len(x.holds)) * x.opts.Every / 3600
	}
	heads := r.waitingGPUPods()
	waiting := make([]starvation.Waiting, len(heads))
	index := map[int]int{}
	for i, k := range heads {
		waiting[i] = x.waiting(k)
		index[k] = i
	}
	targets := x.targets(heads, index, waiting)
	// A hold stays on its node while its target waits over the line (a
	// node chosen again every round would lose what draining it has won);
	// a new target is held the node it fits first among the others.
	kept := map[int]*activeHold{}
	for _, h := range x.holds {
		if slices.Contains(targets, h.target) {
			kept[h.target] = h
		}
	}
	x.holds, x.onRow = x.holds[:0], map[int]*activeHold{}
	for _, h := range kept {
		x.onRow[h.row] = h
	}
	for _, k := range targets {
		if h := kept[k]; h != nil {
			if err := x.plan(h, h.row); err != nil {
				return err
			}
			x.holds = append(x.holds, h)
			continue
		}
		if err := x.holdFirst(k, waiting[index[k]]); err != nil {
			return err
		}
	}
	for _, h := range slices.Clone(x.holds) {
		if err := r.retry(h.row); err != nil {
			return err
		}
	}
	return nil
}

// targets are the pods to hold for (starvation.Targets): those held
// already, first, while over the line; then the next over it, up to Holds.
// heads are the waiting pods, waiting what each says, index each pod's
// place among them.
func (x *starving) targets(heads []int, index map[int]int, waiting []starvation.Waiting) []int {
	r := x.r
	over := starvation.Rank(waiting, clock(r.now), starvation.Election{MinWait: time.Duration(x.opts.After * float64(time.Second)), Size: sim.SlotGPU})
	var held []int
	for _, h := range x.holds {
		if i, ok := index[h.target]; ok {
			held = append(held, i)
		}
	}
	targets := starvation.Targets(over, held, max(x.opts.Holds, 1))
	for j, i := range targets {
		targets[j] = heads[i]
		if r.measuring() && !slices.ContainsFunc(x.holds, func(h *activeHold) bool { return h.target == heads[i] }) {
			x.stats.Targets++
		}
	}
	return targets
}

// holdFirst holds for target k the node it fits first
// (starvation.Choose), among those not held for another and that it
// would fit empty, if any.
func (x *starving) holdFirst(k int, w starvation.Waiting) error {
	r := x.r
	p := r.pods[k].pod
	var nodes []starvation.Node
	var rows []int
	for row := range r.c.Table.Len() {
		if x.onRow[row] == nil && r.c.FitsEmpty(row, p) {
			nodes = append(nodes, x.node(row, nil))
			rows = append(rows, row)
		}
	}
	chosen, ok := starvation.Choose(w, nodes, clock(r.now), sim.SlotGPU, nil)
	if !ok {
		return nil
	}
	h := &activeHold{target: k}
	if err := x.plan(h, rows[chosen.Index]); err != nil {
		return err
	}
	x.holds = append(x.holds, h)
	x.onRow[h.row] = h
	return nil
}

// drain moves, within the budget, the pods in each held node's way when
// waiting alone will not free it within Patience, the ones that would
// stay longest first, each that fits elsewhere to where the policy puts
// it (the holds keep a move off every held node), keeping what it had
// left of its lifetime; then the target is tried there.
func (x *starving) drain(budget int) (int, error) {
	r := x.r
	patience := time.Duration(x.opts.Patience * float64(time.Second))
	moved := 0
	var rows []int
	for _, h := range slices.Clone(x.holds) {
		if moved >= budget {
			break
		}
		if err := x.replan(h); err != nil {
			return moved, err
		}
		if !h.hold.Overdue(clock(r.now), patience) {
			continue
		}
		row, target := h.row, r.pods[h.target].pod
		var order []int
		for _, i := range h.hold.DrainOrder(x.node(row, nil), clock(r.now), sim.SlotGPU) {
			order = append(order, h.pods[i])
		}
		n, err := r.drainRow(row, target, order, budget-moved)
		moved += n
		if err != nil {
			return moved, err
		}
		rows = append(rows, row)
	}
	if r.measuring() {
		x.stats.Drained += moved
	}
	return moved, r.retryRows(rows)
}
