//go:build !amd64 || noasm

package dense

// archKernels: no micro-kernels on this architecture (or with noasm):
// every product runs on the BLAS.
func archKernels() *tileKernels { return nil }

// archColSums: no column-sum kernel on this architecture (or with noasm).
func archColSums() func(acc *float64, m *float32, rows, cols, stride int) { return nil }
