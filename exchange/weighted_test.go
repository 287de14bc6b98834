package exchange

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// weighted returns ds with seeded weights in [0, 3) on its edges (some
// exactly 0), or every weight equal to one when ones.
func weighted(ds *graph.Dataset, seed uint64, ones bool) *graph.Dataset {
	rng := rand.New(rand.NewPCG(seed, 99))
	g := *ds.Graph
	g.Val = make([]float32, len(g.Idx))
	for k := range g.Val {
		switch {
		case ones:
			g.Val[k] = 1
		case rng.IntN(10) == 0:
			g.Val[k] = 0
		default:
			g.Val[k] = 3 * rng.Float32()
		}
	}
	out := *ds
	out.Graph = &g
	return &out
}

// TestWeightedSingleMatchesReference: on one rank the weighted operator
// and its transpose match the dense float64 definition (PyG gcn_norm with
// edge weights, DGL's weighted mean, the weighted sum).
func TestWeightedSingleMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	ds := weighted(randomDataset(rng, 250, 4, 0), 1, false)
	for _, kind := range allKinds {
		for _, w := range []int{1, 5, 33} {
			x := randomMatrix(rng, 250, w)
			f, b := singleRank(t, ds, kind, x)
			assertClose(t, kind.String()+" forward", f, refOperator(ds.Graph, kind, x, false), 1e-5)
			assertClose(t, kind.String()+" backward", b, refOperator(ds.Graph, kind, x, true), 1e-5)
		}
	}
}

// TestWeightedOnesEqualUnweighted: every weight 1 gives the unweighted
// operator exactly; other weights give a different one.
func TestWeightedOnesEqualUnweighted(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	ds := randomDataset(rng, 200, 5, 0)
	x := randomMatrix(rng, 200, 6)
	for _, kind := range allKinds {
		f0, b0 := singleRank(t, ds, kind, x)
		f1, b1 := singleRank(t, weighted(ds, 2, true), kind, x)
		assertClose(t, kind.String()+" ones forward", f1, f0, 0)
		assertClose(t, kind.String()+" ones backward", b1, b0, 0)
		f2, _ := singleRank(t, weighted(ds, 2, false), kind, x)
		if slicesEqual(f2.Data, f0.Data) {
			t.Fatalf("%s: weights change nothing", kind)
		}
	}
}

// TestWeightedDistributedMatchesSingle: on a weighted graph, every exchange
// pattern (flat, two-level, two-level-paired) at P = 2…6 over emulated
// nodes, every kind, mode and owner pattern, forward and backward gathered
// by global id equal the one-rank operator; the forward and backward are
// exact adjoints across the ranks.
func TestWeightedDistributedMatchesSingle(t *testing.T) {
	const n, iso = 200, 10
	rng := rand.New(rand.NewPCG(35, 36))
	ds := weighted(randomDataset(rng, n, 5, 0, iso), 3, false)
	x, y := randomMatrix(rng, n, 7), randomMatrix(rng, n, 7)
	for _, layout := range [][2]int{{2, 1}, {3, 1}, {4, 2}, {6, 3}, {5, 2}} {
		p, perNode := layout[0], layout[1]
		for oname, owner := range ownerKinds(rng, n, iso, p) {
			for _, kind := range allKinds {
				wantF, wantB := singleRank(t, ds, kind, x)
				for _, mode := range allModes {
					for _, exch := range Exchanges() {
						name := fmt.Sprintf("P=%d/perNode=%d/%s/%s/%s/%s", p, perNode, oname, kind, mode, exch)
						gotF, gotB, err := gatheredNodes(ds, owner, p, perNode, kind, Options{Mode: mode, Exchange: exch}, exch, nn.Pass{}, x)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						assertClose(t, name+" forward", gotF, wantF, 1e-5)
						assertClose(t, name+" backward", gotB, wantB, 1e-5)
						err = comm.RunGroupNodes(p, perNode, func(c comm.Comm) error {
							s := partition.Split(ds, owner, c.Rank(), p)
							prop, err := New(s, c, testEngine(), kind, Options{Mode: mode, Exchange: exch})
							if err != nil {
								return err
							}
							return checkAdjoint(c, prop, s, x, y)
						})
						if err != nil {
							t.Fatalf("%s adjoint: %v", name, err)
						}
					}
				}
			}
		}
	}
}

// TestWeightedOnesDistributedEqualUnweighted: at P = 3 (flat) and 4 ranks
// on 2 nodes (two-level), all-ones weights give the unweighted results
// exactly in every mode.
func TestWeightedOnesDistributedEqualUnweighted(t *testing.T) {
	const n = 150
	rng := rand.New(rand.NewPCG(37, 38))
	ds := randomDataset(rng, n, 5, 0)
	ones := weighted(ds, 4, true)
	x := randomMatrix(rng, n, 5)
	for _, layout := range [][3]int{{3, 1, 0}, {4, 2, 1}} {
		p, perNode := layout[0], layout[1]
		exch := Exchanges()[layout[2]]
		owner := ownerKinds(rng, n, 0, p)["random"]
		for _, kind := range allKinds {
			for _, mode := range allModes {
				o := Options{Mode: mode, Exchange: exch}
				f0, b0, err := gatheredNodes(ds, owner, p, perNode, kind, o, exch, nn.Pass{}, x)
				if err != nil {
					t.Fatal(err)
				}
				f1, b1, err := gatheredNodes(ones, owner, p, perNode, kind, o, exch, nn.Pass{}, x)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("P=%d/%s/%s/%s", p, exch, kind, mode)
				assertClose(t, name+" forward", f1, f0, 0)
				assertClose(t, name+" backward", b1, b0, 0)
			}
		}
	}
}

// TestWeightedCodecBytes: a weighted graph moves exactly the rows of the
// unweighted one (the weights travel in the plan only).
func TestWeightedCodecBytes(t *testing.T) {
	const n, p, w = 150, 3, 4
	rng := rand.New(rand.NewPCG(39, 40))
	ds := weighted(randomDataset(rng, n, 4, 0), 5, false)
	owner := ownerKinds(rng, n, 0, p)["random"]
	for _, mode := range allModes {
		o := Options{Mode: mode, Codecs: roleCodecs(FP32{}, FP32{}, nil, nil)}
		err := runRanks(ds, owner, p, nn.OpGCN, o, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
			return checkByteCounts(prop, len(s.Global), w)
		})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
	}
}

// TestWeightedAttentionRefused: the attention operator refuses a weighted
// shard (GAT has no edge weights) instead of ignoring the weights.
func TestWeightedAttentionRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	ds := weighted(randomDataset(rng, 40, 3, 0), 6, false)
	_, err := New(ShardFromDataset(ds), comm.Single(), testEngine(), nn.OpAttention, Options{})
	if err == nil || !strings.Contains(err.Error(), "does not use edge weights") {
		t.Fatalf("weighted attention: %v", err)
	}
}
