package exchange

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// gatheredNodes is gathered on a goroutine group of p ranks, perNode to an
// emulated node, checking that the exchange that ran is want.
func gatheredNodes(ds *graph.Dataset, owner []int32, p, perNode int, kind nn.OpKind, o Options, want string, pass nn.Pass, x *dense.Matrix) (fwd, bwd *dense.Matrix, err error) {
	g := newGather(x)
	err = comm.RunGroupNodes(p, perNode, func(c comm.Comm) error {
		s := partition.Split(ds, owner, c.Rank(), p)
		prop, err := New(s, c, testEngine(), kind, perRank(o))
		if err != nil {
			return err
		}
		if prop.Exchange() != want {
			return fmt.Errorf("exchange %s ran, want %s", prop.Exchange(), want)
		}
		return g.apply(prop, s, pass, 2) // buffers are reused: the next pass must give the same
	})
	return g.fwd, g.bwd, err
}

// TestTwoLevelMatchesSingle: every exchange pattern (Exchanges) on emulated nodes (2×2,
// 3×2, 2×3, 2+2+1, 4×2), every kind, mode and owner pattern, gives the
// one-rank operator forward and backward.
func TestTwoLevelMatchesSingle(t *testing.T) {
	const n, iso = 240, 12
	rng := rand.New(rand.NewPCG(15, 16))
	ds := randomDataset(rng, n, 5, 0, iso)
	xs := map[int]*dense.Matrix{1: randomMatrix(rng, n, 1), 7: randomMatrix(rng, n, 7)}
	for _, layout := range [][2]int{{4, 2}, {6, 2}, {6, 3}, {5, 2}, {8, 2}} {
		p, perNode := layout[0], layout[1]
		for oname, owner := range ownerKinds(rng, n, iso, p) {
			for _, kind := range allKinds {
				for _, mode := range allModes {
					for w, x := range xs {
						name := fmt.Sprintf("P=%d/perNode=%d/%s/%s/%s/w=%d", p, perNode, oname, kind, mode, w)
						wantF, wantB := singleRank(t, ds, kind, x)
						for _, exch := range Exchanges() { // every pattern, flat too
							gotF, gotB, err := gatheredNodes(ds, owner, p, perNode, kind, Options{Mode: mode, Exchange: exch}, exch, nn.Pass{}, x)
							if err != nil {
								t.Fatalf("%s/%s: %v", name, exch, err)
							}
							assertClose(t, name+"/"+exch+" forward", gotF, wantF, 1e-5)
							assertClose(t, name+"/"+exch+" backward", gotB, wantB, 1e-5)
						}
					}
				}
			}
		}
	}
}

// TestTwoLevelRoundRobinNodes: ranks placed round-robin on the nodes (rank
// order and node order differ) give the one-rank operator too.
func TestTwoLevelRoundRobinNodes(t *testing.T) {
	const n, p = 200, 6
	rng := rand.New(rand.NewPCG(23, 24))
	ds := randomDataset(rng, n, 5, 0)
	x := randomMatrix(rng, n, 4)
	layout := []int{0, 1, 2, 0, 1, 0} // node sizes 3, 2, 1
	for oname, owner := range ownerKinds(rng, n, 0, p) {
		for _, exch := range Exchanges() { // every pattern, flat too
			wantF, wantB := singleRank(t, ds, nn.OpGCN, x)
			g := newGather(x)
			err := comm.RunGroupLayout(layout, func(c comm.Comm) error {
				s := partition.Split(ds, owner, c.Rank(), p)
				prop, err := New(s, c, testEngine(), nn.OpGCN, Options{Exchange: exch})
				if err != nil {
					return err
				}
				return g.apply(prop, s, nn.Pass{}, 1)
			})
			if err != nil {
				t.Fatalf("%s/%s: %v", oname, exch, err)
			}
			assertClose(t, oname+"/"+exch+" forward", g.fwd, wantF, 1e-5)
			assertClose(t, oname+"/"+exch+" backward", g.bwd, wantB, 1e-5)
		}
	}
}

// TestExchangeChoice: "" picks two-level only for several nodes with
// several ranks on some node; "flat" is honoured on any layout.
func TestExchangeChoice(t *testing.T) {
	const n = 120
	rng := rand.New(rand.NewPCG(17, 18))
	ds := randomDataset(rng, n, 4, 0)
	x := randomMatrix(rng, n, 3)
	for _, tc := range []struct {
		p, perNode int
		opt, want  string
	}{{4, 2, "", ExchangeTwoLevel}, {4, 4, "", ExchangeFlat}, {4, 1, "", ExchangeFlat}, {4, 2, "flat", ExchangeFlat}, {4, 4, "two-level", ExchangeTwoLevel}} {
		owner := ownerKinds(rng, n, 0, tc.p)["random"]
		if _, _, err := gatheredNodes(ds, owner, tc.p, tc.perNode, nn.OpGCN, Options{Exchange: tc.opt}, tc.want, nn.Pass{}, x); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
	}
	err := comm.RunGroup(2, func(c comm.Comm) error {
		_, err := New(partition.Split(ds, make([]int32, n), c.Rank(), 2), c, testEngine(), nn.OpGCN, Options{Exchange: "tree"})
		return err
	})
	if err == nil {
		t.Fatal("unknown exchange accepted")
	}
}

// TestTwoLevelQuantized: int2 on the inter-node stage runs, stays near the
// fp32 result, and counts the inter-node bytes at the codec's size; the
// intra-node stages are fp32.
func TestTwoLevelQuantized(t *testing.T) {
	const n, p, perNode, w = 200, 4, 2, 16
	rng := rand.New(rand.NewPCG(19, 20))
	ds := randomDataset(rng, n, 5, 0)
	owner := ownerKinds(rng, n, 0, p)["random"]
	x := randomMatrix(rng, n, w)
	wantF, _, err := gatheredNodes(ds, owner, p, perNode, nn.OpGCN, Options{}, ExchangeTwoLevel, nn.Pass{Train: true}, x)
	if err != nil {
		t.Fatal(err)
	}
	q := quantBits{bits: 8}
	gotF, _, err := gatheredNodes(ds, owner, p, perNode, nn.OpGCN, Options{Codecs: roleCodecs(q, q, nil, nil)}, ExchangeTwoLevel, nn.Pass{Train: true}, x)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "int8 two-level forward", gotF, wantF, 0.05)
	gotF, _, err = gatheredNodes(ds, owner, p, perNode, nn.OpGCN, Options{Codecs: roleCodecs(q, q, nil, q)}, ExchangeTwoLevel, nn.Pass{Train: true}, x)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "int8 two-level forward, int8 inside nodes", gotF, wantF, 0.08)
	// The FP32 codec inside nodes is exact.
	gotF, gotB, err := gatheredNodes(ds, owner, p, perNode, nn.OpGCN, Options{Codecs: roleCodecs(FP32{}, FP32{}, nil, FP32{})}, ExchangeTwoLevel, nn.Pass{Train: true}, x)
	if err != nil {
		t.Fatal(err)
	}
	_, wantB, err := gatheredNodes(ds, owner, p, perNode, nn.OpGCN, Options{}, ExchangeTwoLevel, nn.Pass{Train: true}, x)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "fp32 codec inside nodes forward", gotF, wantF, 0)
	assertClose(t, "fp32 codec inside nodes backward", gotB, wantB, 0)
	err = comm.RunGroupNodes(p, perNode, func(c comm.Comm) error {
		s := partition.Split(ds, owner, c.Rank(), p)
		prop, err := New(s, c, testEngine(), nn.OpGCN, Options{Codecs: roleCodecs(FP32{}, FP32{}, nil, nil)})
		if err != nil {
			return err
		}
		out := dense.New(len(s.Global), w)
		if err := prop.Forward(nn.Pass{Train: true}, rowsOf(x, s.Global), out); err != nil {
			return err
		}
		ps := prop.PlanStats()
		st := prop.Stats()
		want := 4 * int64(w) * (ps.InterRows + ps.IntraRows)
		if st.CommBytes != want || st.IntraBytes != 4*int64(w)*ps.IntraRows {
			return fmt.Errorf("bytes %d (intra %d), want %d (intra %d)", st.CommBytes, st.IntraBytes, want, 4*int64(w)*ps.IntraRows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTwoLevelVolumesMatchPlan: the rows the built exchange sends between
// nodes and inside them are those NodeVolumesOf reports.
func TestTwoLevelVolumesMatchPlan(t *testing.T) {
	const n, p, perNode = 300, 6, 3
	rng := rand.New(rand.NewPCG(21, 22))
	ds := randomDataset(rng, n, 5, 0)
	owner := ownerKinds(rng, n, 0, p)["blocks"]
	nv, err := NodeVolumesOf(p, comm.BlockNodes(p, perNode), func(r int) (*partition.Shard, error) { return partition.Split(ds, owner, r, p), nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(nv.Exchange[ExchangeTwoLevel].Scatter) == 0 || sumRows(nv.Exchange[ExchangeTwoLevel].Gather) == sumRows(nv.Exchange[ExchangeFlat].Gather) {
		t.Fatalf("test graph exercises no scatter or no partial-sum gather: %+v", nv.Exchange[ExchangeTwoLevel])
	}
	for exch, vol := range map[string]*ExchangeVolume{ExchangeTwoLevel: nv.Exchange[ExchangeTwoLevel], ExchangeTwoLevelPaired: nv.Exchange[ExchangeTwoLevelPaired]} {
		inter, intra := make([]int64, p), make([]int64, p)
		err = comm.RunGroupNodes(p, perNode, func(c comm.Comm) error {
			prop, err := New(partition.Split(ds, owner, c.Rank(), p), c, testEngine(), nn.OpSum, Options{Exchange: exch})
			if err != nil {
				return err
			}
			inter[c.Rank()], intra[c.Rank()] = prop.PlanStats().InterRows, prop.PlanStats().IntraRows
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var ti, ta int64
		for r := range inter {
			ti, ta = ti+inter[r], ta+intra[r]
		}
		if ti != vol.InterRows() || ta != vol.IntraRows() {
			t.Fatalf("%s: exchange sends %d inter / %d intra rows, volumes say %d / %d", exch, ti, ta, vol.InterRows(), vol.IntraRows())
		}
	}
}

// TestTwoLevelAdjoint: Σ_ranks <Forward(x), y> == Σ_ranks <x, Backward(y)>
// for the two-level exchanges on 3 emulated nodes of 2 ranks.
func TestTwoLevelAdjoint(t *testing.T) {
	const n, p, w = 200, 6, 3
	rng := rand.New(rand.NewPCG(25, 26))
	ds := randomDataset(rng, n, 6, 0)
	owner := ownerKinds(rng, n, 0, p)["random"]
	x, y := randomMatrix(rng, n, w), randomMatrix(rng, n, w)
	for _, kind := range allKinds {
		for _, exch := range Exchanges() { // every pattern, flat too
			err := comm.RunGroupNodes(p, 2, func(c comm.Comm) error {
				s := partition.Split(ds, owner, c.Rank(), p)
				prop, err := New(s, c, testEngine(), kind, Options{Exchange: exch})
				if err != nil {
					return err
				}
				return checkAdjoint(c, prop, s, x, y)
			})
			if err != nil {
				t.Fatalf("%s/%s: %v", kind, exch, err)
			}
		}
	}
}

// TestChooseExchange: "" is two-level exactly when the ranks span several
// nodes and some node has several; a named exchange is kept.
func TestChooseExchange(t *testing.T) {
	for _, c := range []struct {
		ranks, perNode int
		kind, want     string
	}{
		{1, 1, "", ExchangeFlat}, {4, 4, "", ExchangeFlat}, {4, 1, "", ExchangeFlat}, {4, 0, "", ExchangeFlat},
		{4, 2, "", ExchangeTwoLevel}, {5, 2, "", ExchangeTwoLevel}, {3, 2, "", ExchangeTwoLevel},
		{4, 2, ExchangeFlat, ExchangeFlat}, {4, 4, ExchangeTwoLevelPaired, ExchangeTwoLevelPaired},
	} {
		if got := ChooseExchange(c.kind, comm.BlockNodes(c.ranks, c.perNode)); got != c.want {
			t.Errorf("ChooseExchange(%q, %d ranks, %d a node) = %s, want %s", c.kind, c.ranks, c.perNode, got, c.want)
		}
	}
}
