//go:build noasm

package aggr

// platformKernels: under the noasm build tag no assembly is compiled on any
// architecture, and the pure-Go twins accumRowsGeneric/accumRowsWGeneric
// (kernels_generic.go) are the only kernels.
func platformKernels() []kernel { return nil }
