// Package priority orders jobs, and the tasks within a job, as Volcano's
// priority plugin and its session's fallbacks do, and says which running
// tasks a pending one may preempt by priority.
//
// The orders are comparison functions over plain structs, for
// slices.SortFunc and priority queues alike:
//
//   - jobs: higher priority first, then the older job, then the smaller
//     UID (the session's fallback when no plugin tells two jobs apart);
//   - tasks of a job: higher priority first, then Volcano's default task
//     order: by the index that ends the pod's name (job-task-3), else the
//     older pod, then the smaller UID.
//
// Nothing is kept between calls.
package priority

import (
	"cmp"
	"strconv"
	"strings"
	"time"
)

// Job is what the job order reads of a job (Volcano's JobInfo): its
// priority (the PodGroup's priority class value), creation time and UID.
type Job struct {
	UID      string
	Priority int32
	Created  time.Time
}

// CompareJobs orders a before b (negative), after (positive) or as equal
// (zero, only for the same UID): higher priority first, then the older
// job, then the smaller UID. It is a strict weak order, and a total one
// over distinct UIDs.
func CompareJobs(a, b Job) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Compare(a.UID, b.UID)
}

// Task is what the task order reads of a task (Volcano's TaskInfo): its
// pod's name, priority (the pod's spec.priority), creation time and UID.
type Task struct {
	Name     string
	UID      string
	Priority int32
	Created  time.Time
}

// CompareTasks orders two tasks of a job: higher priority first; then, as
// Volcano's default task order (the job controller's CompareTask), by the
// index that ends both pod names when each name has at least three
// '-'-separated parts and the last parses as an integer, the smaller index
// first; otherwise (or for equal indices) the older pod, then the smaller
// UID.
//
// Like Volcano's, this is a strict weak order over tasks whose names all
// carry an index, or none does — a Volcano job's pods are named
// job-task-index — but not over a mix: a task with an index is compared
// with one without by creation time, and with another indexed task by
// index, so three tasks can form a cycle. Sort a job's tasks with
// consistent names.
func CompareTasks(a, b Task) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	ai, aok := podIndex(a.Name)
	bi, bok := podIndex(b.Name)
	if aok && bok && ai != bi {
		return cmp.Compare(ai, bi)
	}
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Compare(a.UID, b.UID)
}

// podIndex is the integer after the last '-' of a name of at least three
// '-'-separated parts ("job-worker-3" → 3), as Volcano's
// GetPodIndexUnderTask and strconv.Atoi read it.
func podIndex(name string) (int, bool) {
	if strings.Count(name, "-") < 2 {
		return 0, false
	}
	i, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
	return i, err == nil
}

// Candidate is a running task considered as a victim, or the pending task
// that would preempt: its job's UID and priority, and its own priority.
type Candidate struct {
	Job          string
	JobPriority  int32
	TaskPriority int32
}

// Preemptable returns the indices of the preemptees preemptor may evict,
// in their order, as Volcano's priority plugin decides: a task of another
// job when that job's priority is lower than the preemptor's job's; a task
// of the preemptor's own job when its priority is lower than the
// preemptor's. Equal priority protects. It never returns nil.
func Preemptable(preemptor Candidate, preemptees []Candidate) []int {
	victims := make([]int, 0, len(preemptees))
	for i, p := range preemptees {
		if p.Job != preemptor.Job && p.JobPriority < preemptor.JobPriority ||
			p.Job == preemptor.Job && p.TaskPriority < preemptor.TaskPriority {
			victims = append(victims, i)
		}
	}
	return victims
}

// GangPreemptable returns the indices of the candidates a job of priority
// jobPriority may evict when it preempts as a gang: those of jobs of lower
// priority. A gang reclaim (across queues, for fairness) is not gated by
// priority: every candidate may go, as in Volcano.
func GangPreemptable(jobPriority int32, candidates []Candidate) []int {
	victims := make([]int, 0, len(candidates))
	for i, c := range candidates {
		if c.JobPriority < jobPriority {
			victims = append(victims, i)
		}
	}
	return victims
}

// Starving reports whether a job still waits for tasks, as Volcano's
// priority plugin sees it: fewer of its tasks are ready or waiting than it
// has.
func Starving(ready, waiting, tasks int) bool {
	return ready+waiting < tasks
}
