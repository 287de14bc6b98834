// Package testdataset locates the datasets tests read: the shared datasets
// directory when there is one, else the copies shipped in the repository
// (Cora, under testdata/).
package testdataset

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
		return d, isDir(d)
	}
	root, ok := moduleRoot()
	if !ok {
		return "", false
	}
	p := filepath.Join(root, "..", "shared", "datasets")
	return p, isDir(p)
}

// Bundled returns the directory of the datasets shipped with the
// repository (internal/testdataset/testdata); ok is false when the module
// root cannot be found from the working directory.
func Bundled() (string, bool) {
	root, ok := moduleRoot()
	if !ok {
		return "", false
	}
	p := filepath.Join(root, "internal", "testdataset", "testdata")
	return p, isDir(p)
}

// Dataset returns the path of the named dataset: under the shared datasets
// directory when it holds it, else the copy shipped in the repository. It
// skips the test (saying where it looked) when neither has it.
func Dataset(t testing.TB, name string) string {
	t.Helper()
	shared, sharedOK := Dir()
	if sharedOK && exists(filepath.Join(shared, name)) {
		return filepath.Join(shared, name)
	}
	if b, ok := Bundled(); ok && exists(filepath.Join(b, name)) {
		return filepath.Join(b, name)
	}
	if !sharedOK {
		t.Skipf("dataset %s is not shipped with the repository and the shared datasets directory %q is absent (set %s): skipping", name, shared, EnvVar)
	}
	t.Skipf("dataset %s not found under %s: skipping", name, shared)
	return ""
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, "go.mod")) {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
