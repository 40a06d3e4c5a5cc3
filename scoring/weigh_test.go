package scoring

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// weigh gives what weighScalar gives, to the bit, in every build: the
// weighted scores, the totals (+0 for a first score of −0), and the first
// node out of range (NaN, below 0, above the limit), with the nodes before
// it weighed and those from it on as they were.
func TestWeighMatchesScalar(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "nodes")
		limit := rapid.SampledFrom([]float64{1, 100, 1e6}).Draw(t, "limit")
		w := rapid.OneOf(rapid.Float64Range(0, 1e6), rapid.Just(1.0), rapid.Just(101.0)).Draw(t, "weight")
		first := rapid.Bool().Draw(t, "first")
		col := make([]float64, n)
		for i := range col {
			col[i] = rapid.OneOf(
				rapid.Float64Range(0, limit),
				rapid.Just(math.Copysign(0, -1)),
				rapid.Just(limit),
				rapid.SampledFrom([]float64{math.NaN(), -1, math.Nextafter(limit, math.Inf(1)), math.Inf(1)}),
			).Draw(t, "score")
			if rapid.IntRange(0, 9).Draw(t, "in range") > 0 && !(col[i] >= 0 && col[i] <= limit) {
				col[i] = limit / 2 // mostly in range, so that whole blocks are weighed
			}
		}
		totals := make([]float64, n)
		for i := range totals {
			totals[i] = rapid.Float64Range(0, 1e9).Draw(t, "total")
		}
		col2, totals2 := slices.Clone(col), slices.Clone(totals)
		got := weigh(col, totals, w, limit, first)
		want := weighScalar(col2, totals2, w, limit, first, 0)
		if got != want {
			t.Fatalf("first out of range: %d, scalar %d", got, want)
		}
		for i := range col {
			if math.Float64bits(col[i]) != math.Float64bits(col2[i]) || math.Float64bits(totals[i]) != math.Float64bits(totals2[i]) {
				t.Fatalf("node %d: weighed %v total %v, scalar %v total %v", i, col[i], totals[i], col2[i], totals2[i])
			}
		}
	})
}
