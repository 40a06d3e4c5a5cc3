package churn

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/resfit/resfit/bench/replay/sim"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
)

// What the add-ons read of the replay, beside its fields.

// measuring reports whether the replay is in its window, where the
// add-ons count what they do.
func (r *replay) measuring() bool { return r.now >= r.spec.WarmUp }

// waitingHeads are the first waiting pod of each shape that asks for a GPU,
// the longest waiting first.
func (r *replay) waitingHeads() []int {
	var heads []int
	for _, q := range r.queues {
		if len(q) > 0 && r.pods[q[0]].pod.NumGPU > 0 {
			heads = append(heads, q[0])
		}
	}
	slices.SortFunc(heads, func(a, b int) int { return cmp.Compare(r.pods[a].arrived, r.pods[b].arrived) })
	return heads
}

// waitingGPUPods are the waiting pods that ask for a GPU, each queue in
// turn.
func (r *replay) waitingGPUPods() []int {
	var out []int
	for _, q := range r.queues {
		if len(q) > 0 && r.pods[q[0]].pod.NumGPU > 0 {
			out = append(out, q...)
		}
	}
	return out
}

// planningCluster is the cluster as the planners see it: the running pods,
// all movable, and for each its index in r.pods.
func (r *replay) planningCluster() (*defrag.Cluster, []int) {
	dc := &defrag.Cluster{Pipeline: r.pipe, Table: r.c.Table, Devices: r.c.GPUs, Placer: r.placer}
	if s := sim.FGDScorer(r.pipe); s != nil {
		dc.Device = func(task *scoring.Task, row int) int { return s.Device(task, r.c.Table, row) }
	}
	var index []int
	for k := range r.pods {
		cp := &r.pods[k]
		if cp.row < 0 {
			continue
		}
		task := new(scoring.Task)
		cp.pod.Task(task)
		dc.Pods = append(dc.Pods, defrag.Pod{Task: task, Row: cp.row, Holds: cp.holds, Movable: true})
		index = append(index, k)
	}
	return dc, index
}

// podName names pod k as a reservation's target or starvation control's
// pod; names sort as the pods arrived.
func podName(k int) string { return fmt.Sprintf("pod-%09d", k) }

// clock is simulated time t (seconds) as the reservation's and starvation
// control's time.
func clock(t float64) time.Time {
	return time.Unix(0, 0).Add(time.Duration(t * float64(time.Second)))
}
