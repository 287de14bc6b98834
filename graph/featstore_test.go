package graph

import (
	"math"
	"strings"
	"testing"
)

// featPair returns the same rows×cols data (some rows empty, the others
// with zeros among their values) as dense and as sparse features.
func featPair(rows, cols int) (dense, sparse Features) {
	x := make([]float32, rows*cols)
	for r := range rows {
		if r%3 == 1 {
			continue // an empty row
		}
		for c := range cols {
			if (r*7+c*3)%4 != 0 {
				x[r*cols+c] = float32((r+1)*(c+2)%11) - 4.5
			}
		}
	}
	d := DenseX(x, rows, cols)
	return d, SparseX(SparseFeaturesOf(x, rows, cols))
}

// TestFeatureKindsAgree checks that every operation of the storage side
// gives the same rows for the dense and the CSR kind of the same data, on
// odd widths and with empty rows.
func TestFeatureKindsAgree(t *testing.T) {
	for _, cols := range []int{1, 7, 33} {
		d, s := featPair(10, cols)
		if d.Kind() != "dense" || s.Kind() != "csr" || d.Sparse() || !s.Sparse() {
			t.Fatalf("kinds %q %q", d.Kind(), s.Kind())
		}
		if !s.Dense().Equal(d) || !d.SparseOf().Equal(s) {
			t.Fatalf("%d cols: densify / sparsify do not round-trip", cols)
		}
		sameRows(t, "select", d.Select([]int32{4, 1, 9, 4}), s.Select([]int32{4, 1, 9, 4}))
		perm := []int32{3, 0, 9, 1, 2, 8, 7, 4, 6, 5}
		dp, sp := DenseX(append([]float32(nil), d.Values()...), 10, cols), s
		dp.Permute(perm)
		sp.Permute(perm)
		sameRows(t, "permute", dp, sp)
		sameRows(t, "permute = select", dp, d.Select(perm))
		ref := [][2]int32{{1, 2}, {0, 0}, {1, 0}, {0, 1}}
		dm, err := MergeFeatures([]Features{d.Select([]int32{0, 1}), d.Select([]int32{2, 3, 4})}, ref)
		if err != nil {
			t.Fatal(err)
		}
		sm, err := MergeFeatures([]Features{s.Select([]int32{0, 1}), s.Select([]int32{2, 3, 4})}, ref)
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "merge", dm, sm)
		sameRows(t, "merge = select", dm, d.Select([]int32{4, 0, 2, 1}))
		d.NormalizeRows()
		s.NormalizeRows()
		sameRows(t, "normalize", d, s)
		if d.NNZ() != int64(10*cols) || s.NNZ() >= d.NNZ() || s.Bytes() != SparseFeatureBytes(10, s.NNZ()) || d.Bytes() != 4*int64(10*cols) {
			t.Fatalf("%d cols: nnz %d %d, bytes %d %d", cols, d.NNZ(), s.NNZ(), d.Bytes(), s.Bytes())
		}
	}
}

// sameRows fails unless a and b hold the same rows (as dense values).
func sameRows(t *testing.T, what string, a, b Features) {
	t.Helper()
	if a.Rows() != b.Rows() || a.Cols() != b.Cols() {
		t.Fatalf("%s: %d×%d vs %d×%d", what, a.Rows(), a.Cols(), b.Rows(), b.Cols())
	}
	ba, bb := make([]float32, a.Cols()), make([]float32, b.Cols())
	for r := range a.Rows() {
		ra, rb := a.Row(r, ba), b.Row(r, bb)
		for c := range ra {
			if ra[c] != rb[c] {
				t.Fatalf("%s: [%d,%d] = %v vs %v", what, r, c, ra[c], rb[c])
			}
		}
	}
}

// TestFeatureLayoutRoundTrip checks that FeaturesOf reads back what
// Layout gives, for each kind and for none.
func TestFeatureLayoutRoundTrip(t *testing.T) {
	d, s := featPair(6, 5)
	for _, f := range []Features{d, s, {}} {
		if g := FeaturesOf(f.Layout()); !g.Equal(f) || g.Present() != f.Present() {
			t.Fatalf("%q: layout does not round-trip", f.Kind())
		}
	}
	if d.Equal(s) {
		t.Fatal("dense equals csr")
	}
}

// TestFeatureCheck checks that both kinds name the row and column of a
// non-finite value, and CheckShape a wrong shape.
func TestFeatureCheck(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		d, _ := featPair(4, 3)
		d.Values()[2*3+2] = v
		s := d.SparseOf()
		for _, f := range []Features{d, s} {
			err := f.Check()
			fe, ok := AsFeatureError(err)
			if !ok || fe.Row != 2 || !strings.Contains(err.Error(), "feature [2,2] is") {
				t.Fatalf("%s: %v", f.Kind(), err)
			}
		}
	}
	d, s := featPair(4, 3)
	if d.Check() != nil || s.Check() != nil || d.CheckShape(4, 3) != nil || (Features{}).CheckShape(4, 0) != nil {
		t.Fatal("good features refused")
	}
	if s.CheckShape(5, 3) == nil || (Features{}).CheckShape(4, 3) == nil {
		t.Fatal("a wrong shape passes")
	}
	if _, err := MergeFeatures([]Features{d, s}, nil); err == nil {
		t.Fatal("merging dense and csr parts passes")
	}
}

// xd is ds's dense feature values, nil unless dense.
func xd(ds *Dataset) []float32 { return DenseData(ds.Features) }

// xs is ds's sparse feature matrix, nil unless sparse.
func xs(ds *Dataset) *CSR { return SparseMatrix(ds.Features) }

// TestFeatureLayoutAppendRow checks that rows appended one by one (the
// distributed writer's shards) give the features they came from.
func TestFeatureLayoutAppendRow(t *testing.T) {
	d, s := featPair(7, 9)
	for _, f := range []Features{d, s} {
		l, src := NewFeatureLayout(9, f.Sparse(), 7, f.NNZ()), f.Layout()
		for r := range 7 {
			l.AppendRow(src.RowIdx(r), src.RowVal(r))
		}
		if !FeaturesOf(l).Equal(f) {
			t.Fatalf("%s: appended rows differ", f.Kind())
		}
	}
}
