package churn

import (
	"github.com/resfit/resfit/scoring/frag"
)

// IdleReport is the idle GPU over a replay's window, as time averages in
// percent of the GPU capacity.
type IdleReport struct {
	// WhileWaiting is the idle GPU (not allocated) counted while some
	// waiting pod asks for a GPU (0 while none does); WaitingShare is the
	// share of the window during which one does, in percent.
	WhileWaiting, WaitingShare float64
	// Idle is the idle GPU whether or not a pod waits, Fragmented FGD's
	// fragmented GPU (the typical classes').
	Idle, Fragmented float64
	// Hourly is the idle GPU averaged over each hour of the window in
	// turn (the last hour may be cut short); HourlyWhileWaiting the same
	// of WhileWaiting, whose hours' mean it is.
	Hourly, HourlyWhileWaiting []float64
}

// Columns are idle_while_waiting_pct, idle_pct, fragmented_pct and
// waiting_share_pct.
func (x IdleReport) Columns() []Column {
	return []Column{{"idle_while_waiting_pct", decimal(x.WhileWaiting)}, {"idle_pct", decimal(x.Idle)},
		{"fragmented_pct", decimal(x.Fragmented)}, {"waiting_share_pct", decimal(x.WaitingShare)}}
}

// Idle is what the idle GPU metric measured.
func (res *Result) Idle() IdleReport { return reportOf[IdleReport](res) }

// idleMetric integrates the idle and fragmented GPU over the window, and
// how long GPU pods wait. It keeps each node's fragmentation, worked out
// again whenever a pod starts on the node, leaves it or moves.
type idleMetric struct {
	quiet
	r        *replay
	measure  *frag.Measure
	nodeFrag []float64 // each node's fragmentation
	fragSum  float64
	// integrals over the window, in milli-GPU seconds (or seconds), and by
	// hour
	idleWaiting, idle, frag, waitingTime float64
	hourly, hourlyWaiting                []float64
}

func newIdleMetric(r *replay, m *frag.Measure) *idleMetric {
	x := &idleMetric{r: r, measure: m, nodeFrag: make([]float64, r.c.Table.Len())}
	for i := range r.c.Table.Len() {
		x.refresh(i)
	}
	return x
}

func (x *idleMetric) on(e event) error {
	left, came := e.rows()
	for _, row := range [2]int{left, came} {
		if row >= 0 {
			x.refresh(row)
		}
	}
	return nil
}

// refresh works row's fragmentation out again.
func (x *idleMetric) refresh(row int) {
	f := x.r.c.NodeFragmentation(x.measure, row)
	x.fragSum += f - x.nodeFrag[row]
	x.nodeFrag[row] = f
}

func (x *idleMetric) advance(from, to float64) {
	r := x.r
	from = max(from, r.spec.WarmUp)
	if to <= from {
		return
	}
	dt := to - from
	idle := float64(r.c.CapacityMilliGPU - r.allocated)
	x.addHours(from, to, idle, r.gpuWait > 0)
	x.idle += idle * dt
	x.frag += x.fragSum * dt
	if r.gpuWait > 0 {
		x.idleWaiting += idle * dt
		x.waitingTime += dt
	}
}

// addHours adds idle GPU over [from, to) of the window to its hours, and
// to their idle while GPU pods wait when they do.
func (x *idleMetric) addHours(from, to, idle float64, waiting bool) {
	warmUp := x.r.spec.WarmUp
	for from < to {
		h := int((from - warmUp) / 3600)
		for len(x.hourly) <= h {
			x.hourly = append(x.hourly, 0)
			x.hourlyWaiting = append(x.hourlyWaiting, 0)
		}
		until := min(to, warmUp+float64(h+1)*3600)
		x.hourly[h] += idle * (until - from)
		if waiting {
			x.hourlyWaiting[h] += idle * (until - from)
		}
		from = until
	}
}

func (x *idleMetric) report() Report {
	w := x.r.spec.Window
	capacity := float64(x.r.c.CapacityMilliGPU)
	out := IdleReport{WhileWaiting: 100 * x.idleWaiting / w / capacity, Idle: 100 * x.idle / w / capacity,
		Fragmented: 100 * x.frag / w / capacity, WaitingShare: 100 * x.waitingTime / w,
		Hourly: x.hourly, HourlyWhileWaiting: x.hourlyWaiting}
	for h := range out.Hourly {
		span := min(3600, w-float64(h)*3600)
		out.Hourly[h] = 100 * out.Hourly[h] / span / capacity
		out.HourlyWhileWaiting[h] = 100 * out.HourlyWhileWaiting[h] / span / capacity
	}
	return out
}
