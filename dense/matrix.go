// Package dense holds the row-major float32 matrix that every numeric package
// exchanges, Gemm and the elementwise passes. It is Go (no cgo): Gemm calls
// gonum's blas32, into which the command installs OpenBLAS (dense/openblas,
// the `openblas` tag) where available, except for the narrow products X·W
// and G·Wᵀ of the layers, which run on Go-assembly micro-kernels where the
// CPU has AVX-512 (kernel.go).
package dense

import "fmt"

// Matrix is a row-major Rows×Cols float32 matrix; row i is
// Data[i*Cols : (i+1)*Cols]. The zero value is an empty 0×0 matrix.
type Matrix struct {
	Rows, Cols int
	Data       []float32
}

// New returns a zeroed rows×cols matrix.
func New(rows, cols int) *Matrix {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("dense.New: negative shape %d×%d", rows, cols))
	}
	return &Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// Row returns row i as a slice aliasing m.Data.
func (m *Matrix) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// Zero sets every element to 0.
func (m *Matrix) Zero() { clear(m.Data) }

// SameShape reports whether a and b have identical dimensions.
func SameShape(a, b *Matrix) bool { return a.Rows == b.Rows && a.Cols == b.Cols }

// Reshape returns m resized to rows×cols, reusing its storage when it is large
// enough (contents are then unspecified) and allocating otherwise.
func Reshape(m *Matrix, rows, cols int) *Matrix {
	if m == nil {
		return New(rows, cols)
	}
	n := rows * cols
	if cap(m.Data) < n {
		return New(rows, cols)
	}
	m.Rows, m.Cols, m.Data = rows, cols, m.Data[:n]
	return m
}
