//go:build unix

package container

import (
	"errors"
	"os"
	"syscall"
)

// lockExclusive takes an exclusive advisory lock (flock) on f without
// waiting: errBusy when another process holds one. The lock ends when f is
// closed.
func lockExclusive(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) }); err != nil {
		return err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return errBusy
	}
	if errors.Is(lerr, syscall.ENOTSUP) || errors.Is(lerr, syscall.ENOLCK) || errors.Is(lerr, syscall.EINVAL) {
		return nil // a file system without locks: nothing to coordinate with
	}
	return lerr
}
