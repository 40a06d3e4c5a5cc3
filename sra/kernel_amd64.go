//go:build goexperiment.simd && amd64

package sra

import (
	"simd/archsimd"

	"github.com/resfit/resfit/internal/vector"
	"github.com/resfit/resfit/resource"
)

// The kernels of a GOEXPERIMENT=simd build: eight nodes at a time over a
// table's columns with AVX-512, four with AVX2, the scalar loop's float64
// operations in its order, lane by lane (a resource the node lacks adds
// +0 where the scalar loop adds nothing), so the same bits on every
// input. Without either they report false and the scalar loops run.
var (
	useAVX512 = vector.AVX512
	useAVX2   = vector.AVX2
)

// retentionKernel scores len(out) nodes as Retention.node does.
func retentionKernel(r *Retention, requested []int, cols resource.Columns, out []float64) bool {
	switch {
	case useAVX512:
		retentionAVX512(r, requested, cols, out)
	case useAVX2:
		retentionAVX2(r, requested, cols, out)
	default:
		return false
	}
	return true
}

func retentionAVX512(r *Retention, requested []int, cols resource.Columns, out []float64) {
	n := len(out)
	whole := n &^ 7
	zero := archsimd.BroadcastFloat64x8(0)
	izero := archsimd.BroadcastInt64x8(0)
	one := archsimd.BroadcastFloat64x8(1)
	scale := archsimd.BroadcastFloat64x8(float64(MaxNodeScore * r.weight))
	for i := 0; i < whole; i += 8 {
		var lacks archsimd.Mask64x8
		for _, s := range requested {
			lacks = lacks.Or(archsimd.LoadInt64x8Slice(cols.Allocatable[s*cols.Stride+i : s*cols.Stride+i+8]).Equal(izero))
		}
		score := zero
		for _, s := range r.scarce {
			at := s.slot*cols.Stride + i
			has := archsimd.LoadInt64x8Slice(cols.Allocatable[at : at+8]).Greater(izero)
			score = score.Add(archsimd.BroadcastFloat64x8(float64(s.weight)).Masked(has))
		}
		if r.weightSum > 0 {
			score = one.Sub(score.Div(archsimd.BroadcastFloat64x8(float64(r.weightSum))))
		}
		zero.Merge(score.Mul(scale), lacks).StoreSlice(out[i : i+8])
	}
	retentionTail(r, requested, cols, out, whole)
}

// retentionTail scores the nodes from whole on with Retention.node.
func retentionTail(r *Retention, requested []int, cols resource.Columns, out []float64, whole int) {
	var alloc [resource.MaxResources]int64
	for j := whole; j < len(out); j++ {
		for _, s := range requested {
			alloc[s] = cols.Allocatable[s*cols.Stride+j]
		}
		for _, s := range r.scarce {
			alloc[s.slot] = cols.Allocatable[s.slot*cols.Stride+j]
		}
		out[j] = r.node(requested, alloc[:r.k])
	}
}

// retentionAVX2 is retentionAVX512 four nodes at a time.
func retentionAVX2(r *Retention, requested []int, cols resource.Columns, out []float64) {
	whole := len(out) &^ 3
	zero := archsimd.BroadcastFloat64x4(0)
	izero := archsimd.BroadcastInt64x4(0)
	one := archsimd.BroadcastFloat64x4(1)
	scale := archsimd.BroadcastFloat64x4(float64(MaxNodeScore * r.weight))
	for i := 0; i < whole; i += 4 {
		var lacks archsimd.Mask64x4
		for _, s := range requested {
			lacks = lacks.Or(archsimd.LoadInt64x4Slice(cols.Allocatable[s*cols.Stride+i : s*cols.Stride+i+4]).Equal(izero))
		}
		score := zero
		for _, s := range r.scarce {
			at := s.slot*cols.Stride + i
			has := archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4]).Greater(izero)
			score = score.Add(archsimd.BroadcastFloat64x4(float64(s.weight)).Masked(has))
		}
		if r.weightSum > 0 {
			score = one.Sub(score.Div(archsimd.BroadcastFloat64x4(float64(r.weightSum))))
		}
		zero.Merge(score.Mul(scale), lacks).StoreSlice(out[i : i+4])
	}
	retentionTail(r, requested, cols, out, whole)
}

// proportionalKernel finds the nodes Proportional.node fails, several at
// a time, and calls reject for each, in order, with the Failure node
// gives.
func proportionalKernel(p *Proportional, req []int64, rows resource.Rows, n int, reject func(int, Failure)) bool {
	switch {
	case useAVX512:
		proportionalAVX512(p, req, rows, n, reject)
	case useAVX2:
		proportionalAVX2(p, req, rows, n, reject)
	default:
		return false
	}
	return true
}

func proportionalAVX512(p *Proportional, req []int64, rows resource.Rows, n int, reject func(int, Failure)) {
	cols := rows.Columns
	whole := n &^ 7
	izero := archsimd.BroadcastInt64x8(0)
	thousand := archsimd.BroadcastFloat64x8(1000)
	var reqCPU, reqMem int64
	if p.cpu >= 0 {
		reqCPU = req[p.cpu]
	}
	if p.memory >= 0 {
		reqMem = req[p.memory]
	}
	for i := 0; i < whole; i += 8 {
		cpuLeft := idle8(cols, p.cpu, i).Sub(archsimd.BroadcastInt64x8(reqCPU)).ConvertToFloat64()
		memLeft := idle8(cols, p.memory, i).Sub(archsimd.BroadcastInt64x8(reqMem)).ConvertToFloat64()
		var fails archsimd.Mask64x8
		for _, r := range p.ratios {
			at := r.slot*cols.Stride + i
			alloc := archsimd.LoadInt64x8Slice(cols.Allocatable[at : at+8])
			value := alloc.Sub(archsimd.LoadInt64x8Slice(cols.Used[at : at+8])).ConvertToFloat64()
			short := cpuLeft.Less(value.Mul(archsimd.BroadcastFloat64x8(r.cpu))).
				Or(memLeft.Less(value.Mul(archsimd.BroadcastFloat64x8(r.memory)).Mul(thousand).Mul(thousand)))
			fails = fails.Or(short.And(alloc.NotEqual(izero)))
		}
		checkNominated(p, req, rows, i, fails.ToBits(), reject)
	}
	checkNominated(p, req, rows, whole, 1<<(n-whole)-1, reject)
}

// checkNominated checks alone the nodes from i that bits nominates (bit b
// for node i+b), calling reject for each that fails.
func checkNominated(p *Proportional, req []int64, rows resource.Rows, i int, bits uint8, reject func(int, Failure)) {
	k := p.k
	for j := i; bits != 0; bits, j = bits>>1, j+1 {
		if bits&1 != 0 {
			if ok, f := p.node(req, rows.Allocatable[j*k:j*k+k], rows.Used[j*k:j*k+k]); !ok {
				reject(j, f)
			}
		}
	}
}

// proportionalAVX2 is proportionalAVX512 four nodes at a time. It converts
// amounts by the exponent trick, exact in [0, 2^52): a block with an idle
// amount, or what is left after the request, outside that range has each
// of its nodes checked alone.
func proportionalAVX2(p *Proportional, req []int64, rows resource.Rows, n int, reject func(int, Failure)) {
	cols := rows.Columns
	whole := n &^ 3
	izero := archsimd.BroadcastInt64x4(0)
	outside := archsimd.BroadcastInt64x4(-1 << 52)
	thousand := archsimd.BroadcastFloat64x4(1000)
	var reqCPU, reqMem int64
	if p.cpu >= 0 {
		reqCPU = req[p.cpu]
	}
	if p.memory >= 0 {
		reqMem = req[p.memory]
	}
	for i := 0; i < whole; i += 4 {
		cpuLeft := idle4(cols, p.cpu, i).Sub(archsimd.BroadcastInt64x4(reqCPU))
		memLeft := idle4(cols, p.memory, i).Sub(archsimd.BroadcastInt64x4(reqMem))
		seen := cpuLeft.Or(memLeft)
		cpuF, memF := vector.Float4(cpuLeft), vector.Float4(memLeft)
		var fails archsimd.Mask64x4
		for _, r := range p.ratios {
			at := r.slot*cols.Stride + i
			alloc := archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4])
			idle := alloc.Sub(archsimd.LoadInt64x4Slice(cols.Used[at : at+4]))
			seen = seen.Or(idle)
			value := vector.Float4(idle)
			short := cpuF.Less(value.Mul(archsimd.BroadcastFloat64x4(r.cpu))).
				Or(memF.Less(value.Mul(archsimd.BroadcastFloat64x4(r.memory)).Mul(thousand).Mul(thousand)))
			fails = fails.Or(short.And(alloc.Greater(izero).Or(izero.Greater(alloc))))
		}
		bits := fails.ToBits()
		if seen.And(outside).Equal(izero).ToBits() != 0b1111 {
			bits = 0b1111 // out of the exact range: every node alone
		}
		checkNominated(p, req, rows, i, bits, reject)
	}
	checkNominated(p, req, rows, whole, 1<<(n-whole)-1, reject)
}

// idle4 is idle8 for the four nodes from i.
func idle4(cols resource.Columns, slot, i int) archsimd.Int64x4 {
	if slot < 0 {
		return archsimd.BroadcastInt64x4(0)
	}
	at := slot*cols.Stride + i
	return archsimd.LoadInt64x4Slice(cols.Allocatable[at : at+4]).Sub(archsimd.LoadInt64x4Slice(cols.Used[at : at+4]))
}

// idle8 is allocatable − used of a slot for the eight nodes from i; 0
// for a slot the schema lacks (-1).
func idle8(cols resource.Columns, slot, i int) archsimd.Int64x8 {
	if slot < 0 {
		return archsimd.BroadcastInt64x8(0)
	}
	at := slot*cols.Stride + i
	return archsimd.LoadInt64x8Slice(cols.Allocatable[at : at+8]).Sub(archsimd.LoadInt64x8Slice(cols.Used[at : at+8]))
}
