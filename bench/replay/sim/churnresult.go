package sim

import (
	"math"
	"slices"
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

// ChurnResult is one replay with departures: a policy, a seed, a load.
type ChurnResult struct {
	Policy string
	Seed   uint64
	Load   float64
	// Arrivals counts the pods that arrived in the window (Alive those
	// alive at time 0).
	Arrivals, Alive int
	// IdleWhileWaiting is the time average over the window of the idle
	// GPU (not allocated) in percent of capacity, counted while some
	// waiting pod asks for a GPU (0 while none does); WaitingShare is the
	// share of the window during which one does, in percent.
	IdleWhileWaiting, WaitingShare float64
	// Idle is the time average of the idle GPU whether or not a pod waits,
	// Fragmented of FGD's fragmented GPU (the typical classes'), both in
	// percent of capacity.
	Idle, Fragmented float64
	// Waits are the waiting times by size class; GPUWait is the GPU-weighted
	// mean wait of the GPU pods that arrived in the window (Σ wait × GPUs
	// over Σ GPUs, in seconds, those that never started counted as there).
	Waits   [numSizes]WaitStats
	GPUWait float64
	// WaitingAtStart and WaitingAtEnd are the GPU the waiting pods ask for
	// (milli-GPU) as the window starts and as it ends: a load the cluster
	// sustains ends no higher than it starts.
	WaitingAtStart, WaitingAtEnd int64
	// Events counts arrivals and departures over the whole run.
	Events int
	// Floor is the least IdleWhileWaiting any plan of ChurnSpec.Floor ×
	// the running pods moves could reach at the instants it was computed
	// (every FloorEvery; 0 when not): at each, the larger of two bounds,
	// counted while GPU pods wait and averaged over the instants of the
	// window. One is the idle GPU less what the waiting pods could take
	// after a plan of that many moves, as defrag.BoundReclaim bounds it
	// (GPUs alone, each waiting shape's pieces as often as they fit, at
	// most the GPU the waiting pods ask for); the other, ShareFloor's.
	Floor float64
	// ShareFloor is the least IdleWhileWaiting any plan whatever could
	// reach at the same instants, however many moves it made: the least
	// GPU the running pods' shares can leave unused on the GPUs they
	// share, the waiting pods' shares added where they help
	// (defrag.BoundShareWaste: GPUs alone), counted while GPU pods wait,
	// averaged over the instants of the window.
	ShareFloor float64
	// Hourly is the idle GPU in percent of capacity, averaged over each
	// hour of the window in turn (the last hour may be cut short);
	// HourlyWhileWaiting the same of IdleWhileWaiting (the idle GPU
	// counted while GPU pods wait), whose hours' mean it is.
	Hourly, HourlyWhileWaiting []float64
	// Moves names the moves made (ChurnMoves.Name), Moved says what they
	// did in the window.
	Moves string
	Moved MoveStats
	// Reserved says what the reservations did (ChurnMoves.Reserve),
	// Starved what starvation control did (ChurnMoves.Starve).
	Reserved ReserveStats
	Starved  StarveStats
}

// advance integrates the metrics up to t (within the window).
func (r *churn) advance(t float64) {
	if !r.windowSeen && t >= r.spec.WarmUp {
		r.res.WaitingAtStart, r.windowSeen = r.waitMilli, true
	}
	from, to := max(r.now, r.spec.WarmUp), t
	if to > from {
		dt := to - from
		idle := float64(r.c.CapacityMilliGPU - r.allocated)
		r.hourly(from, to, idle, r.gpuWait > 0)
		r.idle += idle * dt
		r.frag += r.fragSum * dt
		if r.gpuWait > 0 {
			r.idleWaiting += idle * dt
			r.waitingTime += dt
		}
	}
	r.now = max(r.now, t)
}

// hourly adds idle GPU over [from, to) of the window to its hours, and
// to their idle while GPU pods wait when they do.
func (r *churn) hourly(from, to, idle float64, waiting bool) {
	for from < to {
		h := int((from - r.spec.WarmUp) / 3600)
		for len(r.res.Hourly) <= h {
			r.res.Hourly = append(r.res.Hourly, 0)
			r.res.HourlyWhileWaiting = append(r.res.HourlyWhileWaiting, 0)
		}
		until := min(to, r.spec.WarmUp+float64(h+1)*3600)
		r.res.Hourly[h] += idle * (until - from)
		if waiting {
			r.res.HourlyWhileWaiting[h] += idle * (until - from)
		}
		from = until
	}
}

// finish fills the result: the time averages and the waits.
func (r *churn) finish() {
	w := r.spec.Window
	capacity := float64(r.c.CapacityMilliGPU)
	r.res.IdleWhileWaiting = 100 * r.idleWaiting / w / capacity
	r.res.Idle = 100 * r.idle / w / capacity
	r.res.Fragmented = 100 * r.frag / w / capacity
	r.res.WaitingShare = 100 * r.waitingTime / w
	if r.floorCount > 0 {
		r.res.Floor = 100 * r.floorSum / float64(r.floorCount) / capacity
		r.res.ShareFloor = 100 * r.shareFloorSum / float64(r.floorCount) / capacity
	}
	for h := range r.res.Hourly {
		span := min(3600, w-float64(h)*3600)
		r.res.Hourly[h] = 100 * r.res.Hourly[h] / span / capacity
		r.res.HourlyWhileWaiting[h] = 100 * r.res.HourlyWhileWaiting[h] / span / capacity
	}
	r.res.WaitingAtEnd = r.waitMilli
	var waits [numSizes][]float64
	end := r.spec.WarmUp + r.spec.Window
	var gpuWait, gpus float64
	for _, cp := range r.pods {
		if cp.arrived < r.spec.WarmUp || cp.arrived > end {
			continue
		}
		s := SizeOf(cp.pod)
		ws := &r.res.Waits[s]
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
		r.res.GPUWait = gpuWait / gpus
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
		r.res.Waits[s].Mean = sum / float64(len(xs))
		r.res.Waits[s].P50 = percentile(xs, 0.50)
		r.res.Waits[s].P95 = percentile(xs, 0.95)
		r.res.Waits[s].P99 = percentile(xs, 0.99)
	}
}

// percentile is the q-th percentile of ascending xs (not empty): the
// smallest x that at least q of them are no greater than.
func percentile(xs []float64, q float64) float64 {
	return xs[max(int(math.Ceil(q*float64(len(xs))))-1, 0)]
}
