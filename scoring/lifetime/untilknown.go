package lifetime

import (
	"fmt"
	"math"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// UntilKnown scores as one scorer until anything is known of when pods
// end, and as another from then on: ResfitFrag's tie-breaker, which
// balances while nothing is known and packs once something is.
//
// Something is known when the task's own end is (scoring.Task.Ends, not
// passed) or the end of a pod the view follows is: declared, learned of
// pods that ended, or guessed from how long it has run (Nodes.Known).
// Packing FGD's ties is what lets nodes that are emptying come free whole
// for the largest pods, and it pays where pods end. Where no pod has
// declared an end, ended or run for any time (a cluster filled at one
// instant, as the arrival-only protocol of bench/replay fills it), UntilKnown
// scores as its first scorer while less than FillShare of the devices are
// in use, and as its second after: balancing cpu and devices while the
// cluster is nearly empty strands less of them, and packing once it has
// filled keeps whole devices for the pods that ask for many or for one
// model (bench/replay README). In a live cluster a pod that has run for a
// second already has an end guessed from its age, so there UntilKnown
// scores as its second scorer.
//
// It is Volatile (the view changes apart from the table), and Phased when
// each of its scorers is stable or Phased: in each phase it scores as one
// of them, so a Placer remembers its scores per phase (and per the
// scorer's own phase). It is safe for concurrent use when its two scorers
// are.
type UntilKnown struct {
	nodes       *Nodes
	devices     *resource.Devices
	until, then scoring.Scorer
	// onceKnown says it waits for an end and then, while no pod has
	// ended, for the fill (NewOnceKnown).
	onceKnown bool
	// fill is the share of the devices in use from which it stops
	// waiting for the fill: FillShare, or OnceKnownFillShare.
	fill float64
}

// FillShare is the share of the devices in use from which UntilKnown
// scores as its second scorer even while nothing is known of any end.
// Chosen on the openb trace's two pod lists, seeds 42–71, from 0.1, 0.2,
// 0.3 and 0.5; every one of 0.1 to 0.3 left fewer GPUs unallocated than
// packing throughout on both, and 0.3 as few as balancing throughout on
// the default list (bench/replay README).
const FillShare = 0.3

// OnceKnownFillShare is the share of the devices in use from which a part
// built by NewOnceKnown counts while no pod has been seen to end. It is
// later than FillShare: in a cluster filling from empty the first pods
// placed are those that run longest, and a part that pays only where pods
// end (ResfitFrag's node size) spends the small nodes on them. Chosen on
// the openb trace's default pod list, seeds 42–51, from 0.3 and 0.5:
// with ends declared with noise (σ = 1 and 2) or learned, 0.5 left fewer
// GPUs idle while GPU pods wait in overload (loads 1.1 and 1.3, by 0.01
// to 0.05 point), none waiting from 0.6 to 0.9 with either, and at 1.0
// within the seeds' spread (+0.05 ± 0.08 with noise σ = 1); it leaves
// fewer 8-GPU nodes empty where nothing waits (bench/replay README).
const OnceKnownFillShare = 0.5

// NewOnceKnown scores every node 0 until anything is known of any end in
// the view (Known) and, while no pod has been seen to end (Nodes.Ended:
// a cluster filling from empty), OnceKnownFillShare of the devices are
// in use (devices, the host's device view of the same rows; nil: none
// ever are); and as then afterwards. It is for a part that pays only where
// pods end, such as ResfitFrag's node size, left out of the total while
// nothing is known. In a cluster filling from empty the first pods placed
// are those that run longest (the pods alive at bench/replay's start, of
// lifetimes length-biased), and the part leaves them where FGD and the
// tie-breaker put them. A nil view knows nothing, ever.
func NewOnceKnown(nodes *Nodes, devices *resource.Devices, then scoring.Scorer) (*UntilKnown, error) {
	if then == nil {
		return nil, fmt.Errorf("lifetime: OnceKnown needs a scorer")
	}
	none := scoring.NewScorer("none", then.MaxScore(), func(_ *scoring.Task, _ scoring.Span, out []float64) error {
		clear(out)
		return nil
	})
	u, err := NewUntilKnown(nodes, devices, none, then)
	if err != nil {
		return nil, err
	}
	u.onceKnown, u.fill = true, OnceKnownFillShare
	return u, nil
}

// NewUntilKnown scores as until while nothing is known of any end in the
// view (and less than FillShare of devices, the host's device view of the
// same rows, are in use; nil: none ever are) and as then afterwards. The
// two must have the same MaxScore. A nil view knows nothing, ever.
func NewUntilKnown(nodes *Nodes, devices *resource.Devices, until, then scoring.Scorer) (*UntilKnown, error) {
	if until == nil || then == nil {
		return nil, fmt.Errorf("lifetime: UntilKnown needs two scorers")
	}
	if until.MaxScore() != then.MaxScore() {
		return nil, fmt.Errorf("lifetime: UntilKnown's scorers %s and %s score up to %v and %v; they must have the same range",
			until.Name(), then.Name(), until.MaxScore(), then.MaxScore())
	}
	return &UntilKnown{nodes: nodes, devices: devices, until: until, then: then, fill: FillShare}, nil
}

// Name is the name of the scorer it becomes once an end is known.
func (u *UntilKnown) Name() string { return u.then.Name() }

// MaxScore is the scorers' MaxScore.
func (u *UntilKnown) MaxScore() float64 { return u.then.MaxScore() }

// Volatile is true.
func (u *UntilKnown) Volatile() bool { return true }

// Phased reports whether each scorer is stable or Phased
// (scoring.Phased): then in each of its two phases, and the scorer's own,
// a node's score is a function of the task's class and the node's row.
func (u *UntilKnown) Phased() bool { return stableOrPhased(u.until) && stableOrPhased(u.then) }

// AppendPhase appends 1 when the task scores as the second scorer on the
// table now, 0 when as the first (Current), and then that scorer's own
// phase when it is Phased.
func (u *UntilKnown) AppendPhase(key []byte, task *scoring.Task, table *resource.Table) []byte {
	current := u.until
	if u.second(task) {
		current, key = u.then, append(key, 1)
	} else {
		key = append(key, 0)
	}
	if p, ok := current.(scoring.Phased); ok && volatile(current) {
		key = p.AppendPhase(key, task, table)
	}
	return key
}

func volatile(s scoring.Scorer) bool {
	v, ok := s.(scoring.Volatile)
	return ok && v.Volatile()
}

// stableOrPhased reports whether s is not Volatile, or is Phased.
func stableOrPhased(s scoring.Scorer) bool {
	if !volatile(s) {
		return true
	}
	p, ok := s.(scoring.Phased)
	return ok && p.Phased()
}

// Known reports whether anything is known of when pods end, for the task:
// its own end, or a pod's in the view.
func (u *UntilKnown) Known(task *scoring.Task) bool {
	if u.nodes == nil {
		return false
	}
	u.nodes.mu.RLock()
	defer u.nodes.mu.RUnlock()
	rest := task.Ends - u.nodes.now
	return (rest > 0 && !math.IsInf(rest, 1)) || u.nodes.known()
}

// ScoreNodes scores the span's nodes as Current does.
func (u *UntilKnown) ScoreNodes(task *scoring.Task, nodes scoring.Span, out []float64) error {
	return u.Current(task).ScoreNodes(task, nodes, out)
}

// Current is the scorer UntilKnown scores the task as now: the
// second when anything is known (Known) or FillShare of the devices are
// in use (NewOnceKnown: when anything is known, and a pod has ended or
// OnceKnownFillShare of the devices are in use), the first otherwise.
func (u *UntilKnown) Current(task *scoring.Task) scoring.Scorer {
	if u.second(task) {
		return u.then
	}
	return u.until
}

// second reports whether the task scores as the second scorer now.
func (u *UntilKnown) second(task *scoring.Task) bool {
	if u.onceKnown {
		return u.Known(task) && (u.Ended() || u.filledUp())
	}
	return u.Known(task) || u.filledUp()
}

// OnceKnown reports whether it scores 0 until an end is known and then,
// while no pod has ended, until the fill (NewOnceKnown).
func (u *UntilKnown) OnceKnown() bool { return u.onceKnown }

// Ended reports whether some pod in the view has been seen to end
// (Nodes.Ended); false without a view.
func (u *UntilKnown) Ended() bool { return u.nodes != nil && u.nodes.Ended() }

// Fill is the share of the devices in use from which it stops waiting
// for the fill: FillShare, or OnceKnownFillShare for NewOnceKnown.
func (u *UntilKnown) Fill() float64 { return u.fill }

// InUse is the share of its device view in use (InUse), 0 without one.
func (u *UntilKnown) InUse() float64 {
	if u.devices == nil {
		return 0
	}
	return InUse(u.devices)
}

// filledUp reports whether its fill share of the devices are in use.
func (u *UntilKnown) filledUp() bool {
	return u.devices != nil && InUse(u.devices) >= u.fill
}

// InUse is the share of the view's devices in use, by amount (a share of
// a device counting as its share); 0 for a view without devices.
func InUse(devices *resource.Devices) float64 {
	total := devices.Capacity()
	if total == 0 {
		return 0
	}
	return float64(total-devices.FreeSum()) / float64(total)
}
