package graph

import (
	"archive/zip"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// scipyMembers are the members scipy.sparse.save_npz writes for format f
// with the given shape, data and index arrays (indices and indptr for csr
// and csc, row and col for coo).
func scipyMembers(f string, rows, cols int64, data []float32, a, b []int32) [][2]string {
	m := [][2]string{
		{"format.npy", string(npyBytes(1, fmt.Sprintf("{'descr': '|S%d', 'fortran_order': False, 'shape': (), }", len(f)), []byte(f)))},
		{"shape.npy", npyMember("<i8", "(2,)", []int64{rows, cols})},
		{"data.npy", npyMember("<f4", fmt.Sprintf("(%d,)", len(data)), data)},
	}
	names := [2]string{"indices.npy", "indptr.npy"}
	if f == "coo" {
		names = [2]string{"row.npy", "col.npy"}
	}
	return append(m, [2]string{names[0], npyMember("<i4", fmt.Sprintf("(%d,)", len(a)), a)},
		[2]string{names[1], npyMember("<i4", fmt.Sprintf("(%d,)", len(b)), b)})
}

// TestSparseFeatureFormats: csr, csc and coo (stored or deflated, int32 or
// int64 offsets) of one matrix read as the same canonical CSR, which equals
// the dense form's non-zeros; WriteSparseNpz round-trips.
func TestSparseFeatureFormats(t *testing.T) {
	// [[0 1 0 2], [0 0 0 0], [3 0 4 0]]
	dense := []float32{0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 4, 0}
	want := SparseFeaturesOf(dense, 3, 4)
	dir := t.TempDir()
	same := func(what string, x *CSR) {
		t.Helper()
		if x.NumRows != 3 || x.NumCols != 4 || !slices.Equal(x.Ptr, want.Ptr) || !slices.Equal(x.Idx, want.Idx) || !slices.Equal(x.Val, want.Val) {
			t.Fatalf("%s: read %+v, want %+v", what, x, want)
		}
		if !slices.Equal(DenseFeatures(x), dense) {
			t.Fatalf("%s: dense form differs", what)
		}
	}
	for _, c := range []struct {
		format string
		data   []float32
		a, b   []int32
	}{
		{"csr", []float32{1, 2, 3, 4}, []int32{1, 3, 0, 2}, []int32{0, 2, 2, 4}},
		{"csc", []float32{3, 1, 4, 2}, []int32{2, 0, 2, 0}, []int32{0, 1, 2, 3, 4}},
		{"coo", []float32{4, 2, 3, 1}, []int32{2, 0, 2, 0}, []int32{2, 3, 0, 1}},
	} {
		for _, method := range []uint16{zip.Store, zip.Deflate} {
			p := npzOf(t, filepath.Join(dir, fmt.Sprintf("%s-%d.npz", c.format, method)), method, scipyMembers(c.format, 3, 4, c.data, c.a, c.b)...)
			x, err := readSparseFeatureFile(p, 3)
			if err != nil {
				t.Fatal(err)
			}
			same(p, x)
		}
	}
	p := filepath.Join(dir, "written.npz")
	if err := WriteSparseNpz(p, want, false); err != nil {
		t.Fatal(err)
	}
	x, err := readSparseFeatureFile(p, -1)
	if err != nil {
		t.Fatal(err)
	}
	same("WriteSparseNpz", x)
	u := npzOf(t, filepath.Join(dir, "unicode.npz"), zip.Store, append(scipyMembers("csr", 3, 4, []float32{1, 2, 3, 4}, []int32{1, 3, 0, 2}, []int32{0, 2, 2, 4})[1:],
		[2]string{"format.npy", string(npyBytes(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (), }", []byte("c\x00\x00\x00s\x00\x00\x00r\x00\x00\x00")))})...)
	if x, err = readSparseFeatureFile(u, 3); err != nil {
		t.Fatal(err)
	}
	same("unicode format", x)
}

// TestSparseFeatureErrors: every malformed archive is a one-line error
// naming the file and the member or entry.
func TestSparseFeatureErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npz")
	nan := float32(math.NaN())
	csr := func(rows int64, data []float32, idx, ptr []int32) [][2]string {
		return scipyMembers("csr", rows, 4, data, idx, ptr)
	}
	pickle := [2]string{"data.npy", string(npyBytes(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", []byte("\x80\x04junk")))}
	for _, c := range []struct {
		name    string
		members [][2]string
		file    string
		want    string
	}{
		{"unsorted", csr(2, []float32{1, 2}, []int32{3, 1}, []int32{0, 2, 2}), p, "row 0: column ids not strictly increasing (1 after 3)"},
		{"duplicate", csr(2, []float32{1, 2}, []int32{1, 1}, []int32{0, 2, 2}), p, "row 0: column ids not strictly increasing (1 after 1)"},
		{"coo duplicate", scipyMembers("coo", 2, 4, []float32{1, 2}, []int32{1, 1}, []int32{2, 2}), p, "row 1: column ids not strictly increasing"},
		{"id range", csr(2, []float32{1, 2}, []int32{1, 4}, []int32{0, 1, 2}), p + ":indices.npy", "entry 1 is 4, outside [0,4)"},
		{"coo row range", scipyMembers("coo", 2, 4, []float32{1}, []int32{2}, []int32{0}), p + ":row.npy", "entry 0 is 2, outside [0,2)"},
		{"nan", csr(2, []float32{1, nan}, []int32{1, 2}, []int32{0, 1, 2}), p, "feature [1,2] is NaN"},
		{"inf", csr(2, []float32{float32(math.Inf(1))}, []int32{0}, []int32{0, 1, 1}), p, "feature [0,0] is +Inf"},
		{"indptr decreases", csr(2, []float32{1, 2}, []int32{1, 2}, []int32{0, 3, 2}), p + ":indptr.npy", "entry 2 is 2, below entry 1 (3)"},
		{"indptr length", csr(2, []float32{1}, []int32{1}, []int32{0, 1}), p + ":indptr.npy", "2 entries, want 3"},
		{"indptr start", csr(2, []float32{1}, []int32{1}, []int32{1, 1, 1}), p + ":indptr.npy", "entry 0 is 1, want 0"},
		{"indptr end", csr(2, []float32{1, 2}, []int32{1, 2}, []int32{0, 1, 1}), p + ":indptr.npy", "last entry 1, want the 2 values"},
		{"lengths", csr(2, []float32{1, 2}, []int32{1}, []int32{0, 1, 2}), p + ":indices.npy", "1 entries but data has 2"},
		{"rows", csr(3, []float32{1}, []int32{1}, []int32{0, 1, 1, 1}), p + ":shape.npy", "shape [3 4], want (2, F)"},
		{"pickle", append(csr(2, []float32{1}, []int32{1}, []int32{0, 1, 1})[:2], pickle), p + ":data.npy", "a pickle"},
		{"format", scipyMembers("bsr", 2, 4, []float32{1}, []int32{1}, []int32{0, 1, 1}), p + ":format.npy", `format "bsr": want csr, csc or coo`},
		{"not sparse", [][2]string{{"x.npy", npyMember("<f4", "(2, 1)", []float32{1, 2})}}, p, "not a scipy sparse archive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			npzOf(t, p, zip.Store, c.members...)
			_, err := readSparseFeatureFile(p, 2)
			wantParseError(t, err, c.file, 0, c.want)
		})
	}
}

// TestSparseFeatureRows: rows selected, permuted and row-normalised as the
// dense features are.
func TestSparseFeatureRows(t *testing.T) {
	dense := []float32{0, 1, 0, -2, 0, 0, 0, 0, 3, 0, 4, 0}
	x := SparseFeaturesOf(dense, 3, 4)
	got := DenseFeatures(SparseRows(x, []int32{2, 0}))
	if !slices.Equal(got, append(slices.Clone(dense[8:12]), dense[0:4]...)) {
		t.Fatalf("rows 2, 0: %v", got)
	}
	RowNormalizeSparse(x)
	RowNormalize(dense, 4)
	if !slices.Equal(DenseFeatures(x), dense) {
		t.Fatalf("row-normalised: %v, dense %v", DenseFeatures(x), dense)
	}
	if FeatureDensity(x) != 4.0/12 {
		t.Fatalf("density %g", FeatureDensity(x))
	}
}

// TestBagOfWordsNpz: a generated bag-of-words graph (words tied to the
// class, the same on any number of goroutines) written as a PyG-style file
// loads with the same sparse features.
func TestBagOfWordsNpz(t *testing.T) {
	s, err := ParseGenSpec("nodes=3000,degree=6,classes=4,feat=500,words=0.02,seed=3")
	if err != nil {
		t.Fatal(err)
	}
	s.Threads = 1
	ds, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Threads = 3
	ds3, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	if xs(ds) == nil || xd(ds) != nil || !slices.Equal(xs(ds).Idx, xs(ds3).Idx) || !slices.Equal(xs(ds).Val, xs(ds3).Val) {
		t.Fatal("bag-of-words features missing or differing with the thread count")
	}
	if err := CheckSparseFeatures(xs(ds)); err != nil {
		t.Fatal(err)
	}
	if d := FeatureDensity(xs(ds)); d < 0.01 || d > 0.03 {
		t.Fatalf("density %g, want about 0.02", d)
	}
	inClass := 0 // words from the node's class vocabulary: 1/(1+noise) of them plus chance
	for v := range ds.NumNodes() {
		for k := xs(ds).Ptr[v]; k < xs(ds).Ptr[v+1]; k++ {
			if xs(ds).Idx[k]%4 == ds.Labels[v] {
				inClass++
			}
		}
	}
	if frac := float64(inClass) / float64(xs(ds).NNZ()); frac < 0.25+0.5/13 {
		t.Fatalf("%.3f of the words are in the node's class vocabulary", frac)
	}
	p := filepath.Join(t.TempDir(), "bow.npz")
	if err := WriteNpzDataset(p, ds, false, true); err != nil {
		t.Fatal(err)
	}
	back, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if xs(back) == nil || back.FeatDim != 500 || !slices.Equal(xs(back).Ptr, xs(ds).Ptr) || !slices.Equal(xs(back).Idx, xs(ds).Idx) || !slices.Equal(xs(back).Val, xs(ds).Val) {
		t.Fatal("the PyG-style file's x_* arrays do not load as the written features")
	}
}

// TestSparseFeaturesBinary: sparse features round-trip through the binary
// format (flag 8, the x section as CSR rows), mapped without copying; a
// damaged non-zero count is a one-line error naming the section; range
// readers of 1, 3 and 7 row ranges read the rows, their checksums cover
// the section.
func TestSparseFeaturesBinary(t *testing.T) {
	for _, spec := range []string{"nodes=500,degree=4,classes=3,feat=300,words=0.02,seed=2", "nodes=501,degree=4,classes=3,feat=301,words=0.013,seed=5"} {
		s, err := ParseGenSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "bow.sgb")
		if err := WriteBinary(p, ds); err != nil {
			t.Fatal(err)
		}
		back, err := LoadBinary(p)
		if err != nil {
			t.Fatal(err)
		}
		if xs(back) == nil || xd(back) != nil || back.FeatDim != ds.FeatDim || !slices.Equal(xs(back).Ptr, xs(ds).Ptr) ||
			!slices.Equal(xs(back).Idx, xs(ds).Idx) || !slices.Equal(xs(back).Val, xs(ds).Val) {
			t.Fatalf("%s: sparse features do not round-trip", spec)
		}
		back.Release()
		for _, parts := range []int{1, 3, 7} {
			if err := sparseRangesEqual(p, xs(ds), parts); err != nil {
				t.Fatalf("%s: %d range readers: %v", spec, parts, err)
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h, err := binDecodeHeader(p, b, int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		b[h.sections[secX].offset]++ // the non-zero count
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = LoadBinaryWith(p, BinaryOptions{SkipChecksums: true})
		wantParseError(t, err, p, 0, "section x: ")
	}
}

// sparseRangesEqual reads the sparse features of the .sgb at path in parts
// row ranges, one BinaryRange each, and compares them with x; the readers'
// spans must verify the file's checksums.
func sparseRangesEqual(path string, x *CSR, parts int) error {
	var all []int64
	var first *BinaryRange
	for k := range parts {
		r, err := OpenBinaryRange(path)
		if err != nil {
			return err
		}
		defer r.Close()
		if first == nil {
			first = r
		}
		lo, hi := r.Nodes*int64(k)/int64(parts), r.Nodes*int64(k+1)/int64(parts)
		got, err := r.SparseFeatureRows(lo, hi)
		if err != nil {
			return err
		}
		ids := make([]int32, hi-lo)
		for i := range ids {
			ids[i] = int32(lo) + int32(i)
		}
		want := SparseRows(x, ids)
		if !slices.Equal(got.Ptr, want.Ptr) || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) {
			return fmt.Errorf("rows [%d,%d) differ", lo, hi)
		}
		all = append(all, r.ReadSpans()...)
	}
	return first.VerifySpans(all)
}

// TestSparseRangeRows: csr, csc and coo archives, stored and deflated, and
// a PyG-style file's x_* arrays, read by 1, 3 and 7 row ranges give the
// matrix's rows; only a stored csr archive reads by rows (ByRows); an id
// out of range in one range is an error naming the member.
func TestSparseRangeRows(t *testing.T) {
	s, err := ParseGenSpec("nodes=301,degree=4,classes=3,feat=200,words=0.02,seed=4")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	check := func(what string, open func() (*SparseRange, error), byRows bool) {
		t.Helper()
		for _, parts := range []int{1, 3, 7} {
			for k := range parts {
				r, err := open()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if r.ByRows != byRows {
					t.Fatalf("%s: ByRows %v, want %v", what, r.ByRows, byRows)
				}
				lo, hi := r.Rows*k/parts, r.Rows*(k+1)/parts
				got, err := r.ReadRows(lo, hi)
				r.Close()
				if err != nil {
					t.Fatalf("%s: rows [%d,%d): %v", what, lo, hi, err)
				}
				ids := make([]int32, hi-lo)
				for i := range ids {
					ids[i] = int32(lo + i)
				}
				want := SparseRows(xs(ds), ids)
				if !slices.Equal(got.Ptr, want.Ptr) || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) {
					t.Fatalf("%s: rows [%d,%d) differ", what, lo, hi)
				}
			}
		}
	}
	for _, f := range []string{"csr", "csc", "coo"} {
		for _, z := range []bool{false, true} {
			p := filepath.Join(dir, fmt.Sprintf("%s-%v.npz", f, z))
			if err := WriteSparseNpzAs(p, xs(ds), f, z); err != nil {
				t.Fatal(err)
			}
			check(p, func() (*SparseRange, error) { return OpenSparseRange(p, ds.NumNodes()) }, f == "csr" && !z)
		}
	}
	pyg := filepath.Join(dir, "pyg.npz")
	if err := WriteNpzDataset(pyg, ds, false, false); err != nil {
		t.Fatal(err)
	}
	src, err := OpenNpzRange(pyg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	check(pyg, src.SparseFeatureRange, true)
	bad := *xs(ds)
	bad.Idx = slices.Clone(xs(ds).Idx)
	bad.Idx[len(bad.Idx)-1] = -3
	p := filepath.Join(dir, "bad.npz")
	if err := WriteSparseNpz(p, &bad, false); err != nil {
		t.Fatal(err)
	}
	r, err := OpenSparseRange(p, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ReadRows(0, 100); err != nil {
		t.Fatalf("rows without the bad id: %v", err)
	}
	if _, err := r.ReadRows(200, 301); err == nil || !strings.Contains(err.Error(), p+":indices.npy") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("rows with the bad id: %v", err)
	}
}
