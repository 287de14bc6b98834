package container

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testFormat = Format{Magic: "TESTFMT\x00", Version: 3, Min: 2}

func TestPrefix(t *testing.T) {
	b := testFormat.Prefix()
	if v, err := testFormat.CheckPrefix(b); err != nil || v != 3 {
		t.Fatalf("own prefix: %d, %v", v, err)
	}
	b[MagicSize] = 2
	if v, err := testFormat.CheckPrefix(b); err != nil || v != 2 {
		t.Fatalf("version 2: %d, %v", v, err)
	}
	for _, v := range []byte{1, 4} {
		b[MagicSize] = v
		var ve *VersionError
		if _, err := testFormat.CheckPrefix(b); !errors.As(err, &ve) || ve.Got != uint32(v) {
			t.Fatalf("version %d: %v", v, err)
		} else if !strings.Contains(err.Error(), "reads 2 to 3") {
			t.Fatalf("version error %q", err)
		}
	}
	var te *TruncatedError
	for _, in := range [][]byte{[]byte("TES"), []byte("TESTFMT\x00\x03")} {
		if _, err := testFormat.CheckPrefix(in); !errors.As(err, &te) {
			t.Fatalf("%q: %v, want truncated", in, err)
		}
	}
	for _, in := range [][]byte{nil, []byte("x"), []byte("hello, world")} {
		if _, err := testFormat.CheckPrefix(in); err != ErrBadMagic {
			t.Fatalf("%q: %v, want bad magic", in, err)
		}
	}
}

func TestChecksum(t *testing.T) {
	// CRC32-C check value of "123456789" (RFC 3720, B.4).
	if got := Checksum([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("Checksum = %08x", got)
	}
	if got := UpdateChecksum(Checksum([]byte("1234")), []byte("56789")); got != 0xe3069283 {
		t.Fatalf("UpdateChecksum = %08x", got)
	}
}

func TestLittleEndian(t *testing.T) {
	in := []int64{1, -2, 1 << 40}
	var out []byte
	if err := EmitLE(in, func(b []byte) error { out = append(out, b...); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1, 0, 0}
	if !bytes.Equal(out, want) {
		t.Fatalf("EmitLE = %x", out)
	}
	aligned := make([]int64, 3)
	raw := AsBytes(aligned)
	copy(raw, out)
	if got := ViewLE[int64](raw); got[0] != 1 || got[1] != -2 || got[2] != 1<<40 {
		t.Fatalf("ViewLE = %v", got)
	}
	if got := DecodeLE[int64](out); got[0] != 1 || got[1] != -2 || got[2] != 1<<40 {
		t.Fatalf("DecodeLE = %v", got)
	}
	if got := ViewLE[float32](nil); got == nil || len(got) != 0 {
		t.Fatalf("ViewLE(nil) = %#v", got)
	}
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	SwapBytes(b, 4)
	if !bytes.Equal(b, []byte{4, 3, 2, 1, 8, 7, 6, 5}) {
		t.Fatalf("SwapBytes = %v", b)
	}
}

func TestSections(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write([]byte("head"))
	WriteSection(w, 1, []int32{7, -8, 9})
	WriteSection(w, 2, []float32{})
	WriteSection(w, 3, []uint8{1, 2})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Len() != int64(buf.Len()) || w.Len() != 4+3*SectionOverhead+12+2 || w.Sum32() != Checksum(buf.Bytes()) {
		t.Fatalf("Len %d Sum %08x for %d bytes", w.Len(), w.Sum32(), buf.Len())
	}
	good := buf.Bytes()
	read := func(b []byte) (string, error) {
		r := NewReader(bytes.NewReader(b), int64(len(b)))
		var h [4]byte
		if err := r.ReadFull("header", h[:]); err != nil {
			return "", err
		}
		a, err := ReadSection[int32](r, 1, "a", 3)
		if err != nil {
			return "", err
		}
		if _, err := ReadSection[float32](r, 2, "b", 0); err != nil {
			return "", err
		}
		c, err := ReadSection[uint8](r, 3, "c", 2)
		if err != nil {
			return "", err
		}
		if r.Left() != 0 || r.Sum32() != Checksum(b) {
			return "", errors.New("left or sum wrong")
		}
		return fmt.Sprint(a[0], " ", c[1]), nil
	}
	if s, err := read(good); err != nil || s != "7 2" {
		t.Fatalf("read = %q, %v", s, err)
	}
	cases := []struct {
		at   int
		want string
	}{
		{4, "section a: bad section header"},
		{4 + 8, "section a: length"},
		{4 + 16 + 1, "section a: checksum mismatch"},
		{4 + SectionOverhead + 12 + 16 + 1, "section b: checksum mismatch"},
		{len(good) - 3, "section c: checksum mismatch"},
	}
	for _, c := range cases {
		b := append([]byte(nil), good...)
		b[c.at] ^= 0x40
		if _, err := read(b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("flip byte %d: %v, want %q", c.at, err, c.want)
		}
	}
	for _, n := range []int{2, 10, len(good) - 1} {
		if _, err := read(good[:n]); err == nil || !strings.Contains(err.Error(), "truncated") && !strings.Contains(err.Error(), "length") {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
}

func noTmp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), TmpSuffix) {
			t.Fatalf("%s left behind", e.Name())
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, 0o644, []byte("one")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(path, 0o644, func(f *os.File) error {
		f.Write([]byte("half"))
		return boom
	})
	if err != boom {
		t.Fatalf("write error: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("after a failed write: %q", b)
	}
	noTmp(t, dir)
	// The rename fails: path is a non-empty directory.
	sub := filepath.Join(dir, "d")
	if err := os.MkdirAll(filepath.Join(sub, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(sub, 0o644, []byte("two")); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	noTmp(t, dir)
	// Creating the .tmp fails: no directory.
	if err := WriteBytes(filepath.Join(dir, "none", "f"), 0o644, nil); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	if err := WriteBytes(path, 0o600, []byte("three")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Fatalf("replaced content %q", b)
	}
	noTmp(t, dir)
}

func TestCombineChecksum(t *testing.T) {
	b := []byte("the quick brown fox jumps over the lazy dog, 0123456789 times over")
	for _, cut := range []int{0, 1, 7, 33, len(b) - 1, len(b)} {
		a, c := b[:cut], b[cut:]
		if got, want := CombineChecksum(Checksum(a), Checksum(c), int64(len(c))), Checksum(b); got != want {
			t.Errorf("cut %d: combined %08x, want %08x", cut, got, want)
		}
	}
}
