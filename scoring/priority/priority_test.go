package priority

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Volcano's TestPreempt, case "enable preempt low priority:
// enablePreemptable:true": preemptor1 (job priority 1000) against
// preemptee1 and preemptee2 of a job of priority 100, preemptee2 with task
// priority 1000. Both are victims (another job, of lower priority); the
// preempt action takes victims lowest task priority first, and preemptee1
// (3 cpu, 3G) frees what preemptor1 asks for, so it alone is evicted.
func TestPreemptEnablePreemptLowPriority(t *testing.T) {
	preemptor := Candidate{Job: "ns2/pg2", JobPriority: 1000}
	preemptees := []Candidate{
		{Job: "ns1/pg1", JobPriority: 100},                     // preemptee1
		{Job: "ns1/pg1", JobPriority: 100, TaskPriority: 1000}, // preemptee2
	}
	victims := Preemptable(preemptor, preemptees)
	if !slices.Equal(victims, []int{0, 1}) {
		t.Fatalf("victims %v, want [0 1]", victims)
	}
	tasks := []Task{
		{Name: "preemptee1", UID: "u1", Created: t0},
		{Name: "preemptee2", UID: "u2", Created: t0, Priority: 1000},
	}
	// Victims go in reverse task order: the last task first.
	slices.SortFunc(victims, func(a, b int) int { return CompareTasks(tasks[b], tasks[a]) })
	if first := tasks[victims[0]].Name; first != "preemptee1" {
		t.Errorf("first victim %s, want preemptee1", first)
	}
}

// Volcano's TestUnifiedEvictableFn_GangReclaimPermitsAll, case "GangReclaim
// permits all candidates regardless of priority": against a job of
// priority 500, a gang preempt may evict only the task of the job of
// priority 100, not that of priority 1000 (a gang reclaim takes both).
func TestUnifiedEvictableGangReclaimPermitsAll(t *testing.T) {
	candidates := []Candidate{{Job: "pg-high", JobPriority: 1000}, {Job: "pg-low", JobPriority: 100}}
	if got := GangPreemptable(500, candidates); !slices.Equal(got, []int{1}) {
		t.Errorf("gang preempt victims %v, want [1]", got)
	}
}

func TestPreemptable(t *testing.T) {
	preemptor := Candidate{Job: "a", JobPriority: 10, TaskPriority: 5}
	tests := []struct {
		name      string
		preemptee Candidate
		want      bool
	}{
		{"other job, lower priority", Candidate{Job: "b", JobPriority: 9, TaskPriority: 100}, true},
		{"other job, equal priority", Candidate{Job: "b", JobPriority: 10}, false},
		{"other job, higher priority", Candidate{Job: "b", JobPriority: 11}, false},
		{"same job, lower task priority", Candidate{Job: "a", JobPriority: 10, TaskPriority: 4}, true},
		{"same job, equal task priority", Candidate{Job: "a", JobPriority: 10, TaskPriority: 5}, false},
		// Within a job only task priorities count.
		{"same job, job priority ignored", Candidate{Job: "a", JobPriority: 0, TaskPriority: 6}, false},
	}
	for _, tc := range tests {
		got := len(Preemptable(preemptor, []Candidate{tc.preemptee})) == 1
		if got != tc.want {
			t.Errorf("%s: preemptable %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCompareTasks(t *testing.T) {
	tests := []struct {
		name string
		a, b Task
		want int
	}{
		{"higher priority first", Task{Name: "j-w-9", Priority: 2}, Task{Name: "j-w-0", Priority: 1}, -1},
		{"smaller index first", Task{Name: "j-w-2", Created: t0.Add(time.Hour)}, Task{Name: "j-w-10", Created: t0}, -1},
		{"equal index: older first", Task{Name: "j-ps-0", Created: t0.Add(time.Second)}, Task{Name: "j-w-0", Created: t0}, 1},
		{"two parts carry no index: older first", Task{Name: "w-2", Created: t0}, Task{Name: "w-1", Created: t0.Add(time.Second)}, -1},
		{"no integer index: older first", Task{Name: "j-w-x", Created: t0}, Task{Name: "j-w-1", Created: t0.Add(time.Second)}, -1},
		{"same time: smaller UID", Task{Name: "a", UID: "2", Created: t0}, Task{Name: "b", UID: "1", Created: t0}, 1},
		{"equal", Task{Name: "a", UID: "1", Created: t0}, Task{Name: "a", UID: "1", Created: t0}, 0},
		{"empty last part", Task{Name: "j-w-", Created: t0}, Task{Name: "j-w-0", Created: t0.Add(time.Second)}, -1},
	}
	for _, tc := range tests {
		if got := CompareTasks(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: CompareTasks = %d, want %d", tc.name, got, tc.want)
		}
		if got := CompareTasks(tc.b, tc.a); got != -tc.want {
			t.Errorf("%s: reversed CompareTasks = %d, want %d", tc.name, got, -tc.want)
		}
	}
}

func TestCompareJobs(t *testing.T) {
	jobs := []Job{
		{UID: "c", Priority: 1, Created: t0},
		{UID: "b", Priority: 5, Created: t0.Add(time.Minute)},
		{UID: "a", Priority: 1, Created: t0},
		{UID: "d", Priority: 5, Created: t0},
		{UID: "e", Priority: 1, Created: t0.Add(-time.Minute)},
	}
	slices.SortFunc(jobs, CompareJobs)
	var got []string
	for _, j := range jobs {
		got = append(got, j.UID)
	}
	if fmt.Sprint(got) != "[d b e a c]" {
		t.Errorf("order %v, want [d b e a c]", got)
	}
}

// strictWeakOrder checks a comparison on three values: irreflexive,
// antisymmetric, transitive, with transitive incomparability.
func strictWeakOrder[T any](t *rapid.T, compare func(a, b T) int, a, b, c T) {
	if compare(a, a) != 0 {
		t.Fatalf("compare(a, a) = %d", compare(a, a))
	}
	if x, y := compare(a, b), compare(b, a); sign(x) != -sign(y) {
		t.Fatalf("compare(a, b) = %d, compare(b, a) = %d", x, y)
	}
	if compare(a, b) < 0 && compare(b, c) < 0 && compare(a, c) >= 0 {
		t.Fatalf("a < b < c but compare(a, c) = %d", compare(a, c))
	}
	if compare(a, b) == 0 && compare(b, c) == 0 && compare(a, c) != 0 {
		t.Fatalf("a ~ b ~ c but compare(a, c) = %d", compare(a, c))
	}
}

func sign(x int) int { return min(max(x, -1), 1) }

func TestCompareJobsIsAStrictWeakOrder(t *testing.T) {
	job := rapid.Custom(func(t *rapid.T) Job {
		return Job{
			UID:      rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "uid"),
			Priority: rapid.Int32Range(-2, 2).Draw(t, "priority"),
			Created:  t0.Add(time.Duration(rapid.IntRange(0, 2).Draw(t, "created")) * time.Second),
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		strictWeakOrder(t, CompareJobs, job.Draw(t, "a"), job.Draw(t, "b"), job.Draw(t, "c"))
	})
}

// Over names that all carry an index (a Volcano job's pods), the task
// order is a strict weak order.
func TestCompareTasksIsAStrictWeakOrderOverIndexedNames(t *testing.T) {
	task := rapid.Custom(func(t *rapid.T) Task {
		return Task{
			Name:     fmt.Sprintf("job-%s-%d", rapid.SampledFrom([]string{"ps", "worker"}).Draw(t, "task"), rapid.IntRange(0, 3).Draw(t, "index")),
			UID:      rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "uid"),
			Priority: rapid.Int32Range(0, 2).Draw(t, "priority"),
			Created:  t0.Add(time.Duration(rapid.IntRange(0, 2).Draw(t, "created")) * time.Second),
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		strictWeakOrder(t, CompareTasks, task.Draw(t, "a"), task.Draw(t, "b"), task.Draw(t, "c"))
	})
}

// The documented cycle over a mix of names with and without an index.
func TestCompareTasksMixedNamesCycle(t *testing.T) {
	a := Task{Name: "job-w-1", Created: t0.Add(3 * time.Second)}
	b := Task{Name: "job-w-2", Created: t0.Add(1 * time.Second)}
	c := Task{Name: "driver", Created: t0.Add(2 * time.Second)}
	if !(CompareTasks(a, b) < 0 && CompareTasks(b, c) < 0 && CompareTasks(c, a) < 0) {
		t.Errorf("want the cycle a < b < c < a that Volcano's order gives")
	}
}

// Every victim Preemptable returns is one that a slow reading of the rule
// accepts, and every other is one it rejects.
func TestPreemptableProperty(t *testing.T) {
	candidate := rapid.Custom(func(t *rapid.T) Candidate {
		return Candidate{
			Job:          rapid.SampledFrom([]string{"a", "b"}).Draw(t, "job"),
			JobPriority:  rapid.Int32Range(0, 2).Draw(t, "jobPriority"),
			TaskPriority: rapid.Int32Range(0, 2).Draw(t, "taskPriority"),
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		preemptor := candidate.Draw(t, "preemptor")
		preemptees := rapid.SliceOf(candidate).Draw(t, "preemptees")
		got := Preemptable(preemptor, preemptees)
		var want []int
		for i, p := range preemptees {
			var lower bool
			if p.Job == preemptor.Job {
				lower = p.TaskPriority < preemptor.TaskPriority
			} else {
				lower = p.JobPriority < preemptor.JobPriority
			}
			if lower {
				want = append(want, i)
			}
		}
		if len(got) != len(want) || !slices.Equal(got, want) && len(want) > 0 {
			t.Fatalf("victims %v, want %v", got, want)
		}
	})
}

func ExampleCompareJobs() {
	jobs := []Job{
		{UID: "nightly-etl", Priority: 100, Created: t0},
		{UID: "llm-train", Priority: 1000, Created: t0.Add(time.Hour)},
		{UID: "notebook", Priority: 100, Created: t0.Add(-time.Hour)},
	}
	slices.SortFunc(jobs, CompareJobs)
	for _, j := range jobs {
		fmt.Println(j.UID)
	}
	// Output:
	// llm-train
	// notebook
	// nightly-etl
}

func ExamplePreemptable() {
	preemptor := Candidate{Job: "llm-train", JobPriority: 1000}
	running := []Candidate{
		{Job: "notebook", JobPriority: 100},
		{Job: "inference", JobPriority: 1000},
		{Job: "nightly-etl", JobPriority: 10},
	}
	fmt.Println(Preemptable(preemptor, running))
	// Output: [0 2]
}
