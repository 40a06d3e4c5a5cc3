package sim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
	"github.com/resfit/resfit/scoring/frag"
)

// churn is a replay with departures in progress.
type churn struct {
	c       *Cluster
	pipe    *scoring.Pipeline
	placer  *scoring.Placer
	device  DeviceChoice
	measure *frag.Measure
	spec    ChurnSpec
	res     *ChurnResult

	pods []churnPod
	ends departures
	// shapeIDs numbers every shape that arrived, in arrival order
	// (churnPod.shape); queueOf is each shape's queue, -1 until a pod of
	// it first waits.
	shapeIDs map[queueKey]int
	queueOf  []int
	queues   [][]int // per shape that waited, its waiting pods in arrival order
	waiting  int     // pods waiting
	gpuWait  int     // of them asking for a GPU
	// waitMilli is the GPU the waiting pods ask for, in milli-GPU.
	waitMilli int64

	allocated int64     // milli-GPU held
	nodeFrag  []float64 // each node's fragmentation
	fragSum   float64
	now       float64 // the time the integrals have reached
	task      scoring.Task
	took      []int
	held      []int            // the shapes a retry found kept out
	running   int              // pods running
	allowance defrag.Allowance // moves a round may make (ChurnMoves)
	resv      *reserving       // the reservation (ChurnMoves.Reserve), or nil
	starve    *starving        // starvation control (ChurnMoves.Starve), or nil
	// onRow are the running pods of each row; placing is the pod being
	// placed (a filter of starvation control reads it), -1 for none.
	onRow   [][]int
	placing int
	// windowSeen is set once the window has started.
	windowSeen bool
	// noise draws what pods declare with noise (ChurnSpec.Declare).
	noise *rand.Rand
	// floorSum, shareFloorSum and floorCount sum the floors computed in
	// the window.
	floorSum, shareFloorSum float64
	floorCount              int
	// floorSeen, when not nil, is shown each floor as it is computed, with
	// the idle GPU it bounds (milli-GPU), while GPU pods wait.
	floorSeen func(idle, floor, share float64)
	// starts counts the pods started, startedMilli their GPUs.
	starts       int
	startedMilli int64
	// integrals over the window, in milli-GPU seconds (or seconds)
	idleWaiting, idle, frag, waitingTime float64
}

// RunChurn replays a policy with departures on the nodes: the pods alive
// at time 0, then arrivals until the warm-up and window are over (the
// arrivals function, nil for the Poisson process of the lifetimes at the
// spec's load, gives them in time order, ok false when there are no
// more). The seed fixes the node priority, the draws and the Random
// policy's.
func RunChurn(policy Policy, in Input, l *Lifetimes, spec ChurnSpec, seed uint64, opts Options, arrivals func() (arrival, bool)) (*ChurnResult, error) {
	r, err := newChurn(policy, in, spec, seed, opts)
	if err != nil {
		return nil, err
	}
	var initial []arrival
	if arrivals == nil {
		if l == nil {
			return nil, errors.New("churn: no lifetimes to draw arrivals from")
		}
		initial, arrivals = poisson(l, spec.Load, r.c.CapacityMilliGPU, seed)
	}
	if err := r.run(initial, arrivals); err != nil {
		return nil, err
	}
	return r.res, nil
}

// newChurn is a replay with departures on an empty cluster.
func newChurn(policy Policy, in Input, spec ChurnSpec, seed uint64, opts Options) (*churn, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	order, err := NodeOrder(in.Nodes, seed, opts.Tiebreak)
	if err != nil {
		return nil, err
	}
	c, err := NewCluster(Schema(), in.Nodes, order)
	if err != nil {
		return nil, err
	}
	pipe, device, err := policy.Build(c, Env{Seed: seed, Classes: in.Classes, FromScratch: opts.FromScratch, CoresPerGPU: in.CoresPerGPU()})
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", policy.Name, err)
	}
	var resv *reserving
	if spec.Moves.Reserve {
		resv = &reserving{target: -1}
		if pipe, err = pipe.WithFilters(&resv.filter); err != nil {
			return nil, err
		}
	}
	var starve *starving
	if spec.Moves.Starve {
		starve = &starving{}
		if pipe, err = pipe.WithFilters(&starve.filter); err != nil {
			return nil, err
		}
	}
	placer, err := scoring.NewPlacer(pipe, c.Table, scoring.PlacerOptions{MaxClasses: placerClasses})
	if err != nil {
		return nil, err
	}
	m, err := Measure(in.Classes)
	if err != nil {
		return nil, err
	}
	r := &churn{c: c, pipe: pipe, placer: placer, device: device, measure: m, spec: spec, shapeIDs: map[queueKey]int{}, resv: resv, starve: starve,
		onRow: make([][]int, c.Table.Len()), placing: -1, noise: rand.New(rand.NewPCG(seed, 0x6e6f697365)),
		res: &ChurnResult{Policy: policy.Name, Seed: seed, Load: spec.Load, Moves: spec.Moves.Name()}, nodeFrag: make([]float64, c.Table.Len())}
	for i := range c.Table.Len() {
		r.refreshFrag(i)
	}
	if starve != nil {
		starve.filter.r, starve.onRow = r, map[int]*activeHold{}
	}
	return r, nil
}

// run places the pods alive at time 0 (arrived before it, in order), then
// takes arrivals and departures in time order until the window ends.
func (r *churn) run(initial []arrival, arrivals func() (arrival, bool)) error {
	for _, a := range initial {
		if err := r.arrive(a); err != nil {
			return err
		}
		r.res.Alive++
	}
	end := r.spec.WarmUp + r.spec.Window
	next, more := arrivals()
	rounds := math.Inf(1) // the next round of moves
	if r.spec.Moves.active() {
		rounds = r.spec.Moves.Every
	}
	floors := math.Inf(1) // the next floor
	if r.spec.Floor > 0 {
		floors = FloorEvery
	}
	for {
		if err := r.retryUnlocked(); err != nil {
			return err
		}
		t := math.Inf(1)
		if more {
			t = next.at
		}
		if len(r.ends) > 0 && r.ends[0].at <= t {
			t = r.ends[0].at
		}
		t = min(t, rounds, floors)
		if t > end {
			break
		}
		r.advance(t)
		if t == floors {
			if err := r.floor(); err != nil {
				return err
			}
			floors += FloorEvery
			continue
		}
		if t == rounds {
			if err := r.round(); err != nil {
				return err
			}
			rounds += r.spec.Moves.Every
			continue
		}
		if len(r.ends) > 0 && r.ends[0].at == t {
			d := heap.Pop(&r.ends).(departure)
			if d.gen != r.pods[d.pod].gen {
				continue // evicted since: no longer its departure
			}
			if err := r.depart(d.pod); err != nil {
				return err
			}
		} else {
			if next.at >= r.spec.WarmUp {
				r.res.Arrivals++
			}
			if err := r.arrive(next); err != nil {
				return err
			}
			next, more = arrivals()
		}
		r.res.Events++
	}
	r.advance(end)
	r.finish()
	return nil
}

// arrive is a pod's arrival: placed where the policy puts it, or queued
// behind the waiting pods of its shape (which fit nowhere, so neither does
// it).
func (r *churn) arrive(a arrival) error {
	k := r.add(a)
	if q := r.queueOf[r.pods[k].shape]; q >= 0 && len(r.queues[q]) > 0 {
		r.wait(k)
		return nil
	}
	row, err := r.best(k, "")
	if err != nil {
		return err
	}
	if row < 0 {
		r.wait(k)
		return nil
	}
	return r.start(k, row, a.at) // a pod alive at time 0 started when it arrived
}

// best is where the policy puts pod k (-1: nowhere), its task in r.task
// with the job given (the reservation's filter reads it).
func (r *churn) best(k int, job string) (int, error) {
	r.pods[k].pod.Task(&r.task)
	r.task.Job = job
	r.placing = k
	defer func() { r.placing = -1 }()
	return r.placer.Best(&r.task)
}

// add makes the arrival a pod of the replay, neither waiting nor running
// yet, and returns its index.
func (r *churn) add(a arrival) int {
	key := shapeOf(a.pod)
	id, ok := r.shapeIDs[key]
	if !ok {
		id = len(r.shapeIDs)
		r.shapeIDs[key] = id
		r.queueOf = append(r.queueOf, -1)
	}
	declared := math.NaN()
	switch r.spec.Declare {
	case DeclareExact:
		declared = a.life
	case DeclareNoisy:
		declared = a.life * math.Exp(r.noise.NormFloat64())
	}
	r.pods = append(r.pods, churnPod{pod: a.pod, arrived: a.at, life: a.life, started: math.NaN(), row: -1, left: math.NaN(), shape: id, declared: declared})
	return len(r.pods) - 1
}

// wait puts pod k at the back of its shape's queue.
func (r *churn) wait(k int) {
	id := r.pods[k].shape
	q := r.queueOf[id]
	if q < 0 {
		q = len(r.queues)
		r.queueOf[id] = q
		r.queues = append(r.queues, nil)
	}
	r.queues[q] = append(r.queues[q], k)
	r.waiting++
	if r.pods[k].pod.NumGPU > 0 {
		r.gpuWait++
		r.waitMilli += r.pods[k].pod.TotalMilliGPU()
	}
}

// start places pod k on row, started at time t, and schedules its
// departure a lifetime later.
func (r *churn) start(k, row int, t float64) error {
	var err error
	if r.took, err = placePod(r.c, row, r.pods[k].pod, r.device, r.took); err != nil {
		return err
	}
	r.begin(k, row, r.took, t)
	return nil
}

// begin records pod k running on row, holding the GPUs, since t (the
// cluster holds it there already), and schedules its departure a lifetime
// later.
func (r *churn) begin(k, row int, holds []int, t float64) {
	cp := &r.pods[k]
	cp.pod.Task(&r.task)
	cp.row, cp.holds = row, slices.Clone(holds)
	if math.IsNaN(cp.left) {
		r.pipe.Observe(&r.task)
		cp.started, cp.ends = t, t+cp.life
		r.starts++
		r.startedMilli += cp.pod.TotalMilliGPU()
	} else { // evicted, it runs what it had left
		cp.ends, cp.left = t+cp.left, math.NaN()
		cp.waited += t - cp.evicted
	}
	r.allocated += cp.pod.TotalMilliGPU()
	r.running++
	r.onRow[row] = append(r.onRow[row], k)
	r.refreshFrag(row)
	r.release(k)
	r.releaseStarved(k)
	cp.gen++
	heap.Push(&r.ends, departure{at: cp.ends, pod: k, gen: cp.gen})
}

// depart takes pod k off its node, then places the waiting pods that fit
// there now, the earliest first.
func (r *churn) depart(k int) error {
	row := r.pods[k].row
	if err := r.takeOff(k); err != nil {
		return err
	}
	return r.retry(row)
}

// evict takes running pod k off its node, what it has left of its
// lifetime kept for when it runs again (its departure no longer its).
func (r *churn) evict(k int) error {
	cp := &r.pods[k]
	left := cp.ends - r.now
	if err := r.takeOff(k); err != nil {
		return err
	}
	cp.holds, cp.left, cp.evicted = nil, left, r.now
	cp.gen++
	return nil
}

// takeOff takes running pod k off its node.
func (r *churn) takeOff(k int) error {
	cp := &r.pods[k]
	row := cp.row
	if err := r.c.Remove(row, cp.pod, cp.holds); err != nil {
		return err
	}
	r.allocated -= cp.pod.TotalMilliGPU()
	r.running--
	r.offRow(k, row)
	cp.row = -1
	r.refreshFrag(row)
	return nil
}

// retry places waiting pods after room was made on row: of the shapes
// whose first waiting pod could fit the row (cpu, memory, GPUs), the one
// that arrived first goes where the policy puts it, and so on until none
// fits. A shape whose first pod the policy's other filters keep out (the
// proportional reserve) waits on, the pods behind it too.
func (r *churn) retry(row int) error {
	if err := r.startTarget(row); err != nil {
		return err
	}
	r.held = r.held[:0]
	for r.waiting > 0 {
		best, first := -1, math.Inf(1)
		for q, queue := range r.queues {
			if len(queue) == 0 || slices.Contains(r.held, q) {
				continue
			}
			cp := &r.pods[queue[0]]
			if cp.arrived < first && r.c.Fits(row, cp.pod) {
				best, first = q, cp.arrived
			}
		}
		if best < 0 {
			return nil
		}
		k := r.queues[best][0]
		at, err := r.best(k, r.jobOf(k))
		if err != nil {
			return err
		}
		if at < 0 {
			r.held = append(r.held, best)
			continue
		}
		r.queues[best] = r.queues[best][1:]
		r.waiting--
		if r.pods[k].pod.NumGPU > 0 {
			r.gpuWait--
			r.waitMilli -= r.pods[k].pod.TotalMilliGPU()
		}
		if err := r.start(k, at, r.now); err != nil {
			return err
		}
	}
	return nil
}

// offRow takes pod k off row's list of running pods (onRow).
func (r *churn) offRow(k, row int) {
	on := r.onRow[row]
	i := slices.Index(on, k)
	on[i] = on[len(on)-1]
	r.onRow[row] = on[:len(on)-1]
}

// refreshFrag works row's fragmentation out again.
func (r *churn) refreshFrag(row int) {
	f := r.c.NodeFragmentation(r.measure, row)
	r.fragSum += f - r.nodeFrag[row]
	r.nodeFrag[row] = f
}
