package lifetime

import (
	"math"
	"sync"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// MaxScore is a Scorer's highest score.
const MaxScore = 100

// Score is how likely a task that has rest seconds left (> 0) is to end
// before its node would empty anyway, the node's pods expected to be gone
// in left seconds (≥ 0; +Inf when a pod's end is not known), in [0,
// MaxScore]:
//
//	score = 100 × left / (left + rest)
//
// which is the chance that the task ends first were its time left and
// the node's both exponential with those means: the least that can be
// assumed of ends known only roughly (declared with noise, or learned from
// the pods that ended). An empty node (left 0) scores 0: the task would
// keep it busy for all its run; a node whose end is not known, 100.
//
// It draws tasks to the nodes that stay busy longest, and away from the
// nodes about to empty, so those come free whole. It does not draw a task
// to the node it ends closest to: with ends known only roughly, that
// fills the nodes about to empty with the tasks that turn out long, and
// the replay measured it worse than no term at all (bench/replay README).
func Score(rest, left float64) float64 {
	return MaxScore / (1 + rest/left) // left 0: rest/0 = +Inf, so 0; left +Inf: 100
}

// WholeShare is the share of whole nodes above which a Scorer waits:
// while more than a fifth of the nodes with the most devices have every
// device free, whole nodes are not scarce, keeping another one whole
// gains nothing, and placing by ends rather than by fit spreads the pods
// that arrive then (a cluster filling up, or a quiet spell), which the
// cluster pays for after it fills. The bench/replay README measures it.
const WholeShare = 0.2

// Scorer scores nodes for a task by how likely it is to end before each
// node would empty anyway (Score), reading a Nodes view: a node without
// pods 0. A task whose end is not known (scoring.Task.Ends 0) or has
// passed, or is not of the source a Scorer follows (NewScorerFor), scores
// 0 everywhere (it is Indifferent to it: the term adds nothing, and a host
// may leave it out); another, while whole nodes are not scarce
// (WholeShare), 0 everywhere too. It is Volatile: the view changes with
// time, apart from the table. It is safe for concurrent use.
type Scorer struct {
	nodes   *Nodes
	devices *resource.Devices
	// only, when not AllEnds, is the tasks the Scorer scores by ends:
	// those whose end is declared, or learned; it scores the others 0
	// everywhere, as a task whose end is not known.
	only Ends
	// whole caches whether whole nodes abound, for a table at a clock.
	mu    sync.Mutex
	table *resource.Table
	clock uint64
	waits bool
}

// NewScorer is a Scorer over the view, whose rows must be the rows of the
// tables it scores (a row outside it is a node without pods). Without a
// view (nil) nothing is known of when any node empties, and every node
// scores 0 (the term adds nothing). devices, when not nil, is the device view of the same
// rows, which says whether whole nodes are scarce (a change to it must
// come with a change to the table, as a Placer's Bind makes them); nil:
// they always are.
func NewScorer(nodes *Nodes, devices *resource.Devices) *Scorer {
	return &Scorer{nodes: nodes, devices: devices}
}

// Ends says which tasks' ends a Scorer follows: all of them, those
// declared, or those learned (scoring.Task.EndsLearned).
type Ends uint8

const (
	// AllEnds: every task's end.
	AllEnds Ends = iota
	// DeclaredEnds: the ends tasks declare.
	DeclaredEnds
	// LearnedEnds: the ends learned of tasks like them.
	LearnedEnds
)

// NewScorerFor is NewScorer following only the tasks whose ends are
// declared, or learned: a pipeline holds one of each to weigh the two
// apart (declared ends, a pod's own, want a lighter term than learned
// ones, alike for pods of a kind: the bench/replay README measures it).
// The other tasks score 0 everywhere.
func NewScorerFor(nodes *Nodes, devices *resource.Devices, only Ends) *Scorer {
	return &Scorer{nodes: nodes, devices: devices, only: only}
}

// Name is "Lifetime", or for a Scorer of learned ends alone
// "LearnedLifetime".
func (s *Scorer) Name() string {
	if s.only == LearnedEnds {
		return "LearnedLifetime"
	}
	return "Lifetime"
}

// MaxScore is MaxScore.
func (s *Scorer) MaxScore() float64 { return MaxScore }

// Volatile is true.
func (s *Scorer) Volatile() bool { return true }

// ScoreNodes scores the span's nodes for the task.
func (s *Scorer) ScoreNodes(task *scoring.Task, nodes scoring.Span, out []float64) error {
	if s.nodes == nil {
		clear(out)
		return nil
	}
	s.nodes.mu.RLock()
	defer s.nodes.mu.RUnlock()
	rest := task.Ends - s.nodes.now
	if !s.ranks(task, rest) || s.wholeAbound(nodes.Table()) {
		clear(out)
		return nil
	}
	for i := range out {
		out[i] = Score(rest, s.nodes.remaining(nodes.Row(i)))
	}
	return nil
}

// Indifferent reports whether the task scores 0 on every node for what it
// is: its end is not known, has passed, or is not of the source the
// Scorer follows, or the Scorer has no view. It holds until the view's
// clock moves (Tracker.Advance). (While whole nodes abound every task
// scores 0 too, but that changes with the table, and Indifferent does not
// say it.)
func (s *Scorer) Indifferent(task *scoring.Task) bool {
	if s.nodes == nil {
		return true
	}
	s.nodes.mu.RLock()
	defer s.nodes.mu.RUnlock()
	return !s.ranks(task, task.Ends-s.nodes.now)
}

// ranks reports whether the task, with rest seconds left, is scored by
// its end: known, not passed, and of the source the Scorer follows.
func (s *Scorer) ranks(task *scoring.Task, rest float64) bool {
	return rest > 0 && !math.IsInf(rest, 1) && s.follows(task)
}

// follows reports whether the Scorer follows the task's end: any, or one
// of the source it is for.
func (s *Scorer) follows(task *scoring.Task) bool {
	switch s.only {
	case DeclaredEnds:
		return !task.EndsLearned
	case LearnedEnds:
		return task.EndsLearned
	}
	return true
}

// wholeAbound reports whether more than WholeShare of the nodes with the
// most devices have all of them free, worked out again only when the
// table changed.
func (s *Scorer) wholeAbound(table *resource.Table) bool {
	if s.devices == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.table == table && s.clock == table.Clock() {
		return s.waits
	}
	s.table, s.clock, s.waits = table, table.Clock(), CountWhole(s.devices).Abound()
	return s.waits
}

// Whole is how many of the nodes with the most devices have every device
// free: what decides whether a Scorer waits.
type Whole struct {
	// Devices is the most devices a node has; Nodes, how many nodes have
	// that many; Free, how many of those have all of them free.
	Devices, Nodes, Free int
}

// CountWhole counts the nodes with the most devices in the view, and how
// many of them are wholly free; a view without devices has none.
func CountWhole(devices *resource.Devices) Whole {
	var w Whole
	for r := range devices.Len() {
		switch n := devices.Count(r); {
		case n > w.Devices:
			w = Whole{Devices: n}
			fallthrough
		case n == w.Devices && n > 0:
			w.Nodes++
			if devices.Whole(r) {
				w.Free++
			}
		}
	}
	return w
}

// Abound reports whether whole nodes are not scarce: more than WholeShare
// of the nodes with the most devices are wholly free.
func (w Whole) Abound() bool { return float64(w.Free) > WholeShare*float64(w.Nodes) }
