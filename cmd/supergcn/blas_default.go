//go:build !(openblas || mkl) || !cgo

package main

// reexecForBLAS has nothing to do without OpenBLAS (gonum's pure-Go BLAS
// has no core selection); see blas_openblas.go.
func reexecForBLAS() {}
