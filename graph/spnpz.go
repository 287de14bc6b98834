package graph

import (
	"encoding/binary"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Sparse feature archives. scipy.sparse.save_npz writes a matrix as an
// .npz holding format (b'csr', b'csc' or b'coo'), shape (2 integers), data
// and either indices and indptr (csr, csc) or row and col (coo). A PyG-style
// dataset file may hold its feature matrix x the same way, as x_data,
// x_indices, x_indptr and x_shape (CSR). Both are read into a canonical
// sparse feature matrix (feat_csr.go); an archive member of dtype object (a
// pickle) is refused, never unpickled.

// maxFormatBytes bounds the format member of a scipy archive (a few bytes).
const maxFormatBytes = 256

// isSparseNpz reports whether archive z holds a scipy sparse matrix.
func isSparseNpz(z *npzFile) bool { return z.has("format") && z.has("shape") && z.has("data") }

// readSparseFeatureFile reads a scipy.sparse.save_npz archive of features
// for n nodes (n < 0: any number).
func readSparseFeatureFile(path string, n int) (*CSR, error) {
	z, err := openNpz(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	if !isSparseNpz(z) {
		return nil, errorf(path, 0, "not a scipy sparse archive (format, shape, data): it holds %s; dense features go in a .npy file", strings.Join(z.names(), ", "))
	}
	format, err := z.formatString()
	if err != nil {
		return nil, err
	}
	return z.sparseMatrix("", format, n)
}

// formatString reads the format member: a 0-d bytes or unicode array.
func (z *npzFile) formatString() (string, error) {
	m := z.members["format"]
	name := z.path + ":format.npy"
	if m.UncompressedSize64 > maxFormatBytes {
		return "", errorf(name, 0, "%d bytes: not a format name", m.UncompressedSize64)
	}
	rc, err := m.Open()
	if err != nil {
		return "", errorf(name, 0, "bad zip entry: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return "", errorf(name, 0, "reading: %v", err)
	}
	h, err := readNpyHeaderRaw(strings.NewReader(string(b)), name)
	if err != nil {
		return "", err
	}
	if err := refusePickle(name, h.descr); err != nil {
		return "", err
	}
	data := b[min(int(h.dataOff), len(b)):]
	var s string
	switch {
	case len(h.shape) != 0:
		return "", errorf(name, 0, "shape %v, want a scalar string", h.shape)
	case strings.HasPrefix(h.descr, "|S"):
		s = strings.TrimRight(string(data), "\x00")
	case strings.HasPrefix(h.descr, "<U"):
		var sb strings.Builder
		for i := 0; i+4 <= len(data); i += 4 {
			if r := rune(binary.LittleEndian.Uint32(data[i:])); r != 0 && utf8.ValidRune(r) {
				sb.WriteRune(r)
			}
		}
		s = sb.String()
	default:
		return "", errorf(name, 0, "dtype %s, want a string (|S or <U)", h.descr)
	}
	return s, nil
}

// refusePickle refuses an object array: its data is a Python pickle.
func refusePickle(name, descr string) error {
	if strings.Contains(descr, "O") {
		return errorf(name, 0, "dtype %s holds Python objects (a pickle), which are never loaded: save plain arrays (scipy.sparse.save_npz does)", descr)
	}
	return nil
}

// sparseMatrix reads the sparse matrix stored under prefix (format csr,
// csc or coo) as canonical CSR features of n rows (n < 0: any).
func (z *npzFile) sparseMatrix(prefix, format string, n int) (*CSR, error) {
	rows, cols, err := z.sparseShape(prefix+"shape", n)
	if err != nil {
		return nil, err
	}
	val, err := z.floats(prefix + "data")
	if err != nil {
		return nil, err
	}
	var x *CSR
	switch format {
	case "csr", "csc":
		major, minor := rows, cols
		if format == "csc" {
			major, minor = cols, rows
		}
		x, err = z.compressed(prefix, major, minor, val)
		if err == nil && format == "csc" {
			x = x.Transpose()
		}
	case "coo":
		x, err = z.coordinates(prefix, rows, cols, val)
	default:
		return nil, errorf(z.path+":format.npy", 0, "format %q: want csr, csc or coo", format)
	}
	if err != nil {
		return nil, err
	}
	if err := CheckSparseFeatures(x); err != nil {
		return nil, errorf(z.path, 0, "%s: %v", format, err)
	}
	return x, nil
}

// sparseShape reads the shape member: two integers, rows n (n ≥ 0) and at
// least one column within MaxFeatDim.
func (z *npzFile) sparseShape(name string, n int) (rows, cols int, err error) {
	s, err := z.ints(name)
	if err != nil {
		return 0, 0, err
	}
	full := z.path + ":" + name + ".npy"
	if len(s) != 2 || s[0] < 0 || s[1] < 0 || (n >= 0 && s[0] != int64(n)) {
		return 0, 0, errorf(full, 0, "shape %v, want (%s, F)", s, nodesStr(n))
	}
	if err := checkRows(full, int(s[0])); err != nil {
		return 0, 0, err
	}
	if err := checkFeatWidth(full, s[1]); err != nil {
		return 0, 0, err
	}
	return int(s[0]), int(s[1]), nil
}

// member reads array name whole, refusing object arrays and more than one
// dimension.
func (z *npzFile) member(name string) (*NpyArray, error) {
	a, err := z.vector(name)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.elems(0, a.n)
}

// vector opens array name for reading by ranges, refusing object arrays
// and more than one dimension.
func (z *npzFile) vector(name string) (*npzArray, error) {
	if m := z.members[name]; m != nil {
		if h, err := readNpyHeaderRaw(z.rawHeader(m), z.path+":"+name+".npy"); err == nil {
			if err := refusePickle(z.path+":"+name+".npy", h.descr); err != nil {
				return nil, err
			}
		}
	}
	a, err := z.open(name)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) > 1 {
		a.Close()
		return nil, errorf(a.name, 0, "shape %v, want one dimension", a.Shape)
	}
	return a, nil
}

// rawHeader returns a reader of member m's first bytes (its npy header),
// or an empty reader when it cannot be opened (open reports that).
func (z *npzFile) rawHeader(m interface{ Open() (io.ReadCloser, error) }) io.Reader {
	rc, err := m.Open()
	if err != nil {
		return strings.NewReader("")
	}
	b := make([]byte, 1024)
	k, _ := io.ReadFull(rc, b)
	rc.Close()
	return strings.NewReader(string(b[:k]))
}

// ints reads integer member name.
func (z *npzFile) ints(name string) ([]int64, error) {
	a, err := z.member(name)
	if err != nil {
		return nil, err
	}
	if k := a.Descr[1]; k != 'i' && k != 'u' {
		return nil, errorf(z.path+":"+name+".npy", 0, "dtype %s: want integers", a.Descr)
	}
	s, err := a.Int64()
	if err != nil {
		return nil, errorf(z.path+":"+name+".npy", 0, "%v", err)
	}
	return s, nil
}

// floats reads numeric member name as float32 (booleans and integers
// converted).
func (z *npzFile) floats(name string) ([]float32, error) {
	a, err := z.member(name)
	if err != nil {
		return nil, err
	}
	s, err := a.Float32()
	if err != nil {
		return nil, errorf(z.path+":"+name+".npy", 0, "%v", err)
	}
	return slices.Clip(s), nil
}

// compressed reads indptr and indices of a compressed matrix of major
// rows over minor columns (csr: rows over columns, csc: the transpose) and
// checks them: indptr starts at 0, never decreases and ends at the number
// of values; every index lies in [0, minor).
func (z *npzFile) compressed(prefix string, major, minor int, val []float32) (*CSR, error) {
	ptr, err := z.ints(prefix + "indptr")
	if err != nil {
		return nil, err
	}
	idx, err := z.ints(prefix + "indices")
	if err != nil {
		return nil, err
	}
	pn, in := z.path+":"+prefix+"indptr.npy", z.path+":"+prefix+"indices.npy"
	switch {
	case len(ptr) != major+1:
		return nil, errorf(pn, 0, "%d entries, want %d (one per row or column of the shape, plus one)", len(ptr), major+1)
	case ptr[0] != 0:
		return nil, errorf(pn, 0, "entry 0 is %d, want 0", ptr[0])
	case len(idx) != len(val):
		return nil, errorf(in, 0, "%d entries but data has %d", len(idx), len(val))
	case ptr[major] != int64(len(val)):
		return nil, errorf(pn, 0, "last entry %d, want the %d values", ptr[major], len(val))
	}
	for i := range major {
		if ptr[i+1] < ptr[i] {
			return nil, errorf(pn, 0, "entry %d is %d, below entry %d (%d)", i+1, ptr[i+1], i, ptr[i])
		}
	}
	x := &CSR{NumRows: major, NumCols: minor, Ptr: ptr, Idx: make([]int32, len(idx)), Val: val}
	for k, u := range idx {
		if u < 0 || u >= int64(minor) {
			return nil, errorf(in, 0, "entry %d is %d, outside [0,%d)", k, u, minor)
		}
		x.Idx[k] = int32(u)
	}
	return x, nil
}

// coordinates reads row and col of a coo matrix and sorts the entries
// into CSR rows; duplicate coordinates are refused (scipy sums them only
// when asked).
func (z *npzFile) coordinates(prefix string, rows, cols int, val []float32) (*CSR, error) {
	r, err := z.ints(prefix + "row")
	if err != nil {
		return nil, err
	}
	c, err := z.ints(prefix + "col")
	if err != nil {
		return nil, err
	}
	src, dst := make([]int32, len(c)), make([]int32, len(r))
	for k, what := range []struct {
		ids []int64
		to  []int32
		n   int
	}{{r, dst, rows}, {c, src, cols}} {
		name := z.path + ":" + prefix + []string{"row", "col"}[k] + ".npy"
		if len(what.ids) != len(val) {
			return nil, errorf(name, 0, "%d entries but data has %d", len(what.ids), len(val))
		}
		for i, v := range what.ids {
			if v < 0 || v >= int64(what.n) {
				return nil, errorf(name, 0, "entry %d is %d, outside [0,%d)", i, v, what.n)
			}
			what.to[i] = int32(v)
		}
	}
	x := FromCOO(rows, cols, src, dst, val)
	x.SortRows()
	return x, nil
}
