//go:build !(openblas && cgo)

package dense

// Backend describes the BLAS implementation behind Gemm.
func Backend() string { return "gonum (pure Go)" }

// SetThreads sets the BLAS thread count. gonum's Sgemm sizes its worker pool
// from runtime.GOMAXPROCS, so with this backend SetThreads does nothing.
func SetThreads(n int) {}

// Threads reports the BLAS thread count (0: decided by GOMAXPROCS, gonum).
func Threads() int { return 0 }
