//go:build goexperiment.simd && amd64

package vector

import "simd/archsimd"

// The kernels this process runs: AVX-512 (F, CD, BW, DQ, VL; eight nodes
// at a time) where the CPU has it, else AVX2 (four), else none. Without
// checking these first, an AVX instruction kills the process (SIGILL).
var (
	AVX512 = archsimd.X86.AVX512()
	AVX2   = !AVX512 && archsimd.X86.AVX2()
)

// Name names the kernels: "avx512", "avx2" or "scalar".
func Name() string {
	switch {
	case AVX512:
		return "avx512"
	case AVX2:
		return "avx2"
	}
	return "scalar"
}

// Float4 converts integers in [0, 2^52) to float64 exactly, with what AVX2
// has (it has no int64 conversion): their bits or'ed into 2^52's are
// 2^52 + x. Outside that range the result is meaningless; a kernel scores
// such a block with the scalar code.
func Float4(x archsimd.Int64x4) archsimd.Float64x4 {
	const two52 = 1 << 52
	return x.Or(archsimd.BroadcastInt64x4(0x4330000000000000)).AsFloat64x4().Sub(archsimd.BroadcastFloat64x4(two52))
}
