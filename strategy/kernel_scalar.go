//go:build !(goexperiment.simd && amd64)

package strategy

import "github.com/resfit/resfit/resource"

// This build has no kernels (see kernel.go): every scorer runs its scalar
// loop.

const kernelName = "scalar"

// fitKernel reports false: there is no kernel to score with.
func fitKernel([]taskSlot, resource.Columns, []float64, bool) bool { return false }

// volcanoKernel reports false: there is no kernel to score with.
func volcanoKernel([]taskSlot, resource.Columns, float64, []float64) bool { return false }

// rtcrKernel reports false: there is no kernel to score with.
func rtcrKernel([]taskSlot, []ShapePoint, resource.Columns, []float64) bool { return false }

// balancedKernel reports false: there is no kernel to score with.
func balancedKernel([]taskSlot, resource.Columns, []float64) bool { return false }
