package sim

import (
	"fmt"
	"math"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
	"github.com/resfit/resfit/scoring/frag"
)

// DefragMethod is how a pass after the arrivals moves placed pods.
type DefragMethod string

const (
	// NoMoves moves nothing: the cluster as the arrivals leave it.
	NoMoves DefragMethod = "none"
	// MakeRoom takes the pending pods in arrival order and, for each,
	// makes the fewest moves (at most Defrag.K) after which it fits
	// (scoring/defrag.MakeRoom), then places it.
	MakeRoom DefragMethod = "make-room"
	// Reclaim spends up to ⌈Defrag.Ratio × placed pods⌉ moves on the
	// pending pods, the most GPU per move first (scoring/defrag.Reclaim,
	// at most ReclaimMaxMoves a pod), then retries the pending pods in
	// arrival order.
	Reclaim DefragMethod = "reclaim"
	// GiveBack makes up to ⌈Defrag.Ratio × placed pods⌉ moves, each the
	// one that most lowers the fragmentation of the workload's typical
	// classes (scoring/defrag.GiveBack over the replay's measure, every
	// node a candidate), placing the pending pods in arrival order as the
	// moves let them in, and keeps the moves up to the last that did.
	GiveBack DefragMethod = "give-back"
	// FragMultiPod is the fragMultiPod descheduler of the FGD paper's
	// simulator (hkust-adsl/kubernetes-scheduler-simulator,
	// pkg/simulator/deschedule.go, descheduleClusterOnFragMultiPod and
	// findVictimPodOnNodeFragAware), written here after it: nodes in a
	// max-heap by fragmentation (the replay's measure, the simulator's
	// FragAmountSumExceptQ3); the top node loses the pod whose removal
	// lowers its fragmentation most, by at least one milli-GPU after
	// truncation to a whole number (a node where none does leaves the
	// heap), and goes back with its new fragmentation; up to
	// ⌈Defrag.Ratio × placed pods⌉ evictions; then the evicted pods are
	// placed again in eviction order by the policy (one that fits nowhere
	// stays pending, lost), then the pending pods are retried in arrival
	// order.
	FragMultiPod DefragMethod = "fragMultiPod"
)

// PlanStates caps each plan's search in MakeRoom and Reclaim passes
// (scoring/defrag.Options.MaxStates), so that a pass gives the same
// answer on any machine; on openb's seed 42 a cap ten times smaller, and
// no cap for k = 2, find the same plans.
const PlanStates = 100_000

// ReclaimMaxMoves is the most moves a Reclaim pass makes for one pod.
const ReclaimMaxMoves = 4

// Defrag is a pass after the arrivals.
type Defrag struct {
	Method DefragMethod
	// K caps each pending pod's moves (MakeRoom).
	K int
	// Ratio caps the moves at ⌈Ratio × placed pods⌉ (Reclaim, GiveBack,
	// FragMultiPod).
	Ratio float64
}

// Name is the pass as the tables name it: "none", "make-room k=2",
// "reclaim 1%", "fragMultiPod 0.5%".
func (d Defrag) Name() string {
	switch d.Method {
	case NoMoves:
		return string(d.Method)
	case MakeRoom:
		return fmt.Sprintf("%s k=%d", d.Method, d.K)
	}
	return fmt.Sprintf("%s %g%%", d.Method, 100*d.Ratio)
}

// budgeted reports whether the pass's moves are capped by Ratio.
func (d Defrag) budgeted() bool {
	return d.Method == Reclaim || d.Method == GiveBack || d.Method == FragMultiPod
}

// Check reports a pass that cannot run.
func (d Defrag) Check() error {
	switch {
	case d.Method == MakeRoom && d.K < 1:
		return fmt.Errorf("defrag %s: k must be ≥ 1, got %d", d.Method, d.K)
	case d.budgeted() && !(d.Ratio > 0 && d.Ratio <= 1):
		return fmt.Errorf("defrag %s: the ratio must be in (0, 1], got %v", d.Method, d.Ratio)
	case d.Method != NoMoves && d.Method != MakeRoom && !d.budgeted():
		return fmt.Errorf("defrag: method %q is not one of %q, %q, %q, %q, %q", d.Method, NoMoves, MakeRoom, Reclaim, GiveBack, FragMultiPod)
	}
	return nil
}

// DefragResult is what a pass did, and the cluster after it.
type DefragResult struct {
	Name string
	// Budget is the most moves the pass could make (budgeted passes; 0
	// for the others).
	Budget int
	// Moves counts the pods moved (FragMultiPod: evicted, whether or not
	// they found a node again); Lost, the evicted pods that found none.
	Moves, Lost int
	// Placed counts the pending pods the pass placed; Pending, the pods
	// pending after it (the lost ones included).
	Placed, Pending int
	// Unallocated and Fragmented are the GPU unallocated and fragmented
	// after the pass, in percent of capacity.
	Unallocated, Fragmented float64
	// Floor is the least GPU any plan of the pass's moves (its budget,
	// or the moves it made) can leave unallocated, in percent of
	// capacity: the unallocated before the pass less
	// scoring/defrag.BoundReclaim's bound for the pending pods.
	Floor float64
}

// placed is a pod on the cluster: its index in the workload, row and the
// GPUs it holds there.
type placed struct {
	pod   int
	row   int
	holds []int
}

// pass is a defrag pass's state: the cluster as the arrivals left it.
type pass struct {
	c       *Cluster
	pipe    *scoring.Pipeline
	placer  *scoring.Placer
	device  DeviceChoice
	pods    []Pod
	dc      *defrag.Cluster
	index   []int // each of dc.Pods' index in pods
	pending []int // the pending pods, in arrival order
	measure *frag.Measure
	res     DefragResult
}

// runDefrag runs a pass on the cluster as the arrivals left it: on the
// pods placed (in placement order) and those pending (in arrival order).
func runDefrag(d Defrag, c *Cluster, pipe *scoring.Pipeline, placer *scoring.Placer, device DeviceChoice, pods []Pod, on []placed, pending []int, m *frag.Measure) (*DefragResult, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	p := &pass{c: c, pipe: pipe, placer: placer, device: device, pods: pods, pending: pending, measure: m,
		dc: &defrag.Cluster{Pipeline: pipe, Table: c.Table, Devices: c.GPUs, Placer: placer}}
	if s := FGDScorer(pipe); s != nil {
		p.dc.Device = func(task *scoring.Task, row int) int { return s.Device(task, c.Table, row) }
	}
	for _, pl := range on {
		p.add(pl)
	}
	limit, err := defrag.BoundReclaim(p.dc, p.tasks(), nil)
	if err != nil {
		return nil, err
	}
	before := p.unallocated()
	if d.budgeted() {
		p.res.Budget = budgetOf(d.Ratio, len(on))
	}
	switch d.Method {
	case MakeRoom:
		err = p.makeRoom(d.K)
	case Reclaim:
		err = p.reclaim(p.res.Budget)
	case GiveBack:
		err = p.giveBack(p.res.Budget)
	case FragMultiPod:
		err = p.fragMultiPod(p.res.Budget)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name(), err)
	}
	p.res.Name = d.Name()
	p.res.Pending = len(p.pending)
	p.res.Unallocated = p.unallocated()
	p.res.Fragmented = 100 * Fragmented(m, c) / float64(c.CapacityMilliGPU)
	p.res.Floor = before - 100*float64(limit.Within(max(p.res.Budget, p.res.Moves)))/float64(c.CapacityMilliGPU)
	return &p.res, nil
}

// unallocated is the GPU the placed pods leave unallocated, in percent.
func (p *pass) unallocated() float64 {
	var allocated int64
	for _, i := range p.index {
		allocated += p.pods[i].TotalMilliGPU()
	}
	return 100 - 100*float64(allocated)/float64(p.c.CapacityMilliGPU)
}

// tasks are the pending pods as tasks, in arrival order.
func (p *pass) tasks() []*scoring.Task {
	out := make([]*scoring.Task, len(p.pending))
	for n, k := range p.pending {
		out[n] = new(scoring.Task)
		p.pods[k].Task(out[n])
	}
	return out
}

// budgetOf is ⌈ratio × n⌉, as the simulator counts its descheduling budget.
func budgetOf(ratio float64, n int) int { return int(math.Ceil(ratio * float64(n))) }

// add records a placed pod as one the planner may move.
func (p *pass) add(pl placed) {
	task := new(scoring.Task)
	p.pods[pl.pod].Task(task)
	p.dc.Pods = append(p.dc.Pods, defrag.Pod{Task: task, Row: pl.row, Holds: pl.holds, Movable: true})
	p.index = append(p.index, pl.pod)
}

// place places workload pod k where the policy puts it now, if anywhere.
func (p *pass) place(k int) (bool, error) {
	var task scoring.Task
	p.pods[k].Task(&task)
	row, err := p.best(&task)
	if err != nil || row < 0 {
		return false, err
	}
	return true, p.placeAt(k, row)
}

// best is the policy's node for a task now.
func (p *pass) best(task *scoring.Task) (int, error) {
	if p.placer != nil {
		return p.placer.Best(task)
	}
	b := p.pipe.NewBatch(p.c.Table.Len())
	if err := p.pipe.Score(task, p.c.Table, b); err != nil {
		return -1, err
	}
	if top := b.Top(1, nil); len(top) == 1 {
		return top[0], nil
	}
	return -1, nil
}

// placeAt binds workload pod k to row as the arrivals do, and records it.
func (p *pass) placeAt(k, row int) error {
	holds, err := p.c.PlacePod(row, p.pods[k], p.device, nil)
	if err != nil {
		return err
	}
	p.add(placed{pod: k, row: row, holds: holds})
	return nil
}

// retry places the pending pods that fit now, in arrival order.
func (p *pass) retry() error {
	var still []int
	for _, k := range p.pending {
		ok, err := p.place(k)
		if err != nil {
			return err
		}
		if ok {
			p.res.Placed++
		} else {
			still = append(still, k)
		}
	}
	p.pending = still
	return nil
}

func (p *pass) makeRoom(k int) error {
	var still []int
	// A pod of a shape that found no plan finds none until a plan changes
	// the cluster.
	failed := map[Shape]bool{}
	for _, w := range p.pending {
		pod := p.pods[w]
		shape := Shape{MilliCPU: pod.MilliCPU, GPUMilli: pod.GPUMilli, NumGPU: pod.NumGPU, Models: pod.GPUSpec}
		if failed[shape] {
			still = append(still, w)
			continue
		}
		task := new(scoring.Task)
		pod.Task(task)
		plan, err := defrag.MakeRoom(p.dc, task, defrag.Options{MaxMoves: k, ExactStates: -1, MaxStates: PlanStates})
		if err != nil {
			return err
		}
		if !plan.Found {
			failed[shape] = true
			still = append(still, w)
			continue
		}
		clear(failed)
		if err := defrag.Apply(p.dc, plan); err != nil {
			return err
		}
		p.res.Moves += len(plan.Moves)
		if err := p.placeAt(w, plan.Row); err != nil {
			return err
		}
		p.res.Placed++
	}
	p.pending = still
	return nil
}

func (p *pass) reclaim(moves int) error {
	got, err := defrag.Reclaim(p.dc, p.tasks(), defrag.ReclaimOptions{Moves: moves, MaxMoves: ReclaimMaxMoves, MaxStates: PlanStates, Movable: true})
	if err != nil {
		return err
	}
	var in []int
	for _, r := range got {
		in = append(in, r.Task)
		p.res.Moves += len(r.Plan.Moves)
	}
	return p.took(in)
}

func (p *pass) giveBack(moves int) error {
	c := p.c
	steps, err := defrag.GiveBack(p.dc, func(row int) float64 {
		return c.NodeFragmentation(p.measure, row)
	}, defrag.GiveBackOptions{Moves: moves, Candidates: c.Table.Len(), Pending: p.tasks(), Movable: true})
	if err != nil {
		return err
	}
	p.res.Moves = len(steps)
	var in []int
	for _, s := range steps {
		in = append(in, s.Placed...)
	}
	return p.took(in)
}

// took records the pending pods a planner placed (indices into pending,
// in the order it added them to the cluster's pods), then retries the
// others.
func (p *pass) took(in []int) error {
	took := make([]bool, len(p.pending))
	for _, n := range in {
		p.index = append(p.index, p.pending[n])
		took[n] = true
		p.res.Placed++
	}
	still := p.pending[:0]
	for n, k := range p.pending {
		if !took[n] {
			still = append(still, k)
		}
	}
	p.pending = still
	return p.retry()
}

// fragMultiPod is the arrival-only pass's FragMultiPod
// (DescheduleFragMultiPod): the evicted pods placed again in eviction order, where
// the policy puts them; those that fit nowhere are lost (pending).
func (p *pass) fragMultiPod(evictions int) error {
	c := p.c
	onRow := make([][]int, c.Table.Len()) // indices into dc.Pods
	for i, pod := range p.dc.Pods {
		onRow[pod.Row] = append(onRow[pod.Row], i)
	}
	frag := make([]float64, c.Table.Len())
	for row := range frag {
		frag[row] = c.NodeFragmentation(p.measure, row)
	}
	victims, _, err := DescheduleFragMultiPod(frag, onRow, evictions, func(i, row int) (float64, error) {
		if err := p.take(i, true); err != nil {
			return 0, err
		}
		f := c.NodeFragmentation(p.measure, row)
		return f, p.take(i, false)
	}, func(i, _ int) error {
		err := p.take(i, true)
		p.dc.Pods[i].Row = -1 // off the cluster
		return err
	})
	if err != nil {
		return err
	}
	var evicted []int // workload indices, in eviction order
	for _, i := range victims {
		evicted = append(evicted, p.index[i])
	}
	p.res.Moves = len(evicted)
	// Drop the evicted from the planner's pods, then place them again.
	keep := 0
	for i, pod := range p.dc.Pods {
		if pod.Row >= 0 {
			p.dc.Pods[keep], p.index[keep] = pod, p.index[i]
			keep++
		}
	}
	p.dc.Pods, p.index = p.dc.Pods[:keep], p.index[:keep]
	var lost []int
	for _, k := range evicted {
		ok, err := p.place(k)
		if err != nil {
			return err
		}
		if !ok {
			lost = append(lost, k)
		}
	}
	if err := p.retry(); err != nil {
		return err
	}
	p.res.Lost = len(lost)
	p.pending = append(p.pending, lost...)
	return nil
}

// take takes planner pod i off its row (off) or puts it back.
func (p *pass) take(i int, off bool) error {
	pod := p.dc.Pods[i]
	if err := p.c.Table.AddUsed(pod.Row, pod.Task.Requests, nil, off); err != nil {
		return err
	}
	for _, j := range pod.Holds {
		var err error
		if off {
			err = p.c.GPUs.Return(pod.Row, j, pod.Task.Devices.Each)
		} else {
			err = p.c.GPUs.Take(pod.Row, j, pod.Task.Devices.Each)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
