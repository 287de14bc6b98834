package exchange

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

var allModes = []string{"post", "pre", "hybrid"}

// ownerKinds returns named owner arrays for n nodes (the last iso without
// edges) over p parts: random, contiguous blocks (METIS-like), one rank
// owning only the isolated nodes (no remote edges, nothing to send), and the
// last rank owning nothing.
func ownerKinds(rng *rand.Rand, n, iso, p int) map[string][]int32 {
	random, blocks, isolated, empty := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	for v := 0; v < n; v++ {
		random[v] = int32(rng.IntN(p))
		blocks[v] = int32(v * p / n)
		isolated[v] = int32(rng.IntN(p-1)) + 1
		if v >= n-iso {
			isolated[v] = 0
		}
		empty[v] = int32(rng.IntN(p - 1))
	}
	return map[string][]int32{"random": random, "blocks": blocks, "isolated": isolated, "empty": empty}
}

// runRanks builds the exchange of every part of owner on a goroutine group
// of one rank per emulated node (so every pair's rows go through the
// pass's codec) and runs fn on each rank; it returns the joined errors.
func runRanks(ds *graph.Dataset, owner []int32, p int, kind nn.OpKind, o Options,
	fn func(s *partition.Shard, c comm.Comm, prop *Propagator) error) error {
	return comm.RunGroupNodes(p, 1, func(c comm.Comm) error {
		s := partition.Split(ds, owner, c.Rank(), p)
		prop, err := New(s, c, testEngine(), kind, perRank(o))
		if err != nil {
			return err
		}
		return fn(s, c, prop)
	})
}

// quantBits in test Options stands for an int-bits quant.Codec, which
// perRank creates for each rank (a codec serves one rank only).
type quantBits struct {
	RowCodec
	bits int
}

// perRank returns o with every quantBits replaced by a fresh quant.Codec.
func perRank(o Options) Options {
	for r := range o.Codecs {
		c := &o.Codecs[r]
		if q, ok := (*c).(quantBits); ok {
			codec, err := quant.NewCodec(quant.Format{Bits: q.bits}, 1, "")
			if err != nil {
				panic(err) // 2, 4 or 8 bits: cannot fail
			}
			*c = codec
		}
	}
	return o
}

// roleCodecs is Options.Codecs of the four roles.
func roleCodecs(fwd, bwd, eval, intra RowCodec) [quant.NumRoles]RowCodec {
	var cs [quant.NumRoles]RowCodec
	cs[quant.Forward], cs[quant.Backward], cs[quant.Eval], cs[quant.Intra] = fwd, bwd, eval, intra
	return cs
}

// gathered applies the distributed operator to the global matrix x (rows by
// global id) and returns Forward and Backward results gathered by global id.
func gathered(ds *graph.Dataset, owner []int32, p int, kind nn.OpKind, o Options, pass nn.Pass, x *dense.Matrix) (fwd, bwd *dense.Matrix, err error) {
	g := newGather(x)
	err = runRanks(ds, owner, p, kind, o, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
		return g.apply(prop, s, pass, 1)
	})
	return g.fwd, g.bwd, err
}

// gather collects the ranks' Forward and Backward results of the global
// matrix x by global id.
type gather struct {
	x        *dense.Matrix
	mu       sync.Mutex
	fwd, bwd *dense.Matrix
}

func newGather(x *dense.Matrix) *gather {
	return &gather{x: x, fwd: dense.New(x.Rows, x.Cols), bwd: dense.New(x.Rows, x.Cols)}
}

// apply runs prop's Forward and Backward reps times on this rank's rows
// (s.Global) of x, reusing the buffers, and stores the last results.
func (g *gather) apply(prop *Propagator, s *partition.Shard, pass nn.Pass, reps int) error {
	w := g.x.Cols
	xl := rowsOf(g.x, s.Global)
	out, gx := dense.New(len(s.Global), w), dense.New(len(s.Global), w)
	for rep := 0; rep < reps; rep++ {
		if err := prop.Forward(pass, xl, out); err != nil {
			return err
		}
		if err := prop.Backward(pass, xl, gx); err != nil {
			return err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	scatterRows(g.fwd, out, s.Global)
	scatterRows(g.bwd, gx, s.Global)
	return nil
}

func rowsOf(x *dense.Matrix, global []int64) *dense.Matrix {
	m := dense.New(len(global), x.Cols)
	for i, g := range global {
		copy(m.Row(i), x.Row(int(g)))
	}
	return m
}

func scatterRows(dst, src *dense.Matrix, global []int64) {
	for i, g := range global {
		copy(dst.Row(int(g)), src.Row(i))
	}
}

// singleRank is the P=1 operator's Forward and Backward of x.
func singleRank(t *testing.T, ds *graph.Dataset, kind nn.OpKind, x *dense.Matrix) (fwd, bwd *dense.Matrix) {
	t.Helper()
	prop, err := New(ShardFromDataset(ds), comm.Single(), testEngine(), kind, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fwd, bwd = dense.New(x.Rows, x.Cols), dense.New(x.Rows, x.Cols)
	if err := prop.Forward(nn.Pass{}, x, fwd); err != nil {
		t.Fatal(err)
	}
	if err := prop.Backward(nn.Pass{}, x, bwd); err != nil {
		t.Fatal(err)
	}
	return fwd, bwd
}

// TestDistributedMatchesSingle: at P = 2, 3, 4, 8 ranks, every kind, mode,
// width and owner pattern, Forward and Backward gathered by global id equal
// the one-rank operator.
func TestDistributedMatchesSingle(t *testing.T) {
	const n, iso = 240, 12
	rng := rand.New(rand.NewPCG(5, 6))
	ds := randomDataset(rng, n, 5, 0, iso)
	xs := map[int]*dense.Matrix{}
	for _, w := range []int{1, 7, 64} {
		xs[w] = randomMatrix(rng, n, w)
	}
	type key struct {
		kind nn.OpKind
		w    int
	}
	want := map[key][2]*dense.Matrix{}
	for _, kind := range allKinds {
		for w, x := range xs {
			f, b := singleRank(t, ds, kind, x)
			want[key{kind, w}] = [2]*dense.Matrix{f, b}
		}
	}
	for _, p := range []int{2, 3, 4, 8} {
		for oname, owner := range ownerKinds(rng, n, iso, p) {
			for _, kind := range allKinds {
				for _, mode := range allModes {
					for w, x := range xs {
						name := fmt.Sprintf("P=%d/%s/%s/%s/w=%d", p, oname, kind, mode, w)
						wantF, wantB := want[key{kind, w}][0], want[key{kind, w}][1]
						gotF, gotB, err := gathered(ds, owner, p, kind, Options{Mode: mode}, nn.Pass{}, x)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						assertClose(t, name+" forward", gotF, wantF, 1e-5)
						assertClose(t, name+" backward", gotB, wantB, 1e-5)
					}
				}
			}
		}
	}
}

// TestCodecPathMatchesF32: the byte path with the FP32 codec on a training
// pass gives the float32 path's result exactly, and the byte counters agree
// with the plan: forward sends Σ sent rows × width × 4, backward the rows
// received in the forward direction.
func TestCodecPathMatchesF32(t *testing.T) {
	const n, p, w = 150, 3, 5
	rng := rand.New(rand.NewPCG(7, 8))
	ds := randomDataset(rng, n, 4, 0)
	owner := ownerKinds(rng, n, 0, p)["random"]
	x := randomMatrix(rng, n, w)
	for _, mode := range allModes {
		o := Options{Mode: mode, Codecs: roleCodecs(FP32{}, FP32{}, nil, nil)}
		wantF, wantB, err := gathered(ds, owner, p, nn.OpGCN, Options{Mode: mode}, nn.Pass{Train: true}, x)
		if err != nil {
			t.Fatal(err)
		}
		gotF, gotB, err := gathered(ds, owner, p, nn.OpGCN, o, nn.Pass{Train: true, Epoch: 3}, x)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, mode+" codec forward", gotF, wantF, 0)
		assertClose(t, mode+" codec backward", gotB, wantB, 0)

		err = runRanks(ds, owner, p, nn.OpGCN, o, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
			return checkByteCounts(prop, len(s.Global), w)
		})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
	}
}

// checkByteCounts runs one training and one evaluation forward/backward and
// compares the byte counters with the plan.
func checkByteCounts(prop *Propagator, rows, w int) error {
	ps := prop.PlanStats()
	m := prop.Mode()
	x, out := dense.New(rows, w), dense.New(rows, w)
	for _, train := range []bool{true, false} {
		prop.ResetStats()
		if err := prop.Forward(nn.Pass{Train: train}, x, out); err != nil {
			return err
		}
		if got, want := prop.Stats().DataBytes, 4*int64(w)*ps.TotalSent().Of(m); got != want {
			return fmt.Errorf("train=%v: forward sent %d bytes, plan says %d", train, got, want)
		}
		if err := prop.Backward(nn.Pass{Train: train}, x, out); err != nil {
			return err
		}
		st := prop.Stats()
		want := 4 * int64(w) * (ps.TotalSent().Of(m) + ps.TotalRecv().Of(m))
		if st.DataBytes != want || st.CommBytes != want || st.ParamBytes != 0 {
			return fmt.Errorf("train=%v: forward+backward sent %+v, plan says %d data bytes", train, st, want)
		}
	}
	return nil
}

// checkAdjoint checks Σ_ranks <Forward(x), y> == Σ_ranks <x, Backward(y)>,
// this rank contributing its rows (s.Global) of x and y.
func checkAdjoint(c comm.Comm, prop *Propagator, s *partition.Shard, x, y *dense.Matrix) error {
	w := x.Cols
	xl, yl := rowsOf(x, s.Global), rowsOf(y, s.Global)
	ax, aty := dense.New(xl.Rows, w), dense.New(xl.Rows, w)
	if err := prop.Forward(nn.Pass{}, xl, ax); err != nil {
		return err
	}
	if err := prop.Backward(nn.Pass{}, yl, aty); err != nil {
		return err
	}
	dots := []float64{dot(ax, yl), dot(xl, aty)}
	if err := c.AllreduceSumF64(dots); err != nil {
		return err
	}
	if math.Abs(dots[0]-dots[1]) > 1e-5*math.Max(1, math.Abs(dots[0])) {
		return fmt.Errorf("<Ax,y> = %g, <x,Aᵀy> = %g", dots[0], dots[1])
	}
	return nil
}

// TestAdjoint: Σ_ranks <Forward(x), y> == Σ_ranks <x, Backward(y)>.
func TestAdjoint(t *testing.T) {
	const n, p, w = 200, 4, 3
	rng := rand.New(rand.NewPCG(9, 10))
	ds := randomDataset(rng, n, 6, 0)
	owner := ownerKinds(rng, n, 0, p)["random"]
	x, y := randomMatrix(rng, n, w), randomMatrix(rng, n, w)
	for _, kind := range allKinds {
		for _, mode := range allModes {
			err := runRanks(ds, owner, p, kind, Options{Mode: mode}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
				return checkAdjoint(c, prop, s, x, y)
			})
			if err != nil {
				t.Fatalf("%s/%s: %v", kind, mode, err)
			}
		}
	}
}

func dot(a, b *dense.Matrix) float64 {
	s := 0.0
	for i := range a.Data {
		s += float64(a.Data[i]) * float64(b.Data[i])
	}
	return s
}

// TestPlanStatsBruteForce: per ordered pair, PlanStats counts equal
// brute-force counts from the global graph (pre = distinct destinations,
// post = distinct sources, hybrid = maximum matching by Kuhn's algorithm,
// an independent route to the minimum cover size), hybrid ≤ min(pre, post),
// sent and received views agree, and every mode sends what it counts.
func TestPlanStatsBruteForce(t *testing.T) {
	const n, p = 300, 4
	rng := rand.New(rand.NewPCG(11, 12))
	ds := randomDataset(rng, n, 3, 0)
	for oname, owner := range ownerKinds(rng, n, 0, p) {
		want := bruteCounts(ds.Graph, owner, p)
		for _, mode := range allModes {
			sent := make([][]RowCounts, p)
			recv := make([][]RowCounts, p)
			rows := make([]int, p)
			var mu sync.Mutex
			err := runRanks(ds, owner, p, nn.OpSum, Options{Mode: mode}, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
				mu.Lock()
				defer mu.Unlock()
				ps := prop.PlanStats()
				sent[s.Rank], recv[s.Rank] = ps.Sent, ps.Recv
				rows[s.Rank] = prop.pat.(*flat).sendOff[p]
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for r := 0; r < p; r++ {
				total := int64(0)
				for q := 0; q < p; q++ {
					got, w := sent[r][q], want[r][q]
					if got != w || recv[q][r] != w {
						t.Fatalf("%s/%s: pair %d→%d: sent %+v, received %+v, brute force %+v", oname, mode, r, q, got, recv[q][r], w)
					}
					if got.Hybrid > min(got.Pre, got.Post) {
						t.Fatalf("%s: pair %d→%d: hybrid %d > min(pre %d, post %d)", oname, r, q, got.Hybrid, got.Pre, got.Post)
					}
					total += got.Of(modeOf(mode))
				}
				if int64(rows[r]) != total {
					t.Fatalf("%s/%s: rank %d sends %d rows, counts say %d", oname, mode, r, rows[r], total)
				}
			}
		}
	}
}

func modeOf(mode string) Mode {
	m, _ := ParseMode(mode)
	return m
}

// bruteCounts computes, per ordered pair (r, q), the distinct sources and
// destinations of the cut edges from part r into part q and the size of a
// maximum matching of that bipartite graph.
func bruteCounts(g *graph.CSR, owner []int32, p int) [][]RowCounts {
	type pair struct{ r, q int }
	adj := map[pair]map[int32]map[int32]bool{} // source → set of destinations
	for v := 0; v < g.NumRows; v++ {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			r, q := int(owner[u]), int(owner[v])
			if r == q {
				continue
			}
			k := pair{r, q}
			if adj[k] == nil {
				adj[k] = map[int32]map[int32]bool{}
			}
			if adj[k][u] == nil {
				adj[k][u] = map[int32]bool{}
			}
			adj[k][u][int32(v)] = true
		}
	}
	out := make([][]RowCounts, p)
	for r := range out {
		out[r] = make([]RowCounts, p)
		for q := range out[r] {
			a := adj[pair{r, q}]
			dsts := map[int32]bool{}
			for _, vs := range a {
				for v := range vs {
					dsts[v] = true
				}
			}
			out[r][q] = RowCounts{Pre: int64(len(dsts)), Post: int64(len(a)), Hybrid: int64(kuhn(a))}
		}
	}
	return out
}

// kuhn is the textbook augmenting-path maximum matching (recursive).
func kuhn(adj map[int32]map[int32]bool) int {
	match := map[int32]int32{} // destination → source
	size := 0
	for u := range adj {
		seen := map[int32]bool{}
		var try func(u int32) bool
		try = func(u int32) bool {
			for v := range adj[u] {
				if seen[v] {
					continue
				}
				seen[v] = true
				if w, ok := match[v]; !ok || try(w) {
					match[v] = u
					return true
				}
			}
			return false
		}
		if try(u) {
			size++
		}
	}
	return size
}

// TestQuantizedExchange: with 8-bit quantization of training passes, the
// result stays within the quantization error of the float32 result but is
// not identical, evaluation passes stay exact, and the byte counters report
// one byte per value plus 8 parameter bytes per row.
func TestQuantizedExchange(t *testing.T) {
	const n, p, w = 200, 3, 16
	rng := rand.New(rand.NewPCG(15, 16))
	ds := randomDataset(rng, n, 4, 0)
	owner := ownerKinds(rng, n, 0, p)["random"]
	x := randomMatrix(rng, n, w)
	o := Options{Mode: "hybrid", Codecs: roleCodecs(quantBits{bits: 8}, quantBits{bits: 8}, nil, nil)}
	wantF, wantB, err := gathered(ds, owner, p, nn.OpMean, Options{}, nn.Pass{}, x)
	if err != nil {
		t.Fatal(err)
	}
	gotF, gotB, err := gathered(ds, owner, p, nn.OpMean, o, nn.Pass{Train: true}, x)
	if err != nil {
		t.Fatal(err)
	}
	// A received value is off by less than one step, 1/255 of its row's
	// range, so outputs stay within a few percent of the output scale.
	assertClose(t, "int8 forward", gotF, wantF, 0.05)
	assertClose(t, "int8 backward", gotB, wantB, 0.05)
	if dense.SameShape(gotF, wantF) && slicesEqual(gotF.Data, wantF.Data) {
		t.Fatal("int8 exchange gave the exact float32 result: codec not used")
	}
	evalF, _, err := gathered(ds, owner, p, nn.OpMean, o, nn.Pass{}, x)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "eval forward", evalF, wantF, 0)

	err = runRanks(ds, owner, p, nn.OpMean, o, func(s *partition.Shard, c comm.Comm, prop *Propagator) error {
		xl, out := rowsOf(x, s.Global), dense.New(len(s.Global), w)
		if err := prop.Forward(nn.Pass{Train: true}, xl, out); err != nil {
			return err
		}
		rows := prop.PlanStats().TotalSent().Hybrid
		if st := prop.Stats(); st.DataBytes != rows*w || st.ParamBytes != rows*8 || st.CommBytes != rows*(w+8) {
			return fmt.Errorf("sent %+v for %d rows of %d values", st, rows, w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func slicesEqual(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestNewFailsOnEveryRank: one rank with a bad shard makes New fail on all
// ranks instead of leaving the others in a collective.
func TestNewFailsOnEveryRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	ds := randomDataset(rng, 60, 3, 0)
	owner := ownerKinds(rng, 60, 0, 3)["random"]
	for _, breakIt := range []func(s *partition.Shard){
		func(s *partition.Shard) { s.Local.Val = make([]float32, s.Local.NNZ()) },
		func(s *partition.Shard) { s.Remote.Owner[0] = int32(s.Rank) },
		func(s *partition.Shard) { s.Global[0] = -5 }, // senders ask rank 1 for ids it does not have
	} {
		err := comm.RunGroup(3, func(c comm.Comm) error {
			s := partition.Split(ds, owner, c.Rank(), 3)
			if c.Rank() == 1 {
				breakIt(s)
			}
			_, err := New(s, c, testEngine(), nn.OpGCN, Options{})
			if err == nil {
				return fmt.Errorf("no error")
			}
			return err
		})
		if err == nil || strings.Contains(err.Error(), "no error") || strings.Count(err.Error(), "rank") < 3 {
			t.Errorf("err = %v", err)
		}
	}
}
