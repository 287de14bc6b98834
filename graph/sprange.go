package graph

import "archive/zip"

// SparseRange reads one reader's rows of sparse features stored in an .npz
// archive (a scipy.sparse.save_npz file, or a PyG-style file's x_* arrays)
// and keeps only those rows: a reader holds its rows' non-zeros, never the
// whole matrix. A csr archive is entered by row range: its offsets first,
// then the entries of the rows, read in place where the members are stored
// (np.savez, save_npz(compressed=False)); deflated members are decompressed
// front to back up to the rows. csc and coo archives list the entries of a
// row all over the file: a reader reads them through, entry by entry, and
// keeps those of its rows.
type SparseRange struct {
	Path       string
	Rows, Cols int
	Format     string // csr, csc or coo
	// ByRows reports that a reader reads only its rows' bytes: a csr
	// archive whose members are stored uncompressed.
	ByRows bool
	z      *npzFile
	prefix string
	own    bool // z was opened here: Close closes it
}

// OpenSparseRange opens the scipy.sparse.save_npz archive at path, of
// features for n nodes (n < 0: any number), and checks its format and
// shape; no entry is read.
func OpenSparseRange(path string, n int) (*SparseRange, error) {
	z, err := openNpz(path)
	if err != nil {
		return nil, err
	}
	s, err := newSparseRange(z, "", n)
	if err != nil {
		z.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// SparseFeatureRange opens the features of a PyG-style file stored as CSR
// arrays (SparseFeatures) for reading by rows; closing it leaves s open.
func (s *NpzSource) SparseFeatureRange() (*SparseRange, error) {
	if !s.SparseFeatures {
		return nil, errorf(s.Path, 0, "features are not stored as x_data, x_indices, x_indptr, x_shape")
	}
	return newSparseRange(s.files[0], "x_", s.Nodes)
}

func newSparseRange(z *npzFile, prefix string, n int) (*SparseRange, error) {
	format := "csr"
	if prefix == "" {
		if !isSparseNpz(z) {
			return nil, errorf(z.path, 0, "not a scipy sparse archive (format, shape, data)")
		}
		var err error
		if format, err = z.formatString(); err != nil {
			return nil, err
		}
	}
	switch format {
	case "csr", "csc", "coo":
	default:
		return nil, errorf(z.path+":format.npy", 0, "format %q: want csr, csc or coo", format)
	}
	rows, cols, err := z.sparseShape(prefix+"shape", n)
	if err != nil {
		return nil, err
	}
	s := &SparseRange{Path: z.path, Rows: rows, Cols: cols, Format: format, z: z, prefix: prefix, ByRows: format == "csr"}
	for _, m := range []string{"indptr", "indices", "data"} {
		if f := z.members[prefix+m]; s.ByRows && (f == nil || f.Method != zip.Store) {
			s.ByRows = false
		}
	}
	return s, nil
}

// Close closes the archive when OpenSparseRange opened it.
func (s *SparseRange) Close() error {
	if s.own {
		return s.z.Close()
	}
	return nil
}

// ReadRows returns rows [lo, hi) as canonical sparse features (checked as
// CheckSparseFeatures checks the whole matrix; errors name the archive,
// the member and the row of the whole matrix). The readers of all row
// ranges together check everything the whole-matrix reader checks.
func (s *SparseRange) ReadRows(lo, hi int) (*CSR, error) {
	if lo < 0 || hi < lo || hi > s.Rows {
		return nil, errorf(s.Path, 0, "rows [%d,%d) outside [0,%d)", lo, hi, s.Rows)
	}
	var x *CSR
	var err error
	switch s.Format {
	case "csr":
		x, err = s.csrRows(lo, hi)
	case "csc":
		x, err = s.cscRows(lo, hi)
	default:
		x, err = s.cooRows(lo, hi)
	}
	if err != nil {
		return nil, err
	}
	if err := checkSparseFrom(x, lo); err != nil {
		return nil, errorf(s.Path, 0, "%s: %v", s.Format, err)
	}
	return x, nil
}

// ints reads elements [from, to) of integer member a.
func (s *SparseRange) ints(a *npzArray, from, to int64) ([]int64, error) {
	if k := a.h.descr[1]; k != 'i' && k != 'u' {
		return nil, errorf(a.name, 0, "dtype %s: want integers", a.h.descr)
	}
	arr, err := a.elems(from, to)
	if err != nil {
		return nil, err
	}
	v, err := arr.Int64()
	if err != nil {
		return nil, errorf(a.name, 0, "%v", err)
	}
	return v, nil
}

// floats reads elements [from, to) of numeric member a as float32.
func (s *SparseRange) floats(a *npzArray, from, to int64) ([]float32, error) {
	arr, err := a.elems(from, to)
	if err != nil {
		return nil, err
	}
	v, err := arr.Float32()
	if err != nil {
		return nil, errorf(a.name, 0, "%v", err)
	}
	return v, nil
}

// vectors opens the named members (under the prefix) for reading by
// ranges; close closes those opened.
func (s *SparseRange) vectors(names ...string) (as []*npzArray, close func(), err error) {
	close = func() {
		for _, a := range as {
			a.Close()
		}
	}
	for _, n := range names {
		a, err := s.z.vector(s.prefix + n)
		if err != nil {
			close()
			return nil, nil, err
		}
		as = append(as, a)
	}
	return as, close, nil
}

// csrRows reads rows [lo, hi) of a csr archive: its offsets [lo, hi], then
// the entries between them.
func (s *SparseRange) csrRows(lo, hi int) (*CSR, error) {
	as, closeAll, err := s.vectors("indptr", "indices", "data")
	if err != nil {
		return nil, err
	}
	defer closeAll()
	pa, ia, da := as[0], as[1], as[2]
	switch {
	case pa.n != int64(s.Rows)+1:
		return nil, errorf(pa.name, 0, "%d entries, want %d (one per row of the shape, plus one)", pa.n, s.Rows+1)
	case ia.n != da.n:
		return nil, errorf(ia.name, 0, "%d entries but data has %d", ia.n, da.n)
	}
	ptr, err := s.ints(pa, int64(lo), int64(hi)+1)
	if err != nil {
		return nil, err
	}
	switch last := ptr[hi-lo]; {
	case lo == 0 && ptr[0] != 0:
		return nil, errorf(pa.name, 0, "entry 0 is %d, want 0", ptr[0])
	case hi == s.Rows && last != da.n:
		return nil, errorf(pa.name, 0, "last entry %d, want the %d values", last, da.n)
	case ptr[0] < 0 || last > da.n:
		return nil, errorf(pa.name, 0, "entries [%d,%d] point outside the %d values", lo, hi, da.n)
	}
	for i := range hi - lo {
		if ptr[i+1] < ptr[i] {
			return nil, errorf(pa.name, 0, "entry %d is %d, below entry %d (%d)", lo+i+1, ptr[i+1], lo+i, ptr[i])
		}
	}
	base := ptr[0]
	idx, err := s.ints(ia, base, ptr[hi-lo])
	if err != nil {
		return nil, err
	}
	val, err := s.floats(da, base, ptr[hi-lo])
	if err != nil {
		return nil, err
	}
	x := &CSR{NumRows: hi - lo, NumCols: s.Cols, Ptr: ptr, Idx: make([]int32, len(idx)), Val: val}
	for i := range ptr {
		ptr[i] -= base
	}
	for k, u := range idx {
		if u < 0 || u >= int64(s.Cols) {
			return nil, errorf(ia.name, 0, "entry %d is %d, outside [0,%d)", base+int64(k), u, s.Cols)
		}
		x.Idx[k] = int32(u)
	}
	return x, nil
}

// kept collects the entries of rows [lo, hi) met while reading through a
// csc or coo archive.
type kept struct {
	lo, hi   int
	row, col []int32
	val      []float32
}

func (k *kept) add(r, c int64, v float32) {
	if r >= int64(k.lo) && r < int64(k.hi) {
		k.row, k.col, k.val = append(k.row, int32(r-int64(k.lo))), append(k.col, int32(c)), append(k.val, v)
	}
}

// csr returns the kept entries as rows, each in the order met.
func (k *kept) csr(cols int) *CSR {
	x := FromCOO(k.hi-k.lo, cols, k.col, k.row, k.val)
	if x.Val == nil {
		x.Val = []float32{}
	}
	return x
}

// cscRows reads a csc archive through (its column offsets whole, then its
// entries a block at a time) and keeps the entries of rows [lo, hi).
func (s *SparseRange) cscRows(lo, hi int) (*CSR, error) {
	as, closeAll, err := s.vectors("indptr", "indices", "data")
	if err != nil {
		return nil, err
	}
	defer closeAll()
	pa, ia, da := as[0], as[1], as[2]
	if pa.n != int64(s.Cols)+1 {
		return nil, errorf(pa.name, 0, "%d entries, want %d (one per column of the shape, plus one)", pa.n, s.Cols+1)
	}
	ptr, err := s.ints(pa, 0, pa.n)
	if err != nil {
		return nil, err
	}
	switch {
	case ia.n != da.n:
		return nil, errorf(ia.name, 0, "%d entries but data has %d", ia.n, da.n)
	case ptr[0] != 0:
		return nil, errorf(pa.name, 0, "entry 0 is %d, want 0", ptr[0])
	case ptr[s.Cols] != da.n:
		return nil, errorf(pa.name, 0, "last entry %d, want the %d values", ptr[s.Cols], da.n)
	}
	for i := range s.Cols {
		if ptr[i+1] < ptr[i] {
			return nil, errorf(pa.name, 0, "entry %d is %d, below entry %d (%d)", i+1, ptr[i+1], i, ptr[i])
		}
	}
	k := &kept{lo: lo, hi: hi}
	col := 0
	for from := int64(0); from < da.n; from += npzBlock {
		to := min(from+npzBlock, da.n)
		rows, err := s.ints(ia, from, to)
		if err != nil {
			return nil, err
		}
		val, err := s.floats(da, from, to)
		if err != nil {
			return nil, err
		}
		for i, r := range rows {
			e := from + int64(i)
			for ptr[col+1] <= e {
				col++
			}
			if r < 0 || r >= int64(s.Rows) {
				return nil, errorf(ia.name, 0, "entry %d is %d, outside [0,%d)", e, r, s.Rows)
			}
			k.add(r, int64(col), val[i])
		}
	}
	return k.csr(s.Cols), nil
}

// cooRows reads a coo archive through, a block of entries at a time, and
// keeps those of rows [lo, hi), sorted into rows by column.
func (s *SparseRange) cooRows(lo, hi int) (*CSR, error) {
	as, closeAll, err := s.vectors("row", "col", "data")
	if err != nil {
		return nil, err
	}
	defer closeAll()
	ra, ca, da := as[0], as[1], as[2]
	for _, a := range []*npzArray{ra, ca} {
		if a.n != da.n {
			return nil, errorf(a.name, 0, "%d entries but data has %d", a.n, da.n)
		}
	}
	k := &kept{lo: lo, hi: hi}
	for from := int64(0); from < da.n; from += npzBlock {
		to := min(from+npzBlock, da.n)
		rows, err := s.ints(ra, from, to)
		if err != nil {
			return nil, err
		}
		cols, err := s.ints(ca, from, to)
		if err != nil {
			return nil, err
		}
		val, err := s.floats(da, from, to)
		if err != nil {
			return nil, err
		}
		for i, r := range rows {
			switch c := cols[i]; {
			case r < 0 || r >= int64(s.Rows):
				return nil, errorf(ra.name, 0, "entry %d is %d, outside [0,%d)", from+int64(i), r, s.Rows)
			case c < 0 || c >= int64(s.Cols):
				return nil, errorf(ca.name, 0, "entry %d is %d, outside [0,%d)", from+int64(i), c, s.Cols)
			}
			k.add(r, cols[i], val[i])
		}
	}
	x := k.csr(s.Cols)
	x.SortRows()
	return x, nil
}
