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
// end 100), every node 0 for a task whose end is not known or past (the
// term adds nothing); in hand-worked numbers.
func TestScorerReadsTheView(t *testing.T) {
	tr := trackerAt100(t, 4)
	tr.Start("a", Pod{Row: 0, Started: 100, Declared: 200}, 100) // empties in 100
	tr.Start("b", Pod{Row: 1, Started: 50, Declared: 400}, 100)  // in 300
	tr.Start("c", Pod{Row: 2, Started: 100}, 100)                // not known
	s := NewScorer(tr.Nodes(), nil)
	out := make([]float64, 4)
	for _, c := range []struct {
		ends float64
		want []float64
	}{
		{200, []float64{50, 75, 100, 0}}, // rest 100: 100/(100+100), 300/(300+100)
		{400, []float64{25, 50, 100, 0}}, // rest 300
		{0, []float64{0, 0, 0, 0}},       // not known: the term adds nothing
		{90, []float64{0, 0, 0, 0}},      // past
		{100, []float64{0, 0, 0, 0}},     // ending now: nothing left to place
	} {
		task := scoring.Task{Ends: c.ends}
		for _, s := range []*Scorer{s, NewScorer(nil, nil)} {
			if err := s.ScoreNodes(&task, spanOf(t, 4), out); err != nil {
				t.Fatal(err)
			}
			want := c.want
			if s.nodes == nil { // no view: nothing known of any node
				want = []float64{0, 0, 0, 0}
			}
			if !slices.Equal(out, want) {
				t.Errorf("ends %v, with a view %v: scores %v, want %v", c.ends, s.nodes != nil, out, want)
			}
		}
	}
}

// A Scorer for one source scores by ends only the tasks whose end is of
// that source, declared or learned, as NewScorer scores every task; the
// others score 0 everywhere, as a task whose end is not known. Its name
// says which: Lifetime, or LearnedLifetime.
func TestScorerForFollowsOneSource(t *testing.T) {
	tr := trackerAt100(t, 2)
	tr.Start("a", Pod{Row: 0, Started: 100, Declared: 200}, 100) // empties in 100
	byEnds := []float64{50, 0}                                   // rest 100: 100/(100+100); row 1 empty
	known := []float64{0, 0}                                     // not followed: as an end not known
	for _, c := range []struct {
		only          Ends
		name          string
		declared, got []float64 // a declared task's scores, a learned one's
	}{
		{AllEnds, "Lifetime", byEnds, byEnds},
		{DeclaredEnds, "Lifetime", byEnds, known},
		{LearnedEnds, "LearnedLifetime", known, byEnds},
	} {
		s := NewScorerFor(tr.Nodes(), nil, c.only)
		if s.Name() != c.name {
			t.Errorf("%d: named %s, want %s", c.only, s.Name(), c.name)
		}
		for learned, want := range map[bool][]float64{false: c.declared, true: c.got} {
			out := make([]float64, 2)
			if err := s.ScoreNodes(&scoring.Task{Ends: 200, EndsLearned: learned}, spanOf(t, 2), out); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out, want) {
				t.Errorf("%s (%d), a task whose end is learned %v: %v, want %v", c.name, c.only, learned, out, want)
			}
		}
	}
}

// trackerAt100 is a Tracker of rows rows with nothing learned, at 100 s.
func trackerAt100(t *testing.T, rows int) *Tracker[string] {
	t.Helper()
	model, err := NewModel(ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker[string](model, rows)
	tr.Advance(100)
	return tr
}

// spanOf is a span of n nodes of one cpu each: the scorer reads only
// their rows.
func spanOf(t interface{ Fatal(...any) }, n int) scoring.Span {
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

// TestScorerWaitsWhileWholeNodesAbound: on five 8-GPU nodes and a 4-GPU
// one, the term scores while at most a fifth of the 8-GPU nodes have all
// their GPUs free (the 4-GPU node, whole or not, does not count), and
// scores 0 everywhere once more are; a task whose end is not known scores
// 0 everywhere too. The scorer sees a change to the devices with its
// table's.
func TestScorerWaitsWhileWholeNodesAbound(t *testing.T) {
	tr := trackerAt100(t, 6)
	tr.Start("a", Pod{Row: 0, Started: 100, Declared: 200}, 100) // empties in 100
	devices, err := resource.NewDevices(resource.GPU, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{8, 8, 8, 8, 8, 4} {
		if _, err := devices.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	span := spanOf(t, 6)
	table := span.Table()
	// Rows 0 to 3 hold a GPU each: one 8-GPU node in five (row 4) is whole.
	for r := range 4 {
		if err := devices.Take(r, 0, 1000); err != nil {
			t.Fatal(err)
		}
	}
	s := NewScorer(tr.Nodes(), devices)
	scores := func(ends float64) []float64 {
		out := make([]float64, 6)
		if err := s.ScoreNodes(&scoring.Task{Ends: ends}, span, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := scores(200), []float64{50, 0, 0, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("one 8-GPU node in five whole: %v, want %v", got, want)
	}
	// Row 3 gives its GPU back (its row changes in the table too): two in
	// five are whole.
	if err := devices.Return(3, 0, 1000); err != nil {
		t.Fatal(err)
	}
	if err := table.SetUsed(3, resource.Vector{0}); err != nil {
		t.Fatal(err)
	}
	if got, want := scores(200), []float64{0, 0, 0, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("two 8-GPU nodes in five whole: %v, want %v", got, want)
	}
	if got, want := scores(0), []float64{0, 0, 0, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("an end not known, two in five whole: %v, want %v", got, want)
	}
	if got, want := NewScorer(tr.Nodes(), nil), []float64{50, 0, 0, 0, 0, 0}; !slices.Equal(scoresOf(t, got, span, 200), want) {
		t.Errorf("without a device view: %v, want %v", scoresOf(t, got, span, 200), want)
	}
}

func scoresOf(t *testing.T, s *Scorer, span scoring.Span, ends float64) []float64 {
	out := make([]float64, span.Len())
	if err := s.ScoreNodes(&scoring.Task{Ends: ends}, span, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWholeAboundIsItsReference: on random device views, whether whole
// nodes abound is what counting them says: of the nodes with the most
// devices, more than WholeShare with every device free.
func TestWholeAboundIsItsReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		devices, err := resource.NewDevices(resource.GPU, 1000)
		if err != nil {
			rt.Fatal(err)
		}
		n := rapid.IntRange(1, 12).Draw(rt, "nodes")
		counts := make([]int, n)
		for r := range n {
			counts[r] = rapid.IntRange(0, 8).Draw(rt, "devices")
			if _, err := devices.AddNode(counts[r]); err != nil {
				rt.Fatal(err)
			}
			for d := range counts[r] {
				if take := rapid.IntRange(0, 1000).Draw(rt, "taken"); take > 0 && rapid.Bool().Draw(rt, "in use") {
					if err := devices.Take(r, d, int64(take)); err != nil {
						rt.Fatal(err)
					}
				}
			}
		}
		most := slices.Max(counts)
		big, whole := 0, 0
		for r := range n {
			if counts[r] != most || most == 0 {
				continue
			}
			big++
			all := true
			for _, f := range devices.Free(r) {
				all = all && f == 1000
			}
			if all {
				whole++
			}
		}
		want := big > 0 && float64(whole) > WholeShare*float64(big)
		s := NewScorer(NewNodes(n), devices)
		if got := s.wholeAbound(spanOf(t, n).Table()); got != want {
			rt.Fatalf("whole nodes abound: %v, want %v (%d whole of %d with %d devices)", got, want, whole, big, most)
		}
	})
}

// TestIndifferentScoresAlike: on random small clusters (pods declaring
// ends or not, some past them, nodes empty), a Scorer of each source is
// Indifferent to a task exactly when it has a view and the task's end is
// known, still ahead and of the source it follows; and then it scores
// every node 0, so a host may leave it out of the task's cycle.
func TestIndifferentScoresAlike(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(rt, "nodes")
		tr := trackerAt100(t, n)
		for i := range rapid.IntRange(0, 12).Draw(rt, "pods") {
			p := Pod{Row: rapid.IntRange(0, n-1).Draw(rt, "row"), Started: float64(rapid.IntRange(0, 100).Draw(rt, "started"))}
			if rapid.Bool().Draw(rt, "declares") {
				p.Declared = float64(rapid.IntRange(1, 400).Draw(rt, "declared"))
			}
			tr.Start(string(rune('a'+i)), p, 100)
		}
		only := Ends(rapid.IntRange(int(AllEnds), int(LearnedEnds)).Draw(rt, "only"))
		view := rapid.Bool().Draw(rt, "view")
		s := NewScorerFor(nil, nil, only)
		if view {
			s = NewScorerFor(tr.Nodes(), nil, only)
		}
		ends := rapid.SampledFrom([]float64{0, 50, 100, 101, 250, math.Inf(1)}).Draw(rt, "ends")
		learned := rapid.Bool().Draw(rt, "learned")
		task := scoring.Task{Ends: ends, EndsLearned: learned}
		follows := only == AllEnds || (only == LearnedEnds) == learned
		want := !(view && ends > 100 && !math.IsInf(ends, 1) && follows)
		if got := s.Indifferent(&task); got != want {
			rt.Fatalf("Indifferent = %v, want %v (view %v, ends %v, learned %v, following %d)", got, want, view, ends, learned, only)
		}
		out := make([]float64, n)
		if err := s.ScoreNodes(&task, spanOf(t, n), out); err != nil {
			rt.Fatal(err)
		}
		if want && slices.ContainsFunc(out, func(v float64) bool { return v != 0 }) {
			rt.Fatalf("indifferent, but scored %v", out)
		}
	})
}
