package proportion

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

var schema = mustSchema(resource.CPU, resource.Memory, resource.Pods, "nvidia.com/gpu")

func mustSchema(names ...string) *resource.Schema {
	s, err := resource.NewSchema(names...)
	if err != nil {
		panic(err)
	}
	return s
}

// v is a vector of cpu (cores), memory (G, 10^9 bytes), pods and GPUs.
func v(cpu, memG float64, pods, gpus int64) resource.Vector {
	return resource.Vector{int64(cpu * 1000), int64(memG * 1e9), pods, gpus * 1000}
}

// verdict checks what Enqueueable or Allocatable said: whether, and the
// resources it named short (none when it says yes, or for a closed queue).
func verdict(t *testing.T, what string, wantOK bool, wantShort ...string) func(bool, []string) {
	t.Helper()
	return func(ok bool, short []string) {
		t.Helper()
		if ok != wantOK || !slices.Equal(short, wantShort) {
			t.Errorf("%s: %v, short of %v; want %v, %v", what, ok, short, wantOK, wantShort)
		}
	}
}

func capability(cpu, memG float64) resource.Vector {
	c := v(cpu, memG, 0, 0)
	c[2], c[3] = Unlimited, Unlimited
	return c
}

// The cluster of Volcano's TestEnqueueAndAllocable: nodes n1 and n2 of
// 2 cpu, 2G and 10 pods; queue q1 (capability 2 cpu, 2G) runs pod1
// (1 cpu, 2G), q2 (capability 3 cpu, 3G) runs pod2 (2 cpu, 1G), each of
// weight 1. pending is the pending pod's queue (0 or 1) and request.
func enqueueAndAllocable(t *testing.T, pending int, request resource.Vector) *Shares {
	t.Helper()
	queues := []Queue{
		{Name: "q1", Weight: 1, Capability: capability(2, 2), Allocated: v(1, 2, 0, 0), Request: v(1, 2, 0, 0)},
		{Name: "q2", Weight: 1, Capability: capability(3, 3), Allocated: v(2, 1, 0, 0), Request: v(2, 1, 0, 0)},
	}
	for i, r := range request {
		queues[pending].Request[i] += r
	}
	s, err := Divide(schema, v(4, 4, 20, 0), queues)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Case "case0: memory exceed derserved, job only request cpu can be
// enqueued and allocated": pod3 (1 cpu, 0G) in q1, which already holds all
// the memory it deserves.
func TestEnqueueAndAllocableCase0(t *testing.T) {
	pod3 := v(1, 0, 0, 0)
	s := enqueueAndAllocable(t, 0, pod3)
	if got := fmt.Sprint(s.Deserved(0)); got != "[2000 2e+09 0 0]" {
		t.Errorf("q1 deserves %s, want 2 cpu, 2G", got)
	}
	verdict(t, "pod3 enters q1", true)(s.Enqueueable(0, pod3))
	verdict(t, "pod3 allocated in q1", true)(s.Allocatable(0, pod3))
}

// Case "case1: cpu exceed derserved, job only request memory can be
// enqueued and allocated": pod4 (0 cpu, 1G) in q2.
func TestEnqueueAndAllocableCase1(t *testing.T) {
	pod4 := v(0, 1, 0, 0)
	s := enqueueAndAllocable(t, 1, pod4)
	if got := fmt.Sprint(s.Deserved(1)); got != "[2000 2e+09 0 0]" {
		t.Errorf("q2 deserves %s, want 2 cpu, 2G", got)
	}
	verdict(t, "pod4 enters q2", true)(s.Enqueueable(1, pod4))
	verdict(t, "pod4 allocated in q2", true)(s.Allocatable(1, pod4))
}

// Case "case2: exceed capacity, can not enqueue": pod5 (1 cpu, 1G) would
// take q1 to 3G against its capability of 2G.
func TestEnqueueAndAllocableCase2(t *testing.T) {
	pod5 := v(1, 1, 0, 0)
	s := enqueueAndAllocable(t, 0, pod5)
	verdict(t, "pod5 enters q1", false, "memory")(s.Enqueueable(0, pod5))
}

// Case "case3: exceed deserved, can not allocate": q1 deserves 2 cpu, 2G
// (its capability; the second round gives it nothing more), and pod5
// would take it to 3G.
func TestEnqueueAndAllocableCase3(t *testing.T) {
	pod5 := v(1, 1, 0, 0)
	s := enqueueAndAllocable(t, 0, pod5)
	if got := fmt.Sprint(s.Deserved(0)); got != "[2000 2e+09 0 0]" {
		t.Errorf("q1 deserves %s, want 2 cpu, 2G", got)
	}
	verdict(t, "pod5 allocatable in q1", false, "memory")(s.Allocatable(0, pod5))
}

// Case "case4: queue with  non-open state, can not enqueue".
func TestEnqueueAndAllocableCase4(t *testing.T) {
	pod6 := v(1, 1, 0, 0)
	s, err := Divide(schema, v(4, 4, 20, 0), []Queue{
		{Name: "q3", Weight: 1, Closed: true, Capability: capability(3, 3), Request: pod6},
	})
	if err != nil {
		t.Fatal(err)
	}
	verdict(t, "pod6 enters the closed queue q3", false)(s.Enqueueable(0, pod6))
	verdict(t, "pod6 allocatable in the closed queue q3", false)(s.Allocatable(0, pod6))
}

// Volcano's TestAllocate, case "case0: Pods are assigned according to the
// order of Queue Priority in which PGs are placed": queues of priority 5,
// 1 and 10, each asking for 2 cpu and 4Gi of a cluster of 4 cpu and 8Gi;
// q3 is served first.
func TestAllocateCase0QueuePriority(t *testing.T) {
	gi := func(n int64) int64 { return n << 30 }
	pod := resource.Vector{2000, gi(4), 0, 0}
	c := resource.Vector{2000, gi(4), Unlimited, Unlimited}
	s, err := Divide(schema, resource.Vector{4000, gi(8), 20, 0}, []Queue{
		{Name: "q1", Weight: 1, Priority: 5, Capability: c, Allocated: pod, Request: pod},
		{Name: "q2", Weight: 1, Priority: 1, Capability: c, Request: pod},
		{Name: "q3", Weight: 1, Priority: 10, Capability: c, Request: pod},
	})
	if err != nil {
		t.Fatal(err)
	}
	order := []int{0, 1, 2}
	slices.SortFunc(order, s.Compare)
	if !slices.Equal(order, []int{2, 0, 1}) {
		t.Errorf("queue order %v, want [2 0 1] (q3, q1, q2)", order)
	}
}

// Volcano's TestNoDoubleCountingForInqueueJobWithBindingTasks: a job
// admitted with a minimum of 2 cpu that already holds 2 cpu (its tasks
// binding) reserves nothing more; the queue's other job can enter.
func TestNoDoubleCountingForInqueueJobWithBindingTasks(t *testing.T) {
	minimum := v(2, 0, 0, 0)
	held := v(2, 0, 0, 0)
	inqueue := Inqueue(minimum, held)
	if fmt.Sprint(inqueue) != "[0 0 0 0]" {
		t.Fatalf("inqueue %v, want nothing", inqueue)
	}
	c := capability(4, 0) // memory 0: uncapped
	s, err := Divide(schema, v(4, 8, 10, 0), []Queue{
		{Name: "q1", Weight: 1, Capability: c, Allocated: held, Request: held, Inqueue: inqueue},
	})
	if err != nil {
		t.Fatal(err)
	}
	verdict(t, "a second job of 2 cpu enters", true)(s.Enqueueable(0, v(2, 0, 0, 0)))
	verdict(t, "a job of 3 cpu enters a queue of capability 4 holding 2", false, "cpu")(s.Enqueueable(0, v(3, 0, 0, 0)))
}

// A worked division: 12 cpu among weights 1, 2, 3. q1 asks for 1 cpu and
// is met in the first round (it deserves its request); q2 is capped at 3;
// q3 takes what they leave over three rounds.
func TestDivideWaterFilling(t *testing.T) {
	s, err := Divide(schema, v(12, 0, 0, 0), []Queue{
		{Name: "q1", Weight: 1, Request: v(1, 0, 0, 0)},
		{Name: "q2", Weight: 2, Request: v(10, 0, 0, 0), Capability: capability(3, 0)},
		{Name: "q3", Weight: 3, Request: v(10, 0, 0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Round 1: 12 × 1/6 = 2 → 1 (request); 12 × 2/6 = 4 → 3 (capability);
	// 12 × 3/6 = 6. Remaining 2. Round 2 (q2 and q3 unmet, weight 5): q2
	// stays at 3 and is met; q3 + 2 × 3/5 = 7.2. Round 3: q3 + 0.8 = 8.
	want := []float64{1000, 3000, 8000}
	for q, w := range want {
		if got := s.Deserved(q)[0]; math.Abs(got-w) > 1e-9 {
			t.Errorf("%s deserves %v millicores, want %v", []string{"q1", "q2", "q3"}[q], got, w)
		}
	}
}

// A guarantee is held back from the other queues and always deserved.
func TestDivideGuarantee(t *testing.T) {
	s, err := Divide(schema, v(10, 0, 0, 8), []Queue{
		{Name: "train", Weight: 1, Guarantee: v(0, 0, 0, 6), Request: v(2, 0, 0, 2)},
		{Name: "batch", Weight: 1, Request: v(8, 0, 0, 8)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Deserved(0); got[3] != 6000 || got[0] != 2000 {
		t.Errorf("train deserves %v, want 2 cpu and its guaranteed 6 GPUs", got)
	}
	// batch's real capability is 8 − 6 = 2 GPUs.
	if got := s.Deserved(1); got[3] != 2000 || got[0] != 8000 {
		t.Errorf("batch deserves %v, want 8 cpu and 2 GPUs", got)
	}
	verdict(t, "a 3-GPU job enters batch", false, "nvidia.com/gpu")(s.Enqueueable(1, v(0, 0, 0, 3)))
}

func TestOverusedAndShare(t *testing.T) {
	s, err := Divide(schema, v(8, 8, 0, 0), []Queue{
		{Name: "a", Weight: 1, Request: v(8, 8, 0, 0), Allocated: v(4, 4, 0, 0)},
		{Name: "b", Weight: 1, Request: v(8, 8, 0, 0), Allocated: v(2, 1, 0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Overused(0) || s.Overused(1) {
		t.Errorf("overused a %v, b %v; want true, false", s.Overused(0), s.Overused(1))
	}
	if s.Share(0) != 1 || s.Share(1) != 0.5 {
		t.Errorf("shares %v, %v; want 1, 0.5", s.Share(0), s.Share(1))
	}
	if s.Compare(1, 0) >= 0 {
		t.Error("b (smaller share) is not served before a")
	}
	s.Allocate(1, v(2, 3, 0, 0))
	if !s.Overused(1) || s.Share(1) != 1 {
		t.Errorf("after allocating, b overused %v share %v; want true, 1", s.Overused(1), s.Share(1))
	}
	s.Release(1, v(2, 3, 0, 0))
	if s.Overused(1) || s.Share(1) != 0.5 {
		t.Errorf("after releasing, b overused %v share %v; want false, 0.5", s.Overused(1), s.Share(1))
	}
}

// A queue over its deserved part gives tasks back until it is not; a queue
// within it gives nothing.
func TestReclaimable(t *testing.T) {
	s, err := Divide(schema, v(8, 0, 0, 0), []Queue{
		{Name: "greedy", Weight: 1, Request: v(8, 0, 0, 0), Allocated: v(7, 0, 0, 0)},
		{Name: "fair", Weight: 1, Request: v(8, 0, 0, 0), Allocated: v(1, 0, 0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	task := v(2, 0, 0, 0)
	got := s.Reclaimable([]Victim{{0, task}, {1, task}, {0, task}, {0, task}})
	// greedy holds 7 of its 4: 7 → 5 → 3, then it is within its part.
	if !slices.Equal(got, []int{0, 2}) {
		t.Errorf("victims %v, want [0 2]", got)
	}
}

func TestDivideErrors(t *testing.T) {
	tests := []struct {
		queues []Queue
		want   string
	}{
		{[]Queue{{Weight: -1}}, "queues[0].weight: must be >= 0, got -1"},
		{[]Queue{{Weight: 1}, {Weight: 1, Request: resource.Vector{1}}}, "queues[1].request: has 1 amounts, the schema has 4 resources"},
		{[]Queue{{Weight: 1, Guarantee: resource.Vector{0, 0, 0, -1}}}, `queues[0].guarantee["nvidia.com/gpu"]: must be in [0, 2^53], got -1`},
		{[]Queue{{Weight: 1, Capability: resource.Vector{0, -2, 0, 0}}}, `queues[0].capability["memory"]: must be in [0, 2^53] or Unlimited (-1), got -2`},
		{[]Queue{{Weight: math.MaxInt32}, {Weight: 1}}, "queues: weights of the queues with jobs add up to 2147483648, more than 2147483647"},
	}
	for _, tc := range tests {
		_, err := Divide(schema, v(1, 1, 1, 1), tc.queues)
		if err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %s", err, tc.want)
		}
	}
	if _, err := Divide(schema, resource.Vector{1}, nil); err == nil || !strings.HasPrefix(err.Error(), "total: ") {
		t.Errorf("short total: error %v", err)
	}
	// Weights of queues without jobs do not count.
	if _, err := Divide(schema, v(1, 1, 1, 1), []Queue{{Weight: math.MaxInt32}, {Weight: 1, NoJobs: true}}); err != nil {
		t.Error(err)
	}
}

func TestCapability(t *testing.T) {
	c, err := Capability(schema, map[string]string{"cpu": "8", "nvidia.com/gpu": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c) != "[8000 -1 -1 0]" {
		t.Errorf("capability %v, want [8000 -1 -1 0]", c)
	}
	if _, err := Capability(schema, map[string]string{"example.com/foo": "1"}); err == nil {
		t.Error("a resource outside the schema is accepted")
	}
}

// Ephemeral storage is divided in Volcano's thousandths of a byte and
// reported in bytes.
func TestEphemeralStorageUnits(t *testing.T) {
	sc := mustSchema(resource.CPU, resource.Memory, resource.EphemeralStorage)
	s, err := Divide(sc, resource.Vector{0, 0, 10}, []Queue{
		{Name: "a", Weight: 1, Request: resource.Vector{0, 0, 10}},
		{Name: "b", Weight: 2, Request: resource.Vector{0, 0, 10}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Deserved(0)[2], s.Deserved(1)[2]
	if math.Abs(a-10.0/3) > 1e-9 || math.Abs(b-20.0/3) > 1e-9 {
		t.Errorf("deserved %v and %v bytes, want 10/3 and 20/3", a, b)
	}
}

// queuesGen draws queues over the test schema, with or without
// guarantees.
func queuesGen(total resource.Vector, guarantees bool) *rapid.Generator[[]Queue] {
	amount := func(t *rapid.T, label string, limit int64) resource.Vector {
		out := make(resource.Vector, len(total))
		for i := range out {
			out[i] = rapid.Int64Range(0, limit).Draw(t, fmt.Sprint(label, i))
		}
		return out
	}
	return rapid.Custom(func(t *rapid.T) []Queue {
		n := rapid.IntRange(1, 5).Draw(t, "queues")
		qs := make([]Queue, n)
		for q := range qs {
			qs[q] = Queue{
				Name:      fmt.Sprint("q", q),
				Weight:    rapid.Int32Range(0, 5).Draw(t, "weight"),
				Request:   amount(t, "request", 20000),
				Allocated: amount(t, "allocated", 10000),
				NoJobs:    rapid.IntRange(0, 5).Draw(t, "nojobs") == 0,
			}
			if rapid.Bool().Draw(t, "capped") {
				qs[q].Capability = amount(t, "capability", 20000)
				for i := range qs[q].Capability {
					if rapid.IntRange(0, 3).Draw(t, "unlimited") == 0 {
						qs[q].Capability[i] = Unlimited
					}
				}
			}
			if guarantees && rapid.Bool().Draw(t, "guaranteed") {
				qs[q].Guarantee = amount(t, "guarantee", total[0]/int64(n))
				for i := range qs[q].Guarantee {
					qs[q].Guarantee[i] = min(qs[q].Guarantee[i], total[i]/int64(n))
				}
			}
		}
		return qs
	})
}

// Without guarantees a queue deserves no more than it requests or its
// capability allows, queues without jobs nothing, and all of them
// together no more than the cluster's total.
func TestDivideBoundsProperty(t *testing.T) {
	total := resource.Vector{16000, 32000, 50, 8000}
	rapid.Check(t, func(t *rapid.T) {
		qs := queuesGen(total, false).Draw(t, "queues")
		s, err := Divide(schema, total, qs)
		if err != nil {
			t.Fatal(err)
		}
		sum := make([]float64, len(total))
		for q, queue := range qs {
			d := s.Deserved(q)
			for i, x := range d {
				if x < 0 || math.IsNaN(x) {
					t.Fatalf("%s deserves %v of %s", queue.Name, x, schema.Name(i))
				}
				if queue.NoJobs && x != 0 {
					t.Fatalf("%s has no jobs but deserves %v of %s", queue.Name, x, schema.Name(i))
				}
				if x > float64(queue.Request[i]) {
					t.Fatalf("%s deserves %v of %s, requests %d", queue.Name, x, schema.Name(i), queue.Request[i])
				}
				if c := queue.Capability; c != nil && c[i] != Unlimited && (c[i] > 0 || !s.plain[i]) && x > float64(c[i]) {
					t.Fatalf("%s deserves %v of %s, capability %d", queue.Name, x, schema.Name(i), c[i])
				}
				sum[i] += x
			}
		}
		for i, x := range sum {
			if x > float64(total[i])*(1+1e-12)+minResource {
				t.Fatalf("queues deserve %v of %s, the cluster has %d", x, schema.Name(i), total[i])
			}
		}
	})
}

// With guarantees (within the total), a queue with jobs deserves at least
// its guarantee (when any queue with jobs has a weight), at most the
// larger of its guarantee and its request, and all together no more than
// the total and the guarantees (see TestDivideGuaranteesCanExceedTheTotal).
func TestDivideGuaranteesProperty(t *testing.T) {
	total := resource.Vector{16000, 32000, 50, 8000}
	rapid.Check(t, func(t *rapid.T) {
		qs := queuesGen(total, true).Draw(t, "queues")
		s, err := Divide(schema, total, qs)
		if err != nil {
			t.Fatal(err)
		}
		// With no weight among the queues with jobs there is no round, and
		// nothing is deserved (Volcano's loop stops before the first).
		var weights int32
		for _, queue := range qs {
			if !queue.NoJobs {
				weights += queue.Weight
			}
		}
		sum := make([]float64, len(total))
		guaranteed := make(resource.Vector, len(total))
		for q, queue := range qs {
			d := s.Deserved(q)
			for i, x := range d {
				var g int64
				if queue.Guarantee != nil {
					g = queue.Guarantee[i]
				}
				if !queue.NoJobs && weights > 0 && x < float64(g) {
					t.Fatalf("%s deserves %v of %s, guaranteed %d", queue.Name, x, schema.Name(i), g)
				}
				guaranteed[i] += g
				if x > float64(max(g, queue.Request[i])) {
					t.Fatalf("%s deserves %v of %s, requests %d, guaranteed %d", queue.Name, x, schema.Name(i), queue.Request[i], g)
				}
				sum[i] += x
			}
		}
		for i, x := range sum {
			if x > float64(total[i]+guaranteed[i])*(1+1e-12)+minResource {
				t.Fatalf("queues deserve %v of %s, the cluster has %d, guarantees %d", x, schema.Name(i), total[i], guaranteed[i])
			}
		}
	})
}

// Volcano's division can promise more than the cluster has when a queue
// is guaranteed something: the first round hands out the whole total by
// weight, guarantees are added on top, and the remainder only stops at 0.
// Here 50 pods: q0 deserves its 29, q1 its 10, and q2 (weight 0, nothing
// requested) its guaranteed 12: 51 in all.
func TestDivideGuaranteesCanExceedTheTotal(t *testing.T) {
	s, err := Divide(schema, resource.Vector{0, 0, 50, 0}, []Queue{
		{Name: "q0", Weight: 2, Request: resource.Vector{0, 0, 29, 0}},
		{Name: "q1", Weight: 1, Request: resource.Vector{0, 0, 10, 0}},
		{Name: "q2", Weight: 0, Guarantee: resource.Vector{0, 0, 12, 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for q := range s.Len() {
		got = append(got, s.Deserved(q)[2])
	}
	if fmt.Sprint(got) != "[29 10 12]" {
		t.Errorf("deserved pods %v, want [29 10 12]", got)
	}
}

// The queue order is a strict weak order.
func TestCompareIsAStrictWeakOrder(t *testing.T) {
	total := resource.Vector{16000, 32000, 50, 8000}
	rapid.Check(t, func(t *rapid.T) {
		qs := queuesGen(total, true).Draw(t, "queues")
		for q := range qs {
			qs[q].Priority = rapid.Int32Range(0, 1).Draw(t, "priority")
			qs[q].Name = rapid.SampledFrom([]string{"a", "b"}).Draw(t, "name")
		}
		s, err := Divide(schema, total, qs)
		if err != nil {
			t.Fatal(err)
		}
		n := len(qs)
		for a := range n {
			if s.Compare(a, a) != 0 {
				t.Fatalf("Compare(%d, %d) != 0", a, a)
			}
			for b := range n {
				if sign(s.Compare(a, b)) != -sign(s.Compare(b, a)) {
					t.Fatalf("Compare not antisymmetric on %d, %d", a, b)
				}
				for c := range n {
					if s.Compare(a, b) < 0 && s.Compare(b, c) < 0 && s.Compare(a, c) >= 0 {
						t.Fatalf("Compare not transitive on %d, %d, %d", a, b, c)
					}
					if s.Compare(a, b) == 0 && s.Compare(b, c) == 0 && s.Compare(a, c) != 0 {
						t.Fatalf("incomparability not transitive on %d, %d, %d", a, b, c)
					}
				}
			}
		}
	})
}

func sign(x int) int { return min(max(x, -1), 1) }

func ExampleDivide() {
	sc, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	total, _ := sc.Parse(map[string]string{"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "16"})
	train, _ := sc.Parse(map[string]string{"cpu": "48", "memory": "256Gi", "nvidia.com/gpu": "16"})
	infer, _ := sc.Parse(map[string]string{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"})
	batch, _ := sc.Parse(map[string]string{"cpu": "64", "memory": "128Gi"})
	shares, err := Divide(sc, total, []Queue{
		{Name: "training", Weight: 2, Request: train},
		{Name: "inference", Weight: 1, Request: infer},
		{Name: "batch", Weight: 1, Request: batch},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for q, name := range []string{"training", "inference", "batch"} {
		d := shares.Deserved(q)
		fmt.Printf("%-9s %5.1f cpu %6.1f Gi %4.1f GPUs\n", name, d[0]/1000, d[1]/(1<<30), d[2]/1000)
	}
	// Output:
	// training   37.3 cpu  256.0 Gi 14.0 GPUs
	// inference   8.0 cpu   32.0 Gi  2.0 GPUs
	// batch      18.7 cpu  128.0 Gi  0.0 GPUs
}

// Capability reads a queue's spec.capability, which its author writes:
// any name and quantity is an error or a vector of amounts in range, with
// Unlimited exactly where the spec lists nothing.
func FuzzCapability(f *testing.F) {
	f.Add("cpu", "8", "nvidia.com/gpu", "0")
	f.Add("memory", "1.5Gi", "pods", "-1")
	f.Add("cpu", "1e400", "", "")
	f.Fuzz(func(t *testing.T, n1, q1, n2, q2 string) {
		spec := map[string]string{n1: q1, n2: q2}
		c, err := Capability(schema, spec)
		if err != nil {
			return
		}
		for i, a := range c {
			_, listed := spec[schema.Name(i)]
			if listed && (a < 0 || a > resource.MaxAmount) || !listed && a != Unlimited {
				t.Fatalf("capability %v from %q", c, spec)
			}
		}
		if _, err := Divide(schema, v(1, 1, 1, 1), []Queue{{Weight: 1, Capability: c}}); err != nil {
			t.Fatalf("Divide rejects Capability's own vector %v: %v", c, err)
		}
	})
}
