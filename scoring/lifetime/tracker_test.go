package lifetime

import (
	"math"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/scoring"
)

// slowPod is a pod as the Tracker's reference follows it.
type slowPod struct {
	Pod
	end float64
	src Source
	due float64
}

// slowTracker is the Tracker's reference: every pod in a map, each row's
// empty time worked out from all of them when asked.
type slowTracker struct {
	model *slowModel
	rows  int
	pods  map[int]*slowPod
	now   float64
}

func (s *slowTracker) expect(p Pod, now float64) (float64, Source) {
	if p.Declared > now {
		return p.Declared, Declared
	}
	age := now - p.Started
	if p.NotStarted {
		age = 0
	}
	rest, src := s.model.remaining(p.Keys, age)
	if src == Unknown {
		return 0, Unknown
	}
	return now + rest, src
}

func (s *slowTracker) predict(x *slowPod, now float64) {
	x.end, x.src = s.expect(x.Pod, now)
	x.due = math.Nextafter(max(now, x.Started), math.Inf(1))
	if x.src != Unknown {
		x.due = max(x.end, x.due)
	} else if x.NotStarted {
		x.due = math.Inf(1)
	}
}

func (s *slowTracker) advance(now float64) {
	s.now = now
	for again := true; again; {
		again = false
		for _, x := range s.pods {
			if x.due <= now {
				s.predict(x, now)
				again = true
			}
		}
	}
}

func (s *slowTracker) row(row int) Empty {
	var e Empty
	for _, x := range s.pods {
		if x.Row != row {
			continue
		}
		e.Pods++
		switch x.src {
		case Declared:
			e.Declared++
		case Learned:
			e.Learned++
		case Lindy:
			e.Lindy++
		default:
			e.Unknown++
		}
		if x.src != Unknown {
			e.At = max(e.At, x.end)
		}
	}
	return e
}

// freeAt tries every time a pod ends, earliest first.
func (s *slowTracker) freeAt(row int, free, need int64) float64 {
	if free >= need {
		return s.now
	}
	var ends []float64
	for _, x := range s.pods {
		if x.Row == row && x.src != Unknown {
			ends = append(ends, x.end)
		}
	}
	slices.Sort(ends)
	for _, at := range ends {
		f := free
		for _, x := range s.pods {
			if x.Row == row && x.src != Unknown && x.end <= at {
				f += x.Size
			}
		}
		if f >= need {
			return max(at, s.now)
		}
	}
	return math.Inf(1)
}

// TestTrackerAgreesWithSlowReference: after any starts, ends, evictions,
// advances of time and new rows, every row's empty time and counts, when an
// amount is free there, and whether any end is known, are the reference's.
func TestTrackerAgreesWithSlowReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := drawOptions(t)
		model, err := NewModel(opts)
		if err != nil {
			t.Fatal(err)
		}
		rows := rapid.IntRange(1, 4).Draw(t, "rows")
		tr := NewTracker[int](model, rows)
		ref := &slowTracker{model: &slowModel{opts: opts, seen: map[string][]float64{}}, rows: rows, pods: map[int]*slowPod{}}
		now := 0.0
		for range rapid.IntRange(0, 80).Draw(t, "steps") {
			id := rapid.IntRange(0, 6).Draw(t, "id")
			switch rapid.IntRange(0, 6).Draw(t, "op") {
			case 6:
				rows += rapid.IntRange(0, 2).Draw(t, "more rows")
				tr.Grow(rows)
				ref.rows = rows
			case 5:
				row := rapid.IntRange(0, rows-1).Draw(t, "row")
				ids := rapid.SliceOfNDistinct(rapid.IntRange(0, 6), 0, 4, rapid.ID[int]).Draw(t, "ids")
				pods := make([]Pod, len(ids))
				for i, id := range ids {
					pods[i] = Pod{Row: row, Keys: drawKeys(t, "keys"), Started: now - rapid.SampledFrom([]float64{0, 1, 1000}).Draw(t, "age"),
						Size: rapid.Int64Range(0, 8).Draw(t, "size"), NotStarted: rapid.Bool().Draw(t, "not started")}
					if x, ok := ref.pods[id]; ok && x.Row == row && rapid.Bool().Draw(t, "same") {
						pods[i] = x.Pod // as it was: kept
					}
				}
				tr.Replace(row, ids, pods, now)
				for id, x := range ref.pods {
					if x.Row == row && !slices.Contains(ids, id) {
						delete(ref.pods, id)
					}
				}
				for i, id := range ids {
					if x, ok := ref.pods[id]; ok && x.Row == row && x.Started == pods[i].Started && x.Declared == pods[i].Declared && x.NotStarted == pods[i].NotStarted {
						continue
					}
					x := &slowPod{Pod: pods[i]}
					ref.predict(x, now)
					ref.pods[id] = x
				}
			case 0, 1:
				p := Pod{Row: rapid.IntRange(0, rows-1).Draw(t, "row"), Keys: drawKeys(t, "keys"),
					Started: now - rapid.SampledFrom([]float64{0, 0, 1, 10, 1000}).Draw(t, "age"),
					Size:    rapid.Int64Range(0, 8).Draw(t, "size"), NotStarted: rapid.Bool().Draw(t, "not started")}
				if rapid.Bool().Draw(t, "declares") {
					p.Declared = now + rapid.Float64Range(-10, 100).Draw(t, "declared")
				}
				tr.Start(id, p, now)
				x := &slowPod{Pod: p}
				ref.predict(x, now)
				ref.pods[id] = x
			case 2:
				tr.End(id, now)
				if x, ok := ref.pods[id]; ok {
					ref.model.observe(x.Keys, now-x.Started)
					delete(ref.pods, id)
				}
			case 3:
				tr.Forget(id)
				delete(ref.pods, id)
			case 4:
				now += rapid.SampledFrom([]float64{0, 0.5, 1, 7, 50, 1000}).Draw(t, "dt")
				tr.Advance(now)
				ref.advance(now)
			}
			known := false
			for row := range rows {
				e := ref.row(row)
				known = known || e.Declared+e.Learned+e.Lindy > 0
			}
			if got := tr.Nodes().Known(); got != known {
				t.Fatalf("known %v, the reference %v", got, known)
			}
			for row := range rows {
				if got, want := tr.Nodes().Row(row), ref.row(row); got != want {
					t.Fatalf("row %d: %+v, the reference %+v", row, got, want)
				}
				free, need := rapid.Int64Range(0, 4).Draw(t, "free"), rapid.Int64Range(0, 16).Draw(t, "need")
				if got, want := tr.FreeAt(row, free, need), ref.freeAt(row, free, need); got != want {
					t.Fatalf("row %d: %d free at %v, the reference %v", row, need, got, want)
				}
			}
		}
	})
}

// TestTrackerPredictsAgainAsPodsAge: a pod that outlives its prediction
// is predicted again when time passes its expected end, later each time.
func TestTrackerPredictsAgainAsPodsAge(t *testing.T) {
	model, err := NewModel(ModelOptions{MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"train"}
	for _, x := range []float64{100, 1000, 10000} {
		model.Observe(keys, x)
	}
	tr := NewTracker[string](model, 2)
	tr.Start("p", Pod{Row: 1, Started: 0, Keys: keys}, 0)
	want := []struct {
		now float64
		at  float64
		src Source
	}{
		{0, 1000, Learned},     // median of 100, 1000, 10000
		{999, 1000, Learned},   // not yet past it
		{1000, 10000, Learned}, // past it: the median of what ran longer
		{20000, 40000, Lindy},  // past all: as long again
	}
	for _, w := range want {
		tr.Advance(w.now)
		e := tr.Nodes().Row(1)
		if e.At != w.at || e.Pods != 1 || (w.src == Learned) != (e.Learned == 1) || (w.src == Lindy) != (e.Lindy == 1) {
			t.Errorf("at %v: %+v, want it to empty at %v (%v)", w.now, e, w.at, w.src)
		}
	}
	tr.End("p", 30000)
	if e := tr.Nodes().Row(1); e != (Empty{}) {
		t.Errorf("after the pod ended the row is %+v, want empty", e)
	}
	if model.Seen("train") != 4 {
		t.Errorf("the model saw %d lifetimes of train, want 4 (the pod that ended)", model.Seen("train"))
	}
}

// TestTrackerConcurrentUse: a host's events, its clock and its scoring
// reach one Tracker from goroutines of their own (run with -race).
func TestTrackerConcurrentUse(t *testing.T) {
	model, err := NewModel(ModelOptions{MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker[int](model, 4)
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := g*1000 + i
				now := float64(i)
				tr.Start(id, Pod{Row: i % 4, Started: now, Keys: []string{"k"}}, now)
				tr.Advance(now)
				if i%3 == 0 {
					tr.End(id-3, now)
				}
				tr.Replace(i%4, []int{id}, []Pod{{Started: now}}, now)
				_ = tr.FreeAt(i%4, 0, 1)
			}
		}()
	}
	s := NewScorer(tr.Nodes(), nil)
	out := make([]float64, 4)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			task := scoring.Task{Ends: float64(i) + 10}
			_ = s.ScoreNodes(&task, spanOf(t, 4), out)
			_ = tr.Nodes().Row(i % 4)
		}
	}()
	wg.Wait()
}
