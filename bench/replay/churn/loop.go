package churn

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/scoring"
)

// replay is a replay with departures in progress: the loop. It knows
// arrivals, departures, placement and time; everything else (the metrics,
// moves, the reservation, starvation control) is an add-on it calls at
// its events (addOn).
type replay struct {
	c      *sim.Cluster
	pipe   *scoring.Pipeline
	placer *scoring.Placer
	device sim.DeviceChoice
	spec   Spec
	res    *Result
	// addOns are called at every event, in order; reporting are every
	// add-on built, those that do nothing in this replay too, in the
	// order of their reports' columns.
	addOns, reporting []addOn

	pods []podState
	ends departures
	// shapeIDs numbers every shape that arrived, in arrival order
	// (pod.shape); queueOf is each shape's queue, -1 until a pod of it
	// first waits.
	shapeIDs map[queueKey]int
	queueOf  []int
	queues   [][]int // per shape that waited, its waiting pods in arrival order
	waiting  int     // pods waiting
	gpuWait  int     // of them asking for a GPU
	// waitMilli is the GPU the waiting pods ask for, in milli-GPU.
	waitMilli int64

	allocated int64 // milli-GPU held
	running   int   // pods running
	now       float64
	task      scoring.Task
	took      []int
	held      []int // the shapes a retry found kept out
	// onRow are the running pods of each row; placing is the pod being
	// placed, -1 for none (a move is no pod's own placement).
	onRow   [][]int
	placing int
	// noise draws what pods declare with noise (Spec.Declare).
	noise *rand.Rand
	// starts counts the pods started, startedMilli their GPUs.
	starts       int
	startedMilli int64
	// later are rows to try the waiting pods on at the next event
	// (retryLater).
	later []int
	// opening is the start's policy (Spec.Start), nil for the policy
	// replayed; observing is its pipeline while it places the pods alive
	// at time 0, which learns of the pods started then besides pipe.
	opening   *opening
	observing *scoring.Pipeline
}

// run places the pods alive at time 0 (arrived before it, in order), then
// takes arrivals, departures and the add-ons' rounds in time order until
// the window ends.
func (r *replay) run(initial []arrival, arrivals func() (arrival, bool)) error {
	if err := r.open(initial); err != nil {
		return err
	}
	end := r.spec.WarmUp + r.spec.Window
	next, more := arrivals()
	for {
		if err := r.retryKept(); err != nil {
			return err
		}
		t := math.Inf(1)
		if more {
			t = next.at
		}
		if len(r.ends) > 0 && r.ends[0].at <= t {
			t = r.ends[0].at
		}
		for _, a := range r.addOns {
			t = min(t, a.due())
		}
		if t > end {
			break
		}
		r.advance(t)
		made, err := r.rounds(t)
		if err != nil {
			return err
		}
		if made {
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
	for _, a := range r.reporting {
		r.res.Reports = append(r.res.Reports, a.report())
	}
	return nil
}

// open places the pods alive at time 0, in the order they arrived: by the
// start's policy where it is not the one replayed (Spec.Start).
func (r *replay) open(initial []arrival) error {
	if o := r.opening; o != nil {
		placer, device := r.placer, r.device
		r.placer, r.device, r.observing = o.placer, o.device, o.pipe
		defer func() { r.placer, r.device, r.observing = placer, device, nil }()
	}
	for _, a := range initial {
		if err := r.arrive(a); err != nil {
			return err
		}
		r.res.Alive++
	}
	return nil
}

// rounds makes the rounds due at t, in the add-ons' order, and reports
// whether there were any.
func (r *replay) rounds(t float64) (bool, error) {
	made := false
	for _, a := range r.addOns {
		if a.due() == t {
			made = true
			if err := a.round(); err != nil {
				return made, err
			}
		}
	}
	return made, nil
}

// advance tells the add-ons the replay stayed as it is up to t.
func (r *replay) advance(t float64) {
	for _, a := range r.addOns {
		a.advance(r.now, t)
	}
	r.now = max(r.now, t)
}

// fire tells every add-on of an event, in order.
func (r *replay) fire(e event) error {
	for _, a := range r.addOns {
		if err := a.on(e); err != nil {
			return err
		}
	}
	return nil
}

// arrive is a pod's arrival: placed where the policy puts it, or queued
// behind the waiting pods of its shape (which fit nowhere, so neither does
// it).
func (r *replay) arrive(a arrival) error {
	k := r.add(a)
	if err := r.fire(event{kind: podArrived, pod: k, row: -1}); err != nil {
		return err
	}
	if q := r.queueOf[r.pods[k].shape]; q >= 0 && len(r.queues[q]) > 0 {
		return r.wait(k)
	}
	row, err := r.best(k)
	if err != nil {
		return err
	}
	if row < 0 {
		return r.wait(k)
	}
	return r.start(k, row, a.at) // a pod alive at time 0 started when it arrived
}

// add makes the arrival a pod of the replay, neither waiting nor running
// yet, and returns its index.
func (r *replay) add(a arrival) int {
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
		declared = a.life * math.Exp(r.spec.sigma()*r.noise.NormFloat64())
	}
	r.pods = append(r.pods, podState{pod: a.pod, arrived: a.at, life: a.life, started: math.NaN(), row: -1, left: math.NaN(), shape: id, declared: declared})
	return len(r.pods) - 1
}

// best is where the policy puts pod k (-1: nowhere), for its own
// placement: its task, in r.task, is what the add-ons made of it
// (placing), and r.placing is k while the placer looks.
func (r *replay) best(k int) (int, error) {
	r.pods[k].pod.Task(&r.task)
	r.task.Job = ""
	if err := r.fire(event{kind: podPlacing, pod: k, row: -1, task: &r.task}); err != nil {
		return -1, err
	}
	r.placing = k
	defer func() { r.placing = -1 }()
	return r.placer.Best(&r.task)
}

// bestMove is where the policy puts running or evicted pod k when a move
// takes it (-1: nowhere): no pod's own placement, so nothing an add-on
// keeps for one pod admits it.
func (r *replay) bestMove(k int) (int, error) {
	r.pods[k].pod.Task(&r.task)
	r.task.Job = ""
	return r.placer.Best(&r.task)
}

// wait puts pod k at the back of its shape's queue.
func (r *replay) wait(k int) error {
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
	return r.fire(event{kind: podWaits, pod: k, row: -1})
}

// start places pod k on row, started at time t, and schedules its
// departure a lifetime later.
func (r *replay) start(k, row int, t float64) error {
	var err error
	if r.took, err = r.c.PlacePod(row, r.pods[k].pod, r.device, r.took); err != nil {
		return err
	}
	return r.begin(k, row, r.took, t)
}

// startPlaced starts waiting pod k, the first of its shape's queue, on
// row, where a plan placed it (the cluster holds it there already, on the
// GPUs holds).
func (r *replay) startPlaced(k, row int, holds []int) error {
	r.dequeue(k)
	return r.begin(k, row, holds, r.now)
}

// begin records pod k running on row, holding the GPUs, since t (the
// cluster holds it there already), and schedules its departure a lifetime
// later (what it had left, when it was evicted).
func (r *replay) begin(k, row int, holds []int, t float64) error {
	cp := &r.pods[k]
	cp.pod.Task(&r.task)
	cp.row, cp.holds = row, slices.Clone(holds)
	if math.IsNaN(cp.left) {
		r.pipe.Observe(&r.task)
		if r.observing != nil {
			r.observing.Observe(&r.task)
		}
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
	cp.gen++
	heap.Push(&r.ends, departure{at: cp.ends, pod: k, gen: cp.gen})
	return r.fire(event{kind: podStarted, pod: k, row: row})
}

// depart takes pod k off its node at the end of its lifetime, then places
// the waiting pods that fit there now, the earliest first.
func (r *replay) depart(k int) error {
	row := r.pods[k].row
	if err := r.takeOff(k); err != nil {
		return err
	}
	if err := r.fire(event{kind: podEnded, pod: k, row: row}); err != nil {
		return err
	}
	return r.retry(row)
}

// evict takes running pod k off its node, what it has left of its
// lifetime kept for when it runs again (its departure no longer its).
func (r *replay) evict(k int) error {
	cp := &r.pods[k]
	left, row := cp.ends-r.now, cp.row
	if err := r.takeOff(k); err != nil {
		return err
	}
	cp.holds, cp.left, cp.evicted = nil, left, r.now
	cp.gen++
	return r.fire(event{kind: podEvicted, pod: k, row: row})
}

// drainRow moves pods, in order, off row to where the policy puts them
// elsewhere (bestMove), each keeping what it had left of its lifetime,
// until target fits row or budget moves are made; a pod that fits
// nowhere else stays. It returns the moves made.
func (r *replay) drainRow(row int, target sim.Pod, order []int, budget int) (int, error) {
	moved := 0
	for _, k := range order {
		if moved == budget || r.c.Fits(row, target) {
			break
		}
		to, err := r.bestMove(k)
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
	return moved, nil
}

// takeOff takes running pod k off its node.
func (r *replay) takeOff(k int) error {
	cp := &r.pods[k]
	row := cp.row
	if err := r.c.Remove(row, cp.pod, cp.holds); err != nil {
		return err
	}
	r.allocated -= cp.pod.TotalMilliGPU()
	r.running--
	r.offRow(k, row)
	cp.row = -1
	return nil
}

// moveTo records running pod k moved to row, on the GPUs holds (a plan
// moved it there on the cluster); it keeps its departure.
func (r *replay) moveTo(k, row int, holds []int) error {
	cp := &r.pods[k]
	from := cp.row
	r.offRow(k, from)
	r.onRow[row] = append(r.onRow[row], k)
	cp.row, cp.holds = row, slices.Clone(holds)
	return r.fire(event{kind: podMoved, pod: k, row: row, from: from})
}

// offRow takes pod k off row's list of running pods (onRow).
func (r *replay) offRow(k, row int) {
	on := r.onRow[row]
	i := slices.Index(on, k)
	on[i] = on[len(on)-1]
	r.onRow[row] = on[:len(on)-1]
}

// retry places waiting pods after room was made on row: of the shapes
// whose first waiting pod could fit the row (cpu, memory, GPUs), the one
// that arrived first goes where the policy puts it, and so on until none
// fits. A shape whose first pod the policy's other filters keep out (the
// proportional reserve) waits on, the pods behind it too. The add-ons
// hear of the room first.
func (r *replay) retry(row int) error {
	if err := r.fire(event{kind: rowRoom, pod: -1, row: row}); err != nil {
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
		at, err := r.best(k)
		if err != nil {
			return err
		}
		if at < 0 {
			r.held = append(r.held, best)
			continue
		}
		r.dequeue(k)
		if err := r.start(k, at, r.now); err != nil {
			return err
		}
	}
	return nil
}

// retryRows retries the waiting pods on rows, each once, in row order.
func (r *replay) retryRows(rows []int) error {
	slices.Sort(rows)
	for _, row := range slices.Compact(rows) {
		if err := r.retry(row); err != nil {
			return err
		}
	}
	return nil
}

// retryLater keeps rows to try the waiting pods on at the loop's next
// event: for an add-on that made room where the loop cannot try them at
// once (in the middle of a placement).
func (r *replay) retryLater(rows ...int) { r.later = append(r.later, rows...) }

// retryKept tries the waiting pods on the rows retryLater kept.
func (r *replay) retryKept() error {
	if len(r.later) == 0 {
		return nil
	}
	rows := r.later
	r.later = nil
	return r.retryRows(rows)
}

// dequeue takes waiting pod k, the first of its shape's queue, out of it.
func (r *replay) dequeue(k int) {
	q := r.queueOf[r.pods[k].shape]
	if len(r.queues[q]) == 0 || r.queues[q][0] != k {
		panic(fmt.Sprintf("churn: pod %d is not the first of its queue", k)) // a programming error
	}
	r.queues[q] = r.queues[q][1:]
	r.waited(k)
}

// dequeueAt takes waiting pod k out of its shape's queue, wherever it is
// in it (a pod an add-on starts ahead of the pods of its shape that wait
// before it).
func (r *replay) dequeueAt(k int) {
	q := r.queueOf[r.pods[k].shape]
	i := slices.Index(r.queues[q], k)
	if i < 0 {
		panic(fmt.Sprintf("churn: pod %d is not in its queue", k)) // a programming error
	}
	r.queues[q] = slices.Delete(r.queues[q], i, i+1)
	r.waited(k)
}

// waited counts pod k, taken out of its queue, as waiting no more.
func (r *replay) waited(k int) {
	r.waiting--
	if r.pods[k].pod.NumGPU > 0 {
		r.gpuWait--
		r.waitMilli -= r.pods[k].pod.TotalMilliGPU()
	}
}
