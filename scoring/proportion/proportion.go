// Package proportion divides a cluster among queues as Volcano's
// proportion plugin does (Divide), or as its capacity plugin does from
// each queue's declared part (DivideByDeserved), and answers the questions a batch scheduler asks
// of the division: is a queue overused, may a job enter its queue, may a
// task be allocated in it, which running tasks may another queue reclaim,
// and in what order are queues served.
//
// Each queue deserves a part of the cluster by its weight, worked out by
// Volcano's iterative water-filling: every round hands what remains to
// the queues not yet satisfied, in proportion to their weights; a queue
// never deserves more than it requests or than its real capability (its
// capability, within what the other queues' guarantees leave), and always
// at least its guarantee; the rounds stop when nothing remains or nothing
// moves.
//
// Amounts are float64 as Volcano keeps them, compared with its tolerance
// of 0.1 (a tenth of a millicore, of a byte, of a milli-GPU). Volcano
// counts ephemeral-storage, hugepages-* and the other kubernetes.io scalar
// resources in thousandths where package resource counts them whole; the
// arithmetic here runs in Volcano's units, so that its tolerance means the
// same, and results are reported in the schema's.
//
// Affinity, topology and the other placement rules are the host
// scheduler's: they need labels and the pod graph, not resource vectors.
package proportion

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/resfit/resfit/resource"
)

// Unlimited, as a Capability amount, leaves that resource uncapped (as a
// resource missing from a Volcano queue's spec.capability does).
const Unlimited int64 = -1

// minResource is Volcano's tolerance: amounts closer than this are equal,
// and a remainder below it is nothing.
const minResource = 0.1

// Queue is one queue as the division sees it. Every vector is nil (all
// zero) or has one amount per schema slot, each in [0, resource.MaxAmount]
// (Capability may also hold Unlimited).
type Queue struct {
	Name string
	// Weight is the queue's part against the others', Volcano's
	// spec.weight: in [0, math.MaxInt32], and the weights of the queues
	// with jobs add up to at most math.MaxInt32, as Volcano adds them in an
	// int32. A queue of weight 0 deserves only its guarantee.
	Weight int32
	// Priority orders queues before their shares do (higher first).
	Priority int32
	// Created and then Name order queues of equal priority and share.
	Created time.Time
	// Closed is a queue not in the Open state: nothing enters it or is
	// allocated in it.
	Closed bool
	// NoJobs is a queue with no jobs this session: Volcano leaves it out
	// of the division (it deserves nothing), though its Guarantee is still
	// held back from the other queues.
	NoJobs bool

	// Capability caps what the queue may deserve; nil caps nothing. A cpu
	// or memory amount of 0 caps nothing either (Volcano reads it so);
	// any other resource is capped at its amount, 0 included, unless the
	// amount is Unlimited. Capability builds one from a spec.
	Capability resource.Vector
	// Guarantee is reserved for the queue: it always deserves at least
	// this, and the other queues' real capabilities leave it out. A
	// guarantee of 0 is taken as none (Volcano tells a listed 0 from an
	// absent name; the two differ only where the guarantees cover all of
	// a resource).
	Guarantee resource.Vector
	// Allocated is what the queue's jobs hold; Request, what they hold and
	// what their pending tasks ask for.
	Allocated, Request resource.Vector
	// Deserved is what the queue's spec says it deserves, for
	// DivideByDeserved (Volcano's capacity plugin); Divide ignores it.
	Deserved resource.Vector
	// Inqueue is what its admitted jobs have reserved and not yet been
	// allocated (see Inqueue); Elastic, what its jobs hold beyond their
	// minimums (allocated − minimum, summed over jobs).
	Inqueue, Elastic resource.Vector
}

// Capability builds a Capability vector from a queue's spec.capability
// quantities ("cpu": "8", "nvidia.com/gpu": "4"): resources it does not
// list are Unlimited.
func Capability(schema *resource.Schema, quantities map[string]string) (resource.Vector, error) {
	v, err := schema.Parse(quantities)
	if err != nil {
		return nil, err
	}
	for i := range v {
		if _, listed := quantities[schema.Name(i)]; !listed {
			v[i] = Unlimited
		}
	}
	return v, nil
}

// Inqueue is what a job admitted with minimum resources still reserves in
// its queue once allocated is allocated: per resource, minimum −
// allocated where positive, as Volcano counts an inqueue or running job.
func Inqueue(minimum, allocated resource.Vector) resource.Vector {
	resource.MustLen("proportion.Inqueue", len(minimum), allocated)
	v := make(resource.Vector, len(minimum))
	for i, m := range minimum {
		v[i] = max(m-allocated[i], 0)
	}
	return v
}

// Shares is a division of a cluster among queues, and each queue's
// allocation since. Divide builds it; Allocate, Release and Enqueue change
// a queue's allocation or reservation as a scheduler places tasks and
// admits jobs (Volcano's event handlers), so a Shares is not safe for
// concurrent use while they are called. The deserved parts never change.
//
// Its methods take a queue's index in [0, Len()) and vectors of the
// schema's length; anything else is a programming error and panics, as
// indexing a slice does.
type Shares struct {
	schema *resource.Schema
	scale  []float64 // Volcano's units per schema unit
	pods   int       // the pods slot, or -1
	// plain marks the cpu and memory slots, which Volcano keeps as fields
	// (always named) rather than among its scalar resources.
	plain  []bool
	scalar bool // the schema has a slot besides cpu and memory
	queues []queueState
	// byDeserved is a division by DivideByDeserved (capacity's rules).
	byDeserved bool
}

type queueState struct {
	name     string
	priority int32
	created  time.Time
	closed   bool

	deserved, allocated, inqueue, elastic []float64
	// realCapability is what the queue may deserve at most; realCapped
	// says which resources Volcano's realCapability names (a resource it
	// does not name is uncapped in the division and counts as 0 when a
	// job asks to enter the queue).
	realCapability []float64
	realCapped     []bool
	share          float64
	// bestEffort is a queue that deserves nothing under capacity's rules.
	bestEffort bool
}

// Divide works out what each queue deserves of total, the cluster's
// allocatable resources, by Volcano's proportion plugin: queues are
// considered in the order given (Volcano ranges over a map; its sums can
// differ from these in the last bits when the order differs).
//
// The schema stands for the resource names the cluster's nodes list:
// every slot takes part, as every name in Volcano's total does.
//
// Without guarantees the queues together deserve no more than total. With
// them they can, as in Volcano: the first round hands out the whole total
// by weight and raises each queue to its guarantee on top, and what
// remains stops at zero; a queue of weight 0 with a guarantee, beside
// others that take all they are given, makes the sum exceed the total by
// up to the guarantees.
func Divide(schema *resource.Schema, total resource.Vector, queues []Queue) (*Shares, error) {
	s, in, err := newShares(schema, total, queues, false)
	if err != nil {
		return nil, err
	}
	s.waterFill(queues, in.total, in.guarantees, in.requests)
	for q := range s.queues {
		s.queues[q].updateShare(false)
	}
	return s, nil
}

// DivideByDeserved is the division of Volcano's capacity plugin: each
// queue with jobs deserves what its Deserved (spec.deserved) says, within
// its real capability, and at least its guarantee; nothing is shared out
// by weight. The checks then differ from Divide's where capacity's do:
//
//   - Allocatable holds a queue to its real capability, not to what it
//     deserves (Volcano also counts tasks it has let through the queue's
//     gate in the same session; Allocate them here to the same effect);
//   - a queue that deserves nothing is best-effort: its Share is 1, and of
//     two queues of equal share the one that deserves something goes
//     first.
//
// Enqueueable is the same check. Reclaimable stays proportion's rule
// (allocation over deserved); capacity's reclaim rules (guarantees,
// resource dimensions, hierarchy) are not covered, nor are hierarchical
// queues.
func DivideByDeserved(schema *resource.Schema, total resource.Vector, queues []Queue) (*Shares, error) {
	s, in, err := newShares(schema, total, queues, true)
	if err != nil {
		return nil, err
	}
	for q, queue := range queues {
		if queue.NoJobs {
			continue
		}
		st := &s.queues[q]
		declared := s.floats(queue.Deserved)
		for i := range declared {
			d := declared[i]
			if st.realCapped[i] {
				d = math.Min(d, st.realCapability[i])
			}
			st.deserved[i] = math.Max(d, in.guarantees[q][i])
		}
	}
	for q := range s.queues {
		s.queues[q].updateShare(s.isEmpty(s.queues[q].deserved))
	}
	return s, nil
}

// inputs are a division's vectors in Volcano's units.
type inputs struct {
	total                []float64
	guarantees, requests [][]float64
}

// newShares checks the input and works out every queue's real capability.
func newShares(schema *resource.Schema, total resource.Vector, queues []Queue, byDeserved bool) (*Shares, inputs, error) {
	if err := schema.Check(total); err != nil {
		return nil, inputs{}, fmt.Errorf("total: %w", err)
	}
	k := schema.Len()
	s := &Shares{schema: schema, scale: make([]float64, k), pods: -1, plain: make([]bool, k),
		queues: make([]queueState, len(queues)), byDeserved: byDeserved}
	for i := range k {
		name := schema.Name(i)
		s.plain[i] = name == resource.CPU || name == resource.Memory
		s.scalar = s.scalar || !s.plain[i]
		s.scale[i] = 1
		if name == resource.EphemeralStorage || resource.IsScalar(name) && !resource.IsExtended(name) {
			s.scale[i] = 1000
		}
		if name == resource.Pods {
			s.pods = i
		}
	}
	var weights int64
	for q, queue := range queues {
		if err := s.check(q, queue); err != nil {
			return nil, inputs{}, err
		}
		if !queue.NoJobs {
			weights += int64(queue.Weight)
		}
	}
	if weights > math.MaxInt32 {
		return nil, inputs{}, fmt.Errorf("queues: weights of the queues with jobs add up to %d, more than %d", weights, math.MaxInt32)
	}

	in := inputs{total: s.floats(total), guarantees: make([][]float64, len(queues)), requests: make([][]float64, len(queues))}
	totalGuarantee := make([]float64, k)
	for q, queue := range queues {
		in.guarantees[q] = s.floats(queue.Guarantee)
		add(totalGuarantee, in.guarantees[q])
	}
	for q, queue := range queues {
		st := &s.queues[q]
		*st = queueState{
			name: queue.Name, priority: queue.Priority, created: queue.Created, closed: queue.Closed,
			deserved: make([]float64, k), allocated: s.floats(queue.Allocated),
			inqueue: s.floats(queue.Inqueue), elastic: s.floats(queue.Elastic),
			realCapability: make([]float64, k), realCapped: make([]bool, k),
		}
		in.requests[q] = s.floats(queue.Request)
		s.realCapability(st, in.total, totalGuarantee, in.guarantees[q], queue.Capability)
	}
	return s, in, nil
}

// realCapability is Volcano's: what the other queues' guarantees leave of
// the total (a resource they cover wholly drops out, uncapped), plus the
// queue's own guarantee, within its capability.
func (s *Shares) realCapability(st *queueState, total, totalGuarantee, guarantee []float64, capability resource.Vector) {
	for i := range total {
		if total[i] > totalGuarantee[i] {
			st.realCapability[i] = total[i] - totalGuarantee[i]
			st.realCapped[i] = true
		}
		st.realCapability[i] += guarantee[i]
		if guarantee[i] > 0 || s.plain[i] {
			st.realCapped[i] = true
		}
		if capability == nil {
			continue
		}
		c := capability[i]
		switch {
		case s.plain[i] && c <= 0, c == Unlimited:
			// uncapped
		default:
			if st.realCapped[i] {
				st.realCapability[i] = math.Min(st.realCapability[i], float64(c)*s.scale[i])
			}
		}
	}
}

// waterFill is Volcano's loop over rounds.
func (s *Shares) waterFill(queues []Queue, total []float64, guarantees, requests [][]float64) {
	k := len(total)
	remaining := append([]float64(nil), total...)
	oldRemaining := make([]float64, k)
	oldDeserved := make([]float64, k)
	increased, decreased := make([]float64, k), make([]float64, k)
	meet := make([]bool, len(queues))
	for q, queue := range queues {
		meet[q] = queue.NoJobs
	}
	for round := 0; ; round++ {
		var totalWeight int64
		for q, queue := range queues {
			if !meet[q] {
				totalWeight += int64(queue.Weight)
			}
		}
		if totalWeight == 0 {
			return
		}
		copy(oldRemaining, remaining)
		clear(increased)
		clear(decreased)
		for q, queue := range queues {
			if meet[q] {
				continue
			}
			st := &s.queues[q]
			d := st.deserved
			copy(oldDeserved, d)
			ratio := float64(queue.Weight) / float64(totalWeight)
			for i := range d {
				d[i] += remaining[i] * ratio
				if st.realCapped[i] {
					d[i] = math.Min(d[i], st.realCapability[i])
				}
				d[i] = math.Min(d[i], requests[q][i])
				d[i] = math.Max(d[i], guarantees[q][i])
			}
			switch {
			case lessEqual(requests[q], d):
				meet[q] = true
			// In the first round a queue's deserved is compared with
			// Volcano's empty resource, which has no scalar resources: it
			// can equal the new one only if the schema has none either.
			case round > 0 || !s.scalar:
				if equal(d, oldDeserved) {
					meet[q] = true // capped: it will not grow
				}
			}
			for i := range d {
				if d[i] > oldDeserved[i] {
					increased[i] += d[i] - oldDeserved[i]
				} else {
					decreased[i] += oldDeserved[i] - d[i]
				}
			}
		}
		for i := range remaining {
			left := remaining[i] + decreased[i]
			if left > increased[i] {
				remaining[i] = left - increased[i]
			} else {
				remaining[i] = 0
			}
		}
		if s.isEmpty(remaining) || equal(remaining, oldRemaining) {
			return
		}
	}
}

// check validates one queue's input.
func (s *Shares) check(q int, queue Queue) error {
	if queue.Weight < 0 {
		return fmt.Errorf("queues[%d].weight: must be >= 0, got %d", q, queue.Weight)
	}
	for _, f := range []struct {
		field     string
		v         resource.Vector
		unlimited bool
	}{
		{"capability", queue.Capability, true}, {"guarantee", queue.Guarantee, false}, {"deserved", queue.Deserved, false},
		{"allocated", queue.Allocated, false}, {"request", queue.Request, false},
		{"inqueue", queue.Inqueue, false}, {"elastic", queue.Elastic, false},
	} {
		if f.v == nil {
			continue
		}
		if len(f.v) != s.schema.Len() {
			return fmt.Errorf("queues[%d].%s: has %d amounts, the schema has %d resources", q, f.field, len(f.v), s.schema.Len())
		}
		for i, a := range f.v {
			switch {
			case f.unlimited && a == Unlimited:
			case f.unlimited && (a < 0 || a > resource.MaxAmount):
				return fmt.Errorf("queues[%d].%s[%q]: must be in [0, 2^53] or Unlimited (-1), got %d", q, f.field, s.schema.Name(i), a)
			case a < 0 || a > resource.MaxAmount:
				return fmt.Errorf("queues[%d].%s[%q]: must be in [0, 2^53], got %d", q, f.field, s.schema.Name(i), a)
			}
		}
	}
	return nil
}

// floats converts a vector to Volcano's units (nil: zeros).
func (s *Shares) floats(v resource.Vector) []float64 {
	f := make([]float64, len(s.scale))
	for i := range v {
		f[i] = float64(v[i]) * s.scale[i]
	}
	return f
}

func add(dst, v []float64) {
	for i := range dst {
		dst[i] += v[i]
	}
}

// lessEqual is Volcano's Resource.LessEqual with missing dimensions zero:
// l ≤ r in every resource, within the tolerance.
func lessEqual(l, r []float64) bool {
	for i := range l {
		if !(l[i] < r[i] || math.Abs(l[i]-r[i]) < minResource) {
			return false
		}
	}
	return true
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isEmpty is Volcano's Resource.IsEmpty: every resource but pods below
// the tolerance.
func (s *Shares) isEmpty(v []float64) bool {
	for i, x := range v {
		if i != s.pods && x >= minResource {
			return false
		}
	}
	return true
}

// updateShare is the queue's share: the largest allocated/deserved over
// the resources it deserves any of; 1 for a best-effort queue (capacity's
// rule for a queue that deserves nothing).
func (st *queueState) updateShare(bestEffort bool) {
	st.bestEffort = bestEffort
	st.share = 0
	if bestEffort {
		st.share = 1
		return
	}
	for i, d := range st.deserved {
		if d >= minResource {
			st.share = max(st.share, st.allocated[i]/d)
		}
	}
}

// Len is the number of queues.
func (s *Shares) Len() int { return len(s.queues) }

// Deserved returns what queue q deserves, in the schema's units (a
// fraction where the division does not come out whole). It panics if q is
// out of range, a programming error.
func (s *Shares) Deserved(q int) []float64 {
	st := &s.queues[q]
	d := make([]float64, len(st.deserved))
	for i, x := range st.deserved {
		d[i] = x / s.scale[i]
	}
	return d
}

// Share is queue q's share: its largest allocated/deserved ratio over the
// resources it deserves any of; when it deserves nothing, 0 (Divide) or 1
// (DivideByDeserved: a best-effort queue).
func (s *Shares) Share(q int) float64 { return s.queues[q].share }

// Overused reports whether queue q holds at least what it deserves in
// every resource (within the tolerance), as Volcano's overused check:
// such a queue gets nothing more this session.
func (s *Shares) Overused(q int) bool {
	st := &s.queues[q]
	return lessEqual(st.deserved, st.allocated)
}

// Compare orders queues a and b as Volcano serves them: higher priority
// first, then the smaller share, then (after DivideByDeserved, which
// gives best-effort queues a share of 1) a queue that deserves something
// before one that does not, then the older queue, then by name. It is a
// strict weak order for the allocation of the moment.
func (s *Shares) Compare(a, b int) int {
	qa, qb := &s.queues[a], &s.queues[b]
	if c := cmp.Compare(qb.priority, qa.priority); c != 0 {
		return c
	}
	if c := cmp.Compare(qa.share, qb.share); c != 0 {
		return c
	}
	if c := cmp.Compare(btoi(qa.bestEffort), btoi(qb.bestEffort)); c != 0 {
		return c // capacity: a queue that deserves something first
	}
	if c := qa.created.Compare(qb.created); c != 0 {
		return c
	}
	return cmp.Compare(qa.name, qb.name)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Allocatable reports whether a task asking for request may be allocated
// in queue q: the queue is open, and with it the queue would hold no more
// than it deserves (after DivideByDeserved: than its real capability) in
// any resource the task asks for (pods aside). When not, it names those
// resources.
func (s *Shares) Allocatable(q int, request resource.Vector) (bool, []string) {
	st := &s.queues[q]
	if st.closed {
		return false, nil
	}
	return s.fits(s.vector("Allocatable", request), func(i int, r float64) bool {
		limit := st.deserved[i]
		if s.byDeserved {
			limit = st.realLimit(i)
		}
		return st.allocated[i]+r <= limit
	})
}

// fits checks what a request asks for, resource by resource (pods aside,
// as Volcano skips them): it fits when within says so for every resource
// asked for, and otherwise names those short.
func (s *Shares) fits(request []float64, within func(i int, r float64) bool) (bool, []string) {
	var short []string
	for i, r := range request {
		if r > 0 && i != s.pods && !within(i, r) {
			short = append(short, s.schema.Name(i))
		}
	}
	return short == nil, short
}

// realLimit is the real capability of resource i when a job asks to enter
// or a task to be allocated: 0 for a resource it does not name.
func (st *queueState) realLimit(i int) float64 {
	if st.realCapped[i] {
		return st.realCapability[i]
	}
	return 0
}

// Enqueueable reports whether a job with minimum resources may enter
// queue q: the queue is open, and the minimum, with what the queue holds
// and has reserved for admitted jobs, less its elastic part, fits its real
// capability in every resource the minimum asks for (pods aside). A job
// without minimum resources (nil) may always enter an open queue. When
// not, it names the resources short.
func (s *Shares) Enqueueable(q int, minimum resource.Vector) (bool, []string) {
	st := &s.queues[q]
	if st.closed {
		return false, nil
	}
	if minimum == nil {
		return true, nil
	}
	return s.fits(s.vector("Enqueueable", minimum), func(i int, x float64) bool {
		return x+st.allocated[i]+st.inqueue[i]-st.elastic[i] <= st.realLimit(i)
	})
}

// Victim is a running task another queue might reclaim: its queue and
// what it holds.
type Victim struct {
	Queue   int
	Request resource.Vector
}

// Reclaimable returns the indices of the candidates that may be reclaimed,
// in order, as Volcano's proportion plugin decides: a task may go while
// its queue, less the tasks already chosen from it, holds more than it
// deserves in some resource. It never returns nil.
func (s *Shares) Reclaimable(candidates []Victim) []int {
	victims := make([]int, 0, len(candidates))
	held := make([][]float64, len(s.queues)) // per queue, what it holds less the victims chosen
	for c, v := range candidates {
		st := &s.queues[v.Queue]
		allocated := held[v.Queue]
		if allocated == nil {
			allocated = append([]float64(nil), st.allocated...)
			held[v.Queue] = allocated
		}
		if lessEqual(allocated, st.deserved) {
			continue
		}
		req := s.vector("Reclaimable", v.Request)
		for i := range allocated {
			allocated[i] -= req[i]
		}
		victims = append(victims, c)
	}
	return victims
}

// Allocate adds request to what queue q holds, and updates its share, as
// Volcano does when a task is allocated.
func (s *Shares) Allocate(q int, request resource.Vector) {
	s.change(q, "Allocate", request, 1)
}

// Release takes request back from what queue q holds, as Volcano does
// when an allocation is undone or a task evicted.
func (s *Shares) Release(q int, request resource.Vector) {
	s.change(q, "Release", request, -1)
}

func (s *Shares) change(q int, fn string, request resource.Vector, sign float64) {
	st := &s.queues[q]
	for i, r := range s.vector(fn, request) {
		st.allocated[i] += sign * r
	}
	st.updateShare(st.bestEffort)
}

// Enqueue adds a job's minimum resources to what queue q has reserved, as
// Volcano does when it admits a job.
func (s *Shares) Enqueue(q int, minimum resource.Vector) {
	st := &s.queues[q]
	if minimum == nil {
		return
	}
	add(st.inqueue, s.vector("Enqueue", minimum))
}

// vector converts a caller's vector; a vector of the wrong length is a
// programming error.
func (s *Shares) vector(fn string, v resource.Vector) []float64 {
	resource.MustLen("proportion."+fn, s.schema.Len(), v)
	return s.floats(v)
}

// String describes each queue's deserved part and share, for logs.
func (s *Shares) String() string {
	var b strings.Builder
	for q, st := range s.queues {
		fmt.Fprintf(&b, "%s: deserved", st.name)
		for i, d := range s.Deserved(q) {
			fmt.Fprintf(&b, " %s=%g", s.schema.Name(i), d)
		}
		fmt.Fprintf(&b, " share=%g\n", st.share)
	}
	return b.String()
}
