package drf

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

func TestShare(t *testing.T) {
	total := []int64{10000, 100 << 30, 0, 8000}
	tests := []struct {
		name      string
		allocated []int64
		share     float64
		dominant  int
	}{
		{"nothing", []int64{0, 0, 0, 0}, 0, -1},
		{"cpu dominant", []int64{5000, 10 << 30, 0, 0}, 0.5, 0},
		{"gpu dominant", []int64{1000, 1 << 30, 0, 6000}, 0.75, 3},
		{"total 0, allocated 0: share 0", []int64{1000, 0, 0, 0}, 0.1, 0},
		{"total 0, allocated > 0: share 1", []int64{1000, 0, 5, 0}, 1, 2},
		{"over the total caps at 1", []int64{20000, 0, 0, 0}, 1, 0},
	}
	for _, tc := range tests {
		s, d := Share(tc.allocated, total)
		if s != tc.share || d != tc.dominant {
			t.Errorf("%s: Share = %v, %d; want %v, %d", tc.name, s, d, tc.share, tc.dominant)
		}
	}
}

// The DRF paper's example: 9 cpu, 18 GB; job A's tasks are <1 cpu, 4 GB>,
// B's <3 cpu, 1 GB>. With A at 2 tasks (2/9 cpu, 8/18 memory → 4/9) and B
// at 1 task (3/9 cpu → 1/3), B goes first; with B at 2 tasks (6/9) A does.
func TestOrderDRFPaperExample(t *testing.T) {
	total := resource.Vector{9000, 18 << 30}
	a := Job{Name: "A", Allocated: resource.Vector{2000, 8 << 30}}
	b := Job{Name: "B", Allocated: resource.Vector{3000, 1 << 30}}
	order, err := Order([]Job{a, b}, total)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[1 0]" {
		t.Errorf("order %v, want B then A", order)
	}
	b.Allocated = resource.Vector{6000, 2 << 30}
	if order, _ := Order([]Job{a, b}, total); fmt.Sprint(order) != "[0 1]" {
		t.Errorf("order %v, want A then B", order)
	}
}

func TestOrderTieBreakIsDeterministic(t *testing.T) {
	total := resource.Vector{10, 10}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := []Job{
		{Name: "c", Allocated: resource.Vector{5, 0}, Created: t0},
		{Name: "b", Allocated: resource.Vector{0, 5}, Created: t0},
		{Name: "a", Allocated: resource.Vector{5, 5}, Created: t0.Add(time.Hour)},
	}
	order, _ := Order(jobs, total)
	// All share 0.5: the older jobs (c, b) first, by name; then a.
	if fmt.Sprint(order) != "[1 0 2]" {
		t.Errorf("order %v, want [1 0 2]", order)
	}
	if _, err := Order([]Job{{Name: "x", Allocated: resource.Vector{1}}}, total); err == nil {
		t.Error("short vector accepted")
	}
}

// podJob is a job of identical pods in a queue path, for the allocation
// simulation.
type podJob struct {
	path []string // queues from the root's children down, then the job
	pod  resource.Vector
	pods int
}

// allocate places one pod at a time, always for the job whose path comes
// first under CompareQueues (ties by path), until no pod fits: Volcano's
// allocate action with the drf plugin as queue and job order.
func allocate(t *testing.T, total resource.Vector, jobs []podJob, weights map[string]float64) map[string]resource.Vector {
	t.Helper()
	allocated := map[string]resource.Vector{}
	placed := map[string]int{}
	for _, j := range jobs {
		allocated[strings.Join(j.path, "/")] = make(resource.Vector, len(total))
	}
	for {
		used := make(resource.Vector, len(total))
		for _, a := range allocated {
			for i := range used {
				used[i] += a[i]
			}
		}
		root := Queue{Name: "root", Weight: 1}
		for _, j := range jobs {
			key := strings.Join(j.path, "/")
			req := make(resource.Vector, len(total))
			for i := range req {
				req[i] = j.pod[i] * int64(j.pods)
			}
			insert(&root, j.path, allocated[key], req, weights)
		}
		shares, err := HierarchicalShares(root, total, used)
		if err != nil {
			t.Fatal(err)
		}
		var candidates []podJob
		for _, j := range jobs {
			key := strings.Join(j.path, "/")
			fits := placed[key] < j.pods
			for i := range total {
				if used[i]+j.pod[i] > total[i] {
					fits = false
				}
			}
			if fits {
				candidates = append(candidates, j)
			}
		}
		if len(candidates) == 0 {
			return allocated
		}
		slices.SortStableFunc(candidates, func(a, b podJob) int {
			if c := CompareQueues(shares, a.path, b.path); c != 0 {
				return c
			}
			return strings.Compare(strings.Join(a.path, "/"), strings.Join(b.path, "/"))
		})
		best := strings.Join(candidates[0].path, "/")
		for i := range total {
			allocated[best][i] += candidates[0].pod[i]
		}
		placed[best]++
	}
}

func insert(q *Queue, path []string, allocated, request resource.Vector, weights map[string]float64) {
	if len(path) == 1 {
		q.Children = append(q.Children, Queue{Name: path[0], Weight: 1, Allocated: slices.Clone(allocated), Request: request})
		return
	}
	for i := range q.Children {
		if q.Children[i].Name == path[0] {
			insert(&q.Children[i], path[1:], allocated, request, weights)
			return
		}
	}
	q.Children = append(q.Children, Queue{Name: path[0], Weight: weights[path[0]]})
	insert(&q.Children[len(q.Children)-1], path[1:], allocated, request, weights)
}

// Volcano's hdrf_test.go "rescaling test": queues root/sci (50) and
// root/eng (50) with eng/dev (50) and eng/prod (50); a 10-cpu, 10G node;
// sci's job asks <1 cpu, 1G> pods, dev's <1 cpu, 0>, prod's <0, 1G>. eng's
// share is the smaller of its children's, so sci gets 5 cpu and 5G, dev 5
// cpu, prod 5G.
func TestHierarchicalRescaling(t *testing.T) {
	const G = 1_000_000_000
	got := allocate(t, resource.Vector{10000, 10 * G}, []podJob{
		{[]string{"sci", "pg1"}, resource.Vector{1000, 1 * G}, 10},
		{[]string{"eng", "dev", "pg21"}, resource.Vector{1000, 0}, 10},
		{[]string{"eng", "prod", "pg22"}, resource.Vector{0, 1 * G}, 10},
	}, map[string]float64{"sci": 50, "eng": 50, "dev": 50, "prod": 50})
	want := map[string]resource.Vector{
		"sci/pg1":       {5000, 5 * G},
		"eng/dev/pg21":  {5000, 0},
		"eng/prod/pg22": {0, 5 * G},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("allocated %v, want %v", got, want)
	}
}

// Volcano's hdrf_test.go "blocking nodes test": a 30-cpu, 30G node; cpu
// jobs pg1, pg2 (queues weight 25) and pg31 (in pg3/pg31); memory jobs pg32
// (also in pg3/pg31) and pg4. cpu is split 10/10/10 and memory 15/15.
func TestHierarchicalBlockingNodes(t *testing.T) {
	const G = 1_000_000_000
	got := allocate(t, resource.Vector{30000, 30 * G}, []podJob{
		{[]string{"pg1", "job1"}, resource.Vector{1000, 0}, 30},
		{[]string{"pg2", "job2"}, resource.Vector{1000, 0}, 30},
		{[]string{"pg3", "pg31", "job31"}, resource.Vector{1000, 0}, 30},
		{[]string{"pg3", "pg31", "job32"}, resource.Vector{0, 1 * G}, 30},
		{[]string{"pg4", "job4"}, resource.Vector{0, 1 * G}, 30},
	}, map[string]float64{"pg1": 25, "pg2": 25, "pg3": 25, "pg31": 50, "pg4": 25})
	want := map[string]resource.Vector{
		"pg1/job1":       {10000, 0},
		"pg2/job2":       {10000, 0},
		"pg3/pg31/job31": {10000, 0},
		"pg3/pg31/job32": {0, 15 * G},
		"pg4/job4":       {0, 15 * G},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("allocated %v, want %v", got, want)
	}
}

// DRF share is in [0, 1] and never decreases as a job's allocation grows.
func TestShareProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(t, "k")
		total := make([]int64, k)
		alloc := make([]int64, k)
		for i := range total {
			total[i] = rapid.Int64Range(0, 1<<40).Draw(t, "total")
			alloc[i] = rapid.Int64Range(0, 1<<41).Draw(t, "allocated")
		}
		s, d := Share(alloc, total)
		if s < 0 || s > 1 || (s > 0) != (d >= 0) {
			t.Fatalf("share %v dominant %d", s, d)
		}
		more := slices.Clone(alloc)
		more[rapid.IntRange(0, k-1).Draw(t, "slot")] += rapid.Int64Range(1, 1<<30).Draw(t, "growth")
		if s2, _ := Share(more, total); s2 < s {
			t.Fatalf("share fell from %v to %v as allocation grew", s, s2)
		}
	})
}

func ExampleOrder() {
	total := resource.Vector{9000, 18 << 30} // 9 cpu, 18Gi
	jobs := []Job{
		{Name: "etl", Allocated: resource.Vector{6000, 2 << 30}},   // cpu 2/3
		{Name: "train", Allocated: resource.Vector{2000, 8 << 30}}, // memory 4/9
		{Name: "serve", Allocated: resource.Vector{1000, 1 << 30}}, // cpu 1/9
	}
	order, _ := Order(jobs, total)
	for _, i := range order {
		s, d := Share(jobs[i].Allocated, total)
		fmt.Printf("%s %.3f (dominant slot %d)\n", jobs[i].Name, s, d)
	}
	// Output:
	// serve 0.111 (dominant slot 0)
	// train 0.444 (dominant slot 1)
	// etl 0.667 (dominant slot 0)
}

// A queue's share is computed with each non-saturated child scaled to the
// smallest child share: eng holds dev at 4/10 cpu and prod at 2/10 memory,
// so its share is 0.2 (dev counted as 2 cpu), not 0.4, and eng goes before
// sci at 0.3. Once prod is saturated (it holds all it asked for) it is not
// scaled and no longer sets the minimum: eng's share becomes 0.4.
func TestHierarchicalSharesRescaleChildren(t *testing.T) {
	const G = 1_000_000_000
	total := resource.Vector{10000, 10 * G}
	tree := func(prodRequest int64) Queue {
		return Queue{Name: "root", Children: []Queue{
			{Name: "sci", Weight: 1, Children: []Queue{
				{Name: "pg1", Allocated: resource.Vector{3000, 3 * G}, Request: resource.Vector{10000, 10 * G}},
			}},
			{Name: "eng", Weight: 1, Children: []Queue{
				{Name: "dev", Allocated: resource.Vector{4000, 0}, Request: resource.Vector{10000, 0}},
				{Name: "prod", Allocated: resource.Vector{0, 2 * G}, Request: resource.Vector{0, prodRequest}},
			}},
		}}
	}
	used := resource.Vector{7000, 5 * G}
	shares, err := HierarchicalShares(tree(10*G), total, used)
	if err != nil {
		t.Fatal(err)
	}
	eng := shares.Children[1]
	if eng.Share != 0.2 || eng.Allocated[0] != 2000 || eng.Allocated[1] != 2*G || eng.Saturated {
		t.Errorf("eng: share %v, allocated %v, saturated %v; want 0.2, [2000 2e9], false", eng.Share, eng.Allocated, eng.Saturated)
	}
	if c := CompareQueues(shares, []string{"eng"}, []string{"sci"}); c >= 0 {
		t.Errorf("CompareQueues(eng, sci) = %d, want eng first", c)
	}
	shares, _ = HierarchicalShares(tree(2*G), total, used)
	eng = shares.Children[1]
	if eng.Share != 0.4 || !eng.Children[1].Saturated || eng.Saturated {
		t.Errorf("with prod saturated: eng share %v (want 0.4), prod saturated %v, eng saturated %v", eng.Share, eng.Children[1].Saturated, eng.Saturated)
	}
	if c := CompareQueues(shares, []string{"eng"}, []string{"sci"}); c <= 0 {
		t.Errorf("CompareQueues(eng, sci) = %d, want sci first", c)
	}
	// A saturated queue goes after a demanding one whatever the shares.
	if c := CompareQueues(QueueShare{Children: []QueueShare{{Name: "a", Saturated: true}, {Name: "b", Share: 0.9, Weight: 1}}},
		[]string{"a"}, []string{"b"}); c <= 0 {
		t.Errorf("saturated queue first: %d", c)
	}
}

func TestShareMisuseIsADocumentedPanic(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "drf.Share: 3 allocated amounts, 2 total") {
			t.Errorf("recovered %v", r)
		}
	}()
	Share([]int64{1, 2, 3}, []int64{4, 5})
}
