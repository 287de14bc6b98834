package graph

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadNpyDtypes(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	cases := []struct {
		path  string
		shape []int
		f32   []float32
		i64   []int64 // nil: Int64 must fail
	}{
		{writeNpy(t, p("f4.npy"), "<f4", "(2, 3)", []float32{1, 2, 3, 4, 5.5, 6}), []int{2, 3}, []float32{1, 2, 3, 4, 5.5, 6}, nil},
		{writeNpy(t, p("f8.npy"), "<f8", "(3,)", []float64{1, -2, 3}), []int{3}, []float32{1, -2, 3}, []int64{1, -2, 3}},
		{writeNpy(t, p("i4.npy"), "<i4", "(3,)", []int32{7, -1, 0}), []int{3}, []float32{7, -1, 0}, []int64{7, -1, 0}},
		{writeNpy(t, p("i8.npy"), "<i8", "(1, 2)", []int64{1 << 40, 5}), []int{1, 2}, []float32{1 << 40, 5}, []int64{1 << 40, 5}},
		{writeNpy(t, p("u1.npy"), "|u1", "(2,)", []uint8{255, 3}), []int{2}, []float32{255, 3}, []int64{255, 3}},
		{writeNpy(t, p("b1.npy"), "|b1", "(2,)", []uint8{1, 0}), []int{2}, []float32{1, 0}, []int64{1, 0}},
		{writeNpy(t, p("i1.npy"), "|i1", "(2,)", []int8{-5, 5}), []int{2}, []float32{-5, 5}, []int64{-5, 5}},
		{writeNpy(t, p("u2.npy"), "<u2", "(1,)", []uint16{65535}), []int{1}, []float32{65535}, []int64{65535}},
		{writeNpy(t, p("scalar.npy"), "<i8", "()", []int64{42}), []int{}, []float32{42}, []int64{42}},
		{writeNpy(t, p("empty.npy"), "<f4", "(0, 5)", []float32{}), []int{0, 5}, []float32{}, []int64{}},
	}
	for _, c := range cases {
		a, err := ReadNpy(c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if !slices.Equal(a.Shape, c.shape) || a.Len() != len(c.f32) {
			t.Errorf("%s: shape %v len %d", c.path, a.Shape, a.Len())
		}
		f, err := a.Float32()
		if err != nil || !slices.Equal(f, c.f32) {
			t.Errorf("%s: Float32 = %v, %v", c.path, f, err)
		}
		i, err := a.Int64()
		if c.i64 == nil {
			if err == nil {
				t.Errorf("%s: Int64 of non-integral floats succeeded: %v", c.path, i)
			}
		} else if err != nil || !slices.Equal(i, c.i64) {
			t.Errorf("%s: Int64 = %v, %v", c.path, i, err)
		}
	}
}

// TestReadNpyVersionsAndByteOrder covers format 2.0/3.0 headers, big-endian
// data, double-quoted keys and Python 2 long dimensions.
func TestReadNpyVersionsAndByteOrder(t *testing.T) {
	dir := t.TempDir()
	var be bytes.Buffer
	binary.Write(&be, binary.BigEndian, []float32{1.5, -2})
	var le bytes.Buffer
	binary.Write(&le, binary.LittleEndian, []int64{3, 4})
	for _, c := range []struct {
		major byte
		dict  string
		data  []byte
		want  []float32
	}{
		{2, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be.Bytes(), []float32{1.5, -2}},
		{3, `{"shape": (2L,), "fortran_order": False, "descr": "<i8"}`, le.Bytes(), []float32{3, 4}},
	} {
		p := filepath.Join(dir, "v.npy")
		os.WriteFile(p, npyBytes(c.major, c.dict, c.data), 0o644)
		a, err := ReadNpy(p)
		if err != nil {
			t.Fatalf("v%d: %v", c.major, err)
		}
		f, _ := a.Float32()
		if !slices.Equal(f, c.want) {
			t.Errorf("v%d: %v, want %v", c.major, f, c.want)
		}
	}
}

func TestReadNpyErrors(t *testing.T) {
	dir := t.TempDir()
	four := make([]byte, 8)
	for _, c := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"magic.npy", []byte("\x93NUMPX\x01\x00\x10\x00{}"), "not a .npy file: bad magic"},
		{"short.npy", []byte("\x93NUM"), "not a .npy file: too short"},
		{"version.npy", npyBytes(4, "{}", nil), "unsupported npy format version 4.0"},
		{"fortran.npy", npyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", four), "fortran_order is True"},
		{"dtype.npy", npyBytes(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", four), `unsupported dtype "<c8"`},
		{"struct.npy", npyBytes(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", four), "structured dtypes are not supported"},
		{"missing.npy", npyBytes(1, "{'descr': '<f4', 'shape': (2,), }", four), `missing key "fortran_order"`},
		{"unknown.npy", npyBytes(1, "{'descr': '<f4', 'colour': 1}", four), `unknown key "colour"`},
		{"syntax.npy", npyBytes(1, "{'descr' '<f4'}", four), "expected ':' after key"},
		{"shape.npy", npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", four), "expected a dimension"},
		{"size.npy", npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", four), "npy data is 8 bytes but shape [3] of <f4 needs 12"},
		{"hlen.npy", []byte("\x93NUMPY\x01\x00\xff\x00{'descr'"), "file ends inside the 255-byte header"},
		{"pipe.npy", npyBytes(1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", four), "'|' byte order on a multi-byte type"},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, c.data, 0o644)
		_, err := ReadNpy(p)
		wantParseError(t, err, p, 0, c.msg)
	}
}

func TestNpyInt64Errors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, descr, shape string
		vals               any
	}{
		{"nan.npy", "<f8", "(2,)", []float64{1, math.NaN()}},
		{"frac.npy", "<f4", "(1,)", []float32{0.5}},
		{"big.npy", "<u8", "(1,)", []uint64{1 << 63}},
	} {
		a, err := ReadNpy(writeNpy(t, filepath.Join(dir, c.name), c.descr, c.shape, c.vals))
		if err != nil {
			t.Fatal(err)
		}
		if v, err := a.Int64(); err == nil {
			t.Errorf("%s: Int64 = %v, want an error", c.name, v)
		}
	}
}

// WriteNpyF32 writes what ReadNpy reads back, header aligned to 64 bytes.
func TestWriteNpyF32RoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.npy")
	data := []float32{1, -2.5, 3, 4, 5, 6}
	if err := WriteNpyF32(path, 3, 2, data); err != nil {
		t.Fatal(err)
	}
	a, err := ReadNpy(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Float32()
	if err != nil || len(a.Shape) != 2 || a.Shape[0] != 3 || a.Shape[1] != 2 || a.Descr != "<f4" {
		t.Fatalf("read back shape %v descr %s: %v", a.Shape, a.Descr, err)
	}
	for i := range data {
		if got[i] != data[i] {
			t.Fatalf("value %d: %g, wrote %g", i, got[i], data[i])
		}
	}
	b, _ := os.ReadFile(path)
	if hl := int(b[8]) | int(b[9])<<8; (10+hl)%64 != 0 {
		t.Fatalf("data starts at %d, not a multiple of 64", 10+hl)
	}
	if err := WriteNpyF32(path, 2, 2, data); err == nil {
		t.Fatal("6 values for a 2×2 matrix accepted")
	}
}
