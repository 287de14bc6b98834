//go:build !(openblas && cgo)

package dense

// Backend describes the BLAS implementation behind Gemm.
func Backend() string { return "gonum (pure Go)" }
