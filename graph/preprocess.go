package graph

import (
	"slices"
	"sort"
	"sync/atomic"

	"github.com/supergcn/supergcn/internal/par"
)

// Preprocessing of adjacencies and features. Every function returns a new
// CSR and leaves its input untouched (except RowNormalize, which works in
// place), runs in O(nnz) or O(nnz·log deg) and spreads rows over the
// rank's thread budget (internal/par). Results do not depend on the number of goroutines.
//
// Duplicate entries (u,v) are merged by keeping the largest weight: merging
// is then idempotent (Symmetrize of a symmetric graph returns it unchanged,
// weights included), unlike PyG's to_undirected, whose default reduce="add"
// doubles the weight of every edge already present in both directions.

// ppRows runs fn over [0,n) in contiguous chunks on the rank's thread
// budget (internal/par), handing out chunks dynamically so rows of skewed
// degree balance out.
func ppRows(n int, fn func(lo, hi int)) {
	workers := par.Threads()
	if workers <= 1 || n < 4096 {
		fn(0, n)
		return
	}
	chunk := max(1024, n/(16*workers))
	par.Blocks((n+chunk-1)/chunk, 0, func(i int) { fn(i*chunk, min((i+1)*chunk, n)) })
}

// ppBuild builds a rows×cols CSR in two parallel passes: count(v) returns the
// length of row v, then fill(v, idx, val) writes it (val is nil unless
// weighted).
func ppBuild(rows, cols int, weighted bool, count func(v int) int64, fill func(v int, idx []int32, val []float32)) *CSR {
	out := &CSR{NumRows: rows, NumCols: cols, Ptr: make([]int64, rows+1)}
	ppRows(rows, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			out.Ptr[v+1] = count(v)
		}
	})
	for v := 0; v < rows; v++ {
		out.Ptr[v+1] += out.Ptr[v]
	}
	nnz := out.Ptr[rows]
	out.Idx = make([]int32, nnz)
	if weighted {
		out.Val = make([]float32, nnz)
	}
	ppRows(rows, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			a, b := out.Ptr[v], out.Ptr[v+1]
			var val []float32
			if weighted {
				val = out.Val[a:b]
			}
			fill(v, out.Idx[a:b], val)
		}
	})
	return out
}

// ppSorted returns c if every row is sorted by column, else a copy with
// sorted rows (values follow their columns).
func ppSorted(c *CSR) *CSR {
	var unsorted atomic.Bool
	ppRows(c.NumRows, func(lo, hi int) {
		for v := lo; v < hi && !unsorted.Load(); v++ {
			if !slices.IsSorted(c.Idx[c.Ptr[v]:c.Ptr[v+1]]) {
				unsorted.Store(true)
			}
		}
	})
	if !unsorted.Load() {
		return c
	}
	s := &CSR{NumRows: c.NumRows, NumCols: c.NumCols, Ptr: c.Ptr, Idx: slices.Clone(c.Idx)}
	if c.Val != nil {
		s.Val = slices.Clone(c.Val)
	}
	ppRows(c.NumRows, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			a, b := s.Ptr[v], s.Ptr[v+1]
			if s.Val == nil {
				slices.Sort(s.Idx[a:b])
			} else if !slices.IsSorted(s.Idx[a:b]) {
				sort.Stable(rowSorter{s.Idx[a:b], s.Val[a:b]})
			}
		}
	})
	return s
}

// ppMerge merges the sorted rows a and b (weights wa, wb may be nil) into
// idx/val without duplicates, keeping the largest weight of each column,
// and returns the merged length. With idx == nil it only counts.
func ppMerge(a, b []int32, wa, wb []float32, idx []int32, val []float32) int64 {
	n, last := int64(0), int32(-1)
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var u int32
		var w float32
		if j >= len(b) || (i < len(a) && a[i] <= b[j]) {
			u = a[i]
			if wa != nil {
				w = wa[i]
			}
			i++
		} else {
			u = b[j]
			if wb != nil {
				w = wb[j]
			}
			j++
		}
		if n > 0 && u == last {
			if val != nil && w > val[n-1] {
				val[n-1] = w
			}
			continue
		}
		last = u
		if idx != nil {
			ppPut(idx, val, int(n), u, w)
		}
		n++
	}
	return n
}

// Symmetrize returns the union of c and its transpose without duplicates:
// (u,v) is in the result iff (u,v) or (v,u) is in c. Rows come out sorted.
// Weights (if c has them) merge by maximum, see the package note above;
// the unweighted result has Val == nil. A non-square c is treated as the
// square max(NumRows,NumCols) matrix padded with empty rows or columns.
func Symmetrize(c *CSR) *CSR {
	sq := ppSquare(c)
	s := ppSorted(sq)
	t := sq.Transpose() // rows ascending: the counting sort is stable
	weighted := c.Val != nil
	row := func(m *CSR, v int) ([]int32, []float32) {
		a, b := m.Ptr[v], m.Ptr[v+1]
		if m.Val == nil {
			return m.Idx[a:b], nil
		}
		return m.Idx[a:b], m.Val[a:b]
	}
	return ppBuild(s.NumRows, s.NumCols, weighted,
		func(v int) int64 {
			a, wa := row(s, v)
			b, wb := row(t, v)
			return ppMerge(a, b, wa, wb, nil, nil)
		},
		func(v int, idx []int32, val []float32) {
			a, wa := row(s, v)
			b, wb := row(t, v)
			ppMerge(a, b, wa, wb, idx, val)
		})
}

// ppSquare returns c, or c padded to a square matrix.
func ppSquare(c *CSR) *CSR {
	if c.NumRows == c.NumCols {
		return c
	}
	n := max(c.NumRows, c.NumCols)
	ptr := make([]int64, n+1)
	copy(ptr, c.Ptr)
	for v := c.NumRows + 1; v <= n; v++ {
		ptr[v] = ptr[c.NumRows]
	}
	return &CSR{NumRows: n, NumCols: n, Ptr: ptr, Idx: c.Idx, Val: c.Val}
}

// Dedup returns c without duplicate entries within a row; rows come out
// sorted and duplicate weights merge by maximum.
func Dedup(c *CSR) *CSR {
	s := ppSorted(c)
	return ppBuild(s.NumRows, s.NumCols, s.Val != nil,
		func(v int) int64 {
			return ppMerge(s.Idx[s.Ptr[v]:s.Ptr[v+1]], nil, nil, nil, nil, nil)
		},
		func(v int, idx []int32, val []float32) {
			a, b := s.Ptr[v], s.Ptr[v+1]
			var w []float32
			if s.Val != nil {
				w = s.Val[a:b]
			}
			ppMerge(s.Idx[a:b], nil, w, nil, idx, val)
		})
}

// RemoveSelfLoops returns c without its diagonal entries, keeping the order
// of the others.
func RemoveSelfLoops(c *CSR) *CSR {
	return ppBuild(c.NumRows, c.NumCols, c.Val != nil,
		func(v int) int64 {
			n := c.Ptr[v+1] - c.Ptr[v]
			for _, u := range c.Idx[c.Ptr[v]:c.Ptr[v+1]] {
				if int(u) == v {
					n--
				}
			}
			return n
		},
		func(v int, idx []int32, val []float32) {
			n := 0
			for k := c.Ptr[v]; k < c.Ptr[v+1]; k++ {
				if int(c.Idx[k]) == v {
					continue
				}
				idx[n] = c.Idx[k]
				if val != nil {
					val[n] = c.Val[k]
				}
				n++
			}
		})
}

// LoopPlace is where AddSelfLoops puts a row's self-loop.
type LoopPlace int

const (
	// LoopSorted: every node v < min(NumRows, NumCols) has exactly one
	// diagonal entry, like PyG's add_remaining_self_loops: an existing
	// self-loop keeps its weight (the largest, if there were several), a
	// new one gets weight 1. The other entries keep their order and the
	// self-loop goes before the first entry with a larger column, so
	// sorted rows stay sorted.
	LoopSorted LoopPlace = iota
	// LoopLast: a diagonal entry of weight 1 after the row's entries,
	// which stay as they are (an existing self-loop too): the graph of
	// the GCN local product (exchange), whose degree is every entry plus
	// one, summed in the row's order with the node's own row last.
	LoopLast
)

// AddSelfLoops returns c with a self-loop at every node v < min(NumRows,
// NumCols), placed as at says.
func AddSelfLoops(c *CSR, at LoopPlace) *CSR {
	diag := min(c.NumRows, c.NumCols)
	last := at == LoopLast
	return ppBuild(c.NumRows, c.NumCols, c.Val != nil,
		func(v int) int64 {
			n := c.Ptr[v+1] - c.Ptr[v]
			for _, u := range c.Idx[c.Ptr[v]:c.Ptr[v+1]] {
				if int(u) == v && !last {
					n--
				}
			}
			if v < diag {
				n++
			}
			return n
		},
		func(v int, idx []int32, val []float32) {
			w, placed := float32(1), v >= diag
			if c.Val != nil && !placed && !last {
				w = ppLoopWeight(c, v)
			}
			n := 0
			for k := c.Ptr[v]; k < c.Ptr[v+1]; k++ {
				u := int(c.Idx[k])
				if u == v && !last {
					continue
				}
				if !placed && u > v && !last {
					n = ppPut(idx, val, n, int32(v), w)
					placed = true
				}
				var x float32
				if c.Val != nil {
					x = c.Val[k]
				}
				n = ppPut(idx, val, n, int32(u), x)
			}
			if !placed {
				ppPut(idx, val, n, int32(v), w)
			}
		})
}

// ppLoopWeight is the largest weight of v's self-loops in c, or 1 if none.
func ppLoopWeight(c *CSR, v int) float32 {
	w, found := float32(1), false
	for k := c.Ptr[v]; k < c.Ptr[v+1]; k++ {
		if int(c.Idx[k]) == v && (!found || c.Val[k] > w) {
			w, found = c.Val[k], true
		}
	}
	return w
}

// ppPut stores (u, w) at position n of idx/val (val may be nil) and
// returns n+1.
func ppPut(idx []int32, val []float32, n int, u int32, w float32) int {
	idx[n] = u
	if val != nil {
		val[n] = w
	}
	return n + 1
}

// RowNormalize divides every row of the row-major len(x)/dim × dim matrix x
// by its L1 norm (sum of absolute values), in place; all-zero rows stay
// zero. For binary bag-of-words features (Cora's) this equals Kipf &
// Welling's preprocessing and PyG's NormalizeFeatures. dim <= 0 does
// nothing; a trailing partial row is left alone.
func RowNormalize(x []float32, dim int) {
	if dim <= 0 {
		return
	}
	ppRows(len(x)/dim, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x[r*dim : (r+1)*dim]
			s := 0.0
			for _, e := range row {
				if e < 0 {
					s -= float64(e)
				} else {
					s += float64(e)
				}
			}
			if s == 0 {
				continue
			}
			d := float32(s)
			for j := range row {
				row[j] /= d
			}
		}
	})
}
