package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ppRandom returns a random rows×cols CSR with duplicates and self-loops,
// unsorted rows and (if weighted) small integer weights.
func ppRandom(rows, cols, nnz int, weighted bool, seed uint64) *CSR {
	r := rand.New(rand.NewPCG(seed, 7))
	src := make([]int32, nnz)
	dst := make([]int32, nnz)
	var val []float32
	if weighted {
		val = make([]float32, nnz)
	}
	for k := range src {
		dst[k] = int32(r.IntN(rows))
		if r.IntN(8) == 0 && int(dst[k]) < cols {
			src[k] = dst[k] // self-loop
		} else {
			src[k] = int32(r.IntN(cols))
		}
		if weighted {
			val[k] = float32(1 + r.IntN(9))
		}
	}
	return FromCOO(rows, cols, src, dst, val)
}

// ppHandMade is a 4-node graph: row 0 = {2,1,1,0}, row 1 = {}, row 2 = {3},
// row 3 = {3,0}, weights 1..7.
func ppHandMade() *CSR {
	return &CSR{NumRows: 4, NumCols: 4,
		Ptr: []int64{0, 4, 4, 5, 7},
		Idx: []int32{2, 1, 1, 0, 3, 3, 0},
		Val: []float32{1, 2, 3, 4, 5, 6, 7}}
}

type ppEntry struct {
	col int32
	w   float32
}

// ppRowsOf lists every row of c as entries, in stored order.
func ppRowsOf(c *CSR) [][]ppEntry {
	out := make([][]ppEntry, c.NumRows)
	for v := range out {
		out[v] = []ppEntry{}
		for k := c.Ptr[v]; k < c.Ptr[v+1]; k++ {
			w := float32(1)
			if c.Val != nil {
				w = c.Val[k]
			}
			out[v] = append(out[v], ppEntry{c.Idx[k], w})
		}
	}
	return out
}

// ppFromMaps turns per-row maps col→weight into sorted rows.
func ppFromMaps(m []map[int32]float32) [][]ppEntry {
	out := make([][]ppEntry, len(m))
	for v, row := range m {
		out[v] = []ppEntry{}
		for u, w := range row {
			out[v] = append(out[v], ppEntry{u, w})
		}
		slices.SortFunc(out[v], func(a, b ppEntry) int { return int(a.col - b.col) })
	}
	return out
}

func ppMaxInto(m map[int32]float32, u int32, w float32) {
	if old, ok := m[u]; !ok || w > old {
		m[u] = w
	}
}

func ppCheck(t *testing.T, what string, got *CSR, want [][]ppEntry, weighted bool) {
	t.Helper()
	if err := got.Validate(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if (got.Val != nil) != weighted {
		t.Fatalf("%s: weighted=%v, want %v", what, got.Val != nil, weighted)
	}
	g := ppRowsOf(got)
	if len(g) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(g), len(want))
	}
	for v := range want {
		if !slices.Equal(g[v], want[v]) {
			t.Fatalf("%s: row %d = %v, want %v", what, v, g[v], want[v])
		}
	}
}

func bruteSymmetrize(c *CSR) [][]ppEntry {
	n := max(c.NumRows, c.NumCols)
	m := make([]map[int32]float32, n)
	for v := range m {
		m[v] = map[int32]float32{}
	}
	for v, row := range ppRowsOf(c) {
		for _, e := range row {
			ppMaxInto(m[v], e.col, e.w)
			ppMaxInto(m[e.col], int32(v), e.w)
		}
	}
	return ppFromMaps(m)
}

func bruteDedup(c *CSR) [][]ppEntry {
	m := make([]map[int32]float32, c.NumRows)
	for v, row := range ppRowsOf(c) {
		m[v] = map[int32]float32{}
		for _, e := range row {
			ppMaxInto(m[v], e.col, e.w)
		}
	}
	return ppFromMaps(m)
}

func bruteRemoveSelfLoops(c *CSR) [][]ppEntry {
	out := ppRowsOf(c)
	for v := range out {
		out[v] = slices.DeleteFunc(out[v], func(e ppEntry) bool { return int(e.col) == v })
	}
	return out
}

func bruteAddSelfLoops(c *CSR) [][]ppEntry {
	out := ppRowsOf(c)
	for v, row := range out {
		if v >= c.NumCols {
			continue
		}
		loop := ppEntry{int32(v), 1}
		first := true
		for _, e := range row {
			if int(e.col) == v && c.Val != nil && (first || e.w > loop.w) {
				loop.w, first = e.w, false
			}
		}
		rest := slices.DeleteFunc(slices.Clone(row), func(e ppEntry) bool { return int(e.col) == v })
		at := len(rest)
		for i, e := range rest {
			if int(e.col) > v {
				at = i
				break
			}
		}
		out[v] = slices.Insert(rest, at, loop)
	}
	return out
}

// bruteAppendSelfLoops: every row as it is, then (v, 1) for v < NumCols.
func bruteAppendSelfLoops(c *CSR) [][]ppEntry {
	out := ppRowsOf(c)
	for v := range out {
		if v < c.NumCols {
			out[v] = append(out[v], ppEntry{int32(v), 1})
		}
	}
	return out
}

func TestPreprocessHandMade(t *testing.T) {
	c := ppHandMade()
	sym := Symmetrize(c)
	// Row v holds (v,u): (0,1) twice merges to max(2,3)=3 and mirrors to
	// (1,0); (0,2)=1, (2,3)=5, (3,0)=7 mirror; loops (0,0)=4, (3,3)=6 stay.
	want := [][]ppEntry{
		{{0, 4}, {1, 3}, {2, 1}, {3, 7}},
		{{0, 3}},
		{{0, 1}, {3, 5}},
		{{0, 7}, {2, 5}, {3, 6}},
	}
	ppCheck(t, "Symmetrize", sym, want, true)
	ppCheck(t, "Dedup", Dedup(c), [][]ppEntry{{{0, 4}, {1, 3}, {2, 1}}, {}, {{3, 5}}, {{0, 7}, {3, 6}}}, true)
	ppCheck(t, "RemoveSelfLoops", RemoveSelfLoops(c), [][]ppEntry{{{2, 1}, {1, 2}, {1, 3}}, {}, {{3, 5}}, {{0, 7}}}, true)
	ppCheck(t, "AddSelfLoops", AddSelfLoops(c, LoopSorted),
		[][]ppEntry{{{0, 4}, {2, 1}, {1, 2}, {1, 3}}, {{1, 1}}, {{2, 1}, {3, 5}}, {{0, 7}, {3, 6}}}, true)
	ppCheck(t, "AddSelfLoops/last", AddSelfLoops(c, LoopLast),
		[][]ppEntry{{{2, 1}, {1, 2}, {1, 3}, {0, 4}, {0, 1}}, {{1, 1}}, {{3, 5}, {2, 1}}, {{3, 6}, {0, 7}, {3, 1}}}, true)
	if c.Idx[0] != 2 || c.Val[0] != 1 {
		t.Fatal("input modified")
	}
}

func TestPreprocessBruteForce(t *testing.T) {
	shapes := []struct{ rows, cols, nnz int }{{1, 1, 3}, {7, 7, 30}, {50, 50, 400}, {9, 13, 60}, {13, 9, 60}, {6000, 6000, 50000}}
	for i, s := range shapes {
		for _, weighted := range []bool{false, true} {
			c := ppRandom(s.rows, s.cols, s.nnz, weighted, uint64(i))
			name := fmt.Sprintf("%dx%d/w=%v", s.rows, s.cols, weighted)
			ppCheck(t, name+"/Symmetrize", Symmetrize(c), bruteSymmetrize(c), weighted)
			ppCheck(t, name+"/Dedup", Dedup(c), bruteDedup(c), weighted)
			ppCheck(t, name+"/RemoveSelfLoops", RemoveSelfLoops(c), bruteRemoveSelfLoops(c), weighted)
			ppCheck(t, name+"/AddSelfLoops", AddSelfLoops(c, LoopSorted), bruteAddSelfLoops(c), weighted)
			ppCheck(t, name+"/AddSelfLoops/last", AddSelfLoops(c, LoopLast), bruteAppendSelfLoops(c), weighted)
		}
	}
}

func TestSymmetrizeIdempotent(t *testing.T) {
	c := Symmetrize(ppRandom(300, 300, 2000, true, 3))
	again := Symmetrize(c)
	if !slices.Equal(c.Ptr, again.Ptr) || !slices.Equal(c.Idx, again.Idx) || !slices.Equal(c.Val, again.Val) {
		t.Fatal("Symmetrize of a symmetric graph changed it")
	}
}

func TestRowNormalize(t *testing.T) {
	x := []float32{1, 0, 1, 2, 0, 0, 0, 0, -1, 3, 0, 0, 9, 9}
	want := []float32{0.25, 0, 0.25, 0.5, 0, 0, 0, 0, -0.25, 0.75, 0, 0, 9, 9}
	RowNormalize(x, 4) // three rows of 4, the trailing partial row untouched
	for i := range x {
		if math.Abs(float64(x[i]-want[i])) > 1e-7 {
			t.Fatalf("x[%d]=%v, want %v (all %v)", i, x[i], want[i], x)
		}
	}
	big := make([]float32, 5000*3)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = r.Float32()
	}
	RowNormalize(big, 3)
	for row := 0; row < 5000; row++ {
		s := big[3*row] + big[3*row+1] + big[3*row+2]
		if math.Abs(float64(s)-1) > 1e-5 {
			t.Fatalf("row %d sums to %v", row, s)
		}
	}
	RowNormalize(x, 0) // must not panic
}

// Transpose (chunked and parallel when large) equals a per-column bucket
// reference, entries of each row in increasing order of the original row.
func TestTransposeMatchesReference(t *testing.T) {
	for i, s := range []struct{ rows, cols, nnz int }{{2000, 2000, 40000}, {500, 3000, 60000}, {3000, 200, 50000}, {10, 10, 0}} {
		for _, weighted := range []bool{false, true} {
			c := ppRandom(s.rows, s.cols, s.nnz, weighted, uint64(10+i))
			idx := make([][]int32, c.NumCols)
			val := make([][]float32, c.NumCols)
			for v := 0; v < c.NumRows; v++ {
				for k := c.Ptr[v]; k < c.Ptr[v+1]; k++ {
					u := c.Idx[k]
					idx[u] = append(idx[u], int32(v))
					if weighted {
						val[u] = append(val[u], c.Val[k])
					}
				}
			}
			got := c.Transpose()
			if got.NumRows != c.NumCols || got.NumCols != c.NumRows || got.Validate() != nil {
				t.Fatalf("%+v: bad transpose shape or structure", s)
			}
			for u := 0; u < c.NumCols; u++ {
				lo, hi := got.Ptr[u], got.Ptr[u+1]
				if !slices.Equal(got.Idx[lo:hi], idx[u]) || (weighted && !slices.Equal(got.Val[lo:hi], val[u])) {
					t.Fatalf("%+v weighted=%v: row %d of the transpose differs from the reference", s, weighted, u)
				}
			}
		}
	}
}
