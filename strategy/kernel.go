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

// column is a node's amounts, gathered from a column view into rows
// for the scalar code: the slots' entries of node i (the others are left
// as they are). The kernels score a block with the scalar code this way
// when its amounts are out of their range, and the nodes past their last
// whole block.
type column struct {
	alloc, used [resource.MaxResources]int64
}

func (c *column) gather(slots []taskSlot, cols resource.Columns, i int) ([]int64, []int64) {
	for _, s := range slots {
		c.alloc[s.slot], c.used[s.slot] = cols.Allocatable[s.slot*cols.Stride+i], cols.Used[s.slot*cols.Stride+i]
	}
	return c.alloc[:], c.used[:]
}

// fitColumn is kubeFitNode (koordinatorNode, with koordinator) on node i
// of a column view.
func fitColumn(slots []taskSlot, cols resource.Columns, i int, koordinator bool) int64 {
	var c column
	alloc, used := c.gather(slots, cols, i)
	if koordinator {
		return koordinatorNode(slots, alloc, used)
	}
	return kubeFitNode(slots, alloc, used)
}

// volcanoColumn is volcanoNode on node i of a column view.
func volcanoColumn(slots []taskSlot, cols resource.Columns, i int) float64 {
	var c column
	alloc, used := c.gather(slots, cols, i)
	return volcanoNode(slots, alloc, used)
}

// rtcrColumn is RequestedToCapacityRatio's node score, over shape, on node
// i of a column view.
func rtcrColumn(slots []taskSlot, shape []ShapePoint, cols resource.Columns, i int) int64 {
	var c column
	alloc, used := c.gather(slots, cols, i)
	return rtcrNode(slots, shape, alloc, used)
}

// balancedColumn is balancedNode on node i of a column view.
func balancedColumn(slots []taskSlot, cols resource.Columns, i int) int64 {
	var c column
	alloc, used := c.gather(slots, cols, i)
	return balancedNode(slots, alloc, used)
}
