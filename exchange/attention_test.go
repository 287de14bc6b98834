package exchange

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// attnRun is one attention forward and backward on global matrices (rows
// by global id): out, gz, gsrc, gdst.
type attnRun struct {
	out, gz, gsrc, gdst *dense.Matrix
	mu                  sync.Mutex
}

type attnInputs struct {
	sp                attn.Spec
	z, src, dst, gout *dense.Matrix
}

func newAttnInputs(rng *rand.Rand, n int, sp attn.Spec) *attnInputs {
	hf := sp.Heads * sp.Width
	return &attnInputs{sp: sp, z: randomMatrix(rng, n, hf), src: randomMatrix(rng, n, sp.Heads),
		dst: randomMatrix(rng, n, sp.Heads), gout: randomMatrix(rng, n, hf)}
}

// attend runs prop's Attend and AttendBackward on this rank's rows and
// stores them in r.
func (r *attnRun) attend(prop *Propagator, s *partition.Shard, in *attnInputs) error {
	n, hf, h := len(s.Global), in.z.Cols, in.src.Cols
	out, gz, gs, gd := dense.New(n, hf), dense.New(n, hf), dense.New(n, h), dense.New(n, h)
	p := nn.Pass{Train: true, Epoch: 2, Layer: 1}
	if err := prop.Attend(p, in.sp, rowsOf(in.z, s.Global), rowsOf(in.src, s.Global), rowsOf(in.dst, s.Global), out); err != nil {
		return err
	}
	if err := prop.AttendBackward(p, rowsOf(in.gout, s.Global), gz, gs, gd); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	scatterRows(r.out, out, s.Global)
	scatterRows(r.gz, gz, s.Global)
	scatterRows(r.gsrc, gs, s.Global)
	scatterRows(r.gdst, gd, s.Global)
	return nil
}

func newAttnRun(n int, in *attnInputs) *attnRun {
	return &attnRun{out: dense.New(n, in.z.Cols), gz: dense.New(n, in.z.Cols), gsrc: dense.New(n, in.src.Cols), gdst: dense.New(n, in.src.Cols)}
}

// attnSingle is the one-rank operator's run.
func attnSingle(t *testing.T, ds *graph.Dataset, in *attnInputs) *attnRun {
	t.Helper()
	s := ShardFromDataset(ds)
	prop, err := New(s, comm.Single(), testEngine(), nn.OpAttention, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := newAttnRun(ds.NumNodes(), in)
	if err := r.attend(prop, s, in); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *attnRun) assertClose(t *testing.T, what string, want *attnRun, tol float64) {
	t.Helper()
	assertClose(t, what+" out", r.out, want.out, tol)
	assertClose(t, what+" gz", r.gz, want.gz, tol)
	assertClose(t, what+" gsrc", r.gsrc, want.gsrc, tol)
	assertClose(t, what+" gdst", r.gdst, want.gdst, tol)
}

// TestAttentionSingleMatchesLocal: the one-rank exchange operator equals
// nn.LocalAttention on the graph with one self-loop per node.
func TestAttentionSingleMatchesLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 7))
	ds := randomDataset(rng, 60, 4, 1, 5)
	in := newAttnInputs(rng, 60, attn.Spec{Heads: 3, Width: 5, Slope: 0.2, Drop: 0.4, Seed: 9})
	got := attnSingle(t, ds, in)
	g := graph.AddSelfLoops(ds.Graph, graph.LoopSorted)
	local, err := nn.NewLocalAttention(60, g.Ptr, g.Idx, attn.GenericRowsW)
	if err != nil {
		t.Fatal(err)
	}
	want := newAttnRun(60, in)
	p := nn.Pass{Train: true, Epoch: 2, Layer: 1}
	if err := local.Attend(p, in.sp, in.z, in.src, in.dst, want.out); err != nil {
		t.Fatal(err)
	}
	if err := local.AttendBackward(p, in.gout, want.gz, want.gsrc, want.gdst); err != nil {
		t.Fatal(err)
	}
	got.assertClose(t, "single", want, 1e-5)
}

// TestAttentionDistributedMatchesSingle: at P = 2, 3, 4 ranks, every mode
// and owner pattern, with attention dropout, the gathered forward and
// backward equal the one-rank operator.
func TestAttentionDistributedMatchesSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const n = 90
	ds := randomDataset(rng, n, 5, 1, 6)
	in := newAttnInputs(rng, n, attn.Spec{Heads: 2, Width: 7, Slope: 0.2, Drop: 0.3, Seed: 4})
	want := attnSingle(t, ds, in)
	for _, p := range []int{2, 3, 4} {
		for name, owner := range ownerKinds(rng, n, 6, p) {
			for _, mode := range []string{"post", "pre", "hybrid"} {
				got := newAttnRun(n, in)
				err := runRanks(ds, owner, p, nn.OpAttention, Options{Mode: mode}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
					return got.attend(prop, s, in)
				})
				if err != nil {
					t.Fatal(err)
				}
				got.assertClose(t, fmt.Sprintf("P=%d %s %s", p, name, mode), want, 1e-5)
			}
		}
	}
}

// TestAttentionInt2Rows: rows through the int2 codec stay close to fp32
// (the softmax state's scalars travel in float32).
func TestAttentionInt2Rows(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	const n = 80
	ds := randomDataset(rng, n, 5, 1)
	in := newAttnInputs(rng, n, attn.Spec{Heads: 2, Width: 16, Slope: 0.2})
	want := attnSingle(t, ds, in)
	owner := ownerKinds(rng, n, 0, 3)["random"]
	for _, mode := range []string{"post", "hybrid"} {
		got := newAttnRun(n, in)
		o := Options{Mode: mode, Codecs: roleCodecs(quantBits{bits: 2}, quantBits{bits: 2}, nil, nil)}
		var bytes [3]int64
		err := runRanks(ds, owner, 3, nn.OpAttention, o, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
			err := got.attend(prop, s, in)
			bytes[c.Rank()] = prop.Stats().CommBytes
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, mode+" int2 out", got.out, want.out, 0.5)
		var diff, norm float64
		for i, v := range got.out.Data {
			d := float64(v - want.out.Data[i])
			diff += d * d
			norm += float64(want.out.Data[i]) * float64(want.out.Data[i])
		}
		if diff > 0.05*norm || diff == 0 {
			t.Errorf("%s: int2 rows: squared error %g of %g (want small and non-zero)", mode, diff, norm)
		}
		if bytes[0]+bytes[1]+bytes[2] == 0 {
			t.Errorf("%s: no bytes counted", mode)
		}
	}
}

// TestAttentionHybridMovesFewerRows: on a block-partitioned graph the
// attention plan's hybrid rows are fewer than post's.
func TestAttentionHybridMovesFewerRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const n = 200
	ds := randomDataset(rng, n, 6, 1)
	owner := ownerKinds(rng, n, 0, 4)["blocks"]
	var post, hybrid int64
	var mu sync.Mutex
	err := runRanks(ds, owner, 4, nn.OpAttention, Options{Mode: "hybrid"}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
		t := prop.PlanStats().TotalSent()
		mu.Lock()
		post, hybrid = post+t.Post, hybrid+t.Hybrid
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !(hybrid < post) {
		t.Fatalf("hybrid sends %d rows, post %d", hybrid, post)
	}
}

// TestAttentionBytesMatchRun: the bytes AttnBytes predicts for every mode
// (what `supergcn stats --heads` prints) are those the operator counts.
func TestAttentionBytesMatchRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const n, p = 120, 3
	ds := randomDataset(rng, n, 5, 1)
	owner := ownerKinds(rng, n, 0, p)["random"]
	in := newAttnInputs(rng, n, attn.Spec{Heads: 3, Width: 4, Slope: 0.2})
	want := newAttnBytes(nn.OpAttention, 3)
	for r := range p {
		splits, err := SplitShard(partition.Split(ds, owner, r, p), ModeHybrid)
		if err != nil {
			t.Fatal(err)
		}
		for q := range splits {
			want.add(&splits[q], 12, quant.Wire{Bits: quant.ExactBits})
		}
	}
	for _, mode := range []Mode{ModePost, ModePre, ModeHybrid} {
		var fwd, bwd [p]int64
		err := runRanks(ds, owner, p, nn.OpAttention, Options{Mode: mode.String()}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
			ps := nn.Pass{Train: true}
			hf, h, m := in.z.Cols, in.src.Cols, len(s.Global)
			if err := prop.Attend(ps, in.sp, rowsOf(in.z, s.Global), rowsOf(in.src, s.Global), rowsOf(in.dst, s.Global), dense.New(m, hf)); err != nil {
				return err
			}
			fwd[c.Rank()] = prop.Stats().CommBytes
			err := prop.AttendBackward(ps, rowsOf(in.gout, s.Global), dense.New(m, hf), dense.New(m, h), dense.New(m, h))
			bwd[c.Rank()] = prop.Stats().CommBytes - fwd[c.Rank()]
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if f, b := fwd[0]+fwd[1]+fwd[2], bwd[0]+bwd[1]+bwd[2]; f != want.Forward.Of(mode) || b != want.Backward.Of(mode) {
			t.Errorf("%s: forward %d bytes, backward %d; AttnBytes says %d, %d", mode, f, b, want.Forward.Of(mode), want.Backward.Of(mode))
		}
	}
}

// countingComm counts the plan messages (AlltoallvI64) a rank exchanges.
type countingComm struct {
	comm.Comm
	calls int
}

func (c *countingComm) AlltoallvI64(send []int64, sc, sd []int, recv []int64, rc, rd []int) error {
	c.calls++
	return c.Comm.AlltoallvI64(send, sc, sd, recv, rc, rd)
}

// TestAttentionPlansOnlyItsExchange: an operator of kind OpAttention builds
// the attention plan and no row plan beside it: it exchanges as many plan
// messages as the GCN kind's flat plan alone, and has no row product.
func TestAttentionPlansOnlyItsExchange(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 3))
	const n, p = 90, 3
	ds := randomDataset(rng, n, 5, 1)
	owner := ownerKinds(rng, n, 0, p)["random"]
	calls := map[nn.OpKind][]int{}
	var mu sync.Mutex
	for _, kind := range []nn.OpKind{nn.OpGCN, nn.OpAttention} {
		err := comm.RunGroupNodes(p, 1, func(c comm.Comm) error {
			cc := &countingComm{Comm: c}
			prop, err := New(partition.Split(ds, owner, c.Rank(), p), cc, testEngine(), kind, Options{Mode: "hybrid", Exchange: ExchangeFlat})
			if err != nil {
				return err
			}
			mu.Lock()
			calls[kind] = append(calls[kind], cc.calls)
			mu.Unlock()
			if kind != nn.OpAttention {
				return nil
			}
			if prop.Exchange() != ExchangeFlat || prop.PlanStats().TotalSent().Hybrid == 0 {
				return fmt.Errorf("attention plan: exchange %q, %d hybrid rows", prop.Exchange(), prop.PlanStats().TotalSent().Hybrid)
			}
			x := dense.New(prop.Rows(), 2)
			if err := prop.Forward(nn.Pass{}, x, dense.New(prop.Rows(), 2)); err == nil {
				return errors.New("Forward on the attention operator succeeded")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if calls[nn.OpGCN][0] == 0 {
		t.Fatal("the GCN plan exchanged no messages")
	}
	for r, k := range calls[nn.OpAttention] {
		if k != calls[nn.OpGCN][0] {
			t.Errorf("attention operator: %d plan all-to-alls on a rank (%d), GCN's flat plan %d", k, r, calls[nn.OpGCN][0])
		}
	}
}
