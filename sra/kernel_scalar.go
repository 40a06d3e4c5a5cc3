//go:build !(goexperiment.simd && amd64)

package sra

import "github.com/resfit/resfit/resource"

// This build has no kernels: the retention score and the proportional
// filter run their scalar loops.

// retentionKernel reports false: there is no kernel.
func retentionKernel(*Retention, []int, resource.Columns, []float64) bool { return false }

// proportionalKernel reports false: there is no kernel.
func proportionalKernel(*Proportional, []int64, resource.Rows, int, func(int, Failure)) bool {
	return false
}
