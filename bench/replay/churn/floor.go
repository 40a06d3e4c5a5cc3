package churn

import (
	"fmt"

	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/defrag"
)

// FloorEvery is how often a replay computes its floor (AddOns.Floor).
const FloorEvery = 600

// FloorReport is the least idle GPU while GPU pods wait that plans of
// moves could reach, averaged over the instants of the window it was
// computed at (every FloorEvery, when AddOns.Floor is above 0; 0 when
// not), in percent of the GPU capacity.
type FloorReport struct {
	// Floor is, for plans of AddOns.Floor × the running pods moves, the
	// larger of two bounds, counted while GPU pods wait. One is the idle
	// GPU less what the waiting pods could take after a plan of that many
	// moves, as defrag.BoundReclaim bounds it (GPUs alone, each waiting
	// shape's pieces as often as they fit, at most the GPU the waiting
	// pods ask for); the other, ShareFloor's.
	Floor float64
	// ShareFloor is the least any plan whatever could reach, however many
	// moves it made: the least GPU the running pods' shares can leave
	// unused on the GPUs they share, the waiting pods' shares added where
	// they help (defrag.BoundShareWaste: GPUs alone), counted while GPU
	// pods wait.
	ShareFloor float64
}

// Columns are floor_pct and share_floor_pct.
func (x FloorReport) Columns() []Column {
	return []Column{{"floor_pct", decimal(x.Floor)}, {"share_floor_pct", decimal(x.ShareFloor)}}
}

// Floor is what the floor metric measured.
func (res *Result) Floor() FloorReport { return reportOf[FloorReport](res) }

// floorMetric computes the floors every FloorEvery.
type floorMetric struct {
	periodic
	r *replay
	// share is the plans' moves, a share of the running pods (0: no
	// floor).
	share float64
	// sum, shareSum and count sum the floors computed in the window.
	sum, shareSum float64
	count         int
	// seen, when not nil, is shown each floor as it is computed, with
	// the idle GPU it bounds (milli-GPU), while GPU pods wait.
	seen func(idle, floor, share float64)
}

func newFloorMetric(r *replay, share float64) *floorMetric {
	x := &floorMetric{r: r, share: share, periodic: roundsEvery(0)}
	if share > 0 {
		x.periodic = roundsEvery(FloorEvery)
	}
	return x
}

// round computes the floors now, while GPU pods wait (0 while none do):
// the least GPU the shares can leave unused on the GPUs they share, after
// any plan; and, for plans of share × the running pods moves, the larger
// of that and the idle GPU less what the waiting pods could take after
// such a plan (at most all they ask for).
func (x *floorMetric) round() error {
	x.next()
	r := x.r
	if !r.measuring() {
		return nil
	}
	x.count++
	if r.gpuWait == 0 {
		return nil
	}
	var tasks []*scoring.Task
	for _, q := range r.queues {
		if len(q) > 0 && r.pods[q[0]].pod.NumGPU > 0 { // the bound counts each shape's pieces as often as they fit
			t := new(scoring.Task)
			r.pods[q[0]].pod.Task(t)
			tasks = append(tasks, t)
		}
	}
	dc, _ := r.planningCluster()
	limit, err := defrag.BoundReclaim(dc, tasks, nil)
	if err != nil {
		return fmt.Errorf("floor at %.0f s: %w", r.now, err)
	}
	moves := int(x.share * float64(r.running))
	idle := float64(r.c.CapacityMilliGPU - r.allocated)
	waste, err := defrag.BoundShareWaste(dc, tasks)
	if err != nil {
		return fmt.Errorf("share floor at %.0f s: %w", r.now, err)
	}
	floor := max(0, idle-float64(min(limit.Within(moves), r.waitMilli)), float64(waste))
	x.sum += floor
	x.shareSum += float64(waste)
	if x.seen != nil {
		x.seen(idle, floor, float64(waste))
	}
	return nil
}

func (x *floorMetric) report() Report {
	if x.count == 0 {
		return FloorReport{}
	}
	capacity := float64(x.r.c.CapacityMilliGPU)
	return FloorReport{Floor: 100 * x.sum / float64(x.count) / capacity, ShareFloor: 100 * x.shareSum / float64(x.count) / capacity}
}
