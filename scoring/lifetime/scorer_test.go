package lifetime

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// TestScoreRangeAndOrder: Score is in [0, 100], falls as the task runs
// longer and rises as the node stays busy longer, is 50 where the two are
// equal, 0 on an empty node and 100 on a node whose end is not known.
func TestScoreRangeAndOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		positive := rapid.Float64Range(1e-9, 1e9)
		left, a, b := positive.Draw(t, "left"), positive.Draw(t, "a"), positive.Draw(t, "b")
		if a > b {
			a, b = b, a
		}
		sa, sb := Score(a, left), Score(b, left)
		for _, s := range []float64{sa, sb} {
			if !(s >= 0 && s <= MaxScore) {
				t.Fatalf("Score = %v, out of [0, %d]", s, MaxScore)
			}
		}
		if sa < sb || Score(left, a) > Score(left, b) {
			t.Fatalf("rest %v, %v on a node of %v: %v, %v; rest %v on nodes of %v, %v: %v, %v", a, b, left, sa, sb, left, a, b, Score(left, a), Score(left, b))
		}
		if Score(a, a) != MaxScore/2 || Score(a, 0) != 0 || Score(a, math.Inf(1)) != MaxScore {
			t.Fatalf("Score(%v, ·): equal %v, empty %v, unknown %v", a, Score(a, a), Score(a, 0), Score(a, math.Inf(1)))
		}
	})
}

// TestScorerReadsTheView: each node's score is Score of its time to
// empty from the view's now (an empty node 0, one with a pod of unknown
// end 100), every node 100 for a task whose end is not known or past; in
// hand-worked numbers.
func TestScorerReadsTheView(t *testing.T) {
	model, err := NewModel(ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker[string](model, 4)
	tr.Advance(100)
	tr.Start("a", Pod{Row: 0, Started: 100, Declared: 200}, 100) // empties in 100
	tr.Start("b", Pod{Row: 1, Started: 50, Declared: 400}, 100)  // in 300
	tr.Start("c", Pod{Row: 2, Started: 100}, 100)                // not known
	s := NewScorer(tr.Nodes())
	out := make([]float64, 4)
	for _, c := range []struct {
		ends float64
		want []float64
	}{
		{200, []float64{50, 75, 100, 0}},     // rest 100: 100/(100+100), 300/(300+100)
		{400, []float64{25, 50, 100, 0}},     // rest 300
		{0, []float64{100, 100, 100, 100}},   // not known
		{90, []float64{100, 100, 100, 100}},  // past
		{100, []float64{100, 100, 100, 100}}, // ending now: nothing left to place
	} {
		task := scoring.Task{Ends: c.ends}
		for _, s := range []*Scorer{s, NewScorer(nil)} {
			if err := s.ScoreNodes(&task, spanOf(t, 4), out); err != nil {
				t.Fatal(err)
			}
			want := c.want
			if s.nodes == nil { // no view: nothing known of any node
				want = []float64{100, 100, 100, 100}
			}
			if !slices.Equal(out, want) {
				t.Errorf("ends %v, with a view %v: scores %v, want %v", c.ends, s.nodes != nil, out, want)
			}
		}
	}
}

// spanOf is a span of n nodes of one cpu each: the scorer reads only
// their rows.
func spanOf(t testing.TB, n int) scoring.Span {
	schema, err := resource.NewSchema(resource.CPU)
	if err != nil {
		t.Fatal(err)
	}
	table := resource.NewTable(schema, n)
	for i := range n {
		if _, err := table.Add(string(rune('a'+i)), resource.Vector{1000}, resource.Vector{0}); err != nil {
			t.Fatal(err)
		}
	}
	return scoring.NewSpan(table, 0, n)
}
