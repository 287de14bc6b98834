package measure

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// AggrOps are the operators AggrOp times: the product A·x (spmm), with
// GCN weights (spmm_w), transposed (spmm_t), row-scaled by 1/degree
// (spmm_mean), and the edge list's scatter-add (index_add).
var AggrOps = []string{"spmm", "spmm_w", "spmm_t", "spmm_mean", "index_add"}

// AggrResult is one operator's timing: median and minimum milliseconds,
// edges·width/median in 1e9 (GUPS), AggrBytes over the median in GB/s, and
// the operator's one-time preparation (sort, transpose, weights).
type AggrResult struct {
	Op       string  `json:"op"`
	MedianMS float64 `json:"median_ms"`
	MinMS    float64 `json:"min_ms"`
	GUPS     float64 `json:"gups"`
	GBS      float64 `json:"gbs"`
	PrepMS   float64 `json:"prep_ms"`
}

// AggrOp prepares operator op (one of AggrOps) of a, whose edges are
// src[e]→dst[e], on eng and times it from x into out (reps times after a
// warm-up).
func AggrOp(eng *aggr.Engine, op string, a *graph.CSR, src, dst []int32, x, out *dense.Matrix, reps int) (AggrResult, error) {
	var fn func()
	weighted := false
	t0 := time.Now()
	switch op {
	case "spmm":
		o := eng.Prepare(a)
		fn = func() { o.Apply(x, out, false) }
	case "spmm_w":
		o := eng.Prepare(GCNWeights(a))
		weighted = true
		fn = func() { o.Apply(x, out, false) }
	case "spmm_t":
		o := eng.Prepare(a)
		o.PrepareT()
		fn = func() { o.ApplyT(x, out, false) }
	case "spmm_mean":
		o := eng.Prepare(a)
		s := make([]float32, a.NumRows)
		for v := range s {
			if d := a.Degree(v); d > 0 {
				s[v] = 1 / float32(d)
			}
		}
		fn = func() { o.ApplyScaled(x, out, s, false) }
	case "index_add":
		o := eng.PrepareIndexAdd(dst, src, a.NumRows, a.NumCols)
		fn = func() { o.Apply(x, out, false) }
	default:
		return AggrResult{}, fmt.Errorf("unknown operator %q", op)
	}
	prep := ms(time.Since(t0))
	// finish the garbage collection of the set-up now, not concurrently
	// with the timed runs (on 2 cores a background mark steals a quarter)
	runtime.GC()
	med, mn := Time(func() {}, fn, reps)
	ne, w := float64(len(src)), float64(x.Cols)
	return AggrResult{Op: op, MedianMS: med, MinMS: mn, PrepMS: prep, GUPS: ne * w / (med / 1e3) / 1e9,
		GBS: AggrBytes(a.NumRows, int64(len(src)), x.Cols, weighted) / (med / 1e3) / 1e9}, nil
}

// AggrBytes is the effective traffic of one product, counting each stored
// entry's source row once (edges·width·4), the output rows written once
// (rows·width·4), the column ids (4 B per entry), the row offsets (8 B per
// row) and the weights when present (4 B per entry). Cache reuse of source
// rows makes the real DRAM traffic smaller, write-allocate larger.
func AggrBytes(rows int, edges int64, width int, weighted bool) float64 {
	b := float64(edges)*float64(width)*4 + float64(rows)*float64(width)*4 + float64(edges)*4 + float64(rows+1)*8
	if weighted {
		b += float64(edges) * 4
	}
	return b
}

// SynthEdges returns the edges src[e]→dst[e] of a synthetic graph:
// "random" draws src and dst uniformly (as shared/bench/torch_spmm_baseline.py
// does); "powerlaw" draws dst = π(⌊n·u³⌋) and src = σ(⌊n·u²⌋) for uniform u
// and random permutations π, σ, so in- and out-degrees are heavily skewed
// (the largest in-degree is about edges/n^(1/3)) and the hubs are scattered
// over the id range.
func SynthEdges(kind string, n int, edges int64, seed uint64) (src, dst []int32, err error) {
	if kind != "random" && kind != "powerlaw" {
		return nil, nil, fmt.Errorf("graph kind %q is not random or powerlaw", kind)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	src = make([]int32, edges)
	dst = make([]int32, edges)
	if kind == "random" {
		for e := range src {
			src[e] = int32(rng.IntN(n))
			dst[e] = int32(rng.IntN(n))
		}
		return src, dst, nil
	}
	pd, ps := rng.Perm(n), rng.Perm(n)
	for e := range src {
		u := rng.Float64()
		dst[e] = int32(pd[int(float64(n)*u*u*u)])
		u = rng.Float64()
		src[e] = int32(ps[int(float64(n)*u*u)])
	}
	return src, dst, nil
}

// GCNWeights returns a copy of a with Val = 1/sqrt(deg(v)·deg(u)), deg the
// row degree (+1), the symmetric GCN normalisation.
func GCNWeights(a *graph.CSR) *graph.CSR {
	deg := make([]float64, max(a.NumRows, a.NumCols))
	for v := 0; v < a.NumRows; v++ {
		deg[v] = float64(a.Degree(v)) + 1
	}
	for u := a.NumRows; u < len(deg); u++ {
		deg[u] = 1
	}
	w := *a
	w.Val = make([]float32, len(a.Idx))
	for v := 0; v < a.NumRows; v++ {
		for k := a.Ptr[v]; k < a.Ptr[v+1]; k++ {
			w.Val[k] = float32(1 / math.Sqrt(deg[v]*deg[a.Idx[k]]))
		}
	}
	return &w
}

// EdgesOf returns the edges of a as src[e]→dst[e], in a's order (src is
// a.Idx itself).
func EdgesOf(a *graph.CSR) (src, dst []int32) {
	dst = make([]int32, len(a.Idx))
	for v := 0; v < a.NumRows; v++ {
		for k := a.Ptr[v]; k < a.Ptr[v+1]; k++ {
			dst[k] = int32(v)
		}
	}
	return a.Idx, dst
}

// AggrBuffers returns the n×width input x, standard normal from seed, and
// output of an aggregation benchmark, in huge-page mappings (HugeFloats)
// when huge.
func AggrBuffers(n, width int, huge bool, seed uint64) (x, out *dense.Matrix, err error) {
	x, out = dense.New(n, width), dense.New(n, width)
	if huge {
		if x.Data, err = HugeFloats(n * width); err == nil {
			out.Data, err = HugeFloats(n * width)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	return x, out, nil
}
