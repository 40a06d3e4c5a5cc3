//go:build goexperiment.simd && amd64

package sra

import (
	"simd/archsimd"

	"github.com/resfit/resfit/resource"
)

// The kernels of a GOEXPERIMENT=simd build: eight nodes at a time over a
// table's columns with AVX-512, the scalar loop's float64 operations in
// its order, lane by lane (a resource the node lacks adds +0 where the
// scalar loop adds nothing), so the same bits on every input. Without
// AVX-512 they report false and the scalar loops run.
var useAVX512 = archsimd.X86.AVX512()

// retentionKernel scores len(out) nodes as Retention.node does.
func retentionKernel(r *Retention, requested []int, cols resource.Columns, out []float64) bool {
	if !useAVX512 {
		return false
	}
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
	var alloc [resource.MaxResources]int64
	for j := whole; j < n; j++ {
		for _, s := range requested {
			alloc[s] = cols.Allocatable[s*cols.Stride+j]
		}
		for _, s := range r.scarce {
			alloc[s.slot] = cols.Allocatable[s.slot*cols.Stride+j]
		}
		out[j] = r.node(requested, alloc[:r.k])
	}
	return true
}

// proportionalKernel finds the nodes Proportional.node fails, eight at a
// time, and calls reject for each, in order, with the Failure node gives.
func proportionalKernel(p *Proportional, req []int64, rows resource.Rows, n int, reject func(int, Failure)) bool {
	if !useAVX512 {
		return false
	}
	cols, k := rows.Columns, p.k
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
		for bits, j := fails.ToBits(), i; bits != 0; bits, j = bits>>1, j+1 {
			if bits&1 != 0 {
				if ok, f := p.node(req, rows.Allocatable[j*k:j*k+k], rows.Used[j*k:j*k+k]); !ok {
					reject(j, f)
				}
			}
		}
	}
	for j := whole; j < n; j++ {
		if ok, f := p.node(req, rows.Allocatable[j*k:j*k+k], rows.Used[j*k:j*k+k]); !ok {
			reject(j, f)
		}
	}
	return true
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
