package graph

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// binTestDataset is a small dataset using every section: weights, features,
// labels with an unlabelled node, all three splits and a name.
func binTestDataset() *Dataset {
	src := []int32{0, 1, 2, 3, 4, 0, 2, 4, 1}
	dst := []int32{1, 2, 3, 4, 0, 2, 4, 1, 1}
	val := []float32{1, 0.5, 2, 3, 4, 5, 6, 7, 8}
	g := FromCOO(5, 5, src, dst, val)
	x := make([]float32, 5*3)
	for i := range x {
		x[i] = float32(i)*0.25 - 1
	}
	return &Dataset{
		Name: "tiny-γ", Graph: g, FeatDim: 3, Features: DenseX(x, 5, 3), Labels: []int32{0, 1, -1, 2, 1}, NumClasses: 3,
		Train: []int32{0, 3}, Valid: []int32{1}, Test: []int32{2, 4},
	}
}

// binEqual reports the first difference between two datasets ("" if equal);
// nil and empty slices compare equal only where the format cannot tell them
// apart (splits), while Val, X and Labels must keep their nil-ness.
func binEqual(a, b *Dataset) string {
	switch {
	case a.Name != b.Name:
		return "Name"
	case a.FeatDim != b.FeatDim || a.NumClasses != b.NumClasses:
		return "FeatDim/NumClasses"
	case a.Graph.NumRows != b.Graph.NumRows || a.Graph.NumCols != b.Graph.NumCols:
		return "shape"
	case !slices.Equal(a.Graph.Ptr, b.Graph.Ptr):
		return "Ptr"
	case !slices.Equal(a.Graph.Idx, b.Graph.Idx):
		return "Idx"
	case (a.Graph.Val == nil) != (b.Graph.Val == nil) || !slices.Equal(a.Graph.Val, b.Graph.Val):
		return "Val"
	case (xd(a) == nil) != (xd(b) == nil) || !slices.Equal(xd(a), xd(b)):
		return "X"
	case (a.Labels == nil) != (b.Labels == nil) || !slices.Equal(a.Labels, b.Labels):
		return "Labels"
	case !slices.Equal(a.Train, b.Train) || !slices.Equal(a.Valid, b.Valid) || !slices.Equal(a.Test, b.Test):
		return "splits"
	}
	return ""
}

func binRoundTrip(t *testing.T, ds *Dataset, o BinaryOptions) *Dataset {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.sgb")
	if err := WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	if !isBinaryFile(path) {
		t.Fatal("isBinaryFile = false for a written file")
	}
	got, err := LoadBinaryWith(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { got.Release() })
	if d := binEqual(ds, got); d != "" {
		t.Fatalf("round trip differs in %s", d)
	}
	return got
}

func TestBinaryRoundTrip(t *testing.T) {
	binRoundTrip(t, binTestDataset(), BinaryOptions{})
	binRoundTrip(t, binTestDataset(), BinaryOptions{SkipChecksums: true})

	bare := binTestDataset() // structure only, unweighted, no name
	bare.Graph.Val, bare.Features, bare.FeatDim, bare.Labels, bare.NumClasses = nil, Features{}, 0, nil, 0
	bare.Train, bare.Valid, bare.Test, bare.Name = nil, nil, nil, ""
	binRoundTrip(t, bare, BinaryOptions{})

	empty := &Dataset{Graph: &CSR{Ptr: []int64{0}}}
	binRoundTrip(t, empty, BinaryOptions{})
}

func TestBinaryMappedIsPrivate(t *testing.T) {
	ds := binTestDataset()
	path := filepath.Join(t.TempDir(), "d.sgb")
	if err := WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	a, err := LoadBinary(path)
	if err != nil {
		t.Fatal(err)
	}
	xd(a)[0] = 42 // copy-on-write: allowed, never reaches the file
	b, err := LoadBinary(path)
	if err != nil {
		t.Fatal(err)
	}
	if xd(b)[0] != xd(ds)[0] {
		t.Fatalf("write through a mapped Dataset reached the file: X[0]=%v", xd(b)[0])
	}
	for _, d := range []*Dataset{a, b} {
		if err := d.Release(); err != nil {
			t.Fatal(err)
		}
		if d.Graph != nil || xd(d) != nil {
			t.Fatal("Release left fields pointing into the mapping")
		}
		if err := d.Release(); err != nil {
			t.Fatal("second Release:", err)
		}
	}
}

func TestBinaryWriteRejectsInconsistent(t *testing.T) {
	ds := binTestDataset()
	ds.Features = DenseX(xd(ds)[:4], 5, 3)
	path := filepath.Join(t.TempDir(), "d.sgb")
	err := WriteBinary(path, ds)
	if err == nil || !strings.Contains(err.Error(), "len(X)") {
		t.Fatalf("WriteBinary with short X: err = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("file created for a rejected dataset")
	}
}

// binWriteBytes writes a valid file and returns its path and bytes.
func binWriteBytes(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.sgb")
	if err := WriteBinary(path, binTestDataset()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// binLoadErr writes b to path, loads it and returns the error text.
func binLoadErr(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadBinary(path)
	if err == nil {
		ds.Release()
		return ""
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, path+": ") {
		t.Errorf("error is not one line naming the file: %q", msg)
	}
	return msg
}

func TestBinaryCorruptSection(t *testing.T) {
	path, good := binWriteBytes(t)
	le := binary.LittleEndian
	for i := 0; i < binNumSection; i++ {
		e := good[binFixedSize+binEntrySize*i:]
		off, n := le.Uint64(e[8:]), le.Uint64(e[16:])
		if n == 0 {
			t.Fatalf("test dataset has an empty section %s", binSectionName(i))
		}
		for _, at := range []uint64{off, off + n - 1} {
			b := slices.Clone(good)
			b[at] ^= 0x10
			msg := binLoadErr(t, path, b)
			want := "section " + binSectionName(i) + ": checksum mismatch"
			if !strings.Contains(msg, want) {
				t.Errorf("flipped byte %d of section %s: error %q, want %q", at, binSectionName(i), msg, want)
			}
		}
	}
}

func TestBinaryCorruptHeader(t *testing.T) {
	path, good := binWriteBytes(t)
	for _, at := range []int{16, 30, binFixedSize + 5, binHeaderSize() - 1} {
		b := slices.Clone(good)
		b[at] ^= 1
		if msg := binLoadErr(t, path, b); !strings.Contains(msg, "header: checksum mismatch") {
			t.Errorf("flipped header byte %d: error %q", at, msg)
		}
	}
}

func TestBinaryBadMagicAndVersion(t *testing.T) {
	path, good := binWriteBytes(t)
	b := slices.Clone(good)
	b[2] = 'X'
	if msg := binLoadErr(t, path, b); !strings.Contains(msg, "bad magic") {
		t.Errorf("bad magic: error %q", msg)
	}
	if isBinaryFile(path) {
		t.Error("isBinaryFile = true with bad magic")
	}
	b = slices.Clone(good)
	binary.LittleEndian.PutUint32(b[8:], binVersion+1)
	if msg := binLoadErr(t, path, b); !strings.Contains(msg, "unsupported format version 2") {
		t.Errorf("newer version: error %q", msg)
	}
	if msg := binLoadErr(t, path, []byte("hello, world\n")); !strings.Contains(msg, "bad magic") {
		t.Errorf("text file: error %q", msg)
	}
}

func TestBinaryTruncated(t *testing.T) {
	path, good := binWriteBytes(t)
	le := binary.LittleEndian
	cuts := []int{0, 5, 12, binHeaderSize() - 1}
	for i := 0; i < binNumSection; i++ {
		e := good[binFixedSize+binEntrySize*i:]
		cuts = append(cuts, int(le.Uint64(e[8:])+le.Uint64(e[16:])-1))
	}
	for _, n := range cuts {
		msg := binLoadErr(t, path, good[:n])
		if n == 0 {
			if msg == "" {
				t.Error("empty file loaded")
			}
			continue
		}
		if !strings.Contains(msg, "truncated") {
			t.Errorf("file cut to %d of %d bytes: error %q", n, len(good), msg)
		}
	}
}

func TestBinaryBadContents(t *testing.T) {
	// A file with valid checksums whose CSR is broken (written by a buggy
	// writer) is still refused.
	ds := binTestDataset()
	ds.Graph.Idx[0] = 99
	path := filepath.Join(t.TempDir(), "d.sgb")
	if err := WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBinary(path); err == nil || !strings.Contains(err.Error(), "section ptr/idx") {
		t.Fatalf("out-of-range column: err = %v", err)
	}
}

func TestBinaryReadFallback(t *testing.T) {
	path, _ := binWriteBytes(t)
	img, err := binReadImage(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := binDecodeImage(path, img.data, int64(len(img.data)), BinaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := binEqual(binTestDataset(), got); d != "" {
		t.Fatalf("heap-read dataset differs in %s", d)
	}
}

// Silent wrong data in a file with valid checksums is refused like the text
// and .npy loaders refuse it: a NaN or infinite feature, overlapping
// splits, a class count beyond MaxClasses.
func TestBinaryRejectsWrongData(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(ds *Dataset)
		want string
	}{
		{"nan feature", func(ds *Dataset) { xd(ds)[7] = float32(math.NaN()) }, "section x: feature [2,1] is NaN"},
		{"inf feature", func(ds *Dataset) { xd(ds)[0] = float32(math.Inf(-1)) }, "section x: feature [0,0] is -Inf"},
		{"train/test overlap", func(ds *Dataset) { ds.Test = []int32{0, 4} }, "sections train and test both hold node 0"},
		{"valid/test overlap", func(ds *Dataset) { ds.Valid = []int32{4} }, "sections valid and test both hold node 4"},
	} {
		ds := binTestDataset()
		c.edit(ds)
		path := filepath.Join(t.TempDir(), "d.sgb")
		if err := WriteBinary(path, ds); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadBinary(path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	ds := binTestDataset()
	ds.NumClasses = 1e9
	if err := WriteBinary(filepath.Join(t.TempDir(), "d.sgb"), ds); err == nil || !strings.Contains(err.Error(), "classes 1000000000") {
		t.Errorf("10^9 classes: err = %v", err)
	}
}

// TestBinaryWriteFailureLeavesNothing: a write that fails at the rename (the
// path is a non-empty directory) leaves no NAME.tmp and the path as it was.
func TestBinaryWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.sgb")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteBinary(path, binTestDataset()); err == nil {
		t.Fatal("WriteBinary over a non-empty directory succeeded")
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	if st, err := os.Stat(filepath.Join(path, "x")); err != nil || !st.IsDir() {
		t.Fatalf("the directory was disturbed: %v", err)
	}
}

// On a full disk WriteBinary fails naming the file, leaves no .tmp and
// keeps the previous file.
func TestBinaryWriteFullDisk(t *testing.T) {
	dir := testdataset.SmallDisk(t, 64<<10)
	path := filepath.Join(dir, "d.sgb")
	if err := WriteBinary(path, binTestDataset()); err != nil {
		t.Fatal(err)
	}
	big := binTestDataset()
	big.FeatDim = 40000 // 5×40000 features: 800 KB
	big.Features = DenseX(make([]float32, 5*big.FeatDim), 5, big.FeatDim)
	err := WriteBinary(path, big)
	if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), path) {
		t.Fatalf("write on a full disk: err = %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	got, err := LoadBinary(path)
	if err != nil {
		t.Fatalf("the previous file was not kept: %v", err)
	}
	if diff := binEqual(binTestDataset(), got); diff != "" {
		t.Fatalf("the previous file changed: %s", diff)
	}
	got.Release()
}
