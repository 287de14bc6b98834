package testdataset

import (
	"os"
	"path/filepath"
	"testing"
)

// With a shared datasets directory that lacks cora, Dataset falls back to
// the copy shipped in the repository, which holds every file of the layout.
func TestDatasetFallsBackToBundledCora(t *testing.T) {
	t.Setenv(EnvVar, t.TempDir())
	dir := Dataset(t, "cora")
	b, ok := Bundled()
	if !ok || dir != filepath.Join(b, "cora") {
		t.Fatalf("Dataset(cora) = %q, want the bundled copy under %q", dir, b)
	}
	for _, f := range []string{"raw/edge.csv.gz", "raw/node-feat.csv.gz", "raw/node-label.csv.gz",
		"raw/num-node-list.csv.gz", "raw/num-edge-list.csv.gz",
		"split/public/train.csv.gz", "split/public/valid.csv.gz", "split/public/test.csv.gz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("bundled cora: %v", err)
		}
	}
}

// A shared directory holding the dataset takes precedence over the bundled copy.
func TestDatasetPrefersShared(t *testing.T) {
	shared := t.TempDir()
	if err := os.Mkdir(filepath.Join(shared, "cora"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, shared)
	if got := Dataset(t, "cora"); got != filepath.Join(shared, "cora") {
		t.Fatalf("Dataset(cora) = %q, want %q", got, filepath.Join(shared, "cora"))
	}
}
