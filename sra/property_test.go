package sra

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

var propNames = []string{resource.CPU, resource.Memory, "nvidia.com/gpu", "nvidia.com/t4", "example.com/foo"}

func propSchema(t *rapid.T) *resource.Schema {
	s, err := resource.NewSchema(propNames...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func drawVec(t *rapid.T, label string, max int64) []int64 {
	v := make([]int64, len(propNames))
	for i := range v {
		v[i] = rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(1, max)).Draw(t, label)
	}
	return v
}

func drawScarce(t *rapid.T) []Weighted {
	var ws []Weighted
	for _, n := range propNames[2:] {
		if rapid.Bool().Draw(t, "scarce "+n) {
			ws = append(ws, Weighted{n, rapid.Int64Range(1, 10).Draw(t, "weight")})
		}
	}
	return ws
}

// refRetention is the design's formula: 0 if the node lacks a requested
// resource, else 100 × weight × (Σ weights absent from the node) / Σ weights.
func refRetention(weight int64, scarce []Weighted, req, alloc map[string]int64) float64 {
	for n, v := range req {
		if v > 0 && alloc[n] == 0 {
			return 0
		}
	}
	var absent, sum int64
	for _, w := range scarce {
		sum += w.Weight
		if alloc[w.Name] == 0 {
			absent += w.Weight
		}
	}
	if sum == 0 {
		return 0
	}
	return 100 * float64(weight) * float64(absent) / float64(sum)
}

func byName(v []int64) map[string]int64 {
	m := map[string]int64{}
	for i, n := range propNames {
		m[n] = v[i]
	}
	return m
}

func TestRetentionProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := propSchema(t)
		weight := rapid.Int64Range(0, 20).Draw(t, "weight")
		scarce := drawScarce(t)
		r, err := NewRetention(s, weight, scarce)
		if err != nil {
			t.Fatal(err)
		}
		req := drawVec(t, "req", 1<<20)
		n := rapid.IntRange(1, 8).Draw(t, "nodes")
		var alloc []int64
		for range n {
			alloc = append(alloc, drawVec(t, "alloc", 1<<40)...)
		}
		out := make([]float64, n)
		if err := r.ScoreNodes(req, alloc, out); err != nil {
			t.Fatal(err)
		}
		k := len(propNames)
		for i := range n {
			a := alloc[i*k : i*k+k]
			got := r.ScoreNode(req, a)
			if got != out[i] {
				t.Fatalf("batch %v, single %v", out[i], got)
			}
			if math.IsNaN(got) || got < 0 || got > r.MaxScore() {
				t.Fatalf("score %v outside [0, %v]", got, r.MaxScore())
			}
			if want := refRetention(weight, scarce, byName(req), byName(a)); math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("score %v, reference %v", got, want)
			}
			// Adding a scarce resource the task does not request never
			// raises its score.
			for _, w := range scarce {
				slot, _ := s.Slot(w.Name)
				if req[slot] > 0 || a[slot] > 0 {
					continue
				}
				more := append([]int64(nil), a...)
				more[slot] = 1000
				if after := r.ScoreNode(req, more); after > got {
					t.Fatalf("adding %s raised the score %v → %v", w.Name, got, after)
				}
			}
		}
	})
}

func TestProportionalProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := propSchema(t)
		var ratios []Ratio
		for _, n := range propNames[2:4] {
			if rapid.Bool().Draw(t, "primary "+n) {
				ratios = append(ratios, Ratio{n, float64(rapid.IntRange(0, 32).Draw(t, "cpu")), float64(rapid.IntRange(0, 64).Draw(t, "memory"))})
			}
		}
		p, err := NewProportional(s, ratios)
		if err != nil {
			t.Fatal(err)
		}
		req := drawVec(t, "req", 1<<36)
		alloc := drawVec(t, "alloc", 1<<40)
		used := make([]int64, len(alloc))
		for i := range used {
			used[i] = rapid.Int64Range(0, alloc[i]).Draw(t, "used")
		}
		ok, _ := p.CheckNode(req, alloc, used)
		requestsPrimary := false
		for _, r := range ratios {
			slot, _ := s.Slot(r.Resource)
			if req[slot] > 0 {
				requestsPrimary = true
			}
		}
		if requestsPrimary && !ok {
			t.Fatal("a task requesting a primary resource was filtered")
		}
		if requestsPrimary {
			return
		}
		// Passing means idle cpu and memory, less the request, cover every
		// present primary's reservation.
		idleCPU, idleMem := alloc[0]-used[0]-req[0], alloc[1]-used[1]-req[1]
		covered := true
		for _, r := range ratios {
			slot, _ := s.Slot(r.Resource)
			if alloc[slot] == 0 {
				continue
			}
			idle := float64(alloc[slot] - used[slot])
			if float64(idleCPU) < idle*r.CPU || float64(idleMem) < idle*r.Memory*1e6 {
				covered = false
			}
		}
		if ok != covered {
			t.Fatalf("filter says %v, reservation covered %v", ok, covered)
		}
	})
}

// refAvoidance counts resource types by name, as Koordinator does.
func refAvoidance(scarce []string, req, alloc map[string]int64) int64 {
	diff, inter := 0, 0
	for n, a := range alloc {
		if a > 0 && req[n] == 0 {
			diff++
			for _, sc := range scarce {
				if sc == n {
					inter++
				}
			}
		}
	}
	if diff == 0 || inter == 0 {
		return 100
	}
	return int64((diff - inter) * 100 / diff)
}

func TestAvoidanceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := propSchema(t)
		var scarce []string
		for _, n := range propNames[2:] {
			if rapid.Bool().Draw(t, "scarce "+n) {
				scarce = append(scarce, n)
			}
		}
		a, err := NewAvoidance(s, scarce)
		if err != nil {
			t.Fatal(err)
		}
		req, alloc := drawVec(t, "req", 100), drawVec(t, "alloc", 100)
		got := a.ScoreNode(req, alloc)
		if got < 0 || got > 100 {
			t.Fatalf("score %d outside [0, 100]", got)
		}
		if want := refAvoidance(scarce, byName(req), byName(alloc)); got != want {
			t.Fatalf("score %d, reference %d", got, want)
		}
		out := make([]float64, 1)
		if err := a.ScoreNodes(req, alloc, out); err != nil || out[0] != float64(got) {
			t.Fatalf("batch %v (%v), single %d", out[0], err, got)
		}
	})
}
