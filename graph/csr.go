// Package graph holds the compressed sparse row (CSR) adjacency, the Dataset
// (graph, features, labels, splits), the loaders for every on-disk form our
// users keep graphs in, preprocessing, and the synthetic generator.
package graph

import (
	"fmt"
	"slices"
	"sort"

	"github.com/supergcn/supergcn/internal/par"
)

// CSR is a sparse matrix in compressed sparse row form with 64-bit row
// offsets, so edge counts beyond 2^31 never overflow. In an adjacency,
// row v lists the in-neighbours u of v (edges u→v): aggregation is then
// out[v] = Σ_{k in row v} Val[k]·x[Idx[k]], one output row written once.
//
// Node ids are int32 within one process (a rank holds < 2^31 nodes); global
// ids in partitions are int64.
type CSR struct {
	NumRows int       // destination nodes
	NumCols int       // source nodes (== NumRows for a square adjacency)
	Ptr     []int64   // len NumRows+1, Ptr[0]=0, non-decreasing
	Idx     []int32   // len Ptr[NumRows]; column (source) ids
	Val     []float32 // nil (all ones) or len Ptr[NumRows]
}

// NNZ returns the number of stored entries.
func (c *CSR) NNZ() int64 {
	if len(c.Ptr) == 0 {
		return 0
	}
	return c.Ptr[c.NumRows]
}

// Degree returns the number of entries in row v.
func (c *CSR) Degree(v int) int64 { return c.Ptr[v+1] - c.Ptr[v] }

// Validate checks the structural invariants; it returns a descriptive error.
func (c *CSR) Validate() error {
	if c.NumRows < 0 || c.NumCols < 0 {
		return fmt.Errorf("csr: negative shape %d×%d", c.NumRows, c.NumCols)
	}
	if len(c.Ptr) != c.NumRows+1 {
		return fmt.Errorf("csr: len(Ptr)=%d, want NumRows+1=%d", len(c.Ptr), c.NumRows+1)
	}
	if c.Ptr[0] != 0 {
		return fmt.Errorf("csr: Ptr[0]=%d, want 0", c.Ptr[0])
	}
	for v := 0; v < c.NumRows; v++ {
		if c.Ptr[v+1] < c.Ptr[v] {
			return fmt.Errorf("csr: Ptr decreases at row %d", v)
		}
	}
	nnz := c.Ptr[c.NumRows]
	if int64(len(c.Idx)) != nnz {
		return fmt.Errorf("csr: len(Idx)=%d, want %d", len(c.Idx), nnz)
	}
	if c.Val != nil && int64(len(c.Val)) != nnz {
		return fmt.Errorf("csr: len(Val)=%d, want %d", len(c.Val), nnz)
	}
	for k, u := range c.Idx {
		if u < 0 || int(u) >= c.NumCols {
			return fmt.Errorf("csr: entry %d has column %d outside [0,%d)", k, u, c.NumCols)
		}
	}
	return nil
}

// FromCOO builds a rows×cols CSR from edges src[k]→dst[k] (row = dst,
// column = src), keeping the input order of edges within a row (stable
// counting sort). val may be nil. Duplicates are kept.
func FromCOO(rows, cols int, src, dst []int32, val []float32) *CSR {
	if len(src) != len(dst) || (val != nil && len(val) != len(src)) {
		panic("graph.FromCOO: length mismatch")
	}
	c := &CSR{NumRows: rows, NumCols: cols, Ptr: make([]int64, rows+1), Idx: make([]int32, len(src))}
	for _, d := range dst {
		c.Ptr[d+1]++
	}
	for v := 0; v < rows; v++ {
		c.Ptr[v+1] += c.Ptr[v]
	}
	next := make([]int64, rows)
	copy(next, c.Ptr[:rows])
	if val != nil {
		c.Val = make([]float32, len(val))
	}
	for k, d := range dst {
		p := next[d]
		next[d]++
		c.Idx[p] = src[k]
		if val != nil {
			c.Val[p] = val[k]
		}
	}
	return c
}

// Transpose returns the cols×rows transpose (row u lists the v with u→v),
// entries of a row in increasing order of the original row. It is a
// counting sort over up to 8 contiguous row chunks in parallel, each with
// its own column histogram; one chunk when histograms would cost more than
// the entries.
func (c *CSR) Transpose() *CSR {
	nnz := c.NNZ()
	chunks := max(1, min(par.Threads(), 8, int(nnz/int64(4*max(1, c.NumCols))), c.NumRows))
	bounds := make([]int, chunks+1) // row ranges with about equal entries
	for i := 1; i < chunks; i++ {
		target := nnz * int64(i) / int64(chunks)
		bounds[i], _ = slices.BinarySearch(c.Ptr[:c.NumRows+1], target)
		bounds[i] = max(bounds[i], bounds[i-1])
	}
	bounds[chunks] = c.NumRows
	hist := make([][]int64, chunks)
	par.Blocks(chunks, 0, func(w int) {
		h := make([]int64, c.NumCols)
		for _, u := range c.Idx[c.Ptr[bounds[w]]:c.Ptr[bounds[w+1]]] {
			h[u]++
		}
		hist[w] = h
	})
	t := &CSR{NumRows: c.NumCols, NumCols: c.NumRows, Ptr: make([]int64, c.NumCols+1), Idx: make([]int32, nnz)}
	if c.Val != nil {
		t.Val = make([]float32, nnz)
	}
	for u := 0; u < c.NumCols; u++ { // hist[w][u] becomes chunk w's next slot in column u
		p := t.Ptr[u]
		for w := range hist {
			cnt := hist[w][u]
			hist[w][u] = p
			p += cnt
		}
		t.Ptr[u+1] = p
	}
	par.Blocks(chunks, 0, func(w int) {
		next := hist[w]
		for v := bounds[w]; v < bounds[w+1]; v++ {
			for k := c.Ptr[v]; k < c.Ptr[v+1]; k++ {
				u := c.Idx[k]
				p := next[u]
				next[u]++
				t.Idx[p] = int32(v)
				if c.Val != nil {
					t.Val[p] = c.Val[k]
				}
			}
		}
	})
	return t
}

// SortRows sorts the column ids within every row (values follow).
func (c *CSR) SortRows() {
	for v := 0; v < c.NumRows; v++ {
		lo, hi := c.Ptr[v], c.Ptr[v+1]
		if c.Val == nil {
			idx := c.Idx[lo:hi]
			sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
			continue
		}
		sort.Sort(rowSorter{c.Idx[lo:hi], c.Val[lo:hi]})
	}
}

type rowSorter struct {
	idx []int32
	val []float32
}

func (r rowSorter) Len() int           { return len(r.idx) }
func (r rowSorter) Less(i, j int) bool { return r.idx[i] < r.idx[j] }
func (r rowSorter) Swap(i, j int) {
	r.idx[i], r.idx[j] = r.idx[j], r.idx[i]
	r.val[i], r.val[j] = r.val[j], r.val[i]
}

// CheckWeights checks edge weights: every one finite and non-negative (a
// negative weight would make a GCN degree, a sum of weights, meaningless).
// The error names the first bad entry's index.
func CheckWeights(val []float32) error {
	for k, w := range val {
		if msg := weightProblem(w); msg != "" {
			return fmt.Errorf("edge weight %d is %v: %s", k, w, msg)
		}
	}
	return nil
}

// weightProblem says what is wrong with edge weight w ("" when nothing).
func weightProblem(w float32) string {
	switch {
	case w-w != 0:
		return "weights must be finite"
	case w < 0:
		return "weights must be non-negative"
	}
	return ""
}
