package container

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileRefusesLinkedTemp: a symbolic or hard link planted at the
// temporary's name is refused, and the file it points to keeps its bytes.
func TestWriteFileRefusesLinkedTemp(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	for _, link := range []func(string, string) error{os.Symlink, os.Link} {
		if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "m.ckpt")
		if err := link(victim, out+TmpSuffix); err != nil {
			t.Fatal(err)
		}
		err := WriteBytes(out, 0o644, []byte("checkpoint"))
		var le *TempLinkError
		if !errors.As(err, &le) {
			t.Errorf("WriteBytes through a link: %v", err)
		}
		if err := CheckWritable(out); !errors.As(err, &le) {
			t.Errorf("CheckWritable with a link at the temporary: %v", err)
		}
		if _, err := Create(out); !errors.As(err, &le) {
			t.Errorf("Create through a link: %v", err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			t.Errorf("victim now holds %q", b)
		}
		if _, err := os.Lstat(out); !os.IsNotExist(err) {
			t.Errorf("%s written: %v", out, err)
		}
		os.Remove(out + TmpSuffix)
	}
}
