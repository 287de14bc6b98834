//go:build !noasm

package quant

// archKernels returns the SIMD kernel sets this CPU supports, best first.
func archKernels() []kernels { return nil }
