package perfmodel

import (
	"testing"

	"github.com/supergcn/supergcn/exchange"
)

// TestModelSchedules: perfmodel walks each model's layer schedule: SGC's K
// steps are K exchanges at the narrower width, APPNP's K steps K forward
// and K backward exchanges at the classes' width, GIN's sum exchanges as
// many rows as GCN with neither GCN's self-loops nor its row scalings.
func TestModelSchedules(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	predict := func(m Model) *Prediction {
		t.Helper()
		cfg := Config{Model: m, Mode: exchange.ModePost, Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 1}
		p, err := Predict(twoRanks(), flatProfile(), shm, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// One layer 16 → 32, propagate first: one forward exchange at width
	// 16, none backward (the first layer's input gradient is not wanted).
	gcn := predict(Model{Kind: "gcn", Layers: 1, In: 16, Classes: 32})
	if gcn.TrainBytes <= 0 {
		t.Fatalf("gcn: %d bytes", gcn.TrainBytes)
	}
	if sgc := predict(Model{Kind: "sgc", Layers: 1, In: 16, Classes: 32, K: 3}); sgc.TrainBytes != 3*gcn.TrainBytes {
		t.Errorf("sgc K=3: %d bytes, want 3 × gcn's %d", sgc.TrainBytes, gcn.TrainBytes)
	}
	if appnp := predict(Model{Kind: "appnp", Layers: 1, In: 16, Classes: 32, K: 4}); appnp.TrainBytes != 2*4*2*gcn.TrainBytes {
		t.Errorf("appnp K=4: %d bytes, want 16 × gcn's %d (4 steps each way, twice the width)", appnp.TrainBytes, gcn.TrainBytes)
	}
	gin := predict(Model{Kind: "gin", Layers: 1, In: 16, Classes: 32})
	if gin.TrainBytes != gcn.TrainBytes || !(gin.AggrS < gcn.AggrS) {
		t.Errorf("gin: %d bytes and aggregation %g s; gcn: %d bytes and %g s", gin.TrainBytes, gin.AggrS, gcn.TrainBytes, gcn.AggrS)
	}
	if k10, k2 := predict(Model{Kind: "appnp", Layers: 2, Hidden: 8, In: 16, Classes: 32}), predict(Model{Kind: "appnp", Layers: 2, Hidden: 8, In: 16, Classes: 32, K: 2}); !(k10.EpochS > k2.EpochS) {
		t.Errorf("appnp: default K (10) %g s an epoch, K=2 %g s", k10.EpochS, k2.EpochS)
	}
}
