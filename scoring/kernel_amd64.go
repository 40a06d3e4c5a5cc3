//go:build goexperiment.simd && amd64

package scoring

import "simd/archsimd"

var useAVX512 = archsimd.X86.AVX512()

// weighKernel weighs the nodes of col in whole blocks of eight, up to the
// first block with a score outside [0, limit], and returns how many it
// weighed; weighScalar does the rest, and finds the node out of range.
// Multiplying and adding are IEEE operations lane by lane, so every total
// is the scalar loop's to the bit.
func weighKernel(col, totals []float64, w, limit float64, first bool) int {
	if !useAVX512 {
		return 0
	}
	totals = totals[:len(col)]
	zero := archsimd.BroadcastFloat64x8(0)
	top := archsimd.BroadcastFloat64x8(limit)
	weight := archsimd.BroadcastFloat64x8(w)
	whole := len(col) &^ 7
	for i := 0; i < whole; i += 8 {
		x := archsimd.LoadFloat64x8Slice(col[i : i+8])
		if x.GreaterEqual(zero).And(x.LessEqual(top)).ToBits() != 0xff {
			return i
		}
		y := x.Mul(weight)
		y.StoreSlice(col[i : i+8])
		if first {
			zero.Add(y).StoreSlice(totals[i : i+8])
		} else {
			archsimd.LoadFloat64x8Slice(totals[i : i+8]).Add(y).StoreSlice(totals[i : i+8])
		}
	}
	return whole
}
