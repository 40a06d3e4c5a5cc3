package scoring

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// weighCase is a column of scores, the totals so far, and how to weigh.
type weighCase struct {
	col, totals []float64
	w, limit    float64
	first       bool
}

// drawWeigh draws scores mostly in range (so that whole blocks are
// weighed), with −0, the limit itself, and scores out of it (NaN, −1, just
// above the limit, +Inf).
func drawWeigh(t *rapid.T) weighCase {
	n := rapid.IntRange(0, 40).Draw(t, "nodes")
	c := weighCase{
		limit: rapid.SampledFrom([]float64{1, 100, 1e6}).Draw(t, "limit"),
		w:     rapid.OneOf(rapid.Float64Range(0, 1e6), rapid.Just(1.0), rapid.Just(101.0)).Draw(t, "weight"),
		first: rapid.Bool().Draw(t, "first"),
		col:   make([]float64, n), totals: make([]float64, n),
	}
	for i := range c.col {
		c.col[i] = rapid.OneOf(
			rapid.Float64Range(0, c.limit),
			rapid.Just(math.Copysign(0, -1)),
			rapid.Just(c.limit),
			rapid.SampledFrom([]float64{math.NaN(), -1, math.Nextafter(c.limit, math.Inf(1)), math.Inf(1)}),
		).Draw(t, "score")
		if rapid.IntRange(0, 9).Draw(t, "in range") > 0 && !(c.col[i] >= 0 && c.col[i] <= c.limit) {
			c.col[i] = c.limit / 2
		}
		c.totals[i] = rapid.Float64Range(0, 1e9).Draw(t, "total")
	}
	return c
}

// checkWeigh holds a weighing function to weighScalar: the first node out
// of range, the weighted scores and the totals, to the bit.
func checkWeigh(t *rapid.T, c weighCase, weigh func(col, totals []float64, w, limit float64, first bool) int) {
	col2, totals2 := slices.Clone(c.col), slices.Clone(c.totals)
	got := weigh(c.col, c.totals, c.w, c.limit, c.first)
	want := weighScalar(col2, totals2, c.w, c.limit, c.first, 0)
	if got != want {
		t.Fatalf("first out of range: %d, scalar %d", got, want)
	}
	for i := range c.col {
		if math.Float64bits(c.col[i]) != math.Float64bits(col2[i]) || math.Float64bits(c.totals[i]) != math.Float64bits(totals2[i]) {
			t.Fatalf("node %d: weighed %v total %v, scalar %v total %v", i, c.col[i], c.totals[i], col2[i], totals2[i])
		}
	}
}

// weigh gives what weighScalar gives, to the bit, in every build: the
// weighted scores, the totals (+0 for a first score of −0), and the first
// node out of range (NaN, below 0, above the limit), with the nodes before
// it weighed and those from it on as they were.
func TestWeighMatchesScalar(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkWeigh(t, drawWeigh(t), weigh) })
}
