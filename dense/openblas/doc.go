// Package openblas is the cgo binding to OpenBLAS behind dense.Gemm: built
// with the openblas tag (and cgo), importing it installs cblas_sgemm as
// gonum's blas32 Sgemm, with OpenBLAS's own threads off (dense splits
// products into blocks on the rank's thread budget). cmd/supergcn imports it
// under the tag; without the tag this package is empty and dense uses
// gonum's pure-Go BLAS.
package openblas
