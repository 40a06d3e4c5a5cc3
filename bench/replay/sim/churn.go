package sim

import (
	"cmp"
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

// A replay with departures (churn): pods arrive over time and leave when
// their lifetime is over, so GPUs free up in the middle of busy nodes, as
// they do in a cluster that runs for days.
//
//   - Pods are drawn from the pod list as the paper draws them (uniformly,
//     with replacement), and arrive as a Poisson process.
//   - Each gets a lifetime drawn from the lifetimes of the list's pods of
//     its size (Lifetimes): CPU-only, a share of a GPU, one GPU, or more
//     (the list's 2-, 4- and 8-GPU pods together: 74 ran). Pods that never
//     ran (Pending) give no lifetime; the 34 still running at the trace's
//     end give theirs up to it, a lower bound, as they are.
//   - The arrival rate makes the offered GPU load (rate × E[GPUs ×
//     lifetime]) Load × the cluster's GPU capacity.
//   - The run starts in the steady state of an unbounded cluster: the pods
//     alive at time 0 had arrived by the same process (their lifetimes
//     length-biased, their ages uniform over them), and are placed in the
//     order they arrived. The trace's lifetimes are heavy-tailed (a few
//     pods ran for months and hold most of its GPU-hours), so that a run
//     that started empty would take months to fill.
//   - A pod that fits nowhere waits. The queue is first in, first out and
//     without backoff, and a waiting pod does not block the ones behind it
//     (kube-scheduler's order by arrival, without its backoff): when a pod
//     leaves a node, the waiting pods that fit there now are placed, the
//     earliest first, each where the policy puts it. Nothing else can make
//     room, so a pod waits for nothing but a departure.
//   - A warm-up is discarded; the metrics are averaged over the window
//     after it (ChurnResult).

// Size classes of pods, for lifetimes and waiting times.
const (
	SizeCPU = iota
	SizeShare
	Size1
	Size2
	Size4
	Size8
	SizeOther
	numSizes
)

// SizeNames name the size classes.
var SizeNames = [numSizes]string{"cpu", "share", "1 GPU", "2 GPUs", "4 GPUs", "8 GPUs", "other"}

// SizeOf is a pod's size class.
func SizeOf(p Pod) int {
	switch {
	case p.NumGPU == 0:
		return SizeCPU
	case p.Shared():
		return SizeShare
	case p.NumGPU == 1:
		return Size1
	case p.NumGPU == 2:
		return Size2
	case p.NumGPU == 4:
		return Size4
	case p.NumGPU == 8:
		return Size8
	}
	return SizeOther
}

// lifetimeClass is the class of lifetimes a pod draws from: its size, the
// pods of more than one GPU together.
func lifetimeClass(p Pod) int {
	if s := SizeOf(p); s <= Size1 {
		return s
	}
	return Size2
}

// Lifetimes are a pod list's lifetimes by lifetime class, in seconds,
// ascending; Pods the list's pods, by name.
type Lifetimes struct {
	byClass [Size2 + 1][]float64
	pods    []Pod
	// gpuLife is E[GPUs × lifetime] over a drawn pod (in milli-GPU
	// seconds), life E[lifetime].
	gpuLife, life float64
	// ofClass are the pods of each lifetime class, and weight each class's
	// share of the steady state's pods: its pods' count × its mean
	// lifetime.
	ofClass [Size2 + 1][]int
	cum     [Size2 + 1][]float64 // each class's lifetimes summed, for length-biased draws
}

// NewLifetimes reads the lifetimes of a pod list: every class that has
// pods must have some that ran.
func NewLifetimes(pods []Pod) (*Lifetimes, error) {
	l := &Lifetimes{pods: slices.Clone(pods)}
	slices.SortStableFunc(l.pods, func(a, b Pod) int { return cmp.Compare(a.Name, b.Name) })
	for i, p := range l.pods {
		c := lifetimeClass(p)
		l.ofClass[c] = append(l.ofClass[c], i)
		if p.Lifetime >= 0 {
			l.byClass[c] = append(l.byClass[c], float64(p.Lifetime))
		}
	}
	if len(l.pods) == 0 {
		return nil, errors.New("churn: no pods")
	}
	for c := range l.byClass {
		if len(l.ofClass[c]) > 0 && len(l.byClass[c]) == 0 {
			return nil, fmt.Errorf("churn: no %s pod of the list ran, so none has a lifetime to draw", lifetimeClassName(c))
		}
		slices.Sort(l.byClass[c])
		sum := 0.0
		l.cum[c] = make([]float64, len(l.byClass[c]))
		for i, x := range l.byClass[c] {
			sum += x
			l.cum[c][i] = sum
		}
	}
	n := float64(len(l.pods))
	for _, p := range l.pods {
		mean := l.Mean(lifetimeClass(p))
		l.life += mean / n
		l.gpuLife += float64(p.TotalMilliGPU()) * mean / n
	}
	if !(l.gpuLife > 0) {
		return nil, errors.New("churn: the pods ask for no GPU time, so no arrival rate gives a GPU load")
	}
	return l, nil
}

func lifetimeClassName(c int) string {
	if c == Size2 {
		return "multi-GPU"
	}
	return SizeNames[c]
}

// Class is a lifetime class's lifetimes, ascending (a view: read it).
func (l *Lifetimes) Class(c int) []float64 { return l.byClass[c] }

// Mean is a lifetime class's mean lifetime, in seconds.
func (l *Lifetimes) Mean(c int) float64 {
	if len(l.cum[c]) == 0 {
		return 0
	}
	return l.cum[c][len(l.cum[c])-1] / float64(len(l.cum[c]))
}

// Rate is the arrival rate, in pods per second, that offers load × the
// capacity (milli-GPU) in GPU time: load × capacity / E[GPUs × lifetime].
func (l *Lifetimes) Rate(load float64, capacityMilliGPU int64) float64 {
	return load * float64(capacityMilliGPU) / l.gpuLife
}

// draw is an arriving pod: a pod of the list at random, with a lifetime
// drawn from its class's.
func (l *Lifetimes) draw(rng *rand.Rand) (Pod, float64) {
	p := l.pods[rng.IntN(len(l.pods))]
	life := l.byClass[lifetimeClass(p)]
	return p, life[rng.IntN(len(life))]
}

// drawAlive is a pod alive in the steady state of an unbounded cluster: a
// class by its share of the pods alive (its pods' count × mean lifetime),
// a lifetime of it length-biased (by its length), a pod of the class at
// random, and its age, uniform over its lifetime.
func (l *Lifetimes) drawAlive(rng *rand.Rand) (p Pod, life, age float64) {
	var weights [Size2 + 1]float64
	total := 0.0
	for c := range weights {
		weights[c] = float64(len(l.ofClass[c])) * l.Mean(c)
		total += weights[c]
	}
	x := rng.Float64() * total
	c := 0
	for c < len(weights)-1 && (x >= weights[c] || weights[c] == 0) {
		x -= weights[c]
		c++
	}
	cum := l.cum[c]
	k, _ := slices.BinarySearch(cum, rng.Float64()*cum[len(cum)-1])
	life = l.byClass[c][min(k, len(cum)-1)]
	p = l.pods[l.ofClass[c][rng.IntN(len(l.ofClass[c]))]]
	return p, life, rng.Float64() * life
}

// ChurnSpec configures a replay with departures.
type ChurnSpec struct {
	// Load is the offered GPU load over the cluster's GPU capacity.
	Load float64
	// WarmUp is discarded; Window is measured after it (seconds).
	WarmUp, Window float64
	// Moves are the moves made as the replay goes (none by default).
	Moves ChurnMoves
	// Declare is what the pods say of their lifetimes: nothing (the
	// default), their lifetime exactly, or with noise (DeclareNoisy).
	Declare Declaration
	// Floor, when above 0, has the replay compute every FloorEvery the
	// floor no plan of moves can go below (ChurnResult.Floor), for plans
	// of Floor × the running pods moves (a share: 0.01 is an hour's worth
	// at 1% of the running pods an hour).
	Floor float64
}

// Declaration is what a replay's pods declare of how long they run, as a
// Job's activeDeadlineSeconds or resfit.io/runs-for would.
type Declaration string

const (
	// DeclareNone: no pod says how long it runs.
	DeclareNone Declaration = "none"
	// DeclareExact: every pod says its lifetime.
	DeclareExact Declaration = "exact"
	// DeclareNoisy: every pod says its lifetime × e^N(0,1), drawn for it
	// once (the median estimate right, half of them short).
	DeclareNoisy Declaration = "noisy"
)

// FloorEvery is how often a replay computes its floor (ChurnSpec.Floor).
const FloorEvery = 600

// Check reports a spec that cannot run.
func (s ChurnSpec) Check() error {
	switch {
	case !(s.Load > 0 && s.Load <= 100):
		return fmt.Errorf("churn: load must be in (0, 100], got %v", s.Load)
	case !(s.WarmUp >= 0) || math.IsInf(s.WarmUp, 0):
		return fmt.Errorf("churn: warm-up must be a duration ≥ 0, got %v s", s.WarmUp)
	case !(s.Window > 0) || math.IsInf(s.Window, 0):
		return fmt.Errorf("churn: window must be a duration above 0, got %v s", s.Window)
	case !(s.Floor >= 0 && s.Floor <= 1):
		return fmt.Errorf("churn: the floor's moves must be a share of the running pods in [0, 1], got %v", s.Floor)
	case s.Declare != "" && s.Declare != DeclareNone && s.Declare != DeclareExact && s.Declare != DeclareNoisy:
		return fmt.Errorf("churn: declared lifetimes must be %q, %q or %q, got %q", DeclareNone, DeclareExact, DeclareNoisy, s.Declare)
	}
	return s.Moves.Check()
}

// WaitStats are the waiting times of a size class's pods that arrived in
// the window: how many arrived, started, and had not started by its end,
// and the mean and the 50th, 95th and 99th percentiles of their waits, in
// seconds, a pod that had not started counted at its wait so far (a lower
// bound). A percentile is the smallest wait at least that share of the
// pods waited no longer than.
type WaitStats struct {
	Arrived, Started, Never int
	Mean, P50, P95, P99     float64
}

// ChurnResult is one replay with departures: a policy, a seed, a load.
type ChurnResult struct {
	Policy string
	Seed   uint64
	Load   float64
	// Arrivals counts the pods that arrived in the window (Alive those
	// alive at time 0).
	Arrivals, Alive int
	// IdleWhileWaiting is the time average over the window of the idle
	// GPU (not allocated) in percent of capacity, counted while some
	// waiting pod asks for a GPU (0 while none does); WaitingShare is the
	// share of the window during which one does, in percent.
	IdleWhileWaiting, WaitingShare float64
	// Idle is the time average of the idle GPU whether or not a pod waits,
	// Fragmented of FGD's fragmented GPU (the typical classes'), both in
	// percent of capacity.
	Idle, Fragmented float64
	// Waits are the waiting times by size class; GPUWait is the GPU-weighted
	// mean wait of the GPU pods that arrived in the window (Σ wait × GPUs
	// over Σ GPUs, in seconds, those that never started counted as there).
	Waits   [numSizes]WaitStats
	GPUWait float64
	// WaitingAtStart and WaitingAtEnd are the GPU the waiting pods ask for
	// (milli-GPU) as the window starts and as it ends: a load the cluster
	// sustains ends no higher than it starts.
	WaitingAtStart, WaitingAtEnd int64
	// Events counts arrivals and departures over the whole run.
	Events int
	// Floor is the least IdleWhileWaiting any plan of ChurnSpec.Floor ×
	// the running pods moves could reach at the instants it was computed
	// (every FloorEvery; 0 when not): at each, the larger of two bounds,
	// counted while GPU pods wait and averaged over the instants of the
	// window. One is the idle GPU less what the waiting pods could take
	// after a plan of that many moves, as defrag.BoundReclaim bounds it
	// (GPUs alone, each waiting shape's pieces as often as they fit, at
	// most the GPU the waiting pods ask for); the other, ShareFloor's.
	Floor float64
	// ShareFloor is the least IdleWhileWaiting any plan whatever could
	// reach at the same instants, however many moves it made: the least
	// GPU the running pods' shares can leave unused on the GPUs they
	// share, the waiting pods' shares added where they help
	// (defrag.BoundShareWaste: GPUs alone), counted while GPU pods wait,
	// averaged over the instants of the window.
	ShareFloor float64
	// Hourly is the idle GPU in percent of capacity, averaged over each
	// hour of the window in turn (the last hour may be cut short).
	Hourly []float64
	// Moves names the moves made (ChurnMoves.Name), Moved says what they
	// did in the window.
	Moves string
	Moved MoveStats
	// Reserved says what the reservations did (ChurnMoves.Reserve),
	// Starved what starvation control did (ChurnMoves.Starve).
	Reserved ReserveStats
	Starved  StarveStats
}

// arrival is a pod arriving at a time with a lifetime.
type arrival struct {
	pod  Pod
	at   float64
	life float64
}

// churnPod is a pod of a replay with departures.
type churnPod struct {
	pod     Pod
	arrived float64
	life    float64
	started float64 // NaN while it waits to start
	row     int
	holds   []int // the GPUs it holds on row
	shape   int   // its shape's number (churn.shapeIDs)
	// ends is when it leaves, while it runs; gen counts its departures
	// scheduled (one whose gen is older is no longer its); left is what
	// an evicted pod that waits to run again has left of its lifetime
	// (NaN otherwise).
	ends float64
	gen  int
	left float64
	// evicted is when it was last evicted, waited how long evicted pods
	// of it waited for room in all: it leaves at started + life + waited.
	evicted, waited float64
	// declared is the lifetime it declares (ChurnSpec.Declare), NaN when
	// it declares none: it says it ends at started + declared + waited.
	declared float64
}

// declaredEnd is when running pod cp says it ends (NaN: it does not say).
func (cp *churnPod) declaredEnd() float64 {
	return cp.started + cp.declared + cp.waited
}

// departure is a running pod's end.
type departure struct {
	at       float64
	pod, gen int
}

type departures []departure

func (h departures) Len() int { return len(h) }
func (h departures) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].pod < h[j].pod
}
func (h departures) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *departures) Push(x any)   { *h = append(*h, x.(departure)) }
func (h *departures) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

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

// queueKey is what a pod asks for, by which the queue groups waiting pods.
type queueKey struct {
	milliCPU, memoryMiB, gpuMilli int64
	numGPU                        int
	models                        string
}

func shapeOf(p Pod) queueKey {
	return queueKey{milliCPU: p.MilliCPU, memoryMiB: p.MemoryMiB, gpuMilli: p.GPUMilli, numGPU: p.NumGPU, models: string(p.GPUSpec)}
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

// poisson is the steady state's pods alive at time 0 (their count λ ×
// E[lifetime], rounded) and the arrivals after it, at rate λ (Rate).
func poisson(l *Lifetimes, load float64, capacity int64, seed uint64) ([]arrival, func() (arrival, bool)) {
	rate := l.Rate(load, capacity)
	rng := rand.New(rand.NewPCG(seed, 0x636875726e))
	alive := make([]arrival, int(math.Round(rate*l.life)))
	for i := range alive {
		p, life, age := l.drawAlive(rng)
		alive[i] = arrival{pod: p, at: -age, life: life}
	}
	slices.SortStableFunc(alive, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
	t := 0.0
	return alive, func() (arrival, bool) {
		t += rng.ExpFloat64() / rate
		p, life := l.draw(rng)
		return arrival{pod: p, at: t, life: life}, true
	}
}

// advance integrates the metrics up to t (within the window).
func (r *churn) advance(t float64) {
	if !r.windowSeen && t >= r.spec.WarmUp {
		r.res.WaitingAtStart, r.windowSeen = r.waitMilli, true
	}
	from, to := max(r.now, r.spec.WarmUp), t
	if to > from {
		dt := to - from
		idle := float64(r.c.CapacityMilliGPU - r.allocated)
		r.hourly(from, to, idle)
		r.idle += idle * dt
		r.frag += r.fragSum * dt
		if r.gpuWait > 0 {
			r.idleWaiting += idle * dt
			r.waitingTime += dt
		}
	}
	r.now = max(r.now, t)
}

// hourly adds idle GPU over [from, to) of the window to its hours.
func (r *churn) hourly(from, to, idle float64) {
	for from < to {
		h := int((from - r.spec.WarmUp) / 3600)
		for len(r.res.Hourly) <= h {
			r.res.Hourly = append(r.res.Hourly, 0)
		}
		until := min(to, r.spec.WarmUp+float64(h+1)*3600)
		r.res.Hourly[h] += idle * (until - from)
		from = until
	}
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
	f := r.measure.NodeModel(r.c.FreeCPU(row), r.c.GPUs.Free(row), r.c.GPUs.Model(row))
	r.fragSum += f - r.nodeFrag[row]
	r.nodeFrag[row] = f
}

// finish fills the result: the time averages and the waits.
func (r *churn) finish() {
	w := r.spec.Window
	capacity := float64(r.c.CapacityMilliGPU)
	r.res.IdleWhileWaiting = 100 * r.idleWaiting / w / capacity
	r.res.Idle = 100 * r.idle / w / capacity
	r.res.Fragmented = 100 * r.frag / w / capacity
	r.res.WaitingShare = 100 * r.waitingTime / w
	if r.floorCount > 0 {
		r.res.Floor = 100 * r.floorSum / float64(r.floorCount) / capacity
		r.res.ShareFloor = 100 * r.shareFloorSum / float64(r.floorCount) / capacity
	}
	for h := range r.res.Hourly {
		span := min(3600, w-float64(h)*3600)
		r.res.Hourly[h] = 100 * r.res.Hourly[h] / span / capacity
	}
	r.res.WaitingAtEnd = r.waitMilli
	var waits [numSizes][]float64
	end := r.spec.WarmUp + r.spec.Window
	var gpuWait, gpus float64
	for _, cp := range r.pods {
		if cp.arrived < r.spec.WarmUp || cp.arrived > end {
			continue
		}
		s := SizeOf(cp.pod)
		ws := &r.res.Waits[s]
		ws.Arrived++
		wait := cp.started - cp.arrived
		if math.IsNaN(cp.started) { // an evicted pod waiting to run again started before
			ws.Never++
			wait = end - cp.arrived
		} else {
			ws.Started++
		}
		waits[s] = append(waits[s], wait)
		g := float64(cp.pod.TotalMilliGPU())
		gpuWait += wait * g
		gpus += g
	}
	if gpus > 0 {
		r.res.GPUWait = gpuWait / gpus
	}
	for s, xs := range waits {
		if len(xs) == 0 {
			continue
		}
		slices.Sort(xs)
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		r.res.Waits[s].Mean = sum / float64(len(xs))
		r.res.Waits[s].P50 = percentile(xs, 0.50)
		r.res.Waits[s].P95 = percentile(xs, 0.95)
		r.res.Waits[s].P99 = percentile(xs, 0.99)
	}
}

// percentile is the q-th percentile of ascending xs (not empty): the
// smallest x that at least q of them are no greater than.
func percentile(xs []float64, q float64) float64 {
	return xs[max(int(math.Ceil(q*float64(len(xs))))-1, 0)]
}
