package partition

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/supergcn/supergcn/internal/container"
)

// The pieces of Write that a writer distributed over ranks (partition/dist)
// calls in turn: one rank makes the temporary directory, every rank writes
// its parts into it, one rank writes meta.json and installs the directory.

// NewTempDir checks that dir may be written (CheckOutput) and makes the
// fresh DIR.tmp-* beside it that InstallDir later renames to dir.
func NewTempDir(dir string) (string, error) {
	if err := replaceable(dir); err != nil {
		return "", err
	}
	clean := filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(clean), filepath.Base(clean)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("partition: %w", err)
	}
	return tmp, nil
}

// WritePart writes the shard of part sh.Rank of sh.Ranks as part file
// PartFile(sh.Rank) in dir, and returns its size and CRC32-C.
func WritePart(dir string, sh *Shard, hasLabels bool) (size int64, sum uint32, err error) {
	return writePart(filepath.Join(dir, PartFile(sh.Rank)), sh, hasLabels)
}

// WriteMeta writes m as dir/meta.json.
func WriteMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if err := container.WriteBytes(filepath.Join(dir, MetaFile), 0o644, append(b, '\n')); err != nil {
		return fmt.Errorf("partition: writing %w", err)
	}
	return nil
}

// InstallDir makes the finished tmp directory dir (see Write).
func InstallDir(tmp, dir string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	return install(tmp, filepath.Clean(dir))
}
