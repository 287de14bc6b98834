//go:build !linux

package testdataset

import "testing"

// SmallDisk skips the test: small tmpfs mounts are set up on Linux only.
func SmallDisk(t testing.TB, size int) string {
	t.Helper()
	t.Skip("full-disk tests need Linux tmpfs")
	return ""
}
