//go:build !(openblas && cgo)

package dense

// Backend describes the BLAS implementation behind Gemm.
func Backend() string { return "gonum (pure Go)" }

// BLAS names the BLAS library behind Gemm (gonum's pure-Go one here: no
// configuration, no core selection).
func BLAS() (name, config, core string) { return "gonum", "pure Go", "" }
