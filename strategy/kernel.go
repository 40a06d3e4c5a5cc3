package strategy

import "github.com/resfit/resfit/resource"

// Kernels: the batch scorers' loops over a table's columns
// (resource.Columns), several nodes at once, where the build and the CPU
// allow. A build with GOEXPERIMENT=simd on amd64 (kernel_amd64.go) sets
// them by the CPU's features at start: AVX-512 (F, CD, BW, DQ, VL), else
// AVX2, else none. Without them, or for a view without columns, every
// scorer runs its scalar loop over the rows, the reference each kernel is
// held to: the same results on every input, to the bit.
//
// A kernel divides in float64 and truncates, which gives the integer
// quotient exactly while its amounts are below 2^exactBits (div8 says
// why); it scores a block of nodes with an amount at or above that, or
// below 0, with the scalar code.

// KernelName names the kernels this process scores with: "avx512",
// "avx2" or "scalar".
func KernelName() string { return kernelName }

// exactBits bounds the amounts a kernel scores itself: below 2^exactBits,
// a requested amount × 100 (MaxNodeScore) stays below 2^53, where float64
// holds every integer.
const exactBits = 46

// fitColumn is kubeFitNode (koordinatorNode, with koordinator) on node i
// of a column view: the scalar code a kernel scores a block with when its
// amounts are out of its range, and the nodes past its last whole block.
func fitColumn(slots []taskSlot, cols resource.Columns, i int, koordinator bool) int64 {
	var score, weightSum int64
	for _, s := range slots {
		capacity := cols.Allocatable[s.slot*cols.Stride+i]
		if capacity == 0 && !koordinator {
			continue
		}
		score += requestedScore(s.typ, cols.Used[s.slot*cols.Stride+i]+s.req, capacity) * s.weight
		weightSum += s.weight
	}
	if weightSum == 0 {
		if koordinator {
			return MaxNodeScore
		}
		return 0
	}
	return score / weightSum
}

// volcanoColumn is volcanoNode on node i of a column view.
func volcanoColumn(slots []taskSlot, cols resource.Columns, i int) float64 {
	score := 0.0
	var weightSum int64
	for _, s := range slots {
		capacity := cols.Allocatable[s.slot*cols.Stride+i]
		if capacity == 0 || s.weight == 0 {
			weightSum += s.weight
			continue
		}
		usedFinally := float64(s.req) + float64(cols.Used[s.slot*cols.Stride+i])
		c := float64(capacity)
		if usedFinally > c {
			return 0
		}
		switch s.typ {
		case MostAllocated:
			score += usedFinally * float64(s.weight) / c
		case LeastAllocated:
			score += (c - usedFinally) * float64(s.weight) / c
		}
		weightSum += s.weight
	}
	if weightSum > 0 {
		score /= float64(weightSum)
	}
	return score
}
