package train

import (
	"fmt"
	"math"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/partition"
)

// TestTwoLevelEqualsFlat: on emulated nodes (4 ranks as 2×2, 6 as 2×3) the
// two-level exchange gives the flat exchange's per-epoch losses (fp32,
// dropout 0, relative 1e-4), for GCN and SAGE; the default picks it.
func TestTwoLevelEqualsFlat(t *testing.T) {
	ds := cora(t)
	epochs := 20
	if testing.Short() {
		epochs = 5
	}
	for _, model := range []string{"gcn", "sage"} {
		for _, layout := range [][2]int{{4, 2}, {6, 3}} {
			p, perNode := layout[0], layout[1]
			owner := partitionFor(t, ds, "metis", p)
			t.Run(fmt.Sprintf("%s/P%d/perNode%d", model, p, perNode), func(t *testing.T) {
				cfg := kipfConfig(model, 3, epochs, 0)
				cfg.Threads = 1
				run := func(exch string) []EpochMetrics {
					c := cfg
					c.Exchange = exch
					var res *Result
					err := comm.RunGroupNodes(p, perNode, func(cm comm.Comm) error {
						r, err := Run(c, partition.Split(ds, owner, cm.Rank(), p), cm)
						if cm.Rank() == 0 {
							res = r
						}
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					return res.Epochs
				}
				flat, two := run(exchange.ExchangeFlat), run("")
				for e := range flat {
					a, b := flat[e].Loss, two[e].Loss
					if math.Abs(a-b) > 1e-4*math.Abs(a) {
						t.Fatalf("epoch %d: loss %.8f two-level, %.8f flat", e+1, b, a)
					}
				}
				// Both move rows inside the nodes; flat the same-node pairs' only.
				if two[0].IntraBytes <= 0 || flat[0].IntraBytes <= 0 || flat[0].IntraBytes >= flat[0].CommBytes {
					t.Fatalf("intra bytes: two-level %d, flat %d of %d", two[0].IntraBytes, flat[0].IntraBytes, flat[0].CommBytes)
				}
				t.Logf("epoch 1 loss %.6f; bytes flat %d, two-level %d (intra %d)", flat[0].Loss, flat[0].CommBytes, two[0].CommBytes, two[0].IntraBytes)
			})
		}
	}
}
