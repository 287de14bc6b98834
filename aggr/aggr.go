// Package aggr holds the sparse aggregation operators of a full-batch GNN:
// CSR SpMM (weighted, unweighted, mean), its transpose for the backward pass,
// and COO index_add, with SIMD kernels chosen at start-up.
//
// The public API below is the seam the rest of supergcn uses; internals
// (kernels, threading) may change behind it.
package aggr

import (
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// Engine runs operators on a fixed number of goroutines.
type Engine struct {
	threads int
}

// New returns an engine using the given number of threads (≤ 0: GOMAXPROCS).
func New(threads int) *Engine { return &Engine{threads: threads} }

// Threads returns the number of worker goroutines.
func (e *Engine) Threads() int { return e.threads }

// Op is a sparse matrix prepared for repeated application: work partitions
// (and the transpose, when first needed) are computed once.
type Op struct {
	e  *Engine
	a  *graph.CSR
	at *graph.CSR
}

// Prepare prepares a for repeated products. a must stay unmodified.
func (e *Engine) Prepare(a *graph.CSR) *Op { return &Op{e: e, a: a} }

// CSR returns the matrix the operator applies.
func (op *Op) CSR() *graph.CSR { return op.a }

// Apply computes out = A·x, or out += A·x when accumulate is set.
// x.Rows == A.NumCols, out.Rows == A.NumRows, x.Cols == out.Cols.
func (op *Op) Apply(x, out *dense.Matrix, accumulate bool) {
	spmmRef(op.a, x, out, accumulate)
}

// ApplyT computes out = Aᵀ·x (or +=), on a transposed CSR built once, so
// every output row is still written by one goroutine (no atomics).
func (op *Op) ApplyT(x, out *dense.Matrix, accumulate bool) {
	if op.at == nil {
		op.at = op.a.Transpose()
	}
	spmmRef(op.at, x, out, accumulate)
}

func spmmRef(a *graph.CSR, x, out *dense.Matrix, accumulate bool) {
	if a.NumCols != x.Rows || a.NumRows != out.Rows || x.Cols != out.Cols {
		panic("aggr: shape mismatch")
	}
	f := x.Cols
	if !accumulate {
		out.Zero()
	}
	for v := 0; v < a.NumRows; v++ {
		o := out.Data[v*f : (v+1)*f]
		for k := a.Ptr[v]; k < a.Ptr[v+1]; k++ {
			u := int(a.Idx[k])
			w := float32(1)
			if a.Val != nil {
				w = a.Val[k]
			}
			xr := x.Data[u*f : (u+1)*f]
			for j := range o {
				o[j] += w * xr[j]
			}
		}
	}
}
