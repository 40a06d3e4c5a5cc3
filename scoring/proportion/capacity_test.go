package proportion

import (
	"fmt"
	"slices"
	"testing"

	"github.com/resfit/resfit/resource"
)

// The cluster of Volcano's capacity TestEnqueueAndAllocatable: nodes n1
// and n2 of 3 cpu, 3G and 10 pods; q1 (deserved 2 cpu, 2G; capability
// 2 cpu, 2G) runs pod1 (1 cpu, 3G), q2 (deserved 2 cpu, 2G; capability
// 3 cpu, 3G) runs pod2 (3 cpu, 1G). pending is the pending pod's queue.
func capacityEnqueueAndAllocatable(t *testing.T, pending int, request []int64) *Shares {
	t.Helper()
	queues := []Queue{
		{Name: "q1", Weight: 1, Deserved: v(2, 2, 0, 0), Capability: capability(2, 2), Allocated: v(1, 3, 0, 0), Request: v(1, 3, 0, 0)},
		{Name: "q2", Weight: 1, Deserved: v(2, 2, 0, 0), Capability: capability(3, 3), Allocated: v(3, 1, 0, 0), Request: v(3, 1, 0, 0)},
	}
	for i, r := range request {
		queues[pending].Request[i] += r
	}
	s, err := DivideByDeserved(schema, v(6, 6, 20, 0), queues)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Capacity's case "case0: memory exceed derserved, job only request cpu
// can be enqueued and allocated": pod3 (1 cpu, 0G) in q1, which holds 3G
// of its 2G.
func TestCapacityEnqueueAndAllocatableCase0(t *testing.T) {
	pod3 := v(1, 0, 0, 0)
	s := capacityEnqueueAndAllocatable(t, 0, pod3)
	verdict(t, "pod3 enters q1", true)(s.Enqueueable(0, pod3))
	verdict(t, "pod3 allocated in q1", true)(s.Allocatable(0, pod3))
	// Over its memory but not its cpu: not overused, share 3G/2G.
	if s.Overused(0) || s.Share(0) != 1.5 {
		t.Errorf("q1 overused %v share %v, want false and 1.5", s.Overused(0), s.Share(0))
	}
}

// Capacity's case "case1: cpu exceed derserved, job only request memory
// can be enqueued and allocated": pod4 (0 cpu, 1G) in q2, which holds
// 3 cpu of its 2 (its capability is 3).
func TestCapacityEnqueueAndAllocatableCase1(t *testing.T) {
	pod4 := v(0, 1, 0, 0)
	s := capacityEnqueueAndAllocatable(t, 1, pod4)
	verdict(t, "pod4 enters q2", true)(s.Enqueueable(1, pod4))
	verdict(t, "pod4 allocated in q2", true)(s.Allocatable(1, pod4))
	// Held to its real capability, not to what it deserves: 1.5G more
	// takes it past the 2G it deserves but not past its capability of 3G;
	// one more cpu is over its capability of 3.
	verdict(t, "1.5G more in q2", true)(s.Allocatable(1, v(0, 1.5, 0, 0)))
	verdict(t, "1 more cpu in q2", false, "cpu")(s.Allocatable(1, v(1, 0, 0, 0)))
}

// Capacity's case "case2: exceed capacity, can not enqueue": pod5 (1 cpu,
// 1G) would take q1 to 4G against its capability of 2G.
func TestCapacityEnqueueAndAllocatableCase2(t *testing.T) {
	pod5 := v(1, 1, 0, 0)
	s := capacityEnqueueAndAllocatable(t, 0, pod5)
	verdict(t, "pod5 enters q1", false, "memory")(s.Enqueueable(0, pod5))
}

// Capacity's case "case4: queue with non-open state, can not enqueue".
func TestCapacityEnqueueAndAllocatableCase4(t *testing.T) {
	pod6 := v(1, 1, 0, 0)
	s, err := DivideByDeserved(schema, v(6, 6, 20, 0), []Queue{
		{Name: "q3", Weight: 1, Closed: true, Capability: capability(3, 3), Request: pod6},
	})
	if err != nil {
		t.Fatal(err)
	}
	verdict(t, "pod6 enters the closed queue q3", false)(s.Enqueueable(0, pod6))
}

// Deserved is held to the real capability and raised to the guarantee; a
// queue that deserves nothing is best-effort, served after one of equal
// share that deserves something.
func TestDivideByDeserved(t *testing.T) {
	s, err := DivideByDeserved(schema, v(8, 8, 0, 4), []Queue{
		{Name: "capped", Deserved: v(6, 2, 0, 0), Capability: capability(4, 0)},
		{Name: "guaranteed", Deserved: v(1, 1, 0, 0), Guarantee: v(2, 0, 0, 1), Allocated: v(2, 0, 0, 1)},
		{Name: "best-effort", Allocated: v(1, 1, 0, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range [][]float64{{4000, 2e9, 0, 0}, {2000, 1e9, 0, 1000}, {0, 0, 0, 0}} {
		if got := s.Deserved(q); !slices.Equal(got, want) {
			t.Errorf("queue %d deserves %v, want %v", q, got, want)
		}
	}
	if s.Share(1) != 1 || s.Share(2) != 1 {
		t.Errorf("shares %v, %v; want 1 and 1", s.Share(1), s.Share(2))
	}
	if s.Compare(1, 2) >= 0 || s.Compare(2, 1) <= 0 {
		t.Error("the best-effort queue is not served after the guaranteed one of equal share")
	}
	// Allocating keeps a best-effort queue at share 1.
	s.Allocate(2, v(1, 0, 0, 0))
	if s.Share(2) != 1 {
		t.Errorf("best-effort share %v after allocating, want 1", s.Share(2))
	}
}

// Capacity's Test_capacityPlugin_OnSessionOpenWithoutHierarchy, cases
// "case0: Pod allocatable when queue has not exceed capability" and
// "case1: Pod not allocatable when queue exceed queue capability": a queue
// of capability 2 cpu, 2Gi (case0) or 1.5 cpu, 1.5Gi (case1), no deserved,
// running a pod of 1 cpu, 1Gi, asked for another such pod.
func TestCapacityWithoutHierarchyCase0And1(t *testing.T) {
	const gi = 1 << 30
	pod := []int64{1000, gi, 0, 0}
	for _, tc := range []struct {
		name       string
		capability []int64
		ok         bool
		short      []string
	}{
		{"case0", []int64{2000, 2 * gi, Unlimited, Unlimited}, true, nil},
		{"case1", []int64{1500, 3 * gi / 2, Unlimited, Unlimited}, false, []string{"cpu", "memory"}},
	} {
		s, err := DivideByDeserved(schema, []int64{4000, 8 * gi, 20, 0}, []Queue{
			{Name: "q", Weight: 1, Capability: tc.capability, Allocated: pod, Request: []int64{2000, 2 * gi, 0, 0}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if ok, short := s.Allocatable(0, pod); ok != tc.ok || !slices.Equal(short, tc.short) {
			t.Errorf("%s: allocatable %v, short of %v; want %v, %v", tc.name, ok, short, tc.ok, tc.short)
		}
	}
}

// Case "case4: Pods are assigned according to the order of Queue Priority
// in which PGs are placed": q7 (priority 5) runs a pod, q8 (1) and q9 (10)
// each have one pending; q9 is served first, and its pod fits its
// capability.
func TestCapacityWithoutHierarchyCase4(t *testing.T) {
	const gi = 1 << 30
	pod := []int64{2000, 4 * gi, 0, 0}
	c := []int64{2000, 4 * gi, Unlimited, Unlimited}
	s, err := DivideByDeserved(schema, []int64{4000, 8 * gi, 20, 0}, []Queue{
		{Name: "q7", Weight: 1, Priority: 5, Capability: c, Allocated: pod, Request: pod},
		{Name: "q8", Weight: 1, Priority: 1, Capability: c, Request: pod},
		{Name: "q9", Weight: 1, Priority: 10, Capability: c, Request: pod},
	})
	if err != nil {
		t.Fatal(err)
	}
	order := []int{0, 1, 2}
	slices.SortFunc(order, s.Compare)
	if !slices.Equal(order, []int{2, 0, 1}) {
		t.Errorf("queue order %v, want [2 0 1] (q9, q7, q8)", order)
	}
	verdict(t, "p15 allocated in q9", true)(s.Allocatable(2, pod))
}

func ExampleDivideByDeserved() {
	sc, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	total, _ := sc.Parse(map[string]string{"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "16"})
	deserved, _ := sc.Parse(map[string]string{"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"})
	limit, _ := Capability(sc, map[string]string{"nvidia.com/gpu": "12"})
	held, _ := sc.Parse(map[string]string{"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "10"})
	shares, err := DivideByDeserved(sc, total, []Queue{
		{Name: "training", Deserved: deserved, Capability: limit, Allocated: held},
		{Name: "adhoc"}, // deserves nothing: best-effort
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	task, _ := sc.Parse(map[string]string{"cpu": "4", "nvidia.com/gpu": "4"})
	ok, short := shares.Allocatable(0, task)
	fmt.Printf("training: share %.2f, another 4 GPUs allocatable: %v %v\n", shares.Share(0), ok, short)
	fmt.Printf("adhoc: share %.0f\n", shares.Share(1))
	// Output:
	// training: share 1.25, another 4 GPUs allocatable: false [nvidia.com/gpu]
	// adhoc: share 1
}
