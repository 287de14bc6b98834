package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"unsafe"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/field"
)

// bigNumber matches numbers of 7 or more digits: an edge list naming node
// 10^9 legitimately allocates gigabytes, which the fuzzer must not try.
var bigNumber = regexp.MustCompile(`[0-9]{7,}`)

// checkParseError fails unless err is nil or a *ParseError.
func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if err != nil && !errors.As(err, &pe) {
		t.Fatalf("error %q (%T) is not a *ParseError", err, err)
	}
}

func FuzzEdgeList(f *testing.F) {
	for _, s := range []string{"0 1\n1 2\n", "# c\n0,1,0.5\n1,0,2\n", "0 1 1\n1 2\n", "%x\n\n3\t4\r\n", "0 -1\n", "# Nodes: 9\n0 5\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bigNumber.Match(data) {
			t.Skip()
		}
		g, err := readEdgeList(newLineReader(bytes.NewReader(data), "fuzz"))
		checkParseError(t, err)
		if err == nil {
			if verr := g.Validate(); verr != nil {
				t.Fatal(verr)
			}
		}
	})
}

func FuzzMetis(f *testing.F) {
	for _, s := range []string{"3 2\n2\n1 3\n2\n", "% c\n4 3 11\n1 2 5 3 6\n1 1 5 3 7\n2 1 6 2 7\n4\n", "2 1 10 2\n1 1 2\n1 1 1\n", "3 x\n", "2 5\n2\n1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := readMetis(newLineReader(bytes.NewReader(data), "fuzz"))
		checkParseError(t, err)
		if err == nil {
			if verr := g.Validate(); verr != nil {
				t.Fatal(verr)
			}
			if g.NNZ()%2 != 0 {
				t.Fatalf("odd number of adjacency entries %d", g.NNZ())
			}
		}
	})
}

// FuzzOGBCSV runs every OGB csv parser (edges, feature table, labels) on
// the same input.
func FuzzOGBCSV(f *testing.F) {
	for _, s := range []string{"0,1\n1,2\n", "1,0.5\n-2,3e-1\n", "1\nnan\n\n3.0\n", "1,2\n3\n", "0,x\n", "1e39,1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := func() *lineReader { return newLineReader(bytes.NewReader(data), "fuzz") }
		src, dst, err := parseEdgeCSV(lr(), 100)
		checkParseError(t, err)
		if err == nil && len(src) != len(dst) {
			t.Fatalf("%d sources, %d destinations", len(src), len(dst))
		}
		x, dim, err := parseFloatTable(lr())
		checkParseError(t, err)
		if err == nil && dim > 0 && len(x)%dim != 0 {
			t.Fatalf("%d values in rows of %d", len(x), dim)
		}
		y, err := parseLabels(lr())
		checkParseError(t, err)
		for _, v := range y {
			if v < -1 {
				t.Fatalf("label %d", v)
			}
		}
	})
}

func FuzzNpyHeader(f *testing.F) {
	f.Add(npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }", make([]byte, 8)))
	f.Add(npyBytes(2, "{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)))
	f.Add(npyBytes(3, `{"descr": "|b1", "shape": (), "fortran_order": False}`, []byte{1}))
	f.Add(npyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", make([]byte, 8)))
	f.Add([]byte("\x93NUMPY\x01\x00\x05\x00{'a':"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		h, err := readNpyHeader(r, "fuzz.npy")
		checkParseError(t, err)
		if err != nil {
			return
		}
		n := 1
		for _, d := range h.shape {
			n *= d
		}
		if int64(n)*int64(h.size) != int64(r.Len()) {
			return // ReadNpy rejects a size mismatch before allocating
		}
		v, err := readNpyData(r, &h, n)
		if err != nil {
			t.Fatal(err)
		}
		a := &NpyArray{Shape: h.shape, Descr: h.descr, data: v}
		if x, err := a.Float32(); err != nil || len(x) != n {
			t.Fatalf("Float32: %d values, %v", len(x), err)
		}
		a.Int64() // may fail on non-integral floats, must not panic
	})
}

// FuzzBinary decodes .sgb images twice: as given (checksums verified) and
// with checksums skipped, so that mutated sections reach the content
// checks. Every outcome is a *ParseError or a dataset that validates.
func FuzzBinary(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.sgb")
	for _, ds := range []*Dataset{binTestDataset(), {Name: "g", Graph: FromCOO(3, 3, []int32{0, 1}, []int32{1, 2}, nil)}} {
		if err := WriteBinary(path, ds); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:binHeaderSize()])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			words := make([]uint64, (len(data)+7)/8+1) // 8-byte aligned, as a mapping is
			b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(data))
			copy(b, data)
			if end := binFixedSize + binEntrySize*binNumSection; skip && len(b) >= end+4 {
				// Fix the header checksum too: mutations then reach the counts and sections.
				binary.LittleEndian.PutUint32(b[end:], container.Checksum(b[:end]))
			}
			ds, err := binDecodeImage("fuzz.sgb", b, int64(len(b)), BinaryOptions{SkipChecksums: skip})
			checkParseError(t, err)
			if err != nil {
				continue
			}
			if err := ds.Graph.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(xd(ds)) != ds.NumNodes()*ds.FeatDim || ds.NumClasses > MaxClasses {
				t.Fatalf("%d features for %d×%d, %d classes", len(xd(ds)), ds.NumNodes(), ds.FeatDim, ds.NumClasses)
			}
		}
	})
}

// FuzzBinaryRanges: range readers (1 to 4 of them, each reading its share)
// accept a file exactly when the whole-file reader does, and their errors
// are *ParseErrors: a damaged section is never read by ranges unnoticed.
func FuzzBinaryRanges(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.sgb")
	ds := binTestDataset()
	ds.Graph.Val = nil // range readers drop weights, unread and unverified
	if err := WriteBinary(path, ds); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, uint8(1))
	f.Add(b, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, readers uint8) {
		p := filepath.Join(t.TempDir(), "f.sgb")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rerr := readAllRanges(p, 1+int(readers%4))
		checkParseError(t, rerr)
		whole, werr := LoadBinary(p)
		if werr == nil {
			whole.Release()
		}
		if (rerr == nil) != (werr == nil) {
			t.Fatalf("range readers: %v; whole file: %v", rerr, werr)
		}
	})
}

// FuzzNpz loads mutated .npz archives (stored and deflated PyG-style
// files): every outcome is a *ParseError, a field error naming the split,
// or a dataset that validates.
func FuzzNpz(f *testing.F) {
	dir := f.TempDir()
	ds := binTestDataset()
	for k, compress := range []bool{false, true} {
		p := filepath.Join(dir, fmt.Sprintf("seed%d.npz", k))
		if err := WriteNpzDataset(p, ds, false, compress); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.npz")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if s, err := OpenNpz(p); err == nil {
			big := s.Nodes > 1e5 || s.Edges > 1e6 || int64(s.FeatDim)*int64(max(s.Nodes, 0)) > 1e7
			if src, dst, err := s.EdgeRange(0, s.Edges); !big && err == nil && s.Nodes < 0 && len(src) > 0 {
				big = slices.Max(append(src, dst...)) > 1e5 // the node count is the largest id + 1
			}
			s.Close()
			if big {
				return // stated sizes that legitimately need gigabytes
			}
		}
		ds, err := Load(p, LoadOptions{Format: "npz"})
		var fe *field.Error
		if errors.As(err, &fe) {
			return
		}
		checkParseError(t, err)
		if err == nil {
			if verr := ds.Graph.Validate(); verr != nil {
				t.Fatal(verr)
			}
			ds.Release()
		}
	})
}
