//go:build goexperiment.simd && amd64

package strategy

import (
	"encoding/binary"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

// fataler is what the checks need of a *testing.T or a *rapid.T.
type fataler interface {
	Fatalf(format string, args ...any)
	Skip(args ...any)
}

// kernelWidths are this CPU's kernels, by name: each scorer's at that
// width.
type kernelWidth struct {
	fit      func([]taskSlot, resource.Columns, []float64, bool)
	volcano  func([]taskSlot, resource.Columns, float64, []float64)
	rtcr     func([]taskSlot, []ShapePoint, resource.Columns, []float64) // nil: none at this width
	balanced func([]taskSlot, resource.Columns, []float64)
}

func kernelWidths(t fataler) map[string]kernelWidth {
	ks := map[string]kernelWidth{}
	if useAVX512 {
		ks["avx512"] = kernelWidth{fitAVX512, volcanoAVX512, rtcrAVX512, balancedAVX512}
	}
	if useAVX512 || useAVX2 {
		ks["avx2"] = kernelWidth{fitAVX2, volcanoAVX2, rtcrAVX2, balancedAVX2}
	}
	if len(ks) == 0 {
		t.Skip("this CPU has neither AVX2 nor AVX-512")
	}
	return ks
}

// The scorers with kernels, as the tests draw them.
const (
	kindKube        = "kube"
	kindKoordinator = "koordinator"
	kindVolcano     = "volcano"
	kindRTCR        = "rtcr"
	kindBalanced    = "balanced"
)

// kernelAmount draws amounts from the whole range a table holds, [0,
// 2^53], weighted to the kernels' edges: 0, small, around 2^exactBits
// (where a block goes to the scalar code) and up to resource.MaxAmount.
func kernelAmount(t *rapid.T, label string) int64 {
	return rapid.OneOf(
		rapid.Just(int64(0)),
		rapid.Int64Range(1, 100),
		rapid.Int64Range(1, 1<<40),
		rapid.Int64Range(1<<exactBits-4, 1<<exactBits+4),
		rapid.Int64Range(1<<exactBits, resource.MaxAmount),
	).Draw(t, label)
}

// kernelCase is a block of nodes in columns, a task's slots, and the
// scorer (kind; scale for Volcano's).
type kernelCase struct {
	kind  string
	scale float64
	shape []ShapePoint // RequestedToCapacityRatio's, scores ×10
	slots []taskSlot
	cols  resource.Columns
	n     int
}

// reference scores every node with the scalar code on its row.
func (c kernelCase) reference() []float64 {
	k := len(c.cols.Allocatable) / c.cols.Stride
	out := make([]float64, c.n)
	alloc, used := make([]int64, k), make([]int64, k)
	for i := range c.n {
		for j := range k {
			alloc[j], used[j] = c.cols.Allocatable[j*c.cols.Stride+i], c.cols.Used[j*c.cols.Stride+i]
		}
		switch c.kind {
		case kindKube:
			out[i] = float64(kubeFitNode(c.slots, alloc, used))
		case kindKoordinator:
			out[i] = float64(koordinatorNode(c.slots, alloc, used))
		case kindVolcano:
			out[i] = volcanoNode(c.slots, alloc, used) * c.scale
		case kindRTCR:
			out[i] = float64(rtcrNode(c.slots, c.shape, alloc, used))
		case kindBalanced:
			out[i] = float64(balancedNode(c.slots, alloc, used))
		}
	}
	return out
}

// run scores the case with a kernel; false when the width has none for
// the scorer.
func (c kernelCase) run(k kernelWidth) ([]float64, bool) {
	got := make([]float64, c.n)
	switch c.kind {
	case kindKube, kindKoordinator:
		k.fit(c.slots, c.cols, got, c.kind == kindKoordinator)
	case kindVolcano:
		k.volcano(c.slots, c.cols, c.scale, got)
	case kindRTCR:
		if k.rtcr == nil {
			return nil, false
		}
		k.rtcr(c.slots, c.shape, c.cols, got)
	case kindBalanced:
		if k.balanced == nil {
			return nil, false
		}
		k.balanced(c.slots, c.cols, got)
	}
	return got, true
}

func checkKernels(t fataler, c kernelCase) {
	want := c.reference()
	for name, kernel := range kernelWidths(t) {
		got, ok := c.run(kernel)
		if !ok {
			continue
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s %s: node %d of %d: %v, scalar %v (slots %+v)", c.kind, name, i, c.n, got[i], want[i], c.slots)
			}
		}
	}
}

// The kernels give the scalar result on every node, to the bit, for
// KubeFit, KoordinatorFit, VolcanoFit, RequestedToCapacityRatio (any
// shape) and BalancedAllocation: either type per resource, any
// weights, amounts over the whole range, blocks with and without amounts
// the kernels leave to the scalar code, and a tail past the last whole
// block.
func TestKernelsMatchScalar(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]string{kindKube, kindKoordinator, kindVolcano, kindRTCR, kindBalanced}).Draw(t, "scorer")
		k := rapid.IntRange(1, 8).Draw(t, "resources")
		n := rapid.IntRange(0, 40).Draw(t, "nodes")
		stride := n + rapid.IntRange(0, 9).Draw(t, "room")
		c := kernelCase{kind: kind, n: n, cols: resource.Columns{Stride: max(stride, 1)}}
		c.scale = MaxNodeScore * float64(rapid.Int64Range(1, 100).Draw(t, "plugin weight"))
		c.cols.Allocatable = make([]int64, k*c.cols.Stride)
		c.cols.Used = make([]int64, k*c.cols.Stride)
		// Nodes alike in scale, as in a cluster, or each its own.
		scale := rapid.SampledFrom([]int64{0, 1 << 20, 1 << 45, 1 << 47, 1 << 48, resource.MaxAmount}).Draw(t, "scale")
		for j := range k {
			for i := range n {
				a := kernelAmount(t, "allocatable")
				if scale != 0 {
					a = rapid.Int64Range(0, scale).Draw(t, "allocatable in scale")
				}
				c.cols.Allocatable[j*c.cols.Stride+i] = a
				c.cols.Used[j*c.cols.Stride+i] = rapid.Int64Range(0, min(a+a/4+1, resource.MaxAmount)).Draw(t, "used")
			}
		}
		for j := range k {
			if !rapid.Bool().Draw(t, "scored") && len(c.slots) > 0 {
				continue
			}
			c.slots = append(c.slots, taskSlot{
				slot:   j,
				typ:    rapid.SampledFrom([]Type{MostAllocated, LeastAllocated}).Draw(t, "type"),
				weight: rapid.OneOf(rapid.Int64Range(1, 10), rapid.Int64Range(1, resource.MaxWeight)).Draw(t, "weight"),
				// Volcano's weights may be 0.
				req: kernelAmount(t, "request"),
			})
		}
		// Some nodes' requested amounts just below a score's step, where a
		// float quotient that rounded up would truncate to the step.
		for _, sl := range c.slots {
			for i := range n {
				at := sl.slot*c.cols.Stride + i
				capacity := c.cols.Allocatable[at]
				if capacity == 0 || !rapid.Bool().Draw(t, "below a step") {
					continue
				}
				step := rapid.Int64Range(1, MaxNodeScore).Draw(t, "step")
				if rapid.Bool().Draw(t, "one below") && step%2 != 0 && step%5 != 0 {
					// The closest a quotient comes to a step: 100·requested =
					// step·capacity − 1, for a capacity moved up to where
					// step·capacity ends in 01.
					for (step*capacity)%MaxNodeScore != 1 && capacity < resource.MaxAmount {
						capacity++
					}
					c.cols.Allocatable[at] = capacity
				}
				requested := (step*capacity - 1) / MaxNodeScore
				if step*capacity/step != capacity || requested < sl.req {
					continue // the product overflows, or the request alone is more
				}
				if sl.typ == LeastAllocated {
					requested = capacity - requested
				}
				c.cols.Used[at] = max(0, requested-sl.req)
			}
		}
		c.shape = kernelShape(t)
		if kind == kindVolcano && rapid.Bool().Draw(t, "a weight of 0") {
			c.slots[rapid.IntRange(0, len(c.slots)-1).Draw(t, "weightless")].weight = 0
		}
		checkKernels(t, c)
	})
}

// FuzzKernels holds the kernels to the scalar score on amounts read from
// the fuzzer's bytes: 8 bytes each, taken modulo 2^53 + 1, for 12 nodes of
// 2 resources (a whole block of 8 and a tail), MostAllocated on the first
// and LeastAllocated on the second, weights from the first two bytes;
// every scorer with kernels.
func FuzzKernels(f *testing.F) {
	f.Add([]byte{1, 2})
	f.Add(make([]byte, 2+8*(2*2*12+2)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		next := func() int64 {
			var b [8]byte
			n := copy(b[:], data)
			data = data[n:]
			return int64(binary.LittleEndian.Uint64(b[:]) % uint64(resource.MaxAmount+1))
		}
		w0, w1 := int64(data[0])+1, int64(data[1])+1
		data = data[2:]
		const n = 12
		c := kernelCase{n: n, cols: resource.Columns{Stride: n, Allocatable: make([]int64, 2*n), Used: make([]int64, 2*n)}}
		for i := range c.cols.Allocatable {
			c.cols.Allocatable[i], c.cols.Used[i] = next(), next()
		}
		c.slots = []taskSlot{{slot: 0, typ: MostAllocated, weight: w0, req: next()}, {slot: 1, typ: LeastAllocated, weight: w1, req: next()}}
		c.shape = []ShapePoint{{0, 100}, {30, 20}, {70, 90}, {100, 0}}
		for _, kind := range []string{kindKube, kindKoordinator, kindVolcano, kindRTCR, kindBalanced} {
			c.kind, c.scale = kind, MaxNodeScore
			checkKernels(t, c)
		}
	})
}

// kernelShape is a shape as RequestedToCapacityRatio holds it, its scores
// ×10.
func kernelShape(t *rapid.T) []ShapePoint {
	shape := drawShape(t)
	for i := range shape {
		shape[i].Score *= MaxNodeScore / MaxShapeScore
	}
	return shape
}
