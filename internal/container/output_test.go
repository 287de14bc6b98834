package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRemoveTemps: RemoveTemps removes out.tmp and the out.tmp-*
// directories made since the command started, not older ones (another
// job's).
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p")
	old := filepath.Join(dir, "p.tmp-old")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	start := time.Now().Add(-time.Minute)
	os.WriteFile(out+".tmp", []byte("half"), 0o644)
	os.MkdirAll(filepath.Join(dir, "p.tmp-123", "x"), 0o755)
	RemoveTemps(out, start)
	for _, gone := range []string{out + ".tmp", filepath.Join(dir, "p.tmp-123")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", gone, err)
		}
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("an older temporary directory was removed: %v", err)
	}
}

// TestCheckWritable: a file in a writable directory passes and leaves no
// probe behind; a directory, or a file in a missing directory, is refused.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(filepath.Join(dir, "out.bin")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("probe left: %v", ents)
	}
	if err := CheckWritable(""); err != nil {
		t.Errorf("no output: %v", err)
	}
	if err := CheckWritable(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	if err := CheckWritable(filepath.Join(dir, "no", "f")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing directory: %v", err)
	}
}

func TestCheckWritableDir(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritableDir(filepath.Join(dir, "parts")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("probe left: %v", ents)
	}
	if err := CheckWritableDir(filepath.Join(dir, "no", "parts")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing parent: %v", err)
	}
}

// TestPending: the output appears only at Commit; Abort and a failed write
// leave neither it nor its temporary.
func TestPending(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "prof")
	p, err := Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output before Commit: %v", err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "abc" {
		t.Errorf("committed %q, %v", b, err)
	}
	a, err := Create(filepath.Join(dir, "aborted"))
	if err != nil {
		t.Fatal(err)
	}
	a.Abort()
	f, err := Create(filepath.Join(dir, "failed"))
	if err != nil {
		t.Fatal(err)
	}
	f.f.Close() // the next write fails
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("write to a closed file succeeded")
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after a failed write succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left in the directory: %v", ents)
	}
}
