//go:build !cgo || !linux

package procsig

import (
	"os"
	"syscall"
)

// Without cgo there is no start-up hook: the signals reach the Go runtime's
// default handling until Start.
func takeOver() []os.Signal { return nil }

// Exec replaces the process by path (execve); see the cgo variant.
func Exec(path string, argv, env []string) error {
	if the.isStarted() {
		return errStarted
	}
	return syscall.Exec(path, argv, env)
}
