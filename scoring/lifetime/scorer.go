package lifetime

import (
	"math"

	"github.com/resfit/resfit/scoring"
)

// MaxScore is a Scorer's highest score.
const MaxScore = 100

// Score is how well a task that has rest seconds left (> 0) lines up
// with a node that has pods and is expected to empty in left seconds (≥
// 0; +Inf when a pod's end is not known), in [0, MaxScore]:
//
//	rest ≤ left:  100 × (1 + rest/left) / 2   the task ends before the node
//	                                          empties: 50..100, best
//	                                          ending with it
//	rest > left:  100 × left / rest           it delays the node: the less
//	                                          the better, 0..100
//	left = +Inf:  50                          not known
//
// The two meet at rest = left (100). A node without pods scores 0 (Score
// is not asked for one): it is kept whole for the pods that need it.
func Score(rest, left float64) float64 {
	switch {
	case math.IsInf(left, 1):
		return MaxScore / 2
	case rest <= left:
		return MaxScore * (1 + rest/left) / 2
	}
	return MaxScore * left / rest
}

// Scorer scores nodes for a task by how its end lines up with each node's
// expected empty time (Score), reading a Nodes view: a node without pods
// 0, and every node alike (0) for a task whose end is not known
// (scoring.Task.Ends 0) or has passed. It is Volatile: the view changes
// with time, apart from the table.
type Scorer struct {
	nodes *Nodes
}

// NewScorer is a Scorer over the view, whose rows must be the rows of the
// tables it scores (a row outside it is a node without pods).
func NewScorer(nodes *Nodes) *Scorer { return &Scorer{nodes: nodes} }

// Name is "Lifetime".
func (s *Scorer) Name() string { return "Lifetime" }

// MaxScore is MaxScore.
func (s *Scorer) MaxScore() float64 { return MaxScore }

// Volatile is true.
func (s *Scorer) Volatile() bool { return true }

// ScoreNodes scores the span's nodes for the task.
func (s *Scorer) ScoreNodes(task *scoring.Task, nodes scoring.Span, out []float64) error {
	s.nodes.mu.RLock()
	defer s.nodes.mu.RUnlock()
	rest := task.Ends - s.nodes.now
	if !(rest > 0) || math.IsInf(rest, 1) {
		clear(out)
		return nil
	}
	for i := range out {
		left, busy := s.nodes.remaining(nodes.Row(i))
		out[i] = 0
		if busy {
			out[i] = Score(rest, left)
		}
	}
	return nil
}
