package graph

import (
	"fmt"
	"math"
)

// Sparse node features are a CSR with one row per node and one column per
// feature (NumCols = FeatDim) whose Val holds the non-zero values: the
// storage kind (SparseStore, below) that Features keep bag-of-words and
// one-hot features in, so that their memory grows with the non-zeros, not
// with the columns.
// A sparse feature matrix is canonical: column ids strictly increase along
// every row (sorted, no duplicates), every value is finite.

// DenseFeatureDensity is the density (non-zeros / (nodes · features)) above
// which sparse features are stored dense: a CSR entry costs two floats' worth
// (value and column id) and a sparse product loses to a dense one well before
// half of the entries are set.
const DenseFeatureDensity = 0.25

// CheckSparseFeatures checks that x is a canonical sparse feature matrix
// (see above), naming the first bad entry as row and column.
func CheckSparseFeatures(x *CSR) error { return checkSparseFrom(x, 0) }

// checkSparseFrom is CheckSparseFeatures for rows of a larger matrix whose
// first is row first (errors name rows of the larger matrix).
func checkSparseFrom(x *CSR, first int) error {
	if err := x.Validate(); err != nil {
		return err
	}
	if x.Val == nil {
		return fmt.Errorf("sparse features without values")
	}
	for r := range x.NumRows {
		for k := x.Ptr[r]; k < x.Ptr[r+1]; k++ {
			if k > x.Ptr[r] && x.Idx[k] <= x.Idx[k-1] {
				return &FeatureError{Row: first + r, Msg: fmt.Sprintf("row %d: column ids not strictly increasing (%d after %d): not canonical CSR (sorted, no duplicates; scipy: sum_duplicates() and sort_indices())", first+r, x.Idx[k], x.Idx[k-1])}
			}
			if v := x.Val[k]; v-v != 0 {
				return &FeatureError{Row: first + r, Msg: fmt.Sprintf("feature [%d,%d] is %v", first+r, x.Idx[k], v)}
			}
		}
	}
	return nil
}

// FeatureDensity is the fraction of x's entries that are stored.
func FeatureDensity(x *CSR) float64 {
	if x.NumRows == 0 || x.NumCols == 0 {
		return 0
	}
	return float64(x.NNZ()) / (float64(x.NumRows) * float64(x.NumCols))
}

// DenseFeatures returns the row-major NumRows×NumCols dense form of x.
func DenseFeatures(x *CSR) []float32 {
	d := make([]float32, x.NumRows*x.NumCols)
	for r := range x.NumRows {
		row := d[r*x.NumCols : (r+1)*x.NumCols]
		for k := x.Ptr[r]; k < x.Ptr[r+1]; k++ {
			row[x.Idx[k]] = x.Val[k]
		}
	}
	return d
}

// SparseRows returns the rows of x listed in rows, in that order, as a new
// sparse feature matrix (a rank's own rows of the whole graph's features).
func SparseRows(x *CSR, rows []int32) *CSR {
	out := &CSR{NumRows: len(rows), NumCols: x.NumCols, Ptr: make([]int64, len(rows)+1)}
	for i, v := range rows {
		out.Ptr[i+1] = out.Ptr[i] + x.Degree(int(v))
	}
	out.Idx = make([]int32, out.Ptr[len(rows)])
	out.Val = make([]float32, out.Ptr[len(rows)])
	for i, v := range rows {
		lo, hi := x.Ptr[v], x.Ptr[v+1]
		copy(out.Idx[out.Ptr[i]:], x.Idx[lo:hi])
		copy(out.Val[out.Ptr[i]:], x.Val[lo:hi])
	}
	return out
}

// PermuteSparseRows returns x with its rows permuted: row i of the result
// is row perm[i] of x.
func PermuteSparseRows(x *CSR, perm []int32) *CSR { return SparseRows(x, perm) }

// RowNormalizeSparse divides every row of x by the sum of its absolute
// values (rows summing to 0 stay), in place: RowNormalize on the non-zeros,
// which gives the same values as RowNormalize on the dense form.
func RowNormalizeSparse(x *CSR) {
	ppRows(x.NumRows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x.Val[x.Ptr[r]:x.Ptr[r+1]]
			s := 0.0
			for _, e := range row {
				s += math.Abs(float64(e))
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

// SparseFeatureBytes is the memory of a sparse feature matrix of rows rows
// and nnz non-zeros: the row offsets, the column ids and the values.
func SparseFeatureBytes(rows int, nnz int64) int64 { return 8*int64(rows+1) + 8*nnz }

// SparseFeaturesOf returns the non-zeros of the row-major rows×cols dense
// features x as a sparse feature matrix.
func SparseFeaturesOf(x []float32, rows, cols int) *CSR {
	out := &CSR{NumRows: rows, NumCols: cols, Ptr: make([]int64, rows+1)}
	for r := range rows {
		for j, v := range x[r*cols : (r+1)*cols] {
			if v != 0 {
				out.Idx = append(out.Idx, int32(j))
				out.Val = append(out.Val, v)
			}
		}
		out.Ptr[r+1] = int64(len(out.Idx))
	}
	if out.Val == nil {
		out.Idx, out.Val = []int32{}, []float32{}
	}
	return out
}

// SparseStore is the CSR storage kind of features: the non-zeros of every
// row with their column ids, canonical (see above).
type SparseStore struct{ X *CSR }

// SparseX returns the sparse feature matrix x as features (without
// copying).
func SparseX(x *CSR) Features { return Features{&SparseStore{X: x}} }

// Kind is "csr".
func (s *SparseStore) Kind() string { return "csr" }

// Rows is the number of rows.
func (s *SparseStore) Rows() int { return s.X.NumRows }

// Cols is the number of columns.
func (s *SparseStore) Cols() int { return s.X.NumCols }

// NNZ is the number of non-zeros.
func (s *SparseStore) NNZ() int64 { return s.X.NNZ() }

// Bytes is SparseFeatureBytes.
func (s *SparseStore) Bytes() int64 { return SparseFeatureBytes(s.X.NumRows, s.X.NNZ()) }

// Values are the non-zeros.
func (s *SparseStore) Values() []float32 { return s.X.Val }

// Row fills buf with row r.
func (s *SparseStore) Row(r int, buf []float32) []float32 {
	clear(buf)
	for k := s.X.Ptr[r]; k < s.X.Ptr[r+1]; k++ {
		buf[s.X.Idx[k]] = s.X.Val[k]
	}
	return buf
}

// Select is SparseRows.
func (s *SparseStore) Select(rows []int32) FeatureStore { return &SparseStore{SparseRows(s.X, rows)} }

// Merge joins rows ref[i] of sparse stores.
func (s *SparseStore) Merge(stores []FeatureStore, ref [][2]int32) (FeatureStore, error) {
	xs := make([]*CSR, len(stores))
	for i, st := range stores {
		o, ok := st.(*SparseStore)
		if !ok || o.X.NumCols != s.X.NumCols {
			return nil, fmt.Errorf("part %d holds %s features of %d columns, part 0 csr ones of %d", i, st.Kind(), st.Cols(), s.X.NumCols)
		}
		xs[i] = o.X
	}
	out := &CSR{NumRows: len(ref), NumCols: s.X.NumCols, Ptr: make([]int64, 1, len(ref)+1)}
	for _, r := range ref {
		x, j := xs[r[0]], int(r[1])
		out.Idx = append(out.Idx, x.Idx[x.Ptr[j]:x.Ptr[j+1]]...)
		out.Val = append(out.Val, x.Val[x.Ptr[j]:x.Ptr[j+1]]...)
		out.Ptr = append(out.Ptr, int64(len(out.Idx)))
	}
	return &SparseStore{out}, nil
}

// Permute is PermuteSparseRows (a new matrix: rows change length).
func (s *SparseStore) Permute(perm []int32) FeatureStore {
	return &SparseStore{PermuteSparseRows(s.X, perm)}
}

// NormalizeRows is RowNormalizeSparse.
func (s *SparseStore) NormalizeRows() { RowNormalizeSparse(s.X) }

// Check is CheckSparseFeatures.
func (s *SparseStore) Check() error { return CheckSparseFeatures(s.X) }

// Layout is CSR rows.
func (s *SparseStore) Layout() FeatureLayout {
	return FeatureLayout{Rows: s.X.NumRows, Cols: s.X.NumCols, Ptr: s.X.Ptr, Idx: s.X.Idx, Val: s.X.Val}
}

// SparseMatrix is the CSR of sparse features, nil for another kind or none
// (for code that needs the kind itself: tests, converters).
func SparseMatrix(f Features) *CSR {
	if s, ok := f.s.(*SparseStore); ok {
		return s.X
	}
	return nil
}
