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
