package container

import (
	"errors"
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
// *os.LinkError naming the file.
func WriteFile(path string, perm os.FileMode, write func(f *os.File) error) (err error) {
	tmp := path + TmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
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
