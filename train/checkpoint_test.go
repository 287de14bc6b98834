package train

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/nn"
)

// TestCheckpointRoundTripAndNoTmp: a checkpoint reads back as written, and
// a save that fails (the path is a non-empty directory) leaves no .tmp.
func TestCheckpointRoundTripAndNoTmp(t *testing.T) {
	dir := t.TempDir()
	ck := &Checkpoint{Model: nn.Config{Model: "gcn", Layers: 2, In: 3, Hidden: 4, Out: 2}, FeatNorm: "row",
		Params: []SavedParam{{Name: "w", W: []float32{1, -2.5, 3}, M: []float32{0.5, 0, 1}, V: []float32{2, 3, 4}}},
		Train:  &TrainState{Epoch: 7, AdamSteps: 7, BestValAcc: 0.5}}
	path := filepath.Join(dir, "m.ckpt")
	if err := SaveCheckpoint(path, ck); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	p := got.Params[0]
	if got.Model != ck.Model || got.FeatNorm != "row" || *got.Train != *ck.Train || p.Name != "w" ||
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
