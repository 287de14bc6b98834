package train

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// A hidden width whose training cannot fit the memory this process may use
// is refused before anything is allocated, naming the field; the estimate
// grows with the width.
func TestMemoryCheckRefusesWideModel(t *testing.T) {
	ds := cora(t)
	old := debug.SetMemoryLimit(256 << 20)
	defer debug.SetMemoryLimit(old)
	cfg := kipfConfig("gcn", 1, 1, 0.5)
	cfg.Model.Hidden = 100000 // 1433×100000 weights with their moments: ~3 GB
	_, err := Run(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	if err == nil || !strings.HasPrefix(err.Error(), "nn.Config.Hidden: 100000: training needs ~") {
		t.Fatalf("hidden 100000 under a 256 MiB limit: err = %v", err)
	}
	s := partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1)
	mc := cfg.Model
	mc.In, mc.Out = ds.FeatDim, ds.NumClasses
	narrow, _ := Estimate(mc, false, s)
	mc.Hidden *= 2
	wide, hidden := Estimate(mc, false, s)
	if !(wide > narrow && hidden > wide/2) {
		t.Fatalf("estimates: hidden 100000 %d, 200000 %d (of which hidden %d)", narrow, wide, hidden)
	}
}
