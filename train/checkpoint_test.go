package train

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCheckpointRoundTripAndNoTmp: a checkpoint reads back as written, and
// a save that fails (the path is a non-empty directory) leaves no .tmp.
func TestCheckpointRoundTripAndNoTmp(t *testing.T) {
	dir := t.TempDir()
	ck := smallCheckpoint() // a consistent one: loading validates every field
	ck.FeatNorm = "row"
	ck.Params[0].M[1], ck.Params[0].V[2] = 0.5, 4
	path := filepath.Join(dir, "m.ckpt")
	if err := SaveCheckpoint(path, ck); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	p := got.Params[0]
	if got.Model != ck.Model || got.FeatNorm != "row" || *got.Train != *ck.Train || p.Name != ck.Params[0].Name ||
		!slices.Equal(p.W, ck.Params[0].W) || !slices.Equal(p.M, ck.Params[0].M) || !slices.Equal(p.V, ck.Params[0].V) {
		t.Fatalf("round trip: %+v", got)
	}
	bad := filepath.Join(dir, "d")
	if err := os.MkdirAll(filepath.Join(bad, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := SaveCheckpoint(bad, ck); err == nil {
		t.Fatal("saving over a non-empty directory succeeded")
	}
	if _, err := os.Stat(bad + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}
