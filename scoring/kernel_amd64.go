//go:build goexperiment.simd && amd64

package scoring

import (
	"simd/archsimd"

	"github.com/resfit/resfit/internal/vector"
)

// The kernels of a GOEXPERIMENT=simd build, chosen once by the CPU's
// features (package vector).
var (
	useAVX512 = vector.AVX512
	useAVX2   = vector.AVX2
)

// weighKernel weighs the nodes of col in whole blocks of eight, up to the
// first block with a score outside [0, limit], and returns how many it
// weighed; weighScalar does the rest, and finds the node out of range.
// Multiplying and adding are IEEE operations lane by lane, so every total
// is the scalar loop's to the bit.
func weighKernel(col, totals []float64, w, limit float64, first bool) int {
	switch {
	case useAVX512:
		return weighAVX512(col, totals, w, limit, first)
	case useAVX2:
		return weighAVX2(col, totals, w, limit, first)
	}
	return 0
}

func weighAVX512(col, totals []float64, w, limit float64, first bool) int {
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

// weighAVX2 is weighAVX512 four nodes at a time.
func weighAVX2(col, totals []float64, w, limit float64, first bool) int {
	totals = totals[:len(col)]
	zero := archsimd.BroadcastFloat64x4(0)
	top := archsimd.BroadcastFloat64x4(limit)
	weight := archsimd.BroadcastFloat64x4(w)
	whole := len(col) &^ 3
	for i := 0; i < whole; i += 4 {
		x := archsimd.LoadFloat64x4Slice(col[i : i+4])
		if x.GreaterEqual(zero).And(x.LessEqual(top)).ToBits() != 0b1111 {
			return i
		}
		y := x.Mul(weight)
		y.StoreSlice(col[i : i+4])
		if first {
			zero.Add(y).StoreSlice(totals[i : i+4])
		} else {
			archsimd.LoadFloat64x4Slice(totals[i : i+4]).Add(y).StoreSlice(totals[i : i+4])
		}
	}
	return whole
}
