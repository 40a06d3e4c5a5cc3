//go:build goexperiment.simd && amd64

package scoring

import (
	"testing"

	"pgregory.net/rapid"
)

// Each width of the weighing kernel this CPU has, held to the scalar loop
// (weigh calls only the widest).
func TestWeighKernelsMatchScalar(t *testing.T) {
	if !useAVX512 && !useAVX2 {
		t.Skip("this CPU has neither AVX2 nor AVX-512")
	}
	rapid.Check(t, func(t *rapid.T) {
		c := drawWeigh(t)
		kernel := weighAVX2
		if useAVX512 && rapid.Bool().Draw(t, "avx512") {
			kernel = weighAVX512
		}
		checkWeigh(t, c, func(col, totals []float64, w, limit float64, first bool) int {
			done := kernel(col, totals, w, limit, first)
			return weighScalar(col[done:], totals[done:], w, limit, first, done)
		})
	})
}
