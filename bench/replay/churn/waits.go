package churn

import (
	"math"
	"slices"
	"strings"
)

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

// WaitsReport is how long the pods that arrived in the window waited, and
// the GPU the waiting pods asked for as the window started and ended.
type WaitsReport struct {
	// BySize are the waiting times by size class; GPUWait is the
	// GPU-weighted mean wait of the GPU pods that arrived in the window
	// (Σ wait × GPUs over Σ GPUs, in seconds, those that never started
	// counted as there).
	BySize  [numSizes]WaitStats
	GPUWait float64
	// AtStart and AtEnd are the GPU the waiting pods ask for (milli-GPU)
	// as the window starts and as it ends: a load the cluster sustains
	// ends no higher than it starts.
	AtStart, AtEnd int64
}

// waitSizes are the size classes the tables and churn.csv show waits for.
var waitSizes = []int{SizeShare, Size1, Size2, Size4, Size8}

// Columns are, for each size class of waitSizes, its pods arrived and
// never started and the mean and percentile waits in hours; then
// gpu_weighted_wait_h and the waiting milli-GPU at the window's start and
// end.
func (x WaitsReport) Columns() []Column {
	var out []Column
	for _, z := range waitSizes {
		n, w := strings.ReplaceAll(SizeNames[z], " ", "_"), x.BySize[z]
		out = append(out, Column{n + "_arrived", count(w.Arrived)}, Column{n + "_never", count(w.Never)},
			Column{n + "_wait_mean_h", decimal(w.Mean / 3600)}, Column{n + "_wait_p50_h", decimal(w.P50 / 3600)},
			Column{n + "_wait_p95_h", decimal(w.P95 / 3600)}, Column{n + "_wait_p99_h", decimal(w.P99 / 3600)})
	}
	return append(out, Column{"gpu_weighted_wait_h", decimal(x.GPUWait / 3600)},
		Column{"waiting_milli_gpu_at_start", count(x.AtStart)}, Column{"waiting_milli_gpu_at_end", count(x.AtEnd)})
}

// Waits is what the waiting-time metric measured.
func (res *Result) Waits() WaitsReport { return reportOf[WaitsReport](res) }

// waitsMetric reads the waits off the pods when the replay is over, and
// the GPU waiting as the window starts.
type waitsMetric struct {
	quiet
	r       *replay
	seen    bool // the window has started
	atStart int64
}

func (x *waitsMetric) advance(_, to float64) {
	if !x.seen && to >= x.r.spec.WarmUp {
		x.atStart, x.seen = x.r.waitMilli, true
	}
}

func (x *waitsMetric) report() Report {
	r := x.r
	out := WaitsReport{AtStart: x.atStart, AtEnd: r.waitMilli}
	var waits [numSizes][]float64
	end := r.spec.WarmUp + r.spec.Window
	var gpuWait, gpus float64
	for _, cp := range r.pods {
		if cp.arrived < r.spec.WarmUp || cp.arrived > end {
			continue
		}
		s := SizeOf(cp.pod)
		ws := &out.BySize[s]
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
		out.GPUWait = gpuWait / gpus
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
		w := &out.BySize[s]
		w.Mean = sum / float64(len(xs))
		w.P50, w.P95, w.P99 = percentile(xs, 0.50), percentile(xs, 0.95), percentile(xs, 0.99)
	}
	return out
}

// percentile is the q-th percentile of ascending xs (not empty): the
// smallest x that at least q of them are no greater than.
func percentile(xs []float64, q float64) float64 {
	return xs[max(int(math.Ceil(q*float64(len(xs))))-1, 0)]
}
