//go:build (openblas || mkl) && cgo

package measure

// Under the openblas (or mkl) tag the benchmarks of this package time
// dense.Gemm on the BLAS the command links (dense/openblas), not on
// gonum's pure-Go one.
import _ "github.com/supergcn/supergcn/dense/openblas"
