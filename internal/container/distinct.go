package container

import (
	"fmt"
	"os"
	"path/filepath"
)

// NamedPath is a file a command reads or writes and the name its errors
// give it (the option that named it).
type NamedPath struct{ Name, Path string }

// CheckDistinct returns an error when an output names the same file as an
// input or as another output: the same path once cleaned and made
// absolute (through symbolic links of existing directories), or, for files
// that exist, the same device and inode (a hard or symbolic link). Writing
// it would replace the input, or one output would replace the other. Empty
// paths are skipped.
func CheckDistinct(inputs, outputs []NamedPath) error {
	for i, o := range outputs {
		if o.Path == "" {
			continue
		}
		for _, in := range inputs {
			if in.Path != "" && samePath(o.Path, in.Path) {
				return fmt.Errorf("%s: %s is also the input %s: writing it would replace the input", o.Name, o.Path, in.Name)
			}
		}
		for _, other := range outputs[:i] {
			if other.Path != "" && samePath(o.Path, other.Path) {
				return fmt.Errorf("%s: %s is also the output %s: give each output its own file", o.Name, o.Path, other.Name)
			}
		}
	}
	return nil
}

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool {
	if canonical(a) == canonical(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// canonical is path absolute and cleaned, its directory's symbolic links
// resolved where it exists.
func canonical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(real, base)
	}
	return abs
}
