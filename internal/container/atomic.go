package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// TmpSuffix is appended to a file's name while it is being written.
const TmpSuffix = ".tmp"

// WriteFile creates or replaces path atomically: it creates path+".tmp"
// with mode perm, lets write fill it, fsyncs and closes it, renames it over
// path and fsyncs the directory, so path holds either its old content or
// the complete new one, also after a crash. On every error (from write
// included) the .tmp file is closed and removed and path is untouched;
// write's error is returned as is, others are *os.PathError or
// *os.LinkError naming the file. The .tmp file is locked (flock) while it
// is written: a second process writing the same path at the same time
// gets a *BusyError instead of replacing the first one's file under it.
func WriteFile(path string, perm os.FileMode, write func(f *os.File) error) (err error) {
	tmp := path + TmpSuffix
	f, err := openLockedTemp(path, tmp, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if f != nil {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	cerr := f.Close()
	f = nil
	if err = cerr; err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// WriteBytes is WriteFile writing b.
func WriteBytes(path string, perm os.FileMode, b []byte) error {
	return WriteFile(path, perm, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

// SyncDir fsyncs directory dir, making renames and creations in it durable.
// File systems that cannot sync a directory (EINVAL) are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}

// errBusy is lockExclusive's answer when another process holds the lock.
var errBusy = errors.New("locked by another process")

// BusyError is the error for an output another process is writing now.
type BusyError struct{ Path string }

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: another process is writing it now (it holds the lock); give each job its own output", e.Path)
}

// LockOutput takes an exclusive lock (flock) on f, the open output path, for
// as long as f stays open: a *BusyError when another process holds it.
// Files appended to during a run (metrics) take it so two jobs naming the
// same file fail at once instead of interleaving their lines.
func LockOutput(f *os.File, path string) error {
	err := lockExclusive(f)
	if errors.Is(err, errBusy) {
		return &BusyError{Path: path}
	}
	return err
}

// openLockedTemp opens tmp for writing, locked and emptied. A tmp that
// another writer holds is a *BusyError; one renamed away between our open
// and our lock (that writer finished) is opened again.
func openLockedTemp(path, tmp string, perm os.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		f, err := openTemp(tmp, perm)
		if err != nil {
			return nil, err
		}
		if err := lockExclusive(f); err != nil {
			f.Close()
			if errors.Is(err, errBusy) {
				return nil, &BusyError{Path: path}
			}
			return nil, err
		}
		mine, err1 := f.Stat()
		named, err2 := os.Stat(tmp)
		if err1 == nil && err2 == nil && os.SameFile(mine, named) {
			if err := f.Truncate(0); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, err
			}
			return f, nil
		}
		f.Close()
		if try == 3 {
			return nil, &BusyError{Path: path}
		}
	}
}
