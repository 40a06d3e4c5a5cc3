package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/starvation"
)

// Starvation control in a replay (ChurnMoves.Starve), through
// scoring/starvation as a host calls it: every round, the GPU pod that has
// waited longer than After, the largest first, is the target
// (starvation.Elect); the node it fits first, its pods leaving at the ends
// they declare (ChurnSpec.Declare), is held for it (starvation.Choose),
// and planned again whenever it changes; another pod may go there only
// where it cannot delay the target (starvation.Hold.Admits, a filter in
// the replay's pipeline). With drain moves, a hold that waiting alone will
// not free within Patience (starvation.Hold.Overdue) gives up the pods in
// its way, within the allowance (starvation.Hold.DrainOrder).

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

// starving is a replay's starvation control between rounds.
type starving struct {
	filter holdFilter
	target int // the target pod, -1 for none
	hold   starvation.Hold
	held   bool
	// row is the held row; version its table version when the hold was
	// planned (planned again when it changes); pods the replay's pods in
	// the order of the node view the hold was planned on.
	row     int
	version uint64
	pods    []int
	// draining is set while drain moves pods off the held row: it keeps
	// them off it.
	draining bool
}

// holdFilter keeps pods off the held row unless starvation.Hold.Admits
// them (the target always). It is volatile (the hold changes apart from
// the table) and a scoring.Excluder, so the placer passes over the held
// row for a pod it does not admit and remembers the rest as before.
type holdFilter struct{ r *churn }

func (f *holdFilter) Name() string   { return "starvation" }
func (f *holdFilter) Volatile() bool { return true }

func (f *holdFilter) FilterNodes(_ *scoring.Task, nodes scoring.Span, v *scoring.Verdicts) error {
	s := f.r.starve
	if !s.held || f.r.admits(f.r.placing) {
		return nil
	}
	for i := range nodes.Len() {
		if nodes.Row(i) == s.row {
			v.Reject(i, -1)
		}
	}
	return nil
}

func (f *holdFilter) Excluded(_ *scoring.Task, dst []int) []int {
	if s := f.r.starve; s.held && !f.r.admits(f.r.placing) {
		dst = append(dst, s.row)
	}
	return dst
}

func (f *holdFilter) Explain(*scoring.Task, *resource.Table, int, int) string {
	return fmt.Sprintf("held for %s, which it would delay", f.r.starve.hold.Target)
}

// admits reports whether pod k may go to the held row now.
func (r *churn) admits(k int) bool {
	s := r.starve
	if k < 0 || k == s.target {
		return k >= 0
	}
	if s.draining {
		return false
	}
	if err := r.replanHold(); err != nil {
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
			dev = r.device(s.row, cp.pod)
		}
		if dev < 0 {
			dev = r.c.GPUs.Tightest(s.row, cp.pod.GPUMilli)
		}
		if dev < 0 {
			return false
		}
		p.Holds = []starvation.DeviceHold{{Device: dev, Amount: cp.pod.GPUMilli}}
	}
	return s.hold.Admits(p, r.starveNode(s.row, nil), clock(r.now))
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

// replanHold plans the hold again when its row changed since.
func (r *churn) replanHold() error {
	s := r.starve
	if !s.held || r.c.Table.Version(s.row) == s.version {
		return nil
	}
	return r.planHold(s.row)
}

// planHold holds row for the target, planned on the row as it is now.
func (r *churn) planHold(row int) error {
	s := r.starve
	s.pods = s.pods[:0]
	n := r.starveNode(row, &s.pods)
	h, err := starvation.Plan(r.starveWaiting(s.target), n, row, clock(r.now), slotGPU)
	if err != nil {
		return err
	}
	s.hold, s.held, s.row, s.version = h, true, row, r.c.Table.Version(row)
	return nil
}

// starveWaiting is waiting pod k as starvation control sees it.
func (r *churn) starveWaiting(k int) starvation.Waiting {
	return starvation.Waiting{Pod: r.starvePod(k), Since: clock(r.pods[k].arrived)}
}

// starveRound elects the target and holds the node it fits first, and
// places it at once where it fits now.
func (r *churn) starveRound() error {
	s := r.starve
	m := r.spec.Moves
	if s.held && r.now >= r.spec.WarmUp {
		r.res.Starved.NodeHours += m.Every / 3600
	}
	heads := r.waitingHeads()
	waiting := make([]starvation.Waiting, len(heads))
	for i, k := range heads {
		waiting[i] = r.starveWaiting(k)
	}
	current := ""
	if s.target >= 0 {
		current = targetName(s.target)
	}
	i, ok := starvation.Elect(waiting, clock(r.now), starvation.Election{MinWait: time.Duration(m.After * float64(time.Second)), Size: slotGPU}, current)
	if !ok {
		s.target, s.held = -1, false
		return nil
	}
	k := heads[i]
	if k != s.target && r.now >= r.spec.WarmUp {
		r.res.Starved.Targets++
	}
	s.target = k
	p := r.pods[k].pod
	var nodes []starvation.Node
	var rows []int
	for row := range r.c.Table.Len() {
		if r.c.FitsEmpty(row, p) {
			nodes = append(nodes, r.starveNode(row, nil))
			rows = append(rows, row)
		}
	}
	h, ok := starvation.Choose(waiting[i], nodes, clock(r.now), slotGPU, nil)
	if !ok {
		s.held = false
		return nil
	}
	if err := r.planHold(rows[h.Index]); err != nil {
		return err
	}
	if r.c.Fits(s.row, p) {
		return r.retry(s.row)
	}
	return nil
}

// starveDrain moves, within the budget, the pods in the held node's way
// when waiting alone will not free it within Patience, the ones that
// would stay longest first, each that fits elsewhere to where the policy
// puts it (the hold keeps it off the held node), keeping what it had left
// of its lifetime; then the target is tried there.
func (r *churn) starveDrain(budget int) (int, error) {
	s := r.starve
	if !s.held || budget < 1 {
		return 0, nil
	}
	if err := r.replanHold(); err != nil {
		return 0, err
	}
	patience := time.Duration(r.spec.Moves.Patience * float64(time.Second))
	if !s.hold.Overdue(clock(r.now), patience) {
		return 0, nil
	}
	row, target := s.row, r.pods[s.target].pod
	n := r.starveNode(row, nil)
	var order []int
	for _, i := range s.hold.DrainOrder(n, clock(r.now), slotGPU) {
		order = append(order, s.pods[i])
	}
	moved := 0
	s.draining = true
	defer func() { s.draining = false }()
	for _, k := range order {
		if moved == budget || r.c.Fits(row, target) {
			break
		}
		to, err := r.best(k, "")
		if err != nil {
			return moved, err
		}
		if to < 0 || to == row {
			continue
		}
		if err := r.evict(k); err != nil {
			return moved, err
		}
		if err := r.start(k, to, r.now); err != nil {
			return moved, err
		}
		moved++
	}
	s.draining = false
	if r.now >= r.spec.WarmUp {
		r.res.Starved.Drained += moved
	}
	return moved, r.retry(row)
}

// releaseStarved ends the hold once its target, pod k, starts, and counts
// a pod started beside a target on its held row.
func (r *churn) releaseStarved(k int) {
	s := r.starve
	if s == nil {
		return
	}
	if k != s.target {
		if s.held && r.pods[k].row == s.row && r.now >= r.spec.WarmUp {
			r.res.Starved.Backfilled++
		}
		return
	}
	if r.now >= r.spec.WarmUp {
		r.res.Starved.Started++
	}
	s.target, s.held = -1, false
}
