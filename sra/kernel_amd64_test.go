//go:build goexperiment.simd && amd64

package sra

import (
	"testing"

	"pgregory.net/rapid"
)

// Each width of the kernels this CPU has is held to the row loops, as
// TestRowsMatchNodes holds the widest (the one a call dispatches to).
func TestKernelWidthsMatchNodes(t *testing.T) {
	if !useAVX512 && !useAVX2 {
		t.Skip("this CPU has neither AVX2 nor AVX-512")
	}
	saved512, saved2 := useAVX512, useAVX2
	defer func() { useAVX512, useAVX2 = saved512, saved2 }()
	widths := [][2]bool{{false, true}}
	if saved512 {
		widths = append(widths, [2]bool{true, false})
	}
	for _, w := range widths {
		useAVX512, useAVX2 = w[0], w[1]
		rapid.Check(t, checkRowsMatchNodes)
	}
}
