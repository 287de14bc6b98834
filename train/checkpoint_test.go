package train

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/testdataset"
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
	if !reflect.DeepEqual(got.Model, ck.Model) || got.FeatNorm != "row" || *got.Train != *ck.Train || p.Name != ck.Params[0].Name ||
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

// On a full disk a checkpoint save fails with an error naming the file,
// leaves no .tmp behind and keeps the previous checkpoint intact.
func TestSaveCheckpointFullDisk(t *testing.T) {
	dir := testdataset.SmallDisk(t, 64<<10)
	path := filepath.Join(dir, "m.ckpt")
	small := smallCheckpoint()
	if err := SaveCheckpoint(path, small); err != nil {
		t.Fatal(err)
	}
	big := smallCheckpoint()
	big.Model.In = 20000 // conv0.lin.weight 20000×4: 960 KB with its moments
	big.Params[0].W, big.Params[0].M, big.Params[0].V = make([]float32, 80000), make([]float32, 80000), make([]float32, 80000)
	err := SaveCheckpoint(path, big)
	if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), path) {
		t.Fatalf("save on a full disk: err = %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	got, err := LoadCheckpoint(path)
	if err != nil || got.Train.Epoch != small.Train.Epoch || !slices.Equal(got.Params[0].W, small.Params[0].W) {
		t.Fatalf("the previous checkpoint was not kept: %v", err)
	}
}
