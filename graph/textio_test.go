package graph

import (
	"compress/bzip2"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func readAllLines(t *testing.T, lr *lineReader) []string {
	t.Helper()
	var got []string
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		got = append(got, string(line))
	}
	return got
}

func TestLineReaderTerminators(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"a\nb\n", []string{"a", "b"}},
		{"a\r\nb", []string{"a", "b"}},
		{"\n\nx", []string{"", "", "x"}},
		{"", nil},
	} {
		lr := newLineReader(strings.NewReader(c.in), "t")
		got := readAllLines(t, lr)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("%q: lines %q, want %q", c.in, got, c.want)
		}
		if err := lr.Err(); err != nil {
			t.Errorf("%q: %v", c.in, err)
		}
		if lr.Line() != int64(len(c.want)) {
			t.Errorf("%q: Line() = %d, want %d", c.in, lr.Line(), len(c.want))
		}
	}
}

// TestLineReaderLongLines checks lines longer than the initial buffer.
func TestLineReaderLongLines(t *testing.T) {
	long := strings.Repeat("7,", 3*lineBufSize/2) + "7"
	in := "1\n" + long + "\n" + long + "\n2"
	got := readAllLines(t, newLineReader(strings.NewReader(in), "t"))
	if len(got) != 4 || got[0] != "1" || got[1] != long || got[2] != long || got[3] != "2" {
		t.Fatalf("got %d lines (lengths %v)", len(got), lens(got))
	}
}

func lens(s []string) []int {
	var n []int
	for _, x := range s {
		n = append(n, len(x))
	}
	return n
}

func TestOpenLinesCompressed(t *testing.T) {
	dir := t.TempDir()
	content := "0 1\n1 2\n2 0\n"
	plain := writeFile(t, dir, "e.txt", content)
	gz := writeFile(t, dir, "e.txt.gz", content)
	// gzip content under a name without .gz is recognised by its magic.
	sniffed := filepath.Join(dir, "e.data")
	b, _ := os.ReadFile(gz)
	os.WriteFile(sniffed, b, 0o644)
	paths := []string{plain, gz, sniffed}
	if bz, err := exec.LookPath("bzip2"); err == nil {
		p := writeFile(t, dir, "e2.txt", content)
		if err := exec.Command(bz, "-k", p).Run(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p+".bz2")
	}
	for _, p := range paths {
		lr, err := openLines(p)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(readAllLines(t, lr), "\n") + "\n"
		if err := lr.Err(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		lr.Close()
		if got != content {
			t.Errorf("%s: got %q", p, got)
		}
	}
	_ = bzip2.NewReader // the .bz2 path is also covered by the wave dataset test
}

// TestTruncatedGzip: a gzip file cut short is an error naming the file and
// the line reached, never a silently shorter input.
func TestTruncatedGzip(t *testing.T) {
	dir := t.TempDir()
	full := gzipBytes(t, []byte("0 1\n1 2\n2 0\n"))
	// Without its 8-byte trailer every line decompresses, then the stream
	// ends early: the error is on line 4, the one being read.
	p := filepath.Join(dir, "cut.txt.gz")
	os.WriteFile(p, full[:len(full)-8], 0o644)
	_, err := LoadEdgeList(p)
	wantParseError(t, err, p, 4, "gzip stream ends unexpectedly")

	// Cut in the middle of a larger deflate stream.
	var sb strings.Builder
	for i := 0; i < 200000; i++ {
		sb.WriteString("12345 67890\n")
	}
	big := gzipBytes(t, []byte(sb.String()))
	p2 := filepath.Join(dir, "mid.txt.gz")
	os.WriteFile(p2, big[:len(big)/2], 0o644)
	_, err = LoadEdgeList(p2)
	if err == nil || !strings.HasPrefix(err.Error(), p2+":") || !strings.Contains(err.Error(), "gzip stream ends unexpectedly") {
		t.Fatalf("got %v", err)
	}
	pe := err.(*ParseError)
	if pe.Line < 2 || pe.Line > 200000 {
		t.Fatalf("line reached %d not inside the file", pe.Line)
	}

	// Corrupt CRC: detected at the end.
	bad := append([]byte(nil), full...)
	bad[len(bad)-8] ^= 0xff
	p3 := filepath.Join(dir, "crc.txt.gz")
	os.WriteFile(p3, bad, 0o644)
	_, err = LoadEdgeList(p3)
	wantParseError(t, err, p3, 4, "checksum")
}

func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"-7", -7, true}, {"+3", 3, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"", 0, false}, {"-", 0, false}, {"1.0", 0, false}, {"1e3", 0, false}, {" 1", 0, false}, {"12a", 0, false},
	} {
		got, ok := parseInt([]byte(c.in))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseFloat32(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float32
		ok   bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"1234567", 1234567, true}, {"-0.5", -0.5, true},
		{"0.1", 0.1, true}, {"1e-3", 0.001, true}, {"16777217", 16777216, true}, {".5", 0.5, true},
		{"nan", 0, false}, {"inf", 0, false}, {"-inf", 0, false}, {"1e39", 0, false}, {"", 0, false}, {"1,", 0, false},
	} {
		got, ok := parseFloat32([]byte(c.in))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseFloat32(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestParseFloat32MatchesStrconv: the fast path rounds exactly as
// strconv.ParseFloat(s, 32) on OGB-style decimals.
func TestParseFloat32MatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 200000; i++ {
		s := strconv.FormatFloat(r.NormFloat64()*math.Pow(10, float64(r.IntN(9)-4)), 'f', r.IntN(11), 64)
		want, err := strconv.ParseFloat(s, 32)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseFloat32([]byte(s))
		if !ok || got != float32(want) {
			t.Fatalf("parseFloat32(%q) = %v, %v; strconv gives %v", s, got, ok, float32(want))
		}
	}
}

// TestTruncatedBzip2: a .bz2 cut short is an error naming the line reached.
func TestTruncatedBzip2(t *testing.T) {
	bz, err := exec.LookPath("bzip2")
	if err != nil {
		t.Skip("bzip2 not installed")
	}
	dir := t.TempDir()
	p := writeFile(t, dir, "t.graph", "3 2\n2\n1 3\n2\n")
	if err := exec.Command(bz, p).Run(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p + ".bz2")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.graph.bz2")
	os.WriteFile(cut, b[:len(b)-4], 0o644)
	_, err = LoadMetis(cut)
	wantParseError(t, err, cut, 5, "bzip2 stream ends unexpectedly")
}
