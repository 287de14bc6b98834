package container

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CheckWritable fails when path names a directory, its temporary's name is
// taken by a link (see openTemp) or its directory cannot take a new file, so a long run does not end in an unwritable output. An
// empty path is no output.
func CheckWritable(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory, want a file name", path)
	}
	if err := checkTemp(path + TmpSuffix); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".supergcn-check-*")
	if err != nil {
		// Name the directory, not the probe file.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: directory %s does not exist", path, dir)
		}
		return fmt.Errorf("%s: cannot create a file in directory %s: %w", path, dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// CheckWritableDir fails when the parent of dir, where a directory output
// is built (dir.tmp-*) and renamed into place, is missing or cannot take a
// new directory.
func CheckWritableDir(dir string) error {
	parent := filepath.Dir(filepath.Clean(dir))
	probe, err := os.MkdirTemp(parent, ".supergcn-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: directory %s does not exist", dir, parent)
		}
		return fmt.Errorf("%s: cannot create a directory in %s: %w", dir, parent, err)
	}
	return os.Remove(probe)
}

// RemoveTemps removes the temporaries of output out made since start: the
// file out.tmp (WriteFile) and the directories out.tmp-* a directory
// output is built in. Older ones (another job's) are kept.
func RemoveTemps(out string, start time.Time) {
	os.Remove(out + TmpSuffix)
	dir, base := filepath.Split(filepath.Clean(out))
	ents, _ := os.ReadDir(filepath.Clean(dir + "."))
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), base+TmpSuffix+"-") {
			continue
		}
		if info, err := e.Info(); err == nil && !info.ModTime().Before(start) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
