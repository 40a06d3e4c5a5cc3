package scoring

// weigh checks a scorer's scores (col) against its range [0, limit],
// weights them in place (× w) and adds them to the totals: the first
// scorer's as 0 + its weighted score, which is that score but for −0,
// which becomes +0 (a total is never −0); the others' in order. It
// returns the first node whose score is outside the range (NaN too),
// before weighting it, or −1. A build with kernels (kernel_amd64.go) does
// it several nodes at a time, to the same bits.
func weigh(col, totals []float64, w, limit float64, first bool) int {
	done := weighKernel(col, totals, w, limit, first)
	return weighScalar(col[done:], totals[done:], w, limit, first, done)
}

// weighScalar is weigh one node at a time, the reference; offset is added
// to the index it returns.
func weighScalar(col, totals []float64, w, limit float64, first bool, offset int) int {
	totals = totals[:len(col)]
	for i, x := range col {
		if !(x >= 0 && x <= limit) { // NaN fails too
			return offset + i
		}
		y := x * w
		col[i] = y
		if first {
			totals[i] = 0 + y
		} else {
			totals[i] += y
		}
	}
	return -1
}
