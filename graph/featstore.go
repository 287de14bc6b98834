package graph

import (
	"errors"
	"fmt"
	"slices"
)

// Features are the node features of a dataset or a shard: Rows()×Cols()
// values in one storage kind (a FeatureStore: DenseStore,
// feat_dense.go; SparseStore, feat_csr.go). Datasets, partitions, the
// readers and writers and the trainer hold features as Features and ask
// them what they need, never which kind they are; nn maps each kind to its
// products with the first layer's weights (nn/input.go). The zero value
// holds no features (a structure-only input, or a shard without rows).
type Features struct{ s FeatureStore }

// FeatureStore is one storage kind of node features: what the storage side
// needs of it. A new kind is a new type implementing it in its own file,
// plus its compute in nn (nn/input.go's table).
type FeatureStore interface {
	// Kind names the storage kind: the key of nn's compute table.
	Kind() string
	Rows() int
	Cols() int
	// NNZ is the number of values stored (every entry when dense).
	NNZ() int64
	// Bytes is the memory the store holds.
	Bytes() int64
	// Values are the values stored (for their largest magnitude, a run's
	// identity): every entry when dense, the non-zeros when sparse.
	Values() []float32
	// Row returns row r as Cols() dense values: a view of the store, or
	// buf (len Cols()) filled.
	Row(r int, buf []float32) []float32
	// Select returns rows[i] of the store as row i of a new store of its
	// kind.
	Select(rows []int32) FeatureStore
	// Merge returns the rows ref[i] = {store, row} of stores of the
	// receiver's kind as a new store of it (a rank's parts merged), or an
	// error when a store is of another kind.
	Merge(stores []FeatureStore, ref [][2]int32) (FeatureStore, error)
	// Permute moves row perm[i] to row i, in place where the kind can,
	// and returns the permuted store.
	Permute(perm []int32) FeatureStore
	// NormalizeRows divides every row by the sum of its absolute values
	// (rows summing to 0 stay), in place.
	NormalizeRows()
	// Check reports the first non-finite value or malformed row as a
	// *FeatureError.
	Check() error
	// Layout is the store as the files carry it (see FeatureLayout).
	Layout() FeatureLayout
}

// FeatureError is a bad feature value or row that Features.Check found.
type FeatureError struct {
	Row int // the row (node) it is in
	Msg string
}

func (e *FeatureError) Error() string { return e.Msg }

// FeatureLayout is features as the files (.sgb, partition files) and the
// distributed writer's messages carry them: dense rows (Ptr nil: Val is
// Rows×Cols row-major) or CSR rows (row r's column ids Idx and values Val
// in [Ptr[r], Ptr[r+1])). FeaturesOf reads it back.
type FeatureLayout struct {
	Rows, Cols int
	Ptr        []int64
	Idx        []int32
	Val        []float32
}

// Sparse reports whether the rows carry column ids (CSR rows).
func (l FeatureLayout) Sparse() bool { return l.Ptr != nil }

// RowLen is the number of values of row r.
func (l FeatureLayout) RowLen(r int) int {
	if l.Sparse() {
		return int(l.Ptr[r+1] - l.Ptr[r])
	}
	return l.Cols
}

// RowVal are the values of row r; RowIdx their column ids (nil: dense).
func (l FeatureLayout) RowVal(r int) []float32 {
	if l.Sparse() {
		return l.Val[l.Ptr[r]:l.Ptr[r+1]]
	}
	return l.Val[r*l.Cols : (r+1)*l.Cols]
}

// RowIdx are the column ids of row r's values, nil for dense rows.
func (l FeatureLayout) RowIdx(r int) []int32 {
	if l.Sparse() {
		return l.Idx[l.Ptr[r]:l.Ptr[r+1]]
	}
	return nil
}

// NewFeatureLayout returns an empty layout of cols columns with room for
// rows rows of nnz values: CSR rows when sparse, else dense; AppendRow
// fills it.
func NewFeatureLayout(cols int, sparse bool, rows int, nnz int64) FeatureLayout {
	l := FeatureLayout{Cols: cols, Val: make([]float32, 0, nnz)}
	if sparse {
		l.Ptr, l.Idx = make([]int64, 1, rows+1), make([]int32, 0, nnz)
	}
	return l
}

// AppendRow appends a row: its values val, with their column ids idx when
// sparse (idx is ignored for dense rows, which hold Cols values).
func (l *FeatureLayout) AppendRow(idx []int32, val []float32) {
	l.Rows++
	l.Val = append(l.Val, val...)
	if l.Sparse() {
		l.Idx = append(l.Idx, idx...)
		l.Ptr = append(l.Ptr, int64(len(l.Idx)))
	}
}

// FeaturesOf returns the features l lays out, without copying: sparse
// (SparseStore) for CSR rows, else dense (DenseStore); none for a layout
// without values and dense.
func FeaturesOf(l FeatureLayout) Features {
	if l.Sparse() {
		return SparseX(&CSR{NumRows: l.Rows, NumCols: l.Cols, Ptr: l.Ptr, Idx: l.Idx, Val: l.Val})
	}
	if l.Val == nil {
		return Features{}
	}
	return DenseX(l.Val, l.Rows, l.Cols)
}

// NewFeatures wraps a store (nil: no features).
func NewFeatures(s FeatureStore) Features { return Features{s} }

// Store is the storage kind holding the features, nil when none.
func (f Features) Store() FeatureStore { return f.s }

// Present reports whether features are stored.
func (f Features) Present() bool { return f.s != nil }

// Kind is the storage kind's name, "" when none.
func (f Features) Kind() string {
	if f.s == nil {
		return ""
	}
	return f.s.Kind()
}

// Rows is the number of rows stored (0 when none).
func (f Features) Rows() int {
	if f.s == nil {
		return 0
	}
	return f.s.Rows()
}

// Cols is the number of columns stored (0 when none).
func (f Features) Cols() int {
	if f.s == nil {
		return 0
	}
	return f.s.Cols()
}

// NNZ is the number of values stored.
func (f Features) NNZ() int64 {
	if f.s == nil {
		return 0
	}
	return f.s.NNZ()
}

// Bytes is the memory of the stored features.
func (f Features) Bytes() int64 {
	if f.s == nil {
		return 0
	}
	return f.s.Bytes()
}

// Values are the stored values (nil when none).
func (f Features) Values() []float32 {
	if f.s == nil {
		return nil
	}
	return f.s.Values()
}

// Sparse reports whether the stored rows leave out zeros (their memory
// grows with the non-zeros, not with the columns).
func (f Features) Sparse() bool { return f.s != nil && f.s.Layout().Sparse() }

// Density is the fraction of the entries stored (1 when dense, 0 when
// none).
func (f Features) Density() float64 {
	if f.Rows() == 0 || f.Cols() == 0 {
		return 0
	}
	return float64(f.NNZ()) / (float64(f.Rows()) * float64(f.Cols()))
}

// Row returns row r densely (see FeatureStore.Row).
func (f Features) Row(r int, buf []float32) []float32 { return f.s.Row(r, buf) }

// Select returns the listed rows, in that order (a shard's rows of the
// whole graph's).
func (f Features) Select(rows []int32) Features {
	if f.s == nil {
		return f
	}
	return Features{f.s.Select(rows)}
}

// MergeFeatures returns rows ref[i] = {part, row} of parts, which hold
// features of one kind (or none), as one store of that kind.
func MergeFeatures(parts []Features, ref [][2]int32) (Features, error) {
	if len(parts) == 0 || parts[0].s == nil {
		for i, p := range parts {
			if p.s != nil {
				return Features{}, fmt.Errorf("part %d holds features, part 0 none", i)
			}
		}
		return Features{}, nil
	}
	stores := make([]FeatureStore, len(parts))
	for i, p := range parts {
		if stores[i] = p.s; p.s == nil {
			return Features{}, fmt.Errorf("part %d holds no features, part 0 %s ones", i, parts[0].Kind())
		}
	}
	s, err := parts[0].s.Merge(stores, ref)
	return Features{s}, err
}

// Permute moves row perm[i] to row i (in place where the kind can).
func (f *Features) Permute(perm []int32) {
	if f.s != nil {
		f.s = f.s.Permute(perm)
	}
}

// NormalizeRows divides every row by the sum of its absolute values, in
// place (graph.RowNormalize for every kind).
func (f Features) NormalizeRows() {
	if f.s != nil {
		f.s.NormalizeRows()
	}
}

// Check reports the first non-finite value or malformed row (a
// *FeatureError naming its row and column).
func (f Features) Check() error {
	if f.s == nil {
		return nil
	}
	return f.s.Check()
}

// CheckShape reports features that are not rows×cols: rows×0 and none
// agree.
func (f Features) CheckShape(rows, cols int) error {
	switch {
	case f.s == nil && cols == 0:
		return nil
	case f.s == nil:
		return fmt.Errorf("no features for %d nodes × %d", rows, cols)
	case f.Rows() != rows || f.Cols() != cols:
		return fmt.Errorf("%s features are %d×%d, want nodes×featdim=%d×%d", f.Kind(), f.Rows(), f.Cols(), rows, cols)
	}
	if l := f.Layout(); !l.Sparse() && len(l.Val) != rows*cols {
		return fmt.Errorf("len(X)=%d, want nodes·featdim=%d·%d", len(l.Val), rows, cols)
	}
	return nil
}

// Layout is the features as the files carry them (zero when none).
func (f Features) Layout() FeatureLayout {
	if f.s == nil {
		return FeatureLayout{}
	}
	return f.s.Layout()
}

// Dense returns the features as dense rows (DenseStore): f itself when
// dense, else a dense copy (Rows·Cols values: the caller tells the user
// about it).
func (f Features) Dense() Features {
	if _, dense := f.s.(*DenseStore); dense || f.s == nil {
		return f
	}
	rows, cols := f.Rows(), f.Cols()
	d := make([]float32, rows*cols)
	for r := range rows {
		dst := d[r*cols : (r+1)*cols]
		copy(dst, f.s.Row(r, dst))
	}
	return DenseX(d, rows, cols)
}

// SparseOf returns the features' non-zeros as CSR rows (SparseStore): f
// itself when they are.
func (f Features) SparseOf() Features {
	if _, csr := f.s.(*SparseStore); csr || f.s == nil {
		return f
	}
	rows, cols := f.Rows(), f.Cols()
	buf := make([]float32, cols)
	out := &CSR{NumRows: rows, NumCols: cols, Ptr: make([]int64, rows+1), Idx: []int32{}, Val: []float32{}}
	for r := range rows {
		for j, v := range f.s.Row(r, buf) {
			if v != 0 {
				out.Idx = append(out.Idx, int32(j))
				out.Val = append(out.Val, v)
			}
		}
		out.Ptr[r+1] = int64(len(out.Idx))
	}
	return SparseX(out)
}

// Equal reports whether f and g hold the same kind, shape and values (bit
// for bit; for tests and round trips).
func (f Features) Equal(g Features) bool {
	if f.Kind() != g.Kind() || f.Rows() != g.Rows() || f.Cols() != g.Cols() {
		return false
	}
	a, b := f.Layout(), g.Layout()
	bits := func(x, y float32) bool { return x == y || (x != x && y != y) }
	return slices.Equal(a.Ptr, b.Ptr) && slices.Equal(a.Idx, b.Idx) && slices.EqualFunc(a.Val, b.Val, bits)
}

// AsFeatureError returns err's *FeatureError, if it has one.
func AsFeatureError(err error) (*FeatureError, bool) {
	var fe *FeatureError
	ok := errors.As(err, &fe)
	return fe, ok
}
