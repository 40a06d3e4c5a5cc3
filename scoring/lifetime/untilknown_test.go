package lifetime

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// fixed scores every node the same, and counts its calls.
type fixed struct {
	name  string
	score float64
	max   float64
	calls int
}

func (f *fixed) Name() string      { return f.name }
func (f *fixed) MaxScore() float64 { return f.max }
func (f *fixed) ScoreNodes(_ *scoring.Task, _ scoring.Span, out []float64) error {
	f.calls++
	for i := range out {
		out[i] = f.score
	}
	return nil
}

// TestUntilKnownSwitchesWhenAnEndIsKnown: over random pods started, ended
// and forgotten on a Tracker, devices taken and given back, and tasks with
// and without ends, UntilKnown scores as its second scorer exactly when
// the task's end is known and after the view's time, or some pod the view
// follows has a known end (the reference counts them from the rows), or
// FillShare of the devices are in use (the reference sums what it took),
// and as its first otherwise. NewOnceKnown, on the same view, scores as
// its part exactly when an end is known and some pod has ended (the
// reference follows the pods started, ended and forgotten) or
// OnceKnownFillShare of the devices are in use, and 0 otherwise.
func TestUntilKnownSwitchesWhenAnEndIsKnown(t *testing.T) {
	const rows = 3
	rapid.Check(t, func(t *rapid.T) {
		span := spanOf(t, rows)
		devices, _ := resource.NewDevices(resource.GPU, 10)
		taken := make([][]int64, rows)
		for r := range rows {
			n := rapid.IntRange(0, 2).Draw(t, "devices")
			if _, err := devices.AddNode(n); err != nil {
				t.Fatal(err)
			}
			taken[r] = make([]int64, n)
		}
		model, err := NewModel(ModelOptions{MinSamples: 1})
		if err != nil {
			t.Fatal(err)
		}
		tr := NewTracker[int](model, rows)
		until, then := &fixed{name: "NodeResourcesBalancedAllocation", score: 7, max: 100}, &fixed{name: "PackLeastUsed", score: 93, max: 100}
		u, err := NewUntilKnown(tr.Nodes(), devices, until, then)
		if err != nil {
			t.Fatal(err)
		}
		part := &fixed{name: "sra.size", score: 41, max: 100}
		once, err := NewOnceKnown(tr.Nodes(), devices, part)
		if err != nil {
			t.Fatal(err)
		}
		running, ended := map[int]bool{}, false
		out := make([]float64, rows)
		now := 0.0
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			id := rapid.IntRange(0, 4).Draw(t, "id")
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 5:
				r := rapid.IntRange(0, rows-1).Draw(t, "row")
				if len(taken[r]) == 0 {
					break
				}
				j := rapid.IntRange(0, len(taken[r])-1).Draw(t, "device")
				if amount := rapid.Int64Range(-taken[r][j], 10-taken[r][j]).Draw(t, "amount"); amount > 0 {
					err = devices.Take(r, j, amount)
				} else if amount < 0 {
					err = devices.Return(r, j, -amount)
				}
				if err != nil {
					t.Fatal(err)
				}
				taken[r][j] = 10 - devices.Free(r)[j]
				// A change to the devices comes with one to the table.
				if err := span.Table().SetUsed(r, resource.Vector{taken[r][j] % 7}); err != nil {
					t.Fatal(err)
				}
			case 0, 1:
				p := Pod{Row: rapid.IntRange(0, rows-1).Draw(t, "row"), Keys: []string{rapid.SampledFrom([]string{"a", "b"}).Draw(t, "key")},
					Started: now - rapid.SampledFrom([]float64{0, 0, 0, 5}).Draw(t, "age")}
				if rapid.Bool().Draw(t, "declares") {
					p.Declared = now + rapid.Float64Range(-5, 50).Draw(t, "declared")
				}
				tr.Start(id, p, now)
				running[id] = true
			case 2:
				tr.End(id, now)
				ended = ended || running[id]
				delete(running, id)
			case 3:
				tr.Forget(id)
				delete(running, id)
			case 4:
				now += rapid.SampledFrom([]float64{0, 1, 10}).Draw(t, "dt")
				tr.Advance(now)
			}
			task := &scoring.Task{Ends: rapid.SampledFrom([]float64{0, now - 1, now, now + 3, math.Inf(1), math.NaN()}).Draw(t, "task ends")}
			known := task.Ends > now && !math.IsInf(task.Ends, 1)
			for row := range rows {
				e := tr.Nodes().Row(row)
				known = known || e.Pods > e.Unknown
			}
			var used, all int64
			for r := range rows {
				for _, x := range taken[r] {
					used, all = used+x, all+10
				}
			}
			filled := all > 0 && float64(used)/float64(all) >= FillShare
			filledOnce := all > 0 && float64(used)/float64(all) >= OnceKnownFillShare
			if err := u.ScoreNodes(task, span, out); err != nil {
				t.Fatal(err)
			}
			want := until.score
			if known || filled {
				want = then.score
			}
			if cur := u.Current(task); (cur == scoring.Scorer(then)) != (known || filled) {
				t.Fatalf("at %v: current %s, known %v, filled %v", now, cur.Name(), known, filled)
			}
			if phase := u.AppendPhase([]byte{7}, task, span.Table()); !slices.Equal(phase, []byte{7, 0}) && !slices.Equal(phase, []byte{7, 1}) || (phase[1] == 1) != (known || filled) {
				t.Fatalf("at %v: phase %v, known %v, filled %v", now, phase, known, filled)
			}
			if u.Known(task) != known || slices.ContainsFunc(out, func(s float64) bool { return s != want }) {
				t.Fatalf("at %v, task ends %v, %d of %d in use: known %v, scores %v; the reference %v, %v", now, task.Ends, used, all, u.Known(task), out, known, want)
			}
			if err := once.ScoreNodes(task, span, out); err != nil {
				t.Fatal(err)
			}
			counts := known && (ended || filledOnce)
			want = 0
			if counts {
				want = part.score
			}
			if once.Ended() != ended || slices.ContainsFunc(out, func(s float64) bool { return s != want }) {
				t.Fatalf("OnceKnown at %v, task ends %v, %d of %d in use: ended %v, scores %v; the reference: known %v, ended %v, %v",
					now, task.Ends, used, all, once.Ended(), out, known, ended, want)
			}
			if phase := once.AppendPhase(nil, task, span.Table()); len(phase) != 1 || (phase[0] == 1) != counts {
				t.Fatalf("OnceKnown at %v: phase %v, counts %v", now, phase, counts)
			}
		}
	})
}

// volatileFixed is a fixed score, volatile.
type volatileFixed struct{ fixed }

func (*volatileFixed) Volatile() bool { return true }

// TestUntilKnownScorers: it takes its name and range from the scorer it
// becomes, is volatile, refuses scorers of different ranges, and without
// a view scores as its first for good.
func TestUntilKnownScorers(t *testing.T) {
	until, then := &fixed{name: "B", score: 1, max: 100}, &fixed{name: "P", score: 2, max: 100}
	u, err := NewUntilKnown(nil, nil, until, then)
	if err != nil || u.Name() != "P" || u.MaxScore() != 100 || !u.Volatile() {
		t.Fatalf("%v: %s, %v, volatile %v", err, u.Name(), u.MaxScore(), u.Volatile())
	}
	out := make([]float64, 2)
	if err := u.ScoreNodes(&scoring.Task{Ends: 1e9}, spanOf(t, 2), out); err != nil || out[0] != 1 || then.calls != 0 {
		t.Errorf("without a view: %v %v, the second scorer called %d times", out, err, then.calls)
	}
	if _, err := NewUntilKnown(nil, nil, &fixed{name: "B", max: 10}, then); err == nil || !strings.Contains(err.Error(), "B and P score up to 10 and 100") {
		t.Errorf("ranges apart: %v", err)
	}
	if _, err := NewUntilKnown(nil, nil, nil, then); err == nil {
		t.Error("a nil scorer is taken")
	}
	// Phased while neither scorer is volatile: a placer remembers it per
	// phase; a volatile one makes it volatile throughout.
	if !u.Phased() {
		t.Error("two stable scorers: not phased")
	}
	for _, pair := range [][2]scoring.Scorer{{&volatileFixed{*until}, then}, {until, &volatileFixed{*then}}} {
		if v, _ := NewUntilKnown(nil, nil, pair[0], pair[1]); v.Phased() {
			t.Errorf("%s then %s, one volatile: phased", pair[0].Name(), pair[1].Name())
		}
	}
}
