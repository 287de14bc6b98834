package graph

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes content to dir/name (creating parent directories) and
// returns the path. A name ending in .gz is gzip-compressed.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte(content)
	if strings.HasSuffix(name, ".gz") {
		data = gzipBytes(t, data)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gzipBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// wantParseError checks that err is a *ParseError for file at line whose
// text is exactly "file:line: ..." and contains substr.
func wantParseError(t *testing.T, err error, file string, line int64, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s:%d: ...%s...", file, line, substr)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %q (%T) is not a *ParseError", err, err)
	}
	prefix := fmt.Sprintf("%s:%d: ", file, line)
	if line == 0 {
		prefix = file + ": "
	}
	msg := err.Error()
	if pe.File != file || pe.Line != line || !strings.HasPrefix(msg, prefix) {
		t.Fatalf("error %q: want prefix %q", msg, prefix)
	}
	if !strings.Contains(msg, substr) {
		t.Fatalf("error %q does not mention %q", msg, substr)
	}
	if strings.Contains(msg, "\n") {
		t.Fatalf("error %q spans several lines", msg)
	}
}

// npyBytes encodes a .npy file of the given version with a raw header
// dict and data.
func npyBytes(major byte, dict string, data []byte) []byte {
	pre := 10
	if major >= 2 {
		pre = 12
	}
	hlen := len(dict) + 1
	hlen += (64 - (pre+hlen)%64) % 64
	hdr := dict + strings.Repeat(" ", hlen-len(dict)-1) + "\n"
	var b bytes.Buffer
	b.WriteString(npyMagic)
	b.WriteByte(major)
	b.WriteByte(0)
	if major >= 2 {
		binary.Write(&b, binary.LittleEndian, uint32(hlen))
	} else {
		binary.Write(&b, binary.LittleEndian, uint16(hlen))
	}
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

// writeNpy writes a little-endian .npy (version 1.0) holding values of
// the type of vals with the given shape.
func writeNpy(t *testing.T, path, descr string, shape string, vals any) string {
	t.Helper()
	var data bytes.Buffer
	if err := binary.Write(&data, binary.LittleEndian, vals); err != nil {
		t.Fatal(err)
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	if err := os.WriteFile(path, npyBytes(1, dict, data.Bytes()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
