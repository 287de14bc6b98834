package testdataset

import (
	"fmt"
	"os/exec"
	"testing"
)

// SmallDisk mounts a tmpfs of size bytes on a fresh temporary directory,
// unmounted when the test ends, and returns the directory: a full disk for
// write-failure tests. It skips the test when mounting is not permitted
// (not root, or inside a container without the capability).
func SmallDisk(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a small tmpfs (%v: %s): skipping the full-disk test", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}
