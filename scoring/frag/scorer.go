package frag

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// Scorer is FGD as a pipeline scorer: a node scores
//
//	int(sigmoid(Δ / perDevice) × 100),  Δ = fragmentation before − after,
//
// the paper's whole steps 0..100, where "after" places the task on the
// node: a task sharing one device on each device it fits (once per
// distinct free amount, equal devices giving equal results), keeping the
// best, the lowest index among equals (Device returns it); whole devices on
// the tightest fitting ones (resource.Devices.Allocate's choice). A node
// the task does not fit (cpu or devices) scores 0; a filter should reject
// it.
//
// A node whose devices are of a model the task does not accept
// (Task.Models) scores 0, as one it does not fit. A task of parts
// (Task.Partition, a MIG profile) takes on each of its devices the part
// first fit gives it, on a node with a device that can take one (0
// elsewhere).
//
// The scorer remembers each node's result per task class (cpu request,
// device request, accepted models and type of part) until the node
// changes, as the table's and the device view's Version counters tell (or
// another table is scored: the memory is about one table), so a task is
// evaluated afresh only on the nodes changed since its class was last
// scored. Options.FromScratch turns
// this off; the scores are identical either way. Because of that memory,
// one Scorer serves one scheduling loop: ScoreParallel within a call is
// safe, scoring two tasks at once is not. The first task of a class
// allocates that class's memory (an entry per node, about 40 bytes); after
// that, scoring allocates nothing. The memory is never trimmed: a
// long-running scheduler that sees many distinct requests should replace
// its Scorer now and then.
type Scorer struct {
	name      string
	measure   *Measure
	devices   *resource.Devices
	cpu       int
	perDevice float64
	scratch   bool

	mu      sync.Mutex      // guards table and classes (the map, not the entries)
	table   *resource.Table // the table the memory is about
	classes map[classKey][]entry
	now     []entry // each node's current fragmentation, in score
	evals   atomic.Int64

	// learned, when not nil, is the histogram the measure is made from,
	// again every refresh tasks observed (pending counts them).
	learned *Histogram
	refresh int
	pending int
}

type classKey struct {
	cpu       int64
	req       resource.DeviceRequest
	models    resource.ModelSet
	partition string
}

func keyOf(task *scoring.Task, cpu int) classKey {
	c := ClassOf(task, cpu)
	return classKey{cpu: c.CPU, req: c.Devices, models: c.Models, partition: c.Partition}
}

// ClassOf is the class a task is of, as the Scorer keys what it
// remembers, a learning Scorer counts the tasks it observes and a host
// counts its workload's classes: the task's request of the schema's cpu
// (cpu is that slot), its device request, the models it accepts and its
// type of part. Its Weight is 0.
func ClassOf(task *scoring.Task, cpu int) Class {
	return Class{CPU: task.Requests[cpu], Devices: task.Devices, Models: task.Models, Partition: task.Partition}
}

// entry is a remembered result, valid while both versions match.
type entry struct {
	table, devices uint64
	valid          bool
	score          float64
	device         int32
}

// Options configure a Scorer.
type Options struct {
	// Name is the scorer's name in explanations; default "FGD".
	Name string
	// FromScratch recomputes every node for every task.
	FromScratch bool
}

// NewScorer returns the scorer for tables of the schema, whose "cpu" slot
// it reads, and the device view whose rows match those tables' rows.
func NewScorer(schema *resource.Schema, devices *resource.Devices, m *Measure, opts Options) (*Scorer, error) {
	if schema == nil || devices == nil || m == nil {
		return nil, errors.New("frag: nil schema, device view or measure")
	}
	cpu, ok := schema.Slot(resource.CPU)
	if !ok {
		return nil, fmt.Errorf("frag: the schema %v has no %q slot", schema.Names(), resource.CPU)
	}
	name := opts.Name
	if name == "" {
		name = "FGD"
	}
	return &Scorer{
		name: name, measure: m, devices: devices, cpu: cpu,
		perDevice: float64(devices.PerDevice()), scratch: opts.FromScratch,
		classes: map[classKey][]entry{},
	}, nil
}

// SetFromScratch turns the scorer's memory off (every node evaluated
// afresh for every task, as Options.FromScratch) or on again; the scores
// are the same either way. It is for measuring what the memory saves, on a
// scorer built by someone else (a configuration's FGD or ResfitFrag), and
// must not be called while the scorer scores.
func (s *Scorer) SetFromScratch(on bool) { s.scratch = on }

// NewLearningScorer returns a scorer whose classes are learned: its measure
// is the histogram's classes and shares, made again every refresh tasks
// the host observes (Observe), its memory forgotten each time. Until the
// histogram holds a class, no node is fragmented for it: every node the
// task fits scores the same (50). Its scores change without the nodes
// changing, so it is Volatile: a scoring.Placer runs it for every task (its
// own memory still spares the nodes that did not change since the last
// measure).
func NewLearningScorer(schema *resource.Schema, devices *resource.Devices, h *Histogram, refresh int, opts Options) (*Scorer, error) {
	if h == nil {
		return nil, errors.New("frag: nil histogram")
	}
	if refresh < 1 {
		return nil, fmt.Errorf("frag: refresh must be at least 1 task, got %d", refresh)
	}
	s, err := NewScorer(schema, devices, &Measure{}, opts)
	if err != nil {
		return nil, err
	}
	s.learned, s.refresh = h, refresh
	if err := s.remeasure(); err != nil {
		return nil, err
	}
	return s, nil
}

// Learned is the histogram a learning scorer's classes come from, nil for
// one with given classes.
func (s *Scorer) Learned() *Histogram { return s.learned }

// Volatile is true for a scorer whose classes are learned (its scores
// change as it learns), false otherwise.
func (s *Scorer) Volatile() bool { return s.learned != nil }

// Observe counts a task the host has placed in the histogram of a learning
// scorer (scoring.Learner), and makes the measure again every refresh
// tasks; a scorer with given classes ignores it. A task whose device
// request the device view could never serve is not counted. Like scoring,
// it must not run alongside another call on the scorer.
func (s *Scorer) Observe(task *scoring.Task) {
	if s.learned == nil || s.cpu >= len(task.Requests) || s.devices.Check(task.Devices) != nil {
		return
	}
	s.learned.Observe(ClassOf(task, s.cpu))
	if s.pending++; s.pending >= s.refresh {
		s.pending = 0
		if err := s.remeasure(); err != nil {
			s.pending = s.refresh - 1 // try again with the next task
		}
	}
}

// remeasure makes the measure from the histogram and forgets what the last
// one gave.
func (s *Scorer) remeasure() error {
	m := &Measure{}
	if classes := s.learned.Classes(); classes != nil {
		var err error
		if m, err = NewMeasure(classes, s.devices.PerDevice()); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.measure = m
	clear(s.classes)
	s.now = s.now[:0]
	return nil
}

// Name is the configured name.
func (s *Scorer) Name() string { return s.name }

// MaxScore is 100.
func (s *Scorer) MaxScore() float64 { return 100 }

// Evaluations counts the nodes evaluated so far (the results not taken
// from memory).
func (s *Scorer) Evaluations() int64 { return s.evals.Load() }

// Score is the paper's map from a fragmentation drop to a score:
// int(sigmoid(delta / perDevice) × 100), in [0, 100]. An infinite drop
// scores 100 (or 0 when it is a rise); a NaN drop, or a perDevice that
// makes the quotient NaN, scores 0.
func Score(delta, perDevice float64) float64 {
	x := 1 / (1 + math.Exp(-delta/perDevice)) * 100
	if !(x >= 0) { // NaN
		return 0
	}
	return math.Trunc(x)
}

// ScoreNodes scores the task on every node of the span.
func (s *Scorer) ScoreNodes(task *scoring.Task, nodes scoring.Span, out []float64) error {
	n := nodes.Table().Len()
	if s.devices.Len() != n {
		return fmt.Errorf("the device view has %d nodes, the table %d", s.devices.Len(), n)
	}
	if err := s.devices.Check(task.Devices); err != nil {
		return err
	}
	key := keyOf(task, s.cpu)
	var memory, now []entry
	if !s.scratch {
		memory, now = s.memory(nodes.Table(), key)
	}
	for i := range out {
		row := nodes.Row(i)
		tv, dv := nodes.Table().Version(row), s.devices.Version(row)
		if memory != nil && memory[row].valid && memory[row].table == tv && memory[row].devices == dv {
			out[i] = memory[row].score
			continue
		}
		score, device := s.evaluate(nodes.Table(), row, key, now)
		out[i] = score
		if memory != nil {
			memory[row] = entry{table: tv, devices: dv, valid: true, score: score, device: int32(device)}
		}
	}
	return nil
}

// memory returns the class's remembered results and the nodes' current
// fragmentation for the table, forgetting what was about another table.
func (s *Scorer) memory(table *resource.Table, key classKey) (memory, now []entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.table != table {
		s.table = table
		clear(s.classes)
		s.now = s.now[:0]
	}
	n := table.Len()
	memory = s.classes[key]
	if len(memory) < n {
		memory = append(memory, make([]entry, n-len(memory))...)
		s.classes[key] = memory
	}
	if len(s.now) < n {
		s.now = append(s.now, make([]entry, n-len(s.now))...)
	}
	return memory, s.now
}

// Device returns the device a task sharing one should take on the table's
// row: the one its score was best on (-1 when it does not fit, or asks
// for whole devices). Call it for a task and table that Score accepted: it
// panics if the task's requests or the row do not fit the table.
func (s *Scorer) Device(task *scoring.Task, nodes *resource.Table, row int) int {
	key := keyOf(task, s.cpu)
	if !s.scratch {
		memory, now := s.memory(nodes, key)
		tv, dv := nodes.Version(row), s.devices.Version(row)
		if e := memory[row]; e.valid && e.table == tv && e.devices == dv {
			return int(e.device)
		}
		_, device := s.evaluate(nodes, row, key, now)
		return device
	}
	_, device := s.evaluate(nodes, row, key, nil)
	return device
}

// current is row's fragmentation as it stands, from what evaluate read of
// it (Measure.Row's reads), remembered in now (nil: computed afresh).
func (s *Scorer) current(freeCPU int64, free []int64, parts []resource.Partitioned, model string, row int, tv, dv uint64, now []entry) float64 {
	if now == nil {
		return s.measure.NodeParts(freeCPU, free, parts, model)
	}
	if e := now[row]; e.valid && e.table == tv && e.devices == dv {
		return e.score
	}
	f := s.measure.NodeParts(freeCPU, free, parts, model)
	now[row] = entry{table: tv, devices: dv, valid: true, score: f}
	return f
}

// evaluate scores the class on the row from the node's state.
func (s *Scorer) evaluate(t *resource.Table, row int, key classKey, now []entry) (float64, int) {
	s.evals.Add(1)
	freeCPU := t.Allocatable(row)[s.cpu] - t.Used(row)[s.cpu]
	free := s.devices.Free(row)
	parts := s.devices.Partitioned(row)
	req := key.req
	model := s.devices.Model(row)
	fits := s.devices.Fits(row, req)
	if key.partition != "" {
		fits = s.devices.FitsPart(row, key.partition, req.Count)
	}
	if freeCPU < key.cpu || !fits || req.Count > 0 && !key.models.Accepts(model) {
		return 0, -1
	}
	var buf [64]int64 // most nodes have at most 8 GPUs
	after := buf[:0]
	if len(free) > len(buf) {
		after = make([]int64, 0, len(free))
	}
	after = append(after, free...)
	left := freeCPU - key.cpu
	before := s.current(freeCPU, free, parts, model, row, t.Version(row), s.devices.Version(row), now)
	if key.partition != "" {
		return s.evaluateParts(before, left, free, parts, model, key)
	}
	if !s.measure.partitioned {
		parts = nil // measured by free amounts alone
	}
	return s.take(before, left, free, after, parts, model, req)
}

// afterTaking is the fragmentation of a node once a task that is not of
// parts takes from its devices (free before, after once taken): by free
// amounts when parts is nil; otherwise a device the task takes from is no
// longer known to divide (a whole device it takes has nothing left; what a
// share of a device would leave of its parts, the device's layout cannot
// say).
func (s *Scorer) afterTaking(freeCPU int64, free, after []int64, parts []resource.Partitioned, model string) float64 {
	if parts == nil {
		return s.measure.NodeModel(freeCPU, after, model)
	}
	var buf [16]resource.Partitioned
	kept := buf[:0]
	for _, p := range parts {
		if after[p.Device] == free[p.Device] {
			kept = append(kept, p)
		}
	}
	return s.measure.NodeParts(freeCPU, after, kept, model)
}

// take scores a task that is not of parts on a node whose fragmentation
// is before, with freeCPU left once it is placed and the given free
// amounts per device (after a copy of them to change): a share of one
// device on each device it fits, keeping the best (the first among equals,
// Device returns it; devices of equal free amounts score the same, and are
// scored once, unless some divide into parts); whole devices (or none) on
// the tightest fitting ones, one at a time (afterTaking).
func (s *Scorer) take(before float64, freeCPU int64, free, after []int64, parts []resource.Partitioned, model string, req resource.DeviceRequest) (float64, int) {
	if req.Count == 1 && req.Each < s.devices.PerDevice() {
		best, device := 0.0, -1
	next:
		for j, f := range free {
			if f < req.Each {
				continue
			}
			for _, g := range free[:j] {
				if g == f && parts == nil {
					continue next // an equal device earlier scored the same
				}
			}
			after[j] -= req.Each
			score := Score(before-s.afterTaking(freeCPU, free, after, parts, model), s.perDevice)
			after[j] = f
			if device < 0 || score > best {
				best, device = score, j
			}
		}
		return best, device
	}
	for range req.Count {
		j := -1
		for k, f := range after {
			if f >= req.Each && f == free[k] && (j < 0 || f < after[j]) {
				j = k
			}
		}
		after[j] -= req.Each // Fits guarantees a device
	}
	return Score(before-s.afterTaking(freeCPU, free, after, parts, model), s.perDevice), -1
}

// partBuffers are what evaluateParts works in: the node's free amounts and
// partitioned devices once the task takes its parts, and the counters left
// of those it takes from. partScratch keeps them between calls, which may
// run at once (ScoreParallel).
type partBuffers struct {
	free  []int64
	parts []resource.Partitioned
	lefts []int64
}

var partScratch = sync.Pool{New: func() any {
	return &partBuffers{free: make([]int64, 0, 64), parts: make([]resource.Partitioned, 0, 16), lefts: make([]int64, 0, 512)}
}}

// evaluateParts scores a task of parts (Task.Partition) on a node whose
// devices that divide are parts: the part it takes on each of its devices
// is the first that fits, in the order the allocator tries them
// (resource.Devices.Partitioned, resource.Layout.Fit), which is
// kube's DRA allocator's pick on a node whose driver lists a device's
// parts together. It returns the score and the first device taken.
func (s *Scorer) evaluateParts(before float64, freeCPU int64, free []int64, parts []resource.Partitioned, model string, key classKey) (float64, int) {
	b := partScratch.Get().(*partBuffers)
	defer partScratch.Put(b)
	afterFree := append(b.free[:0], free...)
	after := append(b.parts[:0], parts...)
	lefts := b.lefts[:0]
	defer func() { b.free, b.parts, b.lefts = afterFree, after, lefts }() // keep what grew
	first, taken := -1, 0
	var layout *resource.Layout
	var typ resource.PartType
	for u := range after {
		if taken == key.req.Count {
			break
		}
		l := after[u].Layout
		if l != layout { // the type resolved once per layout
			layout, typ = l, l.TypeOf(key.partition)
		}
		consumes, ok := l.FitType(typ, after[u].Left)
		if !ok {
			continue
		}
		n := len(lefts)
		lefts = append(lefts, after[u].Left...)
		left := lefts[n:len(lefts):len(lefts)]
		for k, c := range consumes {
			left[k] -= c
		}
		after[u].Left = left
		afterFree[after[u].Device] = l.Free(left, s.devices.PerDevice())
		if first < 0 {
			first = after[u].Device
		}
		taken++
	}
	return Score(before-s.measure.NodeParts(freeCPU, afterFree, after, model), s.perDevice), first
}
