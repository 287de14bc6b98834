//go:build !(openblas || mkl) || !cgo

package main

// reexecForBLAS has nothing to do without OpenBLAS (gonum's pure-Go BLAS
// has no core selection); see blas_openblas.go.
func reexecForBLAS() {}

// checkBLASAddressSpace has nothing to check for gonum's pure-Go BLAS (its
// allocations fail with a Go error when address space runs out).
func checkBLASAddressSpace(int) error { return nil }
