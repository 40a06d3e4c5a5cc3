//go:build !(goexperiment.simd && amd64)

package strategy

import "github.com/resfit/resfit/resource"

// This build has no kernels (see kernel.go): every scorer runs its scalar
// loop.

const kernelName = "scalar"

// kubeFitKernel reports false: there is no kernel to score with.
func kubeFitKernel([]taskSlot, resource.Columns, []float64) bool { return false }
