//go:build unix

package container

import (
	"os"
	"syscall"
)

// openNonBlocking opens path read-only with O_NONBLOCK, so opening a named
// pipe returns at once instead of waiting for a writer.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// setBlocking clears O_NONBLOCK on the regular file f.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
