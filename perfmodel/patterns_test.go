package perfmodel

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The patterns' node volumes keep their JSON keys: every volumes file of
// docs/data and testdata reads and writes back byte for byte.
func TestNodeVolumesJSONStable(t *testing.T) {
	files, err := filepath.Glob("../docs/data/volumes-*.json")
	files = append(files, "testdata/volumes-dev-small-p4.json")
	if err != nil || len(files) == 1 {
		t.Fatalf("no volumes files in docs/data (%v)", err)
	}
	nodes := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ReadVolumes(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(append(out, '\n'), b) {
			t.Errorf("%s: written back differs from the file", f)
		}
		nodes += len(v.Node)
	}
	if nodes == 0 {
		t.Fatal("no node volumes in docs/data: the test reads none")
	}
}
