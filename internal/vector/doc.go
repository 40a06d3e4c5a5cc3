// Package vector is what the core's kernels share (strategy, sra and
// scoring's kernel_amd64.go files): which kernels this process runs,
// chosen once at start by the CPU's features, and the conversions every
// width needs. It holds code only in a GOEXPERIMENT=simd build on amd64;
// other builds have no kernels and do not import it.
package vector
