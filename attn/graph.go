// Package attn holds the kernels of graph attention (GAT, Veličković et
// al.; PyG GATConv semantics) on one block of destination rows:
//
//	e_k   = src[u_k, h] + dst[v, h]              (SDDMM of the two terms)
//	l_k   = LeakyReLU(e_k, slope)
//	M     = max_k l_k,  P_k = exp(l_k − M),  S = Σ_k P_k
//	W_k   = P_k · keep_k / (1 − drop)           (attention dropout)
//	R     = Σ_k W_k · z[u_k, h·F:(h+1)·F]        (weighted aggregation)
//
// per destination row v, head h and in-edge k (source u_k). The row's
// attention output is R / S. Forward returns the partial softmax state
// (M, S, R) instead, so that states of disjoint edge sets of one row merge
// exactly (Merge, the online softmax): a distributed operator lets a rank
// that owns some of v's sources pre-aggregate them and ship the state.
//
// Backward is the exact adjoint given, per row, the output gradient scaled
// by the state's share of the merged softmax (see Backward); it recomputes
// the probabilities from the state's max, so nothing per edge is kept
// between the passes. A multiple of 8 heads runs eight heads to a SIMD
// vector (heads.go: the scores, softmax, dropout masks, weights, the
// backward's dots and score gradients of an edge at once, and for heads
// of width 8 the weighted aggregation); the exponentials of other layouts
// are SIMD over a row's values, their dot products a SIMD kernel of any
// width, and their aggregation a weighted row kernel (RowsW: aggr's SIMD
// accumRowsW through aggr.Engine.RowsW, or GenericRowsW).
package attn

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/internal/mix"
)

// Graph is the edge structure of one block: row v lists the columns
// (sources) Idx[Ptr[v]:Ptr[v+1]]; columns index the rows of the source
// matrices z and src. The transpose (columns → edges) is built by
// NewGraph for the backward pass.
type Graph struct {
	Rows, Cols int
	Ptr        []int64
	Idx        []int32

	tptr []int64 // column u's edges: positions tptr[u]:tptr[u+1] of the transpose
	trow []int32 // the row of each transposed edge
	tpos []int64 // the transposed position of each edge (of Idx)
}

// NewGraph checks the structure and builds its transpose. ptr and idx are
// kept (not copied) and must stay unmodified.
func NewGraph(rows, cols int, ptr []int64, idx []int32) (*Graph, error) {
	if rows < 0 || cols < 0 || len(ptr) != rows+1 || ptr[0] != 0 || ptr[rows] != int64(len(idx)) {
		return nil, fmt.Errorf("attn: graph of %d rows: Ptr has %d entries, Idx %d", rows, len(ptr), len(idx))
	}
	g := &Graph{Rows: rows, Cols: cols, Ptr: ptr, Idx: idx, tptr: make([]int64, cols+1)}
	for v := range rows {
		if ptr[v+1] < ptr[v] {
			return nil, fmt.Errorf("attn: row %d: Ptr decreases", v)
		}
	}
	for k, u := range idx {
		if u < 0 || int(u) >= cols {
			return nil, fmt.Errorf("attn: edge %d: column %d outside [0,%d)", k, u, cols)
		}
		g.tptr[u+1]++
	}
	for u := range cols {
		g.tptr[u+1] += g.tptr[u]
	}
	next := append([]int64(nil), g.tptr[:cols]...)
	g.trow, g.tpos = make([]int32, len(idx)), make([]int64, len(idx))
	for v := range rows {
		for k := ptr[v]; k < ptr[v+1]; k++ {
			u := idx[k]
			g.trow[next[u]], g.tpos[k] = int32(v), next[u]
			next[u]++
		}
	}
	return g, nil
}

// Edges is the number of edges.
func (g *Graph) Edges() int { return len(g.Idx) }

// RowsW is the weighted row kernel of package aggr:
//
//	out[j] += Σ_k w[k] * x[int(idx[k])*stride + j]   for j < len(out)
//
// with stride ≥ len(out), every row idx[k] inside x, len(w) ≥ len(idx) and
// out not overlapping x.
type RowsW func(out, x []float32, stride int, idx []int32, w []float32)

// GenericRowsW is RowsW in plain Go (the reference loop).
func GenericRowsW(out, x []float32, stride int, idx []int32, w []float32) {
	for k, u := range idx {
		r := x[int(u)*stride : int(u)*stride+len(out)]
		for j, v := range r {
			out[j] += w[k] * v
		}
	}
}

// Spec is one attention pass: heads, width per head, the LeakyReLU slope
// and attention dropout (Drop in [0, 1); Seed selects the pass's masks).
type Spec struct {
	Heads, Width int
	Slope        float32
	Drop         float32
	Seed         uint64
}

// Keep reports whether attention dropout keeps edge src → dst (global
// node ids) at head h under seed: a hash of the four, so the decision is
// the same wherever the edge is aggregated (any rank, any partition).
func Keep(seed uint64, dst, src int64, h int, drop float32) bool {
	return drop <= 0 || keepMask(edgeHash(seed, dst, src), h, dropThreshold(drop)) != 0
}

// edgeHash is the per-edge part of Keep's hash.
func edgeHash(seed uint64, dst, src int64) uint64 {
	return mix.Mix64(seed ^ mix.Mix64(uint64(dst)*edgeMul^uint64(src)))
}

// edgeMul is edgeHash's multiplier of the destination's id.
const edgeMul = 0x9e3779b97f4a7c15

// dropThreshold is the integer form of the dropout rate: 24 hash bits n
// keep an edge when n ≥ the threshold, i.e. when float32(n) ≥ drop·2^24
// (n is exact in float32).
func dropThreshold(drop float32) uint64 {
	return uint64(math.Ceil(float64(drop * (1 << 24))))
}

// keepMask is Keep at head h of the edge of hash eh as a bit mask: all
// ones when 24 bits of a per-head hash reach the threshold thr, else 0.
func keepMask(eh uint64, h int, thr uint64) uint32 {
	n := mix.Mix64(eh^uint64(h)<<56) >> 40
	return uint32((n-thr)>>63) - 1
}

// leaky is LeakyReLU with slope a (PyG: x for x ≥ 0), e·slopeOf(e, a).
func leaky(e, a float32) float32 { return e * slopeOf(e, a) }

// slopeOf is LeakyReLU's derivative at e: 1 for e ≥ 0 (−0 included), else
// a, chosen by bits rather than a branch (the signs of scores are random,
// so a branch mispredicts half the time). e + 0 turns −0 into +0.
func slopeOf(e, a float32) float32 {
	neg := uint32(int32(math.Float32bits(e+0)) >> 31)
	const one = 0x3f800000
	return math.Float32frombits(one ^ ((one ^ math.Float32bits(a)) & neg))
}
