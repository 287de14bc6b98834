// Package testdata locates the shared datasets for tests.
package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the directory holding the shared datasets (cora/, dblp-2010/, wave/).
const EnvVar = "SUPERGCN_DATASETS"

// Dir returns the shared datasets directory: $SUPERGCN_DATASETS, or
// ../shared/datasets beside the module root. ok is false when it is absent.
func Dir() (string, bool) {
	if d := os.Getenv(EnvVar); d != "" {
		st, err := os.Stat(d)
		return d, err == nil && st.IsDir()
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, "..", "shared", "datasets")
			st, err := os.Stat(p)
			return p, err == nil && st.IsDir()
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Dataset returns the path of the named shared dataset, skipping the test
// (saying so) when it is not available.
func Dataset(t testing.TB, name string) string {
	t.Helper()
	d, ok := Dir()
	if !ok {
		t.Skipf("shared datasets not found (set %s): skipping %s", EnvVar, name)
	}
	p := filepath.Join(d, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("dataset %s not found under %s: skipping", name, d)
	}
	return p
}
