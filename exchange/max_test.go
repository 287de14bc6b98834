package exchange

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// maxRun is one max aggregation's output and input gradient, by global id.
type maxRun struct {
	mu      sync.Mutex
	out, gx *dense.Matrix
}

// apply runs MaxForward of x and MaxBackward of g on this rank's rows and
// stores the results by global id.
func (r *maxRun) apply(prop nn.MaxAggregator, global []int64, pass nn.Pass, x, g *dense.Matrix) error {
	xl, gl := rowsOf(x, global), rowsOf(g, global)
	out, gx := dense.New(len(global), x.Cols), dense.New(len(global), x.Cols)
	if err := prop.MaxForward(pass, xl, out); err != nil {
		return err
	}
	if err := prop.MaxBackward(pass, gl, gx); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	scatterRows(r.out, out, global)
	scatterRows(r.gx, gx, global)
	return nil
}

// maxReference is nn.LocalMax on the whole graph.
func maxReference(t *testing.T, ds *graph.Dataset, x, g *dense.Matrix) *maxRun {
	t.Helper()
	local, err := nn.NewLocalMax(ds.Graph, testEngine())
	if err != nil {
		t.Fatal(err)
	}
	want := &maxRun{out: dense.New(x.Rows, x.Cols), gx: dense.New(x.Rows, x.Cols)}
	all := make([]int64, x.Rows)
	for i := range all {
		all[i] = int64(i)
	}
	if err := want.apply(local, all, nn.Pass{Layer: 1}, x, g); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestMaxDistributedMatchesSingle: at P = 1 to 4 ranks, every mode and
// owner pattern, the distributed maximum equals the single-process one bit
// for bit, and the routed gradient within float32 rounding (the sums of
// the gradients routed to one source add in another order).
func TestMaxDistributedMatchesSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 7))
	const n, w = 120, 21
	ds := randomDataset(rng, n, 5, 1, 6)
	x, g := randomMatrix(rng, n, w), randomMatrix(rng, n, w)
	want := maxReference(t, ds, x, g)
	single := &maxRun{out: dense.New(n, w), gx: dense.New(n, w)}
	prop, err := New(ShardFromDataset(ds), comm.Single(), testEngine(), nn.OpMax, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := single.apply(prop, ShardFromDataset(ds).Global, nn.Pass{Layer: 1}, x, g); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "P=1 max", single.out, want.out, 0)
	assertClose(t, "P=1 gradient", single.gx, want.gx, 0)
	for _, p := range []int{2, 3, 4} {
		for name, owner := range ownerKinds(rng, n, 6, p) {
			for _, mode := range []string{"post", "pre", "hybrid"} {
				got := &maxRun{out: dense.New(n, w), gx: dense.New(n, w)}
				err := runRanks(ds, owner, p, nn.OpMax, Options{Mode: mode}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
					return got.apply(prop, s.Global, nn.Pass{Layer: 1, Train: true}, x, g)
				})
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("P=%d %s %s", p, name, mode)
				assertClose(t, what+" max", got.out, want.out, 0)
				assertClose(t, what+" gradient", got.gx, want.gx, 1e-5)
			}
		}
	}
}

// TestMaxInt2Rows: quantised rows (int2 both ways) give a maximum close to
// the exact one (within 15 % in squared error: about 6 % here, as the
// maximum of stochastically rounded rows picks the ones rounded up), and
// the quantised gradient still reaches the sources.
func TestMaxInt2Rows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	const n, w = 100, 32
	ds := randomDataset(rng, n, 5, 1)
	x, g := randomMatrix(rng, n, w), randomMatrix(rng, n, w)
	want := maxReference(t, ds, x, g)
	owner := ownerKinds(rng, n, 0, 3)["random"]
	for _, mode := range []string{"post", "hybrid"} {
		got := &maxRun{out: dense.New(n, w), gx: dense.New(n, w)}
		o := Options{Mode: mode, Codecs: roleCodecs(quantBits{bits: 2}, quantBits{bits: 2}, nil, nil)}
		err := runRanks(ds, owner, 3, nn.OpMax, o, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
			return got.apply(prop, s.Global, nn.Pass{Layer: 0, Train: true, Epoch: 3}, x, g)
		})
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, mode+" int2 max", got.out, want.out, 0.7)
		var diff, norm float64
		for i, v := range got.out.Data {
			d := float64(v - want.out.Data[i])
			diff, norm = diff+d*d, norm+float64(want.out.Data[i])*float64(want.out.Data[i])
		}
		if diff > 0.15*norm || diff == 0 {
			t.Errorf("%s: int2 rows: squared error %g of %g (want small and non-zero)", mode, diff, norm)
		}
		if dot(got.gx, want.gx) <= 0.5*dot(want.gx, want.gx) {
			t.Errorf("%s: int2 gradient does not follow the exact one", mode)
		}
	}
}

// TestMaxRefusals: the max operator refuses the two-level exchange, edge
// weights, the sum product, and a backward without its forward.
func TestMaxRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	ds := randomDataset(rng, 30, 3, 1)
	_, err := New(ShardFromDataset(ds), comm.Single(), testEngine(), nn.OpMax, Options{Exchange: ExchangeTwoLevel})
	if err == nil || !strings.Contains(err.Error(), "flat") {
		t.Fatalf("two-level: %v", err)
	}
	wds := *ds
	wg := *ds.Graph
	wg.Val = make([]float32, len(wg.Idx))
	wds.Graph = &wg
	if _, err := New(ShardFromDataset(&wds), comm.Single(), testEngine(), nn.OpMax, Options{}); err == nil || !strings.Contains(err.Error(), "weights") {
		t.Fatalf("weighted: %v", err)
	}
	prop, err := New(ShardFromDataset(ds), comm.Single(), testEngine(), nn.OpMax, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := randomMatrix(rng, 30, 4)
	out := dense.New(30, 4)
	if err := prop.Forward(nn.Pass{}, x, out); err == nil {
		t.Fatal("sum Forward on the max operator accepted")
	}
	if err := prop.MaxBackward(nn.Pass{Layer: 3}, x, out); err == nil {
		t.Fatal("MaxBackward without MaxForward accepted")
	}
	sum, err := New(ShardFromDataset(ds), comm.Single(), testEngine(), nn.OpSum, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sum.MaxForward(nn.Pass{}, x, out); err == nil {
		t.Fatal("MaxForward on the sum operator accepted")
	}
}
