// Package openblas is the cgo binding behind dense.Gemm to OpenBLAS (build
// tag openblas) or to Intel MKL (build tag mkl, through libmkl_rt): with
// cgo and one of the tags, importing it installs the library's cblas_sgemm
// as gonum's blas32 Sgemm, with the library's own threads off (dense splits
// products into blocks on the rank's thread budget). cmd/supergcn imports
// it under either tag; without them this package holds only the pure-Go
// core-type selection and dense uses gonum's pure-Go BLAS.
package openblas
