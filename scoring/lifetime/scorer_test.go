package lifetime

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// TestScoreRangeAndOrder: Score is in [0, 100], meets itself at rest =
// left, and rises towards it from both sides.
func TestScoreRangeAndOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		left := rapid.Float64Range(1e-9, 1e9).Draw(t, "left")
		a := rapid.Float64Range(1e-9, 1e9).Draw(t, "a")
		b := rapid.Float64Range(1e-9, 1e9).Draw(t, "b")
		sa, sb := Score(a, left), Score(b, left)
		for _, s := range []float64{sa, sb} {
			if !(s >= 0 && s <= MaxScore) {
				t.Fatalf("Score = %v, out of [0, %d]", s, MaxScore)
			}
		}
		// Nearer to left on the same side scores no lower.
		if a <= b && b <= left && sa > sb || left <= a && a <= b && sa < sb {
			t.Fatalf("Score(%v, %v) = %v, Score(%v, %v) = %v: the nearer to the node's end scored lower", a, left, sa, b, left, sb)
		}
		if Score(left, left) != MaxScore || Score(a, math.Inf(1)) != MaxScore/2 {
			t.Fatalf("Score at rest = left is %v, unknown %v", Score(left, left), Score(a, math.Inf(1)))
		}
	})
}

// TestScorerReadsTheView: each node's score is Score of its time to
// empty from the view's now, an empty node 0, every node 0 for a task
// whose end is not known or past; in hand-worked numbers.
func TestScorerReadsTheView(t *testing.T) {
	model, err := NewModel(ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker[string](model, 4)
	tr.Advance(100)
	tr.Start("a", Pod{Row: 0, Started: 100, Declared: 200}, 100) // empties in 100
	tr.Start("b", Pod{Row: 1, Started: 50, Declared: 900}, 100)  // in 800
	tr.Start("c", Pod{Row: 2, Started: 100}, 100)                // not known
	schema, err := resource.NewSchema(resource.CPU)
	if err != nil {
		t.Fatal(err)
	}
	table := resource.NewTable(schema, 4)
	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := table.Add(name, resource.Vector{1000}, resource.Vector{0}); err != nil {
			t.Fatal(err)
		}
	}
	s := NewScorer(tr.Nodes())
	out := make([]float64, 4)
	for _, c := range []struct {
		ends float64
		want []float64
	}{
		{300, []float64{50, 62.5, 50, 0}},   // rest 200: delays row 0 (100/200), before row 1 ((1+0.25)/2)
		{200, []float64{100, 56.25, 50, 0}}, // rest 100: with row 0
		{0, []float64{0, 0, 0, 0}},          // not known
		{90, []float64{0, 0, 0, 0}},         // past
	} {
		task := scoring.Task{Ends: c.ends}
		if err := s.ScoreNodes(&task, scoring.NewSpan(table, 0, 4), out); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i] != c.want[i] {
				t.Errorf("ends %v: scores %v, want %v", c.ends, out, c.want)
				break
			}
		}
	}
}
