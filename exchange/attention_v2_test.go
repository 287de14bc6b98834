package exchange

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
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

// v2Run is one GATv2 attention forward and backward on global matrices
// (rows by global id): out, gz, gt, and gatt summed over the ranks.
type v2Run struct {
	out, gz, gt *dense.Matrix
	gatt        []float32
	mu          sync.Mutex
}

type v2Inputs struct {
	sp         attn.Spec
	z, t, gout *dense.Matrix
	att        []float32
}

func newV2Inputs(rng *rand.Rand, n int, sp attn.Spec) *v2Inputs {
	hf := sp.Heads * sp.Width
	return &v2Inputs{sp: sp, z: randomMatrix(rng, n, hf), t: randomMatrix(rng, n, hf), gout: randomMatrix(rng, n, hf),
		att: randomMatrix(rng, 1, hf).Data}
}

func newV2Run(n int, in *v2Inputs) *v2Run {
	hf := in.z.Cols
	return &v2Run{out: dense.New(n, hf), gz: dense.New(n, hf), gt: dense.New(n, hf), gatt: make([]float32, hf)}
}

// attend runs prop's AttendV2 and AttendV2Backward on this rank's rows.
func (r *v2Run) attend(prop nn.AttentionV2, global []int64, in *v2Inputs) error {
	n, hf := len(global), in.z.Cols
	out, gz, gt, ga := dense.New(n, hf), dense.New(n, hf), dense.New(n, hf), make([]float32, hf)
	p := nn.Pass{Train: true, Epoch: 2, Layer: 1}
	if err := prop.AttendV2(p, in.sp, rowsOf(in.z, global), rowsOf(in.t, global), in.att, out); err != nil {
		return err
	}
	if err := prop.AttendV2Backward(p, rowsOf(in.gout, global), gz, gt, ga); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	scatterRows(r.out, out, global)
	scatterRows(r.gz, gz, global)
	scatterRows(r.gt, gt, global)
	for j, x := range ga {
		r.gatt[j] += x
	}
	return nil
}

func (r *v2Run) assertClose(t *testing.T, what string, want *v2Run, tol float64) {
	t.Helper()
	assertClose(t, what+" out", r.out, want.out, tol)
	assertClose(t, what+" gz", r.gz, want.gz, tol)
	assertClose(t, what+" gt", r.gt, want.gt, tol)
	assertClose(t, what+" gatt", &dense.Matrix{Rows: 1, Cols: len(r.gatt), Data: r.gatt},
		&dense.Matrix{Rows: 1, Cols: len(want.gatt), Data: want.gatt}, tol)
}

// v2Single is the one-rank operator's run.
func v2Single(t *testing.T, ds *graph.Dataset, in *v2Inputs) *v2Run {
	t.Helper()
	s := ShardFromDataset(ds)
	prop, err := New(s, comm.Single(), testEngine(), nn.OpAttentionV2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := newV2Run(ds.NumNodes(), in)
	if err := r.attend(prop, s.Global, in); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAttentionV2SingleMatchesLocal: the one-rank operator equals
// nn.LocalAttention's GATv2 pass on the graph with one self-loop per node.
func TestAttentionV2SingleMatchesLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 8))
	ds := randomDataset(rng, 60, 4, 1, 5)
	in := newV2Inputs(rng, 60, attn.Spec{Heads: 3, Width: 5, Slope: 0.2, Drop: 0.4, Seed: 9})
	got := v2Single(t, ds, in)
	g := graph.AddSelfLoops(ds.Graph, graph.LoopSorted)
	local, err := nn.NewLocalAttention(60, g.Ptr, g.Idx, attn.GenericRowsW)
	if err != nil {
		t.Fatal(err)
	}
	want := newV2Run(60, in)
	global := make([]int64, 60)
	for i := range global {
		global[i] = int64(i)
	}
	if err := want.attend(local, global, in); err != nil {
		t.Fatal(err)
	}
	got.assertClose(t, "single", want, 1e-5)
}

// TestAttentionV2DistributedMatchesSingle: at P = 2, 3, 4 ranks, every
// mode and owner pattern, with attention dropout, the gathered forward and
// backward (the attention vector's gradient summed over the ranks) equal
// the one-rank operator.
func TestAttentionV2DistributedMatchesSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 6))
	const n = 90
	ds := randomDataset(rng, n, 5, 1, 6)
	in := newV2Inputs(rng, n, attn.Spec{Heads: 2, Width: 7, Slope: 0.2, Drop: 0.3, Seed: 4})
	want := v2Single(t, ds, in)
	for _, p := range []int{2, 3, 4} {
		for name, owner := range ownerKinds(rng, n, 6, p) {
			for _, mode := range []string{"post", "pre", "hybrid"} {
				got := newV2Run(n, in)
				err := runRanks(ds, owner, p, nn.OpAttentionV2, Options{Mode: mode}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
					return got.attend(prop, s.Global, in)
				})
				if err != nil {
					t.Fatal(err)
				}
				got.assertClose(t, fmt.Sprintf("P=%d %s %s", p, name, mode), want, 1e-5)
			}
		}
	}
}

// TestAttentionV2QuantisedRows: rows (sources, partial states, target rows
// and their gradients) through the int8 and int2 codecs: int8 stays close
// to fp32 (relative squared error below 2e-2: the target rows' gradients
// are small sums of products of rows that all carry codec noise) and int2
// errs more, but within an order of magnitude of the values.
func TestAttentionV2QuantisedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2))
	const n = 80
	ds := randomDataset(rng, n, 5, 1)
	in := newV2Inputs(rng, n, attn.Spec{Heads: 2, Width: 16, Slope: 0.2})
	want := v2Single(t, ds, in)
	owner := ownerKinds(rng, n, 0, 3)["random"]
	for _, mode := range []string{"post", "pre", "hybrid"} {
		rel := map[int]map[string]float64{}
		for _, bits := range []int{8, 2} {
			got := newV2Run(n, in)
			o := Options{Mode: mode, Codecs: roleCodecs(quantBits{bits: bits}, quantBits{bits: bits}, nil, nil)}
			err := runRanks(ds, owner, 3, nn.OpAttentionV2, o, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
				return got.attend(prop, s.Global, in)
			})
			if err != nil {
				t.Fatal(err)
			}
			rel[bits] = map[string]float64{"out": relSq(got.out, want.out), "gz": relSq(got.gz, want.gz), "gt": relSq(got.gt, want.gt)}
		}
		for name, r8 := range rel[8] {
			if r2 := rel[2][name]; !(r8 < 2e-2 && r8 > 0 && r2 > r8 && r2 < 10) {
				t.Errorf("%s %s: relative squared error int8 %.3g, int2 %.3g", mode, name, r8, r2)
			}
		}
	}
}

// relSq is ‖got − want‖² / ‖want‖².
func relSq(got, want *dense.Matrix) float64 {
	var diff, norm float64
	for i, v := range got.Data {
		d := float64(v - want.Data[i])
		diff += d * d
		norm += float64(want.Data[i]) * float64(want.Data[i])
	}
	return diff / norm
}

// TestSplitCutV2 checks the GATv2 hybrid plan of random pairs: every cut
// edge is covered once (its source post, or in its destination's pre row),
// and the plan never weighs more (post rows + w × pre rows) than post.
func TestSplitCutV2(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := range 200 {
		ne := 1 + rng.IntN(60)
		src, dst := make([]int64, ne), make([]int32, ne)
		ns, nd := 1+rng.IntN(20), 1+rng.IntN(20)
		for k := range src {
			src[k], dst[k] = int64(rng.IntN(ns)), int32(rng.IntN(nd))
		}
		w := 1 + 4*rng.Float64()
		ps := splitCutV2(src, dst, w)
		post := map[int64]bool{}
		for _, u := range ps.Post {
			post[u] = true
		}
		pre := map[[2]int64]int{}
		for i, v := range ps.Pre {
			for _, u := range ps.PreSrc[ps.PrePtr[i]:ps.PrePtr[i+1]] {
				pre[[2]int64{int64(v), u}]++
			}
		}
		for k := range src {
			e := [2]int64{int64(dst[k]), src[k]}
			if post[src[k]] == (pre[e] > 0) {
				t.Fatalf("trial %d: edge %d→%d: post %v, in %d pre rows", trial, src[k], dst[k], post[src[k]], pre[e])
			}
		}
		if c := float64(len(ps.Post)) + w*float64(len(ps.Pre)); c > float64(ps.Counts.Post) {
			t.Fatalf("trial %d: plan weighs %g (post %d, pre %d of %g), all post %d", trial, c, len(ps.Post), len(ps.Pre), w, ps.Counts.Post)
		}
	}
}

// TestAttentionV2HybridMovesFewerRows: on a block-partitioned graph the
// GATv2 hybrid plan moves fewer rows (a pre row counting twice) than post.
func TestAttentionV2HybridMovesFewerRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const n = 200
	ds := randomDataset(rng, n, 6, 1)
	owner := ownerKinds(rng, n, 0, 4)["blocks"]
	var post, hybrid int64
	var mu sync.Mutex
	err := runRanks(ds, owner, 4, nn.OpAttentionV2, Options{Mode: "hybrid"}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
		pl := prop.att.pl
		mu.Lock()
		defer mu.Unlock()
		post += prop.PlanStats().TotalSent().Post
		for _, u := range pl.sendSrc {
			hybrid += 1
			if u < 0 {
				hybrid++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !(hybrid < post) {
		t.Fatalf("hybrid moves %d row equivalents, post %d", hybrid, post)
	}
	t.Logf("GATv2 rows each way: hybrid %d, post %d", hybrid, post)
}

// TestPreWeight: a GATv2 pre row weighs about two post rows with float32
// rows and more with coded ones (their scalars stay float32).
func TestPreWeight(t *testing.T) {
	int2, err := quant.NewCodec(quant.Format{Bits: 2}, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if w, w2 := preWeight(nil), preWeight(int2); !(w > 2 && w < 2.3 && w2 > 3 && w2 < 6) {
		t.Fatalf("pre row weight: float32 %g, int2 %g", w, w2)
	}
}

// TestAttentionV2BytesMatchRun: the bytes ReportRows predicts for a GATv2
// layer in every mode (what `supergcn stats --model gatv2 --heads` prints),
// on GATv2's own hybrid plan, are those the operator counts, for float32
// and int8 rows (whose pre rows weigh differently in the plan).
func TestAttentionV2BytesMatchRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	const n, p = 120, 3
	ds := randomDataset(rng, n, 5, 1)
	owner := ownerKinds(rng, n, 0, p)["random"]
	in := newV2Inputs(rng, n, attn.Spec{Heads: 3, Width: 4, Slope: 0.2})
	dir := filepath.Join(t.TempDir(), "parts")
	if err := partition.Write(dir, ds, owner, p, partition.MetaInfo{Method: "random"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		wire  quant.Wire
		codec RowCodec
	}{
		{quant.Wire{Bits: quant.ExactBits}, nil},
		{quant.Wire{Bits: 8, Params: quant.ParamsF32}, quantBits{bits: 8}},
	} {
		rep, err := ReportRows(dir, p, p, 12, 3, nn.OpAttentionV2, c.wire)
		if err != nil {
			t.Fatal(err)
		}
		want := rep.Attention
		if want.Model != "gatv2" || want.Forward.Pre <= want.Forward.Post || want.Scalars.Pre == 0 || want.Scalars.Post != 0 {
			t.Fatalf("%v: forward pre %d, post %d bytes, scalars pre %d, post %d", c.wire, want.Forward.Pre, want.Forward.Post, want.Scalars.Pre, want.Scalars.Post)
		}
		for _, mode := range []Mode{ModePost, ModePre, ModeHybrid} {
			var fwd, bwd [p]int64
			o := Options{Mode: mode.String(), Codecs: roleCodecs(c.codec, c.codec, nil, nil)}
			err := runRanks(ds, owner, p, nn.OpAttentionV2, o, func(s *partition.Shard, cm comm.Comm, prop *Propagator) error {
				m, hf := len(s.Global), in.z.Cols
				ps := nn.Pass{Train: true}
				if err := prop.AttendV2(ps, in.sp, rowsOf(in.z, s.Global), rowsOf(in.t, s.Global), in.att, dense.New(m, hf)); err != nil {
					return err
				}
				fwd[cm.Rank()] = prop.Stats().CommBytes
				err := prop.AttendV2Backward(ps, rowsOf(in.gout, s.Global), dense.New(m, hf), dense.New(m, hf), make([]float32, hf))
				bwd[cm.Rank()] = prop.Stats().CommBytes - fwd[cm.Rank()]
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if f, b := fwd[0]+fwd[1]+fwd[2], bwd[0]+bwd[1]+bwd[2]; f != want.Forward.Of(mode) || b != want.Backward.Of(mode) {
				t.Errorf("%v %s: forward %d bytes, backward %d; AttnBytes says %d, %d", c.wire, mode, f, b, want.Forward.Of(mode), want.Backward.Of(mode))
			}
		}
	}
}
