package sim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/starvation"
)

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

// starving is a replay's starvation control between rounds: its holds,
// a node each, and which row each holds.
type starving struct {
	filter holdFilter
	holds  []*activeHold
	onRow  map[int]*activeHold
	// draining is set while drain moves pods off a held row: it keeps
	// them off every held row.
	draining bool
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
type holdFilter struct{ r *churn }

func (f *holdFilter) Name() string   { return "starvation" }
func (f *holdFilter) Volatile() bool { return true }

func (f *holdFilter) FilterNodes(_ *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	s := f.r.starve
	if len(s.holds) == 0 {
		return nil
	}
	for i := range nodes.Len() {
		if h := s.onRow[nodes.Row(i)]; h != nil && !f.r.admits(h, f.r.placing) {
			v.Reject(i, -1)
		}
	}
	return nil
}

func (f *holdFilter) Excluded(_ *scoring.Task, dst []int) []int {
	for _, h := range f.r.starve.holds {
		if !f.r.admits(h, f.r.placing) {
			dst = append(dst, h.row)
		}
	}
	return dst
}

func (f *holdFilter) Explain(_ *scoring.Task, _ *resource.Table, row, _ int) string {
	if h := f.r.starve.onRow[row]; h != nil {
		return fmt.Sprintf("held for %s, which it would delay", h.hold.Target)
	}
	return "held"
}

// admits reports whether pod k may go to the row h holds now.
func (r *churn) admits(h *activeHold, k int) bool {
	if k < 0 || k == h.target {
		return k >= 0
	}
	if r.starve.draining {
		return false
	}
	if err := r.replanHold(h); err != nil {
		return false
	}
	cp := &r.pods[k]
	p := r.starvePod(k)
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
	return h.hold.Admits(p, r.starveNode(h.row, nil), clock(r.now))
}

// starvePod is pod k as starvation control sees it, with the devices it
// holds and its declared end when it runs.
func (r *churn) starvePod(k int) starvation.Pod {
	cp := &r.pods[k]
	p := starvation.Pod{Name: targetName(k), Devices: resource.DeviceRequest{Count: cp.pod.NumGPU, Each: cp.pod.GPUMilli},
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

// starveNode is row as starvation control sees it: its amounts, its
// GPUs' free amounts and its pods (their indices in r.pods appended to
// pods when not nil).
func (r *churn) starveNode(row int, pods *[]int) starvation.Node {
	n := starvation.Node{Name: r.c.Table.Name(row), Allocatable: r.c.Table.Allocatable(row), Used: r.c.Table.Used(row),
		DeviceFree: r.c.GPUs.Free(row)}
	for _, k := range r.onRow[row] {
		n.Pods = append(n.Pods, r.starvePod(k))
		if pods != nil {
			*pods = append(*pods, k)
		}
	}
	return n
}

// replanHold plans hold h again when its row changed since.
func (r *churn) replanHold(h *activeHold) error {
	if r.c.Table.Version(h.row) == h.version {
		return nil
	}
	return r.planHold(h, h.row)
}

// planHold makes h hold row for its target, planned on the row as it is
// now.
func (r *churn) planHold(h *activeHold, row int) error {
	h.pods = h.pods[:0]
	n := r.starveNode(row, &h.pods)
	hold, err := starvation.Plan(r.starveWaiting(h.target), n, row, clock(r.now), slotGPU)
	if err != nil {
		return err
	}
	h.hold, h.row, h.version = hold, row, r.c.Table.Version(row)
	return nil
}

// starveWaiting is waiting pod k as starvation control sees it.
func (r *churn) starveWaiting(k int) starvation.Waiting {
	return starvation.Waiting{Pod: r.starvePod(k), Since: clock(r.pods[k].arrived)}
}

// starveRound keeps a hold for each of up to Holds targets: the holds
// whose targets still wait over the line stay (planned afresh on the node
// each fits first, among the nodes not held for another), and the next
// pods over the line, in starvation.Rank's order, get one each; a target
// that fits its held node now is placed there.
func (r *churn) starveRound() error {
	s := r.starve
	m := r.spec.Moves
	if r.now >= r.spec.WarmUp {
		r.res.Starved.NodeHours += float64(len(s.holds)) * m.Every / 3600
	}
	heads := r.waitingGPUPods()
	waiting := make([]starvation.Waiting, len(heads))
	index := map[int]int{}
	for i, k := range heads {
		waiting[i] = r.starveWaiting(k)
		index[k] = i
	}
	over := starvation.Rank(waiting, clock(r.now), starvation.Election{MinWait: time.Duration(m.After * float64(time.Second)), Size: slotGPU})
	// The targets: those held already, first, while over the line; then
	// the next over it.
	var targets []int
	isOver := map[int]bool{}
	for _, i := range over {
		isOver[heads[i]] = true
	}
	for _, h := range s.holds {
		if isOver[h.target] {
			targets = append(targets, h.target)
		}
	}
	for _, i := range over {
		if len(targets) >= max(m.Holds, 1) {
			break
		}
		if k := heads[i]; !slices.Contains(targets, k) {
			targets = append(targets, k)
			if r.now >= r.spec.WarmUp {
				r.res.Starved.Targets++
			}
		}
	}
	// A hold stays on its node while its target waits over the line (a
	// node chosen again every round would lose what draining it has won);
	// a new target is held the node it fits first among the others.
	kept := map[int]*activeHold{}
	for _, h := range s.holds {
		if slices.Contains(targets, h.target) {
			kept[h.target] = h
		}
	}
	s.holds, s.onRow = s.holds[:0], map[int]*activeHold{}
	for _, h := range kept {
		s.onRow[h.row] = h
	}
	for _, k := range targets {
		if h := kept[k]; h != nil {
			if err := r.planHold(h, h.row); err != nil {
				return err
			}
			s.holds = append(s.holds, h)
			continue
		}
		p := r.pods[k].pod
		var nodes []starvation.Node
		var rows []int
		for row := range r.c.Table.Len() {
			if s.onRow[row] == nil && r.c.FitsEmpty(row, p) {
				nodes = append(nodes, r.starveNode(row, nil))
				rows = append(rows, row)
			}
		}
		chosen, ok := starvation.Choose(waiting[index[k]], nodes, clock(r.now), slotGPU, nil)
		if !ok {
			continue
		}
		h := &activeHold{target: k}
		if err := r.planHold(h, rows[chosen.Index]); err != nil {
			return err
		}
		s.holds = append(s.holds, h)
		s.onRow[h.row] = h
	}
	for _, h := range slices.Clone(s.holds) {
		if err := r.retry(h.row); err != nil {
			return err
		}
	}
	return nil
}

// startTarget starts the target of the hold on row there, when it fits
// now, wherever it is in its shape's queue.
func (r *churn) startTarget(row int) error {
	if r.starve == nil {
		return nil
	}
	h := r.starve.onRow[row]
	if h == nil || !r.c.Fits(row, r.pods[h.target].pod) {
		return nil
	}
	k := h.target
	at, err := r.best(k, "")
	if err != nil || at < 0 {
		return err
	}
	r.dequeueAt(k)
	return r.start(k, at, r.now)
}

// starveDrain moves, within the budget, the pods in each held node's way
// when waiting alone will not free it within Patience, the ones that
// would stay longest first, each that fits elsewhere to where the policy
// puts it (the holds keep it off every held node), keeping what it had
// left of its lifetime; then the target is tried there.
func (r *churn) starveDrain(budget int) (int, error) {
	s := r.starve
	patience := time.Duration(r.spec.Moves.Patience * float64(time.Second))
	moved := 0
	var rows []int
	for _, h := range slices.Clone(s.holds) {
		if moved >= budget {
			break
		}
		if err := r.replanHold(h); err != nil {
			return moved, err
		}
		if !h.hold.Overdue(clock(r.now), patience) {
			continue
		}
		row, target := h.row, r.pods[h.target].pod
		n := r.starveNode(row, nil)
		var order []int
		for _, i := range h.hold.DrainOrder(n, clock(r.now), slotGPU) {
			order = append(order, h.pods[i])
		}
		s.draining = true
		for _, k := range order {
			if moved == budget || r.c.Fits(row, target) {
				break
			}
			to, err := r.best(k, "")
			if err != nil {
				s.draining = false
				return moved, err
			}
			if to < 0 || to == row {
				continue
			}
			if err := r.evict(k); err != nil {
				s.draining = false
				return moved, err
			}
			if err := r.start(k, to, r.now); err != nil {
				s.draining = false
				return moved, err
			}
			moved++
		}
		s.draining = false
		rows = append(rows, row)
	}
	if r.now >= r.spec.WarmUp {
		r.res.Starved.Drained += moved
	}
	return moved, r.retryRows(rows)
}

// waitingGPUPods are the waiting pods that ask for a GPU, each queue in
// turn.
func (r *churn) waitingGPUPods() []int {
	var out []int
	for _, q := range r.queues {
		if len(q) > 0 && r.pods[q[0]].pod.NumGPU > 0 {
			out = append(out, q...)
		}
	}
	return out
}

// releaseStarved ends the hold of a target, pod k, once it starts, and
// counts a pod started beside a target on its held row.
func (r *churn) releaseStarved(k int) {
	s := r.starve
	if s == nil {
		return
	}
	if h := s.onRow[r.pods[k].row]; h != nil && h.target != k && r.now >= r.spec.WarmUp {
		r.res.Starved.Backfilled++
	}
	for i, h := range s.holds {
		if h.target == k {
			if r.now >= r.spec.WarmUp {
				r.res.Starved.Started++
			}
			delete(s.onRow, h.row)
			s.holds = slices.Delete(s.holds, i, i+1)
			return
		}
	}
}
