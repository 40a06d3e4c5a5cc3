package reservation

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
)

const gpu = "nvidia.com/gpu"

var t0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// tb is what the helpers need of *testing.T and *rapid.T alike.
type tb interface {
	Helper()
	Fatal(args ...any)
}

func schema(t tb) *resource.Schema {
	s, err := resource.NewSchema("cpu", "memory", gpu)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestElect(t *testing.T) {
	jobs := []Job{
		{Name: "small-new", Priority: 1, Request: resource.Vector{1000, 0, 1000}, PendingSince: t0.Add(50 * time.Minute)},
		{Name: "big-old", Priority: 1, Request: resource.Vector{64000, 0, 16000}, PendingSince: t0},
		{Name: "urgent", Priority: 5, Request: resource.Vector{1000, 0, 0}, PendingSince: t0.Add(55 * time.Minute)},
		{Name: "huge", Priority: 1, Request: resource.Vector{1000, 0, 32000}, PendingSince: t0.Add(30 * time.Minute)},
	}
	now := t0.Add(time.Hour)
	tests := []struct {
		name string
		jobs []Job
		e    Election
		want string
	}{
		{"automatic: priority first", jobs, Election{}, "urgent"},
		{"automatic: then longest wait", jobs[:2], Election{}, "big-old"},
		{"automatic: ties by name", []Job{{Name: "b", PendingSince: t0}, {Name: "a", PendingSince: t0}}, Election{}, "a"},
		// Request line 8 GPUs: big-old (16, ×2) and huge (32, ×4) qualify; same priority;
		// huge is further over the line.
		{"custom: request line, furthest over", jobs, Election{Mode: Custom, MinRequest: resource.Vector{0, 0, 8000}}, "huge"},
		// Waiting line 40 minutes: big-old (60 min, ×1.5) qualifies alone.
		{"custom: waiting line", jobs, Election{Mode: Custom, MinWait: 40 * time.Minute}, "big-old"},
		// Priority still comes first among candidates.
		{"custom: priority over excess", jobs, Election{Mode: Custom, MinRequest: resource.Vector{500, 0, 8000}}, "urgent"},
	}
	for _, tc := range tests {
		i, ok := Elect(tc.jobs, now, tc.e)
		if !ok || tc.jobs[i].Name != tc.want {
			t.Errorf("%s: elected %d (%v), want %s", tc.name, i, ok, tc.want)
		}
	}
	marked := slices.Clone(jobs)
	marked[0].Marked = true
	if i, ok := Elect(marked, now, Election{Mode: Custom, MinWait: time.Minute}); !ok || marked[i].Name != "small-new" {
		t.Errorf("custom: a marked job wins, got %d", i)
	}
	if _, ok := Elect(jobs, now, Election{Mode: Custom, MinRequest: resource.Vector{0, 0, 64000}}); ok {
		t.Error("custom: no job over the line, yet one was elected")
	}
	if _, ok := Elect(nil, now, Election{}); ok {
		t.Error("elected from no jobs")
	}
}

// nodesOf builds a table of GPU nodes: name → (allocatable GPUs, used GPUs).
func nodesOf(t tb, spec ...[3]any) *resource.Table {
	s := schema(t)
	tab := resource.NewTable(s, len(spec))
	for _, n := range spec {
		a, u := int64(n[1].(int))*1000, int64(n[2].(int))*1000
		if _, err := tab.Add(n[0].(string), resource.Vector{64000, 256 << 30, a}, resource.Vector{0, 0, u}); err != nil {
			t.Fatal(err)
		}
	}
	return tab
}

func names(tab *resource.Table, rows []int) string {
	var out []string
	for _, r := range rows {
		out = append(out, tab.Name(r))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func TestSelectNodes(t *testing.T) {
	tab := nodesOf(t,
		[3]any{"a8", 8, 6}, [3]any{"b8", 8, 0}, [3]any{"c4", 4, 0}, [3]any{"d4", 4, 1}, [3]any{"e2", 2, 0}, [3]any{"f6", 6, 2})
	tests := []struct {
		name string
		need int64
		alg  Algorithm
		want string
		ok   bool
	}{
		// Specification first: allocatable 8, 8, 6, 4, 4, 2. 11 GPUs need two
		// nodes; of the pairs covering 11 the closest is 8+4 = 12.
		{"spec: fewest, then closest", 11, SpecificationFirst, "a8,c4", true},
		// 10: 8+2 and 6+4 both total 10; the tie goes to the larger node.
		{"spec: equal totals prefer larger nodes", 10, SpecificationFirst, "a8,e2", true},
		// 16 needs two nodes: only 8+8.
		{"spec: exact pair", 16, SpecificationFirst, "a8,b8", true},
		// 3 fits on one node: the closest single node is c4 (4), before d4 by name.
		{"spec: single node, closest, by name", 3, SpecificationFirst, "c4", true},
		// Idle first: idle 2, 8, 4, 3, 2, 4. 12 needs two nodes: 8+4, b8 with c4 (by name).
		{"idle: fewest, then closest", 12, IdleFirst, "b8,c4", true},
		{"idle: 7 on b8 alone", 7, IdleFirst, "b8", true},
		{"spec: cluster too small", 33, SpecificationFirst, "", false},
	}
	for _, tc := range tests {
		rows, ok := SelectNodes(tab, 2, tc.need*1000, tc.alg)
		if ok != tc.ok || names(tab, rows) != tc.want {
			t.Errorf("%s: %s (%v), want %s (%v)", tc.name, names(tab, rows), ok, tc.want, tc.ok)
		}
	}
}

// The selected set always covers the request when the whole cluster does;
// no smaller set covers it; and no set of the same size covers it with a
// total closer to the request (checked by brute force on small clusters).
func TestSelectNodesProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 10).Draw(t, "nodes")
		var spec [][3]any
		for i := range n {
			a := rapid.IntRange(0, 8).Draw(t, "alloc")
			spec = append(spec, [3]any{fmt.Sprintf("n%d", i), a, rapid.IntRange(0, a).Draw(t, "used")})
		}
		tab := nodesOf(t, spec...)
		alg := rapid.SampledFrom([]Algorithm{SpecificationFirst, IdleFirst}).Draw(t, "alg")
		need := int64(rapid.IntRange(1, 40).Draw(t, "need")) * 1000
		rows, ok := SelectNodes(tab, 2, need, alg)
		amounts := make([]int64, n)
		var all int64
		for r := range n {
			amounts[r] = amount(alg, tab, r, 2)
			all += amounts[r]
		}
		if ok != (all >= need) {
			t.Fatalf("ok %v, but the cluster holds %d of %d", ok, all, need)
		}
		if !ok {
			return
		}
		var got int64
		for _, r := range rows {
			got += amounts[r]
		}
		if got < need {
			t.Fatalf("selected %v holds %d < %d", rows, got, need)
		}
		bestCount, bestTotal := n+1, int64(-1)
		for mask := 1; mask < 1<<n; mask++ {
			var s int64
			c := 0
			for r := range n {
				if mask&(1<<r) != 0 {
					s += amounts[r]
					c++
				}
			}
			if s < need {
				continue
			}
			if c < bestCount || c == bestCount && s < bestTotal {
				bestCount, bestTotal = c, s
			}
		}
		if len(rows) != bestCount || got != bestTotal {
			t.Fatalf("selected %d nodes holding %d; best is %d nodes holding %d", len(rows), got, bestCount, bestTotal)
		}
	})
}

func TestStepSchemes(t *testing.T) {
	tab := nodesOf(t, [3]any{"a", 8, 6}, [3]any{"b", 8, 3}, [3]any{"c", 8, 5}, [3]any{"d", 8, 7})
	target := Target{Name: "big", Request: resource.Vector{8000, 0, 16000}}
	// Single node, idle first: one node a cycle, most idle first (b: 5, then
	// c: 3), until the locked allocatable (8+8) covers 16.
	var s State
	var got []string
	for cycle := range 4 {
		var err error
		s, err = Step(s, Policy{Scheme: SingleNode, Algorithm: IdleFirst}, t0.Add(time.Duration(cycle)*time.Minute), target, tab)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(s.Locked, ","))
	}
	if strings.Join(got, " ") != "b b,c b,c b,c" {
		t.Errorf("single-node locks by cycle: %v", got)
	}
	if !s.Since.Equal(t0) {
		t.Errorf("since %v, want the first cycle", s.Since)
	}
	// Multi node: SelectNodes' two nodes (spec first: all 8 → a, b by name),
	// topped up to 50% of the cluster = 2: a, b. With Nodes 3: a, b, c.
	s2, _ := Step(State{}, Policy{Scheme: MultiNode, Percent: 0.5}, t0, target, tab)
	s3, _ := Step(State{}, Policy{Scheme: MultiNode, Nodes: 3}, t0, target, tab)
	if strings.Join(s2.Locked, ",") != "a,b" || strings.Join(s3.Locked, ",") != "a,b,c" {
		t.Errorf("multi-node: %v and %v", s2.Locked, s3.Locked)
	}
	// Cluster lock, and escalation after the timeout.
	c, _ := Step(State{}, Policy{Scheme: ClusterLock}, t0, target, tab)
	if !c.Cluster || len(c.Locked) != 4 {
		t.Errorf("cluster lock: %+v", c)
	}
	p := Policy{Scheme: SingleNode, Algorithm: IdleFirst, Timeout: 10 * time.Minute}
	s, _ = Step(State{}, p, t0, target, tab)
	s, _ = Step(s, p, t0.Add(9*time.Minute), target, tab)
	if s.Cluster {
		t.Error("escalated before the timeout")
	}
	s, _ = Step(s, p, t0.Add(10*time.Minute), target, tab)
	if !s.Cluster || len(s.Locked) != 4 {
		t.Errorf("no escalation at the timeout: %+v", s)
	}
	// Release when the target runs or is deleted; a new target starts over.
	for _, st := range []Status{Running, Deleted} {
		if r, _ := Step(s, p, t0.Add(11*time.Minute), Target{Name: "big", Status: st}, tab); r.Target != "" || len(r.Locked) != 0 {
			t.Errorf("status %v did not release: %+v", st, r)
		}
	}
	n, _ := Step(s, p, t0.Add(12*time.Minute), Target{Name: "other", Request: resource.Vector{0, 0, 8000}}, tab)
	if n.Target != "other" || !n.Since.Equal(t0.Add(12*time.Minute)) || n.Cluster || len(n.Locked) != 1 {
		t.Errorf("new target: %+v", n)
	}
	if _, err := Step(State{}, p, t0, Target{Name: "bad", Request: resource.Vector{1}}, tab); err == nil {
		t.Error("bad request accepted")
	}
}

// A target's Usable keeps the schemes off the nodes its tasks cannot run
// on, worked by hand on TestStepSchemes' nodes.
func TestStepLocksOnlyUsableNodes(t *testing.T) {
	tab := nodesOf(t, [3]any{"a", 8, 6}, [3]any{"b", 8, 3}, [3]any{"c", 8, 5}, [3]any{"d", 8, 7})
	notB := func(row int) bool { return tab.Name(row) != "b" }
	target := Target{Name: "big", Request: resource.Vector{8000, 0, 16000}, Usable: notB}
	// Single node, idle first, b (5 idle) unusable: c (3), then a (2).
	var s State
	var got []string
	for cycle := range 3 {
		var err error
		if s, err = Step(s, Policy{Scheme: SingleNode, Algorithm: IdleFirst}, t0.Add(time.Duration(cycle)*time.Minute), target, tab); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(s.Locked, ","))
	}
	if strings.Join(got, " ") != "c a,c a,c" {
		t.Errorf("single-node locks by cycle: %v", got)
	}
	// A locked node that is no longer usable does not count: b locked
	// before, c added, then a (b's 8 GPUs are not counted).
	s = State{Target: "big", Since: t0, Locked: []string{"b"}}
	for range 2 {
		s, _ = Step(s, Policy{Scheme: SingleNode, Algorithm: IdleFirst}, t0, target, tab)
	}
	if strings.Join(s.Locked, ",") != "a,b,c" {
		t.Errorf("an unusable locked node counted: %v", s.Locked)
	}
	// Multi node, specification first, a unusable: b, c (by name).
	notA := func(row int) bool { return tab.Name(row) != "a" }
	m, _ := Step(State{}, Policy{Scheme: MultiNode, Percent: 0.5}, t0, Target{Name: "big", Request: target.Request, Usable: notA}, tab)
	if strings.Join(m.Locked, ",") != "b,c" {
		t.Errorf("multi-node: %v", m.Locked)
	}
	// A cluster lock still locks every node.
	c, _ := Step(State{}, Policy{Scheme: ClusterLock}, t0, target, tab)
	if !c.Cluster || len(c.Locked) != 4 {
		t.Errorf("cluster lock: %+v", c)
	}
}

// No scheme but a cluster lock locks a node the target cannot use, on
// generated nodes, usable sets and policies.
func TestStepNeverLocksAnUnusableNode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "nodes")
		spec := make([][3]any, n)
		usable := make([]bool, n)
		for i := range spec {
			a := rapid.IntRange(0, 8).Draw(t, "gpus")
			spec[i] = [3]any{fmt.Sprintf("n%d", i), a, rapid.IntRange(0, a).Draw(t, "used")}
			usable[i] = rapid.Bool().Draw(t, "usable")
		}
		tab := nodesOf(t, spec...)
		p := Policy{
			Scheme:    rapid.SampledFrom([]Scheme{SingleNode, MultiNode}).Draw(t, "scheme"),
			Algorithm: rapid.SampledFrom([]Algorithm{SpecificationFirst, IdleFirst}).Draw(t, "algorithm"),
			Nodes:     rapid.IntRange(0, n).Draw(t, "lock"),
		}
		target := Target{Name: "big", Request: resource.Vector{0, 0, int64(rapid.IntRange(1, 40).Draw(t, "need")) * 1000},
			Usable: func(row int) bool { return usable[row] }}
		var s State
		for cycle := range n + 1 {
			var err error
			if s, err = Step(s, p, t0.Add(time.Duration(cycle)*time.Minute), target, tab); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range s.Locked {
			var i int
			fmt.Sscanf(name, "n%d", &i)
			if !usable[i] {
				t.Fatalf("locked unusable node %s: %v", name, s.Locked)
			}
		}
	})
}

// pipelineFor is a fit filter and a GPU-packing scorer.
func pipelineFor(t tb, s *resource.Schema) *scoring.Pipeline {
	c, err := config.Load([]byte(`plugins: [{name: resource-strategy-fit, args: {resources: {nvidia.com/gpu: {type: MostAllocated, weight: 1}}}}]`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Locked nodes never receive a task of another job; the target's tasks
// may go anywhere the other filters allow. Excluded lists exactly the
// locked rows for another job's task, none for the target's.
func TestFilterKeepsOthersOffLockedNodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "nodes")
		var spec [][3]any
		for i := range n {
			spec = append(spec, [3]any{fmt.Sprintf("n%d", i), 8, rapid.IntRange(0, 8).Draw(t, "used")})
		}
		tab := nodesOf(t, spec...)
		var locked []string
		for i := range n {
			if rapid.Bool().Draw(t, "locked") {
				locked = append(locked, fmt.Sprintf("n%d", i))
			}
		}
		st := State{Target: "target", Locked: locked, Cluster: rapid.IntRange(0, 9).Draw(t, "cluster") == 0}
		f := NewFilter(st, tab)
		p, err := pipelineFor(t, tab.Schema()).WithFilters(f)
		if err != nil {
			t.Fatal(err)
		}
		job := rapid.SampledFrom([]string{"target", "other", ""}).Draw(t, "job")
		task := &scoring.Task{Job: job, Requests: resource.Vector{1000, 0, int64(rapid.IntRange(0, 3).Draw(t, "gpus")) * 1000}}
		b := p.NewBatch(n)
		if err := p.Score(task, tab, b); err != nil {
			t.Fatal(err)
		}
		excluded := f.Excluded(task, nil)
		for r := range n {
			isLocked := st.Cluster || slices.Contains(locked, tab.Name(r))
			if slices.Contains(excluded, r) != (isLocked && job != "target") {
				t.Fatalf("task of %q: Excluded lists %v, node %s locked %v", job, excluded, tab.Name(r), isLocked)
			}
			if b.Feasible(r) && isLocked && job != "target" {
				t.Fatalf("task of %q feasible on locked node %s", job, tab.Name(r))
			}
			if isLocked && job != "target" && b.RejectedBy(r) == "reservation" && b.Reason(r) != "node reserved for target job target" {
				t.Fatalf("reason %q", b.Reason(r))
			}
		}
	})
}

// running is a placed task that ends at a given cycle.
type running struct {
	node, gpus, ends int
}

// simulate runs the two starvation scenes of the reservation design: small
// one-GPU tasks (job B, ahead in the queue — by priority in one scene, by
// DRF's smaller share in the other) arrive faster than the cluster frees
// GPUs, each running three cycles; job A needs 8 GPUs on one node. Each
// cycle places the small tasks first, then A. It returns the cycle A was
// placed in, or -1.
func simulate(t *testing.T, reserve bool, priorityA, priorityB int32, cycles int) int {
	s := schema(t)
	tab := resource.NewTable(s, 4)
	for i := range 4 {
		tab.Add(fmt.Sprintf("node-%d", i), resource.Vector{64000, 256 << 30, 8000}, nil)
	}
	base := pipelineFor(t, s)
	b := base.NewBatch(tab.Len())
	// Steady state: every GPU busy, a third of them freeing each cycle.
	var run []running
	for i := range 32 {
		run = append(run, running{node: i / 8, gpus: 1, ends: 1 + i%3})
	}
	var state State
	policy := Policy{Scheme: SingleNode, Algorithm: IdleFirst}
	bigPending := t0
	for cycle := range cycles {
		now := t0.Add(time.Duration(cycle) * time.Minute)
		kept := run[:0]
		for _, r := range run {
			if r.ends > cycle {
				kept = append(kept, r)
			}
		}
		run = kept
		usedGPU := make([]int64, tab.Len())
		for _, r := range run {
			usedGPU[r.node] += int64(r.gpus) * 1000
		}
		for i := range usedGPU {
			tab.SetUsed(i, resource.Vector{0, 0, usedGPU[i]})
		}
		pipe := base
		if reserve {
			jobs := []Job{
				{Name: "A", Priority: priorityA, Request: resource.Vector{0, 0, 8000}, PendingSince: bigPending},
				{Name: "B", Priority: priorityB, Request: resource.Vector{0, 0, 1000}, PendingSince: now},
			}
			i, _ := Elect(jobs, now, Election{})
			var err error
			state, err = Step(state, policy, now, Target{Name: jobs[i].Name, Request: jobs[i].Request}, tab)
			if err != nil {
				t.Fatal(err)
			}
			if pipe, err = base.WithFilters(NewFilter(state, tab)); err != nil {
				t.Fatal(err)
			}
		}
		place := func(task *scoring.Task, gpus int) bool {
			if err := pipe.Score(task, tab, b); err != nil {
				t.Fatal(err)
			}
			top := b.Top(1, nil)
			if len(top) == 0 {
				return false
			}
			node := top[0]
			if task.Job != state.Target && slices.Contains(state.Locked, tab.Name(node)) {
				t.Fatalf("cycle %d: a %s task went to locked node %s", cycle, task.Job, tab.Name(node))
			}
			run = append(run, running{node, gpus, cycle + 3})
			u := slices.Clone(tab.Used(node))
			u[2] += int64(gpus) * 1000
			tab.SetUsed(node, u)
			return true
		}
		for range 12 { // more small tasks than GPUs free up
			place(&scoring.Task{Job: "B", Requests: resource.Vector{0, 0, 1000}}, 1)
		}
		if place(&scoring.Task{Job: "A", Requests: resource.Vector{0, 0, 8000}}, 8) {
			return cycle
		}
	}
	return -1
}

// Scene 1: A and B at equal priority, A asking more; scene 2: A at higher
// priority. Either way B's small tasks take every GPU that frees up, and A
// starves. With single-node locking a node is locked in cycle 0 (A is
// elected: longest waiting in scene 1, highest priority in scene 2) and
// drains as its small tasks end; A lands in cycle 3.
func TestReservationEndsStarvation(t *testing.T) {
	for _, scene := range []struct {
		name                 string
		priorityA, priorityB int32
	}{{"equal priority, A larger", 1, 1}, {"A higher priority and larger", 5, 1}} {
		if got := simulate(t, false, scene.priorityA, scene.priorityB, 50); got != -1 {
			t.Errorf("%s: without reservation A was placed in cycle %d; the scene should starve it", scene.name, got)
		}
		if got := simulate(t, true, scene.priorityA, scene.priorityB, 50); got != 3 {
			t.Errorf("%s: with reservation A was placed in cycle %d, want 3", scene.name, got)
		}
	}
}

// A reservation cycle: elect, lock, filter.
func ExampleStep() {
	s, _ := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	nodes := resource.NewTable(s, 3)
	nodes.Add("gpu-a", resource.Vector{64000, 256 << 30, 8000}, resource.Vector{8000, 0, 6000})
	nodes.Add("gpu-b", resource.Vector{64000, 256 << 30, 8000}, resource.Vector{8000, 0, 3000})
	nodes.Add("gpu-c", resource.Vector{64000, 256 << 30, 8000}, resource.Vector{8000, 0, 7000})

	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	jobs := []Job{
		{Name: "train-big", Request: resource.Vector{32000, 0, 8000}, PendingSince: now.Add(-time.Hour)},
		{Name: "notebook", Request: resource.Vector{1000, 0, 1000}, PendingSince: now.Add(-time.Minute)},
	}
	i, _ := Elect(jobs, now, Election{Mode: Automatic})
	state, _ := Step(State{}, Policy{Scheme: SingleNode, Algorithm: IdleFirst}, now,
		Target{Name: jobs[i].Name, Request: jobs[i].Request}, nodes)
	fmt.Println("target:", state.Target, "locked:", state.Locked)

	filter := NewFilter(state, nodes)
	fmt.Println("filter:", filter.Explain(nil, nodes, 0, -1))
	// Output:
	// target: train-big locked: [gpu-b]
	// filter: node reserved for target job train-big
}

// A policy's Percent is a share: 1e300 once overflowed to "lock 1 node".
// Step now refuses it, and every other value out of range, with the field
// named.
func TestStepRefusesAPolicyOutOfRange(t *testing.T) {
	tab := nodesOf(t, [3]any{"a", 8, 6}, [3]any{"b", 8, 3})
	target := Target{Name: "big", Request: resource.Vector{8000, 0, 16000}}
	for _, c := range []struct {
		p    Policy
		want string
	}{
		{Policy{Scheme: MultiNode, Percent: 1e300}, "percent: must be a share in [0, 1], got 1e+300"},
		{Policy{Scheme: MultiNode, Percent: math.NaN()}, "percent"},
		{Policy{Scheme: MultiNode, Percent: -0.1}, "percent"},
		{Policy{Scheme: MultiNode, Nodes: -1}, "nodes: must be ≥ 0"},
		{Policy{Timeout: -time.Second}, "timeout"},
		{Policy{Scheme: 9}, "unknown scheme 9"},
		{Policy{Algorithm: 7}, "unknown algorithm 7"},
	} {
		if _, err := Step(State{}, c.p, t0, target, tab); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if s, err := Step(State{}, Policy{Scheme: MultiNode, Percent: 1}, t0, target, tab); err != nil || len(s.Locked) != 2 {
		t.Errorf("Percent 1 locks every node: %v, %v", s.Locked, err)
	}
}

func TestMainResourceMisuseIsADocumentedPanic(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "reservation.MainResource: 2 requested amounts, 3 total") {
			t.Errorf("recovered %v", r)
		}
	}()
	MainResource([]int64{1, 2}, []int64{1, 2, 3})
}
