//go:build goexperiment.simd && amd64

package strategy

import (
	"math"
	"simd/archsimd"

	"github.com/resfit/resfit/internal/vector"
	"github.com/resfit/resfit/resource"
)

// The kernels of a GOEXPERIMENT=simd build (see kernel.go), chosen once by
// the CPU's features (package vector).
var (
	useAVX512  = vector.AVX512
	useAVX2    = vector.AVX2
	kernelName = vector.Name()
)

// fitKernel scores len(out) nodes of cols as kubeFitNode scores each (as
// koordinatorNode does, with koordinator), and reports whether it did
// (false: this CPU has no kernel).
func fitKernel(slots []taskSlot, cols resource.Columns, out []float64, koordinator bool) bool {
	switch {
	case useAVX512:
		fitAVX512(slots, cols, out, koordinator)
	case useAVX2:
		fitAVX2(slots, cols, out, koordinator)
	default:
		return false
	}
	return true
}

// fitAVX512 scores eight nodes at a time. Per resource it loads the
// nodes' capacity and used amounts, adds the request, and divides as
// MostRequestedScore or LeastRequestedScore do, in float64 (div8); the
// weighted mean divides the same way. A block with an amount outside [0,
// 2^exactBits) goes to the scalar code. koordinator counts the weight of
// a resource the node lacks (Koordinator's rule; kube-scheduler skips it).
func fitAVX512(slots []taskSlot, cols resource.Columns, out []float64, koordinator bool) {
	n := len(out)
	whole := n &^ 7
	zero := archsimd.BroadcastFloat64x8(0)
	one := archsimd.BroadcastFloat64x8(1)
	hundred := archsimd.BroadcastFloat64x8(MaxNodeScore)
	outside := archsimd.BroadcastInt64x8(-1 << exactBits)
	for i := 0; i < whole; i += 8 {
		score, weights := zero, zero
		var seen archsimd.Int64x8
		for _, s := range slots {
			at := s.slot*cols.Stride + i
			capacity := archsimd.LoadInt64x8Slice(cols.Allocatable[at : at+8])
			requested := archsimd.LoadInt64x8Slice(cols.Used[at : at+8]).Add(archsimd.BroadcastInt64x8(s.req))
			var numerator archsimd.Int64x8
			counted := capacity.NotEqual(archsimd.BroadcastInt64x8(0))
			if s.typ == MostAllocated {
				numerator = requested.Min(capacity)
			} else {
				counted = counted.And(requested.LessEqual(capacity))
				numerator = capacity.Sub(requested)
			}
			seen = seen.Or(capacity).Or(requested)
			c := capacity.ConvertToFloat64().Max(one)
			q := div8(numerator.ConvertToFloat64().Mul(hundred), c)
			w := archsimd.BroadcastFloat64x8(float64(s.weight))
			// A resource the node does not have counts for nothing; one
			// over capacity (LeastAllocated) scores 0 with its weight.
			score = score.Add(q.Mul(w).Masked(counted))
			if koordinator {
				weights = weights.Add(w)
			} else {
				weights = weights.Add(w.Masked(capacity.NotEqual(archsimd.BroadcastInt64x8(0))))
			}
		}
		if seen.And(outside).NotEqual(archsimd.BroadcastInt64x8(0)).ToBits() != 0 {
			for j := i; j < i+8; j++ {
				out[j] = float64(fitColumn(slots, cols, j, koordinator))
			}
			continue
		}
		div8(score, weights.Max(one)).StoreSlice(out[i : i+8])
	}
	for j := whole; j < n; j++ {
		out[j] = float64(fitColumn(slots, cols, j, koordinator))
	}
}

// div8 is ⌊n/d⌋ for integers 0 ≤ n ≤ 100·d, 1 ≤ d < 2^exactBits: the
// float quotient truncated. n and d are exact in float64 (below 2^53), so
// the quotient x = n/d is rounded once. When x is an integer the rounding
// keeps it; otherwise x lies at least 1/d > 2^-46 below the next integer,
// and a quotient below 128 rounds by at most half its ulp, 2^-47, so it
// never reaches that integer. Both of the kernels' divisions are of this
// kind: a score's (n = amount × 100, d = capacity) and the weighted
// mean's (n ≤ 100·d, d = Σ weights ≤ 64·10^6 < 2^26).
func div8(n, d archsimd.Float64x8) archsimd.Float64x8 {
	return n.Div(d).TruncScaled(0)
}

// fitAVX2 is fitAVX512 four nodes at a time, with what AVX2 has:
// no int64 minimum or conversion, so it converts by the exponent trick
// (an integer in [0, 2^52) or'ed into 2^52's bits is 2^52 + it) after
// checking the range, and compares in float64.
func fitAVX2(slots []taskSlot, cols resource.Columns, out []float64, koordinator bool) {
	n := len(out)
	whole := n &^ 3
	zero := archsimd.BroadcastFloat64x4(0)
	one := archsimd.BroadcastFloat64x4(1)
	hundred := archsimd.BroadcastFloat64x4(MaxNodeScore)
	outside := archsimd.BroadcastInt64x4(-1 << exactBits)
	izero := archsimd.BroadcastInt64x4(0)
	for i := 0; i < whole; i += 4 {
		score, weights := zero, zero
		var seen archsimd.Int64x4
		for _, s := range slots {
			at := s.slot*cols.Stride + i
			capacity := archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4])
			requested := archsimd.LoadInt64x4Slice(cols.Used[at : at+4]).Add(archsimd.BroadcastInt64x4(s.req))
			seen = seen.Or(capacity).Or(requested)
			c, r := vector.Float4(capacity), vector.Float4(requested)
			has := c.NotEqual(zero)
			var numerator archsimd.Float64x4
			counted := has
			if s.typ == MostAllocated {
				numerator = r.Min(c)
			} else {
				counted = counted.And(r.LessEqual(c))
				numerator = c.Sub(r)
			}
			q := div4(numerator.Mul(hundred), c.Max(one))
			w := archsimd.BroadcastFloat64x4(float64(s.weight))
			score = score.Add(q.Mul(w).Masked(counted))
			if koordinator {
				weights = weights.Add(w)
			} else {
				weights = weights.Add(w.Masked(has))
			}
		}
		if seen.And(outside).Equal(izero).ToBits() != 0b1111 {
			for j := i; j < i+4; j++ {
				out[j] = float64(fitColumn(slots, cols, j, koordinator))
			}
			continue
		}
		div4(score, weights.Max(one)).StoreSlice(out[i : i+4])
	}
	for j := whole; j < n; j++ {
		out[j] = float64(fitColumn(slots, cols, j, koordinator))
	}
}

// div4 is div8 four lanes wide, truncating with VROUNDPD.
func div4(n, d archsimd.Float64x4) archsimd.Float64x4 {
	return n.Div(d).Trunc()
}

// volcanoKernel scores len(out) nodes of cols as volcanoNode scores each,
// times scale, and reports whether it did (false: this CPU has no kernel).
func volcanoKernel(slots []taskSlot, cols resource.Columns, scale float64, out []float64) bool {
	switch {
	case useAVX512:
		volcanoAVX512(slots, cols, scale, out)
	case useAVX2:
		volcanoAVX2(slots, cols, scale, out)
	default:
		return false
	}
	return true
}

// volcanoAVX512 is volcanoNode eight nodes at a time: the same float64
// operations in the same order, lane by lane, so the same bits on every
// input (VCVTQQ2PD rounds an int64 as Go's conversion does). A node with
// a resource over capacity scores 0. The sum of weights is the same for
// every node.
func volcanoAVX512(slots []taskSlot, cols resource.Columns, scale float64, out []float64) {
	n := len(out)
	whole := n &^ 7
	zero := archsimd.BroadcastFloat64x8(0)
	izero := archsimd.BroadcastInt64x8(0)
	var weightSum int64
	for _, s := range slots {
		weightSum += s.weight
	}
	for i := 0; i < whole; i += 8 {
		score := zero
		var over archsimd.Mask64x8
		for _, s := range slots {
			if s.weight == 0 {
				continue
			}
			at := s.slot*cols.Stride + i
			capacity := archsimd.LoadInt64x8Slice(cols.Allocatable[at : at+8])
			has := capacity.NotEqual(izero)
			usedFinally := archsimd.BroadcastFloat64x8(float64(s.req)).Add(archsimd.LoadInt64x8Slice(cols.Used[at : at+8]).ConvertToFloat64())
			c := capacity.ConvertToFloat64()
			over = over.Or(usedFinally.Greater(c).And(has))
			w := archsimd.BroadcastFloat64x8(float64(s.weight))
			var part archsimd.Float64x8
			if s.typ == MostAllocated {
				part = usedFinally.Mul(w).Div(c)
			} else {
				part = c.Sub(usedFinally).Mul(w).Div(c)
			}
			score = score.Add(part.Masked(has))
		}
		if weightSum > 0 {
			score = score.Div(archsimd.BroadcastFloat64x8(float64(weightSum)))
		}
		zero.Merge(score.Mul(archsimd.BroadcastFloat64x8(scale)), over).StoreSlice(out[i : i+8])
	}
	for j := whole; j < n; j++ {
		out[j] = volcanoColumn(slots, cols, j) * scale
	}
}

// volcanoAVX2 is volcanoAVX512 four nodes at a time. It converts amounts
// by the exponent trick (vector.Float4), exact below 2^52; a block with an amount
// at or above that, or below 0, goes to the scalar code.
func volcanoAVX2(slots []taskSlot, cols resource.Columns, scale float64, out []float64) {
	n := len(out)
	whole := n &^ 3
	zero := archsimd.BroadcastFloat64x4(0)
	izero := archsimd.BroadcastInt64x4(0)
	outside := archsimd.BroadcastInt64x4(-1 << 52)
	var weightSum int64
	for _, s := range slots {
		weightSum += s.weight
	}
	for i := 0; i < whole; i += 4 {
		score := zero
		var over archsimd.Mask64x4
		var seen archsimd.Int64x4
		for _, s := range slots {
			if s.weight == 0 {
				continue
			}
			at := s.slot*cols.Stride + i
			capacity := archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4])
			used := archsimd.LoadInt64x4Slice(cols.Used[at : at+4])
			seen = seen.Or(capacity).Or(used)
			c := vector.Float4(capacity)
			has := c.NotEqual(zero)
			usedFinally := archsimd.BroadcastFloat64x4(float64(s.req)).Add(vector.Float4(used))
			over = over.Or(usedFinally.Greater(c).And(has))
			w := archsimd.BroadcastFloat64x4(float64(s.weight))
			var part archsimd.Float64x4
			if s.typ == MostAllocated {
				part = usedFinally.Mul(w).Div(c)
			} else {
				part = c.Sub(usedFinally).Mul(w).Div(c)
			}
			score = score.Add(part.Masked(has))
		}
		if seen.And(outside).Equal(izero).ToBits() != 0b1111 {
			for j := i; j < i+4; j++ {
				out[j] = volcanoColumn(slots, cols, j) * scale
			}
			continue
		}
		if weightSum > 0 {
			score = score.Div(archsimd.BroadcastFloat64x4(float64(weightSum)))
		}
		zero.Merge(score.Mul(archsimd.BroadcastFloat64x4(scale)), over).StoreSlice(out[i : i+4])
	}
	for j := whole; j < n; j++ {
		out[j] = volcanoColumn(slots, cols, j) * scale
	}
}

// rtcrKernel scores len(out) nodes of cols as RequestedToCapacityRatio's
// node does, over shape (scores ×10), and reports whether it did.
func rtcrKernel(slots []taskSlot, shape []ShapePoint, cols resource.Columns, out []float64) bool {
	switch {
	case useAVX512:
		rtcrAVX512(slots, shape, cols, out)
	case useAVX2:
		rtcrAVX2(slots, shape, cols, out)
	default:
		return false
	}
	return true
}

// rtcrAVX512 is RequestedToCapacityRatio eight nodes at a time: the
// utilisation divided as div8 divides (exact below 2^exactBits; other
// blocks go to the scalar code), the shape's segments evaluated from the
// last to the first so that the first one the utilisation is within wins,
// each a quotient of integers below 10^4 by one at most 100 truncated
// towards 0 as Go's division does, and the mean rounded half away from 0
// as math.Round does (its fraction, x − ⌊x⌋, is exact).
func rtcrAVX512(slots []taskSlot, shape []ShapePoint, cols resource.Columns, out []float64) {
	n := len(out)
	whole := n &^ 7
	zero := archsimd.BroadcastFloat64x8(0)
	one := archsimd.BroadcastFloat64x8(1)
	hundred := archsimd.BroadcastFloat64x8(100)
	izero := archsimd.BroadcastInt64x8(0)
	outside := archsimd.BroadcastInt64x8(-1 << exactBits)
	last := archsimd.BroadcastFloat64x8(float64(shape[len(shape)-1].Score))
	for i := 0; i < whole; i += 8 {
		score, weights := zero, zero
		var seen archsimd.Int64x8
		for _, s := range slots {
			at := s.slot*cols.Stride + i
			capacity := archsimd.LoadInt64x8Slice(cols.Allocatable[at : at+8])
			requested := archsimd.LoadInt64x8Slice(cols.Used[at : at+8]).Add(archsimd.BroadcastInt64x8(s.req))
			seen = seen.Or(capacity).Or(requested)
			has := capacity.NotEqual(izero)
			c := capacity.ConvertToFloat64()
			fits := requested.LessEqual(capacity)
			// Truncated by converting to int64 and back (VCVTTPD2QQ), as
			// div8's VRNDSCALEPD merged under a mask does not assemble in
			// Go 1.26.
			u := requested.ConvertToFloat64().Mul(hundred).Div(c.Max(one)).ConvertToInt64().ConvertToFloat64().Merge(hundred, fits)
			rs := last
			for k := len(shape) - 1; k >= 0; k-- {
				pt := shape[k]
				within := u.LessEqual(archsimd.BroadcastFloat64x8(float64(pt.Utilization)))
				v := archsimd.BroadcastFloat64x8(float64(pt.Score))
				if k > 0 {
					prev := shape[k-1]
					rise := archsimd.BroadcastFloat64x8(float64(pt.Score - prev.Score))
					run := archsimd.BroadcastFloat64x8(float64(pt.Utilization - prev.Utilization))
					step := rise.Mul(u.Sub(archsimd.BroadcastFloat64x8(float64(prev.Utilization)))).Div(run).TruncScaled(0)
					v = archsimd.BroadcastFloat64x8(float64(prev.Score)).Add(step)
				}
				rs = v.Merge(rs, within)
			}
			counts := rs.Greater(zero).And(has)
			w := archsimd.BroadcastFloat64x8(float64(s.weight))
			score = score.Add(rs.Mul(w).Masked(counts))
			weights = weights.Add(w.Masked(counts))
		}
		if seen.And(outside).NotEqual(izero).ToBits() != 0 {
			for j := i; j < i+8; j++ {
				out[j] = float64(rtcrColumn(slots, shape, cols, j))
			}
			continue
		}
		x := score.Div(weights.Max(one))
		t := x.TruncScaled(0)
		rounded := t.Add(one.Masked(x.Sub(t).GreaterEqual(archsimd.BroadcastFloat64x8(0.5))))
		rounded.Masked(weights.Greater(zero)).StoreSlice(out[i : i+8])
	}
	for j := whole; j < n; j++ {
		out[j] = float64(rtcrColumn(slots, shape, cols, j))
	}
}

// balancedKernel scores len(out) nodes of cols as balancedNode does, and
// reports whether it did.
func balancedKernel(slots []taskSlot, cols resource.Columns, out []float64) bool {
	switch {
	case useAVX512:
		balancedAVX512(slots, cols, out)
	case useAVX2:
		balancedAVX2(slots, cols, out)
	default:
		return false
	}
	return true
}

// balancedAVX512 is balancedNode eight nodes at a time: the same float64
// operations in the same order lane by lane (a resource the node lacks
// adds +0 where the scalar code adds nothing), the formula chosen per
// node by how many resources it has, so the same bits on every input.
func balancedAVX512(slots []taskSlot, cols resource.Columns, out []float64) {
	n := len(out)
	whole := n &^ 7
	half := archsimd.BroadcastFloat64x8(MaxNodeScore / 2)
	two := archsimd.BroadcastFloat64x8(2)
	for i := 0; i < whole; i += 8 {
		with := balance8(slots, cols, i, true)
		without := balance8(slots, cols, i, false)
		half.Add(half.Add(with).Sub(without).Div(two).TruncScaled(0)).StoreSlice(out[i : i+8])
	}
	for j := whole; j < n; j++ {
		out[j] = float64(balancedColumn(slots, cols, j))
	}
}

// balance8 is balance for the eight nodes from i.
func balance8(slots []taskSlot, cols resource.Columns, i int, withPod bool) archsimd.Float64x8 {
	zero := archsimd.BroadcastFloat64x8(0)
	one := archsimd.BroadcastFloat64x8(1)
	two := archsimd.BroadcastFloat64x8(2)
	count, total, first, second := zero, zero, zero, zero
	for _, s := range slots {
		f, has := fraction8(s, cols, i, withPod)
		f = f.Masked(has)
		first = f.Merge(first, has.And(count.Equal(zero)))
		second = f.Merge(second, has.And(count.Equal(one)))
		total = total.Add(f)
		count = count.Add(one.Masked(has))
	}
	mean := total.Div(count.Max(one))
	sum := zero
	for _, s := range slots {
		f, has := fraction8(s, cols, i, withPod)
		d := f.Sub(mean)
		sum = sum.Add(d.Mul(d).Masked(has))
	}
	std := sum.Div(count.Max(one)).Sqrt().Masked(count.Greater(two))
	// |x| by clearing the sign bit, as math.Abs does.
	pair := first.Sub(second).Div(two).AsInt64x8().And(archsimd.BroadcastInt64x8(math.MaxInt64)).AsFloat64x8()
	std = pair.Merge(std, count.Equal(two))
	return one.Sub(std).Mul(archsimd.BroadcastFloat64x8(MaxNodeScore)).TruncScaled(0)
}

// fraction8 is fraction for the eight nodes from i, with where they have
// the resource.
func fraction8(s taskSlot, cols resource.Columns, i int, withPod bool) (archsimd.Float64x8, archsimd.Mask64x8) {
	at := s.slot*cols.Stride + i
	capacity := archsimd.LoadInt64x8Slice(cols.Allocatable[at : at+8])
	requested := archsimd.LoadInt64x8Slice(cols.Used[at : at+8])
	if withPod {
		requested = requested.Add(archsimd.BroadcastInt64x8(s.req))
	}
	f := requested.ConvertToFloat64().Div(capacity.ConvertToFloat64()).Min(archsimd.BroadcastFloat64x8(1))
	return f, capacity.NotEqual(archsimd.BroadcastInt64x8(0))
}

// rtcrAVX2 is rtcrAVX512 four nodes at a time; it converts amounts by the
// exponent trick (vector.Float4) once they are known to be in range, and
// compares them in float64.
func rtcrAVX2(slots []taskSlot, shape []ShapePoint, cols resource.Columns, out []float64) {
	n := len(out)
	whole := n &^ 3
	zero := archsimd.BroadcastFloat64x4(0)
	one := archsimd.BroadcastFloat64x4(1)
	hundred := archsimd.BroadcastFloat64x4(100)
	izero := archsimd.BroadcastInt64x4(0)
	outside := archsimd.BroadcastInt64x4(-1 << exactBits)
	last := archsimd.BroadcastFloat64x4(float64(shape[len(shape)-1].Score))
	for i := 0; i < whole; i += 4 {
		score, weights := zero, zero
		var seen archsimd.Int64x4
		for _, s := range slots {
			at := s.slot*cols.Stride + i
			capacity := archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4])
			requested := archsimd.LoadInt64x4Slice(cols.Used[at : at+4]).Add(archsimd.BroadcastInt64x4(s.req))
			seen = seen.Or(capacity).Or(requested)
			c, r := vector.Float4(capacity), vector.Float4(requested)
			has := c.NotEqual(zero)
			u := div4(r.Mul(hundred), c.Max(one)).Merge(hundred, r.LessEqual(c))
			rs := last
			for k := len(shape) - 1; k >= 0; k-- {
				pt := shape[k]
				within := u.LessEqual(archsimd.BroadcastFloat64x4(float64(pt.Utilization)))
				v := archsimd.BroadcastFloat64x4(float64(pt.Score))
				if k > 0 {
					prev := shape[k-1]
					rise := archsimd.BroadcastFloat64x4(float64(pt.Score - prev.Score))
					run := archsimd.BroadcastFloat64x4(float64(pt.Utilization - prev.Utilization))
					step := rise.Mul(u.Sub(archsimd.BroadcastFloat64x4(float64(prev.Utilization)))).Div(run).Trunc()
					v = archsimd.BroadcastFloat64x4(float64(prev.Score)).Add(step)
				}
				rs = v.Merge(rs, within)
			}
			counts := rs.Greater(zero).And(has)
			w := archsimd.BroadcastFloat64x4(float64(s.weight))
			score = score.Add(rs.Mul(w).Masked(counts))
			weights = weights.Add(w.Masked(counts))
		}
		if seen.And(outside).Equal(izero).ToBits() != 0b1111 {
			for j := i; j < i+4; j++ {
				out[j] = float64(rtcrColumn(slots, shape, cols, j))
			}
			continue
		}
		x := score.Div(weights.Max(one))
		t := x.Trunc()
		rounded := t.Add(one.Masked(x.Sub(t).GreaterEqual(archsimd.BroadcastFloat64x4(0.5))))
		rounded.Masked(weights.Greater(zero)).StoreSlice(out[i : i+4])
	}
	for j := whole; j < n; j++ {
		out[j] = float64(rtcrColumn(slots, shape, cols, j))
	}
}

// balancedAVX2 is balancedAVX512 four nodes at a time. Its amounts are
// converted by the exponent trick, exact below 2^52; a block with an
// amount (a requested one included) at or above that goes to the scalar
// code.
func balancedAVX2(slots []taskSlot, cols resource.Columns, out []float64) {
	n := len(out)
	whole := n &^ 3
	half := archsimd.BroadcastFloat64x4(MaxNodeScore / 2)
	two := archsimd.BroadcastFloat64x4(2)
	izero := archsimd.BroadcastInt64x4(0)
	outside := archsimd.BroadcastInt64x4(-1 << 52)
	for i := 0; i < whole; i += 4 {
		var seen archsimd.Int64x4
		for _, s := range slots {
			at := s.slot*cols.Stride + i
			seen = seen.Or(archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4])).
				Or(archsimd.LoadInt64x4Slice(cols.Used[at : at+4]).Add(archsimd.BroadcastInt64x4(s.req)))
		}
		if seen.And(outside).Equal(izero).ToBits() != 0b1111 {
			for j := i; j < i+4; j++ {
				out[j] = float64(balancedColumn(slots, cols, j))
			}
			continue
		}
		with := balance4(slots, cols, i, true)
		without := balance4(slots, cols, i, false)
		half.Add(half.Add(with).Sub(without).Div(two).Trunc()).StoreSlice(out[i : i+4])
	}
	for j := whole; j < n; j++ {
		out[j] = float64(balancedColumn(slots, cols, j))
	}
}

// balance4 is balance8 for the four nodes from i.
func balance4(slots []taskSlot, cols resource.Columns, i int, withPod bool) archsimd.Float64x4 {
	zero := archsimd.BroadcastFloat64x4(0)
	one := archsimd.BroadcastFloat64x4(1)
	two := archsimd.BroadcastFloat64x4(2)
	count, total, first, second := zero, zero, zero, zero
	for _, s := range slots {
		f, has := fraction4(s, cols, i, withPod)
		f = f.Masked(has)
		first = f.Merge(first, has.And(count.Equal(zero)))
		second = f.Merge(second, has.And(count.Equal(one)))
		total = total.Add(f)
		count = count.Add(one.Masked(has))
	}
	mean := total.Div(count.Max(one))
	sum := zero
	for _, s := range slots {
		f, has := fraction4(s, cols, i, withPod)
		d := f.Sub(mean)
		sum = sum.Add(d.Mul(d).Masked(has))
	}
	std := sum.Div(count.Max(one)).Sqrt().Masked(count.Greater(two))
	pair := first.Sub(second).Div(two).AsInt64x4().And(archsimd.BroadcastInt64x4(math.MaxInt64)).AsFloat64x4()
	std = pair.Merge(std, count.Equal(two))
	return one.Sub(std).Mul(archsimd.BroadcastFloat64x4(MaxNodeScore)).Trunc()
}

// fraction4 is fraction8 for the four nodes from i.
func fraction4(s taskSlot, cols resource.Columns, i int, withPod bool) (archsimd.Float64x4, archsimd.Mask64x4) {
	at := s.slot*cols.Stride + i
	capacity := vector.Float4(archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4]))
	requested := archsimd.LoadInt64x4Slice(cols.Used[at : at+4])
	if withPod {
		requested = requested.Add(archsimd.BroadcastInt64x4(s.req))
	}
	f := vector.Float4(requested).Div(capacity).Min(archsimd.BroadcastFloat64x4(1))
	return f, capacity.NotEqual(archsimd.BroadcastFloat64x4(0))
}
