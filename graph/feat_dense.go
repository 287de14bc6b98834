package graph

import "fmt"

// DenseStore is the dense storage kind of features: every entry, row-major
// (Rows×Cols float32), the form of .npy and OGB features.
type DenseStore struct {
	Data       []float32 // Rows·Cols values, row r at [r·Cols, (r+1)·Cols)
	rows, cols int
}

// DenseX returns the row-major rows×cols values x as dense features
// (without copying); none when cols is 0.
func DenseX(x []float32, rows, cols int) Features {
	if cols == 0 {
		return Features{}
	}
	return Features{&DenseStore{Data: x, rows: rows, cols: cols}}
}

// Kind is "dense".
func (d *DenseStore) Kind() string { return "dense" }

// Rows is the number of rows.
func (d *DenseStore) Rows() int { return d.rows }

// Cols is the number of columns.
func (d *DenseStore) Cols() int { return d.cols }

// NNZ is every entry.
func (d *DenseStore) NNZ() int64 { return int64(len(d.Data)) }

// Bytes is 4 bytes an entry.
func (d *DenseStore) Bytes() int64 { return 4 * int64(len(d.Data)) }

// Values are the entries.
func (d *DenseStore) Values() []float32 { return d.Data }

// Row is a view of row r.
func (d *DenseStore) Row(r int, _ []float32) []float32 { return d.Data[r*d.cols : (r+1)*d.cols] }

// Select copies the listed rows.
func (d *DenseStore) Select(rows []int32) FeatureStore {
	c := d.cols
	out := &DenseStore{Data: make([]float32, len(rows)*c), rows: len(rows), cols: c}
	for i, v := range rows {
		copy(out.Data[i*c:(i+1)*c], d.Data[int(v)*c:(int(v)+1)*c])
	}
	return out
}

// Merge copies rows ref[i] of dense stores.
func (d *DenseStore) Merge(stores []FeatureStore, ref [][2]int32) (FeatureStore, error) {
	c := d.cols
	out := &DenseStore{Data: make([]float32, len(ref)*c), rows: len(ref), cols: c}
	for i, s := range stores {
		if o, ok := s.(*DenseStore); !ok || o.cols != c {
			return nil, fmt.Errorf("part %d holds %s features of %d columns, part 0 dense ones of %d", i, s.Kind(), s.Cols(), c)
		}
	}
	for m, r := range ref {
		src, j := stores[r[0]].(*DenseStore), int(r[1])
		copy(out.Data[m*c:(m+1)*c], src.Data[j*c:(j+1)*c])
	}
	return out, nil
}

// Permute moves the rows in place, one row of scratch.
func (d *DenseStore) Permute(perm []int32) FeatureStore {
	x, c := d.Data, d.cols
	done := make([]bool, len(perm))
	tmp := make([]float32, c)
	for i := range perm {
		if done[i] || int(perm[i]) == i {
			continue
		}
		copy(tmp, x[i*c:(i+1)*c])
		j := i
		for {
			done[j] = true
			k := int(perm[j])
			if k == i {
				copy(x[j*c:(j+1)*c], tmp)
				break
			}
			copy(x[j*c:(j+1)*c], x[k*c:(k+1)*c])
			j = k
		}
	}
	return d
}

// NormalizeRows is RowNormalize.
func (d *DenseStore) NormalizeRows() { RowNormalize(d.Data, d.cols) }

// Check reports the first non-finite entry.
func (d *DenseStore) Check() error {
	for i, x := range d.Data {
		if x-x != 0 { // NaN or ±Inf
			return &FeatureError{Row: i / d.cols, Msg: fmt.Sprintf("feature [%d,%d] is %v", i/d.cols, i%d.cols, x)}
		}
	}
	return nil
}

// Layout is dense rows.
func (d *DenseStore) Layout() FeatureLayout {
	return FeatureLayout{Rows: d.rows, Cols: d.cols, Val: d.Data}
}

// DenseData is the row-major values of dense features, nil for another
// kind or none (for code that needs the kind itself: tests, converters).
func DenseData(f Features) []float32 {
	if d, ok := f.s.(*DenseStore); ok {
		return d.Data
	}
	return nil
}
