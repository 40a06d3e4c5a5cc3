package frag

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
)

// A class's share is its decayed count over all of them: after a class A
// seen once, halfLife tasks of class B later, A weighs ½ (one half-life)
// against B's Σ 2^(-k/halfLife), k = 0..halfLife−1.
func TestHistogramDecays(t *testing.T) {
	h, err := NewHistogram(8, 4)
	if err != nil {
		t.Fatal(err)
	}
	a := Class{CPU: 1000, Devices: resource.DeviceRequest{Count: 1, Each: 1000}}
	b := Class{CPU: 2000}
	h.Observe(a)
	for range 4 {
		h.Observe(b)
	}
	wantA, wantB := 0.5, 0.0
	for k := range 4 {
		wantB += math.Exp2(-float64(k) / 4)
	}
	got := h.Classes()
	if len(got) != 2 || got[0].CPU != 2000 || math.Abs(got[0].Weight-wantB/(wantA+wantB)) > 1e-12 || math.Abs(got[1].Weight-wantA/(wantA+wantB)) > 1e-12 {
		t.Errorf("classes %+v, want shares %v and %v", got, wantB/(wantA+wantB), wantA/(wantA+wantB))
	}
	if h.Observed() != 5 {
		t.Errorf("observed %d", h.Observed())
	}
	if _, err := NewHistogram(0, 4); err == nil {
		t.Error("no classes allowed")
	}
	if _, err := NewHistogram(4, 0.5); err == nil {
		t.Error("a half-life below one task")
	}
}

// Whatever the tasks, the histogram keeps at most its bound of classes,
// the heaviest ones, with shares equal to the decayed counts of a plain
// reference (which never drops a class) renormalised over those kept, as
// long as no dropped class ever came back.
func TestHistogramAgreesWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.IntRange(1, 5).Draw(t, "max")
		halfLife := float64(rapid.IntRange(1, 50).Draw(t, "half-life"))
		h, _ := NewHistogram(max, halfLife)
		ref := map[int64]float64{}
		dropped := map[int64]bool{}
		steps := rapid.IntRange(1, 200).Draw(t, "tasks")
		kinds := rapid.IntRange(1, 8).Draw(t, "kinds") // at most max: nothing dropped
		for i := range steps {
			cpu := int64(rapid.IntRange(1, kinds).Draw(t, "cpu"))
			for k := range ref {
				ref[k] *= math.Exp2(-1 / halfLife)
			}
			ref[cpu]++
			before := keptCPUs(h)
			h.Observe(Class{CPU: cpu})
			after := keptCPUs(h)
			for k := range before {
				if !after[k] {
					dropped[k] = true
				}
			}
			if len(after) > max {
				t.Fatalf("task %d: %d classes kept, bound %d", i, len(after), max)
			}
		}
		kept := h.Classes()
		if kinds <= max && len(dropped) > 0 {
			t.Fatalf("%d kinds of class within a bound of %d, yet some were dropped", kinds, max)
		}
		total := 0.0
		for _, c := range kept {
			if dropped[c.CPU] {
				return // a class that came back restarts its count
			}
			total += ref[c.CPU]
		}
		for _, c := range kept {
			if want := ref[c.CPU] / total; math.Abs(c.Weight-want) > 1e-9 {
				t.Fatalf("class %d: share %v, reference %v", c.CPU, c.Weight, want)
			}
		}
	})
}

func keptCPUs(h *Histogram) map[int64]bool {
	out := map[int64]bool{}
	for _, c := range h.Classes() {
		out[c.CPU] = true
	}
	return out
}

// A learning scorer scores every node a task fits alike (50) until it has
// seen a class; after refresh tasks it scores as a scorer given the
// histogram's classes does; it is volatile and ignores tasks whose devices
// could never be served.
func TestLearningScorer(t *testing.T) {
	schema, _ := resource.NewSchema("cpu", "nvidia.com/gpu")
	tab := resource.NewTable(schema, 2)
	tab.Add("a", resource.Vector{8000, 4000}, nil)
	tab.Add("b", resource.Vector{8000, 4000}, nil)
	d, _ := resource.NewDevices("nvidia.com/gpu", 1000)
	d.AddNode(4)
	d.AddNode(4)
	d.Take(0, 0, 1000)
	d.Take(0, 1, 1000)
	d.Take(0, 2, 500)
	tab.SetUsed(0, resource.Vector{0, 2500})
	h, _ := NewHistogram(8, 100)
	s, err := NewLearningScorer(schema, d, h, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Volatile() || s.Learned() != h {
		t.Fatal("not a learning scorer")
	}
	task := &scoring.Task{Requests: resource.Vector{1000, 2000}, Devices: resource.DeviceRequest{Count: 2, Each: 1000}}
	out := make([]float64, 2)
	if err := s.ScoreNodes(task, scoring.NewSpan(tab, 0, 2), out); err != nil || out[0] != 0 || out[1] != 50 {
		t.Fatalf("before learning: %v, %v (a does not fit: 0; b 50)", out, err)
	}
	s.Observe(task)
	s.Observe(&scoring.Task{Requests: resource.Vector{1000, 5000}, Devices: resource.DeviceRequest{Count: 1, Each: 5000}}) // never served
	if h.Observed() != 1 {
		t.Fatalf("observed %d", h.Observed())
	}
	s.Observe(&scoring.Task{Requests: resource.Vector{1000, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}})
	fixed, _ := NewMeasure(h.Classes(), 1000)
	want, _ := NewScorer(schema, d, fixed, Options{})
	wantOut := make([]float64, 2)
	for _, task := range []*scoring.Task{task, {Requests: resource.Vector{1000, 500}, Devices: resource.DeviceRequest{Count: 1, Each: 500}}} {
		if err := s.ScoreNodes(task, scoring.NewSpan(tab, 0, 2), out); err != nil {
			t.Fatal(err)
		}
		want.ScoreNodes(task, scoring.NewSpan(tab, 0, 2), wantOut)
		if out[0] != wantOut[0] || out[1] != wantOut[1] {
			t.Errorf("%+v: learned %v, given the same classes %v", task.Devices, out, wantOut)
		}
	}
}
