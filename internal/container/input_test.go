//go:build unix

package container

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenInput: a named pipe without a writer, a device, a directory are
// refused at once; a regular file opens and reads in blocking mode.
func TestOpenInput(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	for path, kind := range map[string]string{fifo: "a named pipe", "/dev/zero": "a character device", dir: "a directory"} {
		var nr *NotRegularError
		_, _, err := OpenInput(path)
		if !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), path+": "+kind) {
			t.Errorf("%s: %v, want %q", path, err, kind)
		}
		if _, err := ReadInput(path, 1<<20, "test file"); !errors.As(err, &nr) {
			t.Errorf("ReadInput(%s): %v", path, err)
		}
	}
	reg := filepath.Join(dir, "f")
	if err := os.WriteFile(reg, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, st, err := OpenInput(reg)
	if err != nil || st.Size() != 5 {
		t.Fatalf("regular file: %v", err)
	}
	f.Close()
	if b, err := ReadInput(reg, 5, "test file"); err != nil || string(b) != "hello" {
		t.Fatalf("ReadInput: %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadInput(reg, 4, "test file"); !errors.As(err, &tl) || !strings.Contains(err.Error(), "5 bytes, more than the 4 a test file may have") {
		t.Fatalf("ReadInput beyond max: %v", err)
	}
}

// TestCheckDistinct: an output naming an input or another output, by the
// same path spelled otherwise, a hard link or a symbolic link, is refused.
func TestCheckDistinct(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.sgb")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard, sym := filepath.Join(dir, "hard"), filepath.Join(dir, "sym")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, sym); err != nil {
		t.Fatal(err)
	}
	inputs := []NamedPath{{"--data", in}, {"--features", ""}}
	for _, c := range []struct {
		outputs []NamedPath
		want    string
	}{
		{[]NamedPath{{"--save", in}}, "--save: " + in + " is also the input --data"},
		{[]NamedPath{{"--save", filepath.Join(dir, ".", "x", "..", "d.sgb")}}, "is also the input --data"},
		{[]NamedPath{{"--metrics", hard}}, "--metrics: " + hard + " is also the input --data"},
		{[]NamedPath{{"--metrics", sym}}, "is also the input --data"},
		{[]NamedPath{{"--save", filepath.Join(dir, "a")}, {"--metrics", filepath.Join(dir, "a")}}, "--metrics: " + filepath.Join(dir, "a") + " is also the output --save"},
	} {
		if err := CheckDistinct(inputs, c.outputs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.outputs, err, c.want)
		}
	}
	ok := []NamedPath{{"--save", filepath.Join(dir, "a")}, {"--metrics", filepath.Join(dir, "b")}, {"--embeddings", ""}, {"--predictions", ""}}
	if err := CheckDistinct(inputs, ok); err != nil {
		t.Fatal(err)
	}
}

// TestWriteFileBusy: while one writer fills path's .tmp, a second writer of
// the same path gets a BusyError and leaves the first one's file alone.
func TestWriteFileBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	err := WriteFile(path, 0o644, func(f *os.File) error {
		f.Write([]byte("first"))
		var be *BusyError
		if err := WriteBytes(path, 0o644, []byte("second")); !errors.As(err, &be) || !strings.Contains(err.Error(), "another process is writing it") {
			t.Errorf("second writer: %v, want a BusyError", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("content %q", b)
	}
	if err := WriteBytes(path, 0o644, []byte("third")); err != nil {
		t.Fatalf("a writer after the first: %v", err)
	}
}
