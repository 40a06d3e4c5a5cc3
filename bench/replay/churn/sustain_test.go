package churn

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// The bisection against trying every load of the grid: with answers true
// up to a threshold and false above it, the load found is the highest
// true one of the grid, in at most 2 + ⌈log2(steps)⌉ tries; a From that is
// not sustained is reported as below it, a To that is as at least it.
func TestSustainSearchAgainstEveryLoad(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		s := SustainSpec{From: 0.5, Step: 0.01}
		s.To = s.From + float64(steps)*s.Step
		threshold := rapid.Float64Range(0.4, s.To+0.1).Draw(t, "threshold")
		got, err := s.search(func(load float64) (bool, error) { return load <= threshold, nil })
		if err != nil {
			t.Fatal(err)
		}
		want := Sustainable{}
		for k := 0; k <= steps; k++ {
			if load := math.Round((s.From+float64(k)*s.Step)/s.Step) * s.Step; load <= threshold {
				want.Load = load
			}
		}
		switch {
		case threshold < s.From:
			want = Sustainable{Load: s.From, Below: true}
		case want.Load == math.Round(s.To/s.Step)*s.Step:
			want.Above = true
		}
		if got.Load != want.Load || got.Below != want.Below || got.Above != want.Above {
			t.Fatalf("threshold %v over %d steps: %+v, want %+v", threshold, steps, got, want)
		}
		if most := 2 + int(math.Ceil(math.Log2(float64(steps)))); got.Replays > most {
			t.Fatalf("%d tries, at most %d", got.Replays, most)
		}
	})
	for _, c := range []struct {
		s    Sustainable
		want string
	}{{Sustainable{Load: 0.9}, "0.90"}, {Sustainable{Load: 0.8, Below: true}, "<0.80"}, {Sustainable{Load: 1.2, Above: true}, "≥1.20"}} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
