package attn

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"unsafe"

	"github.com/supergcn/supergcn/internal/par"
)

// Ids names the rows and columns of a Graph globally, for the attention
// dropout masks (Keep); nil means the index itself.
type Ids struct{ Row, Col []int64 }

func (d Ids) row(v int) int64 {
	if d.Row == nil {
		return int64(v)
	}
	return d.Row[v]
}

func (d Ids) col(u int32) int64 {
	if d.Col == nil {
		return int64(u)
	}
	return d.Col[u]
}

// State is the partial softmax state of a Graph's rows after Forward:
// per row and head the running max M and the sum of exponentials S
// (Rows×Heads) and the weighted row sum R (Rows × Heads·Width). Nothing
// per edge is kept: Backward recomputes the edges' probabilities from M
// and the operands (and their dropout masks from the Ids kept here).
type State struct {
	M, S, R []float32
	ids     Ids // Forward's, for Backward's dropout masks
}

// Scratch is Backward's temporary storage, reused across states and
// layers by calls that do not run concurrently: per row its destination
// terms, max and scaled ⟨g, o⟩ side by side (one gather per edge); for
// the layouts that do not run eight heads to a vector (recompute), per
// edge and head the score gradient, in the transposed order.
type Scratch struct{ rows, de []float32 }

// recompute reports whether Backward recomputes the edges' score
// gradients for the rows' sums (heads of width 8, a multiple of 8 of
// them: eight heads to a vector, hk.grad8) rather than storing them from
// the pass over the columns (any other layout, usually the output layer's
// single head: one value per edge, where recomputing would read the wide
// rows and take their dot products a second time).
func recompute(sp Spec) bool { return sp.Width == 8 && sp.Heads%8 == 0 }

// Resize returns b with length n, reallocated when its capacity is short
// (the contents are then undefined).
func Resize(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// check validates the operand lengths of a pass over g.
func check(g *Graph, sp Spec, z, src, dst []float32) error {
	h, f := sp.Heads, sp.Width
	switch {
	case h < 1 || f < 1:
		return fmt.Errorf("attn: %d heads of width %d", h, f)
	case len(z) != g.Cols*h*f || len(src) != g.Cols*h:
		return fmt.Errorf("attn: %d columns: z has %d values, src %d (want %d, %d)", g.Cols, len(z), len(src), g.Cols*h*f, g.Cols*h)
	case len(dst) != g.Rows*h:
		return fmt.Errorf("attn: %d rows: dst has %d values, want %d", g.Rows, len(dst), g.Rows*h)
	case !(sp.Drop >= 0 && sp.Drop < 1):
		return fmt.Errorf("attn: dropout %g is not in [0, 1)", sp.Drop)
	}
	return nil
}

// checkIDs validates that ids names every row and column of g (the
// dropout masks' kernels read them unchecked).
func checkIDs(g *Graph, ids Ids) error {
	if (ids.Row != nil && len(ids.Row) < g.Rows) || (ids.Col != nil && len(ids.Col) < g.Cols) {
		return fmt.Errorf("attn: %d rows, %d columns: ids name %d and %d", g.Rows, g.Cols, len(ids.Row), len(ids.Col))
	}
	return nil
}

// Forward computes the partial softmax state st of every row of g (see the
// package comment): z holds the projected source rows (Cols × Heads·Width,
// head h in columns [h·Width, (h+1)·Width)), src the source terms (Cols ×
// Heads), dst the destination terms (Rows × Heads). A row without edges
// gets M = −Inf, S = 0, R = 0. One pass per row: its scores and weights
// live in a per-goroutine buffer of one row's edges, and the weighted sum
// reads the source rows of z in place.
func Forward(g *Graph, sp Spec, z, src, dst []float32, ids Ids, kern RowsW, st *State) error {
	return forward(g, sp, z, src, dst, ids, kern, heads, st)
}

// forward is Forward with the head kernels hk.
func forward(g *Graph, sp Spec, z, src, dst []float32, ids Ids, kern RowsW, hk headKernels, st *State) error {
	if err := check(g, sp, z, src, dst); err != nil {
		return err
	}
	if err := checkIDs(g, ids); err != nil {
		return err
	}
	h, hf := sp.Heads, sp.Heads*sp.Width
	st.M, st.S = Resize(st.M, g.Rows*h), Resize(st.S, g.Rows*h)
	st.R, st.ids = Resize(st.R, g.Rows*hf), ids
	forEdges(g.Rows, g.Ptr, func(lo, hi int) {
		var p, buf []float32 // one row's weights (edge-major); head-major weights
		var eg edgeTemps     // the row's dropout masks
		for v := lo; v < hi; v++ {
			if v+1 < hi {
				next := g.Idx[g.Ptr[v+1]:g.Ptr[v+2]]
				hk.prefetch(src, h, first(next, h%8 == 0), 4*h)
				prefetchIDs(sp, hk, ids.Col, next)
			}
			idx := g.Idx[g.Ptr[v]:g.Ptr[v+1]]
			hk.prefetch(z, hf, idx[:min(len(idx), 8)], 4*hf) // the rows the kernels start on, read after the scores
			m, s, out := st.M[v*h:(v+1)*h], st.S[v*h:(v+1)*h], st.R[v*hf:(v+1)*hf]
			p = Resize(p, len(idx)*h)
			eg.hash(sp, hk, idx, ids, ids.row(v), true)
			softmax(sp, dst[v*h:(v+1)*h], src, idx, p, m, s, hk, &eg)
			clear(out)
			aggregate(out, z, sp, idx, p, kern, hk, &buf)
		}
	})
	return nil
}

// prefetchIDs hints by hk.prefetch that the global ids of the entries
// idx will be read soon, by the next row's (or column's) dropout masks:
// all of them (the masks' kernel reads them first, eight at a time), ids
// seen as rows of two float32s (the prefetch reads nothing); nothing
// without dropout or ids.
func prefetchIDs(sp Spec, hk headKernels, ids []int64, idx []int32) {
	if sp.Drop > 0 && len(ids) > 0 {
		hk.prefetch(unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(ids))), 2*len(ids)), 2, idx, 8)
	}
}

// first is the entries of the next row (or column) to prefetch before
// its pass: the first 8 when the pass's kernel prefetches 8 edges ahead
// itself (own), else all.
func first(idx []int32, own bool) []int32 {
	if own {
		return idx[:min(len(idx), 8)]
	}
	return idx
}

// forEdges runs fn on blocks [lo, hi) of the n rows whose edges are
// ptr[v]:ptr[v+1] (a graph's rows, or its transpose's columns), blocks of
// contiguous rows holding about the same number of edges (at least
// blockEdges, four blocks a thread when there are enough), handed out
// dynamically (par.Blocks): a thread that meets heavy rows, or that the
// system slows, takes fewer blocks. A row is never split.
func forEdges(n int, ptr []int64, fn func(lo, hi int)) {
	const blockEdges = 1 << 13
	e := ptr[n] - ptr[0]
	blocks := int(min(int64(4*par.Threads()), e/blockEdges, int64(n)))
	if blocks <= 1 {
		fn(0, n)
		return
	}
	bound := make([]int, blocks+1)
	for b := 1; b < blocks; b++ {
		target := ptr[0] + e*int64(b)/int64(blocks)
		bound[b] = bound[b-1] + sort.Search(n-bound[b-1], func(i int) bool { return ptr[bound[b-1]+i] >= target })
	}
	bound[blocks] = n
	par.Blocks(blocks, 0, func(b int) {
		if bound[b] < bound[b+1] {
			fn(bound[b], bound[b+1])
		}
	})
}

// softmax sets m to the per-head max of the scores l = LeakyReLU(src[u]
// + d) of one row's edges idx, s to the per-head sums of P = exp(l − m)
// and p (edge-major, all heads) to the weights W (P after dropout, by
// eg's masks): eight heads at a time by hk.softmax8 when the heads are a
// multiple of 8, else by scores, expSum and eg.drop.
func softmax(sp Spec, d, src []float32, idx []int32, p, m, s []float32, hk headKernels, eg *edgeTemps) {
	h := len(d)
	if h == 1 && len(idx) > 0 {
		m[0], s[0] = softmax1(sp, d[0], src, idx, p, hk, eg.keep)
		return
	}
	if h%8 != 0 || len(idx) == 0 {
		scores(sp, d, src, idx, p, m)
		expSum(p, m, s, hk.exp)
		if sp.Drop > 0 {
			eg.drop(sp, p)
		}
		return
	}
	nb := h / 8
	for c := 0; c < h; c += 8 {
		hk.softmax8(p[c:], h, src[c:], h, idx, d[c:c+8], sp.Slope, m[c:c+8], s[c:c+8], eg.keep[c/8:], nb, 1/(1-sp.Drop))
	}
}

// softmax1 is softmax for a single head, in one function without the
// loops over heads (the output layer's): the same operations in the same
// order as scores, expSum and edgeTemps.drop. It returns the max and the
// sum; keep holds a byte an edge (bit 0: kept).
func softmax1(sp Spec, d float32, src []float32, idx []int32, p []float32, hk headKernels, keep []uint8) (m, s float32) {
	p, m = p[:len(idx)], float32(math.Inf(-1))
	for k, u := range idx {
		l := leaky(src[u]+d, sp.Slope)
		p[k] = l
		m = max(m, l)
	}
	for k, x := range p {
		p[k] = x - m
	}
	hk.exp(p)
	for _, y := range p {
		s += y
	}
	if sp.Drop > 0 {
		scale := 1 / (1 - sp.Drop)
		keep = keep[:len(p)]
		for k, x := range p {
			p[k] = math.Float32frombits(math.Float32bits(x*scale) & -uint32(keep[k]&1))
		}
	}
	return m, s
}

// scores sets p (edge-major, one row's edges idx, all heads) to l =
// LeakyReLU(src[u] + d) and m to its per-head max (−Inf without edges).
func scores(sp Spec, d, src []float32, idx []int32, p, m []float32) {
	h := len(d)
	m = m[:h]
	for hd := range m {
		m[hd] = float32(math.Inf(-1))
	}
	for k, u := range idx {
		su, pk := src[int(u)*h:int(u)*h+h], p[k*h:k*h+h]
		for hd, x := range su {
			l := leaky(x+d[hd], sp.Slope)
			pk[hd] = l
			m[hd] = max(m[hd], l)
		}
	}
}

// expSum turns the scores p (edge-major) into p = exp(l − m) (by exp,
// expAll's contract) and sets s to their per-head sums, over the edges in
// order.
func expSum(p, m, s []float32, exp func([]float32)) {
	h := len(m)
	s = s[:h]
	clear(s)
	for k := 0; k < len(p); k += h {
		pk := p[k : k+h]
		for hd, x := range pk {
			pk[hd] = x - m[hd]
		}
	}
	exp(p)
	for k := 0; k < len(p); k += h {
		for hd, y := range p[k : k+h] {
			s[hd] += y
		}
	}
}

// fused reports whether sp's heads are narrow enough (Width < 16, more
// than one head) for the loop over all heads of an edge (fusedRows);
// wider heads go through the SIMD row kernel per head (perHead).
func fused(sp Spec) bool { return sp.Heads > 1 && sp.Width < 16 }

// aggregate adds Σ_k w[k, h] · x[idx[k], h·Width:(h+1)·Width] to out
// (Heads·Width) for every head h, w edge-major (k·Heads + h), x of rows
// Heads·Width wide: heads of width 8 eight at a time through hk.accum,
// other narrow heads through fusedRows, wide ones per head through kern
// (buf is perHead's scratch).
func aggregate(out, x []float32, sp Spec, idx []int32, w []float32, kern RowsW, hk headKernels, buf *[]float32) {
	h, f := sp.Heads, sp.Width
	switch {
	case len(idx) == 0:
	case !fused(sp):
		perHead(out, x, sp, idx, w, kern, buf)
	default:
		c := 0
		for ; f == 8 && c+8 <= h; c += 8 {
			hk.accum(out[c*f:], x[c*f:], len(out), idx, w[c:], h)
		}
		if c < h {
			fusedRows(out[c*f:], x[c*f:], len(out), idx, w[c:], h, f)
		}
	}
}

// fusedRows is the weighted aggregation with one weight per edge and head
// of width f:
//
//	out[j] += Σ_k w[k·wstride + j/f] · x[int(idx[k])·stride + j]   for j < len(out)
//
// Four columns at a time are summed in registers, over the edges in order.
func fusedRows(out, x []float32, stride int, idx []int32, w []float32, wstride, f int) {
	heads := len(out) / f
	for hd := range heads {
		j, end := hd*f, (hd+1)*f
		for ; j+4 <= end; j += 4 {
			o := out[j : j+4 : j+4]
			o0, o1, o2, o3 := o[0], o[1], o[2], o[3]
			for k, u := range idx {
				c, r := w[k*wstride+hd], x[int(u)*stride+j:int(u)*stride+j+4:int(u)*stride+j+4]
				o0 += c * r[0]
				o1 += c * r[1]
				o2 += c * r[2]
				o3 += c * r[3]
			}
			o[0], o[1], o[2], o[3] = o0, o1, o2, o3
		}
		for ; j < end; j++ {
			o := out[j]
			for k, u := range idx {
				o += w[k*wstride+hd] * x[int(u)*stride+j]
			}
			out[j] = o
		}
	}
}

// perHead is fusedRows through kern on the source rows x[idx[k]], one
// head at a time (weights made head-major in buf).
func perHead(out, x []float32, sp Spec, idx []int32, w []float32, kern RowsW, buf *[]float32) {
	h, f := sp.Heads, sp.Width
	hf, n := h*f, len(idx)
	switch {
	case n == 0:
	case h == 1:
		kern(out, x, hf, idx, w)
	default:
		*buf = Resize(*buf, h*n)
		for k := range n {
			for hd, c := range w[k*h : (k+1)*h] {
				(*buf)[hd*n+k] = c
			}
		}
		for hd := range h {
			kern(out[hd*f:(hd+1)*f], x[hd*f:], hf, idx, (*buf)[hd*n:(hd+1)*n])
		}
	}
}

// Merge folds the partial state (m2, s2, r2) of one row and head into
// (*m, *s, r), exactly: the larger max wins and the other state is scaled
// by exp(its max − the new max). An empty state (s2 = 0) changes nothing.
func Merge(m, s *float32, r []float32, m2, s2 float32, r2 []float32) {
	if s2 == 0 && m2 == float32(math.Inf(-1)) {
		return
	}
	if *s == 0 && *m == float32(math.Inf(-1)) {
		*m, *s = m2, s2
		copy(r, r2)
		return
	}
	nm := max(*m, m2)
	a, b := exp32(*m-nm), exp32(m2-nm)
	*m, *s = nm, *s*a+s2*b
	for j := range r {
		r[j] = r[j]*a + r2[j]*b
	}
}

// Share is the factor exp(mp − m)/s that turns the output gradient of a
// row (merged max m, sum s) into the gradient a partial state of max mp
// takes (Backward's gp = gout·Share, cd = D·Share); 0 for an empty row.
func Share(mp, m, s float32) float32 {
	if s == 0 || mp == float32(math.Inf(-1)) {
		return 0
	}
	return exp32(mp-m) / s
}

// Backward accumulates the adjoint of Forward into gz (Cols × Heads·Width),
// gsrc (Cols × Heads) and gdst (Rows × Heads), given for every row v and
// head h the scaled output gradient gp[v, h·Width:(h+1)·Width] = g·c and
// the scalar cd[v, h] = ⟨g, o⟩·c, where g is the gradient of the row's
// attention output o (of the merged state: max M, sum S) and c =
// Share(st.M[v,h], M, S) this state's share. Per edge:
//
//	gz[u]   += W_k · gp[v]
//	de_k     = (W_k·⟨gp[v], z[u]⟩ − P_k·cd[v]) · LeakyReLU'(e_k)
//	gsrc[u] += de_k,  gdst[v] += de_k
//
// st is Forward's state for the same operands and spec: P_k = exp(l_k −
// st.M[v]) and W_k are recomputed (st.M may be replaced by a larger max,
// the merged one, when c is that max's share); sc holds the temporaries.
// One pass over the columns (the transposed graph) reads each edge's
// gp[v] once, for its dot products and gz, and sums the edges' de per
// column; one pass over the rows sums them per row: for eight heads to a
// vector (recompute) it recomputes them from z[u], nothing per edge being
// stored; otherwise the first pass stores them (Heads values an edge, in
// the transposed order) and the second gathers them.
func Backward(g *Graph, sp Spec, z, src, dst, gp, cd []float32, kern RowsW, st *State, sc *Scratch, gz, gsrc, gdst []float32) error {
	return backward(g, sp, z, src, dst, gp, cd, kern, heads, st, sc, gz, gsrc, gdst)
}

// backward is Backward with the head kernels hk.
func backward(g *Graph, sp Spec, z, src, dst, gp, cd []float32, kern RowsW, hk headKernels, st *State, sc *Scratch, gz, gsrc, gdst []float32) error {
	if err := check(g, sp, z, src, dst); err != nil {
		return err
	}
	h, hf := sp.Heads, sp.Heads*sp.Width
	switch {
	case len(gp) != g.Rows*hf || len(cd) != g.Rows*h || len(gdst) != g.Rows*h:
		return fmt.Errorf("attn: backward: %d rows: gp %d, cd %d, gdst %d values", g.Rows, len(gp), len(cd), len(gdst))
	case len(gz) != len(z) || len(gsrc) != len(src):
		return fmt.Errorf("attn: backward: %d columns: gz %d, gsrc %d values", g.Rows, len(gz), len(gsrc))
	case len(st.M) != g.Rows*h:
		return fmt.Errorf("attn: backward: state of %d rows × heads, want %d", len(st.M), g.Rows*h)
	}
	sc.rows = Resize(sc.rows, 3*h*g.Rows)
	rc := recompute(sp)
	if !rc {
		sc.de = Resize(sc.de, h*g.Edges())
	}
	par.For(g.Rows, 1<<12/h+1, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			r := sc.rows[3*h*v : 3*h*(v+1)]
			copy(r[:h], dst[v*h:(v+1)*h])
			copy(r[h:2*h], st.M[v*h:(v+1)*h])
			copy(r[2*h:], cd[v*h:(v+1)*h])
		}
	})
	ids := st.ids
	forEdges(g.Cols, g.tptr, func(lo, hi int) {
		var eg edgeTemps
		var buf []float32
		col := g.trow[:0]
		for u := lo; u < hi; u++ {
			a, b := g.tptr[u], g.tptr[u+1]
			if a == b {
				continue
			}
			if u+1 < hi {
				next := g.trow[b:g.tptr[u+2]]
				hk.prefetch(sc.rows, 3*h, first(next, rc), 12*h)
				prefetchIDs(sp, hk, ids.Row, next)
			}
			col = g.trow[a:b]
			hk.prefetch(gp, hf, col[:min(len(col), 8)], 4*hf)
			eg.hash(sp, hk, col, ids, ids.col(int32(u)), false)
			var de []float32
			if !rc {
				de = sc.de[int(a)*h : int(b)*h]
			}
			eg.grads(sp, hk, gp, col, z[u*hf:(u+1)*hf], src[u*h:(u+1)*h], 0, sc.rows, 3*h, de)
			for hd, s := range eg.sum {
				gsrc[u*h+hd] += s
			}
			aggregate(gz[u*hf:(u+1)*hf], gp, sp, col, eg.w, kern, hk, &buf)
		}
	})
	if !rc {
		par.For(g.Rows, 1<<12/h+1, func(lo, hi int) {
			for v := lo; v < hi; v++ {
				d := gdst[v*h : (v+1)*h]
				for _, i := range g.tpos[g.Ptr[v]:g.Ptr[v+1]] {
					for hd, x := range sc.de[int(i)*h : int(i+1)*h] {
						d[hd] += x
					}
				}
			}
		})
		return nil
	}
	forEdges(g.Rows, g.Ptr, func(lo, hi int) {
		var eg edgeTemps
		for v := lo; v < hi; v++ {
			idx := g.Idx[g.Ptr[v]:g.Ptr[v+1]]
			if len(idx) == 0 {
				continue
			}
			if v+1 < hi {
				next := g.Idx[g.Ptr[v+1]:g.Ptr[v+2]]
				hk.prefetch(src, h, first(next, true), 4*h)
				prefetchIDs(sp, hk, ids.Col, next)
			}
			hk.prefetch(z, hf, idx[:min(len(idx), 8)], 4*hf)
			eg.hash(sp, hk, idx, ids, ids.row(v), true)
			eg.grads(sp, hk, z, idx, gp[v*hf:(v+1)*hf], src, h, sc.rows[3*h*v:3*h*(v+1)], 0, nil)
			for hd, s := range eg.sum {
				gdst[v*h+hd] += s
			}
		}
	})
	return nil
}

// edgeTemps is one goroutine's temporaries for the edges of one row or
// column: their dropout masks (every pass), and in the backward
// passes their weights W (edge-major), dot products and the per-head sums
// of their score gradients.
type edgeTemps struct {
	w, d, sum []float32
	keep      []uint8
}

// hash sets eg.keep to the dropout masks of the edges of one row (byRow:
// to the columns idx, the row's global id at) or of one column (to the
// rows idx, the column's id at), ids naming the others: bit hd%8 of byte
// hd/8 of an edge's (Heads+7)/8 bytes is set when head hd keeps it
// (keepMask of its edgeHash), by hk.keepEdges; all set without dropout.
func (eg *edgeTemps) hash(sp Spec, hk headKernels, idx []int32, ids Ids, at int64, byRow bool) {
	h, n := sp.Heads, len(idx)
	nb := (h + 7) / 8
	eg.keep = slices.Grow(eg.keep[:0], nb*n)[:nb*n]
	if sp.Drop == 0 || n == 0 {
		for i := range eg.keep {
			eg.keep[i] = 0xff
		}
		return
	}
	thr := int64(dropThreshold(sp.Drop))
	if byRow {
		hk.keepEdges(eg.keep, idx, ids.Col, 1, uint64(at)*edgeMul, sp.Seed, h, thr)
	} else {
		hk.keepEdges(eg.keep, idx, ids.Row, edgeMul, uint64(at), sp.Seed, h, thr)
	}
}

// drop turns p (edge-major, Heads an edge) into the weights p·keep/(1 −
// drop) by the masks eg.keep (hash's), without branches on the masks.
func (eg *edgeTemps) drop(sp Spec, p []float32) {
	h := sp.Heads
	nb, scale := (h+7)/8, 1/(1-sp.Drop)
	for k := 0; k*h < len(p); k++ {
		pk, kb := p[k*h:(k+1)*h], eg.keep[k*nb:(k+1)*nb]
		for hd, x := range pk {
			pk[hd] = math.Float32frombits(math.Float32bits(x*scale) & -uint32(kb[hd/8]>>(hd%8)&1))
		}
	}
}

// grads sets eg.w and eg.sum for the edges to rows idx of x (Heads·Width
// wide) against the fixed row b, the edges' source terms a[idx[k]·astride:]
// and destination terms t[idx[k]·tstride:] (Heads each: dst, then the
// max, then cd; a stride 0 makes them the same for every edge; see
// gradEdges8Generic): heads of width 8 eight at a time by hk.grad8
// (recompute's layouts), others by edgeGrads, which also stores the edges'
// score gradients into de (Heads an edge) when it is not nil.
func (eg *edgeTemps) grads(sp Spec, hk headKernels, x []float32, idx []int32, b, a []float32, astride int, t []float32, tstride int, de []float32) {
	h, f := sp.Heads, sp.Width
	n := len(idx)
	eg.w, eg.sum = Resize(eg.w, h*n), Resize(eg.sum, h)
	scale, nb := 1/(1-sp.Drop), (h+7)/8
	if recompute(sp) {
		for c := 0; c < h; c += 8 {
			hk.grad8(eg.w[c:], h, x[c*8:], h*8, idx, b[c*8:c*8+64], a[c:], astride, t[c:], tstride, h, eg.keep[c/8:], nb, sp.Slope, scale, eg.sum[c:c+8])
		}
		return
	}
	eg.d = Resize(eg.d, h*n)
	if h == 1 {
		eg.sum[0] = edgeGrads1(f, hk, eg.w, x, idx, b, a, astride, t, tstride, eg.keep, sp.Slope, scale, eg.d, de)
		return
	}
	edgeGrads(h, f, hk, eg.w, x, idx, b, a, astride, t, tstride, eg.keep, sp.Slope, scale, eg.d, eg.sum, de)
}

// edgeGrads1 is edgeGrads for a single head of width f, in one function
// without the loops over heads (the output layer's): the same operations
// in the same order. It returns the sum of the score gradients.
func edgeGrads1(f int, hk headKernels, w, x []float32, idx []int32, b, a []float32, astride int, t []float32, tstride int, keep []uint8, slope, scale float32, d, de []float32) float32 {
	n := len(idx)
	w, d, keep = w[:n], d[:n], keep[:n]
	hk.dots(d, 1, x, f, idx, b[:f])
	for k, v := range idx {
		i, j := int(v)*astride, int(v)*tstride
		w[k] = float32(leaky(a[i]+t[j], slope)) - t[j+1] // as Forward: no fused multiply-add
	}
	hk.exp(w)
	var sum float32
	for k, v := range idx {
		i, j := int(v)*astride, int(v)*tstride
		e, p := a[i]+t[j], w[k]
		wk := math.Float32frombits(math.Float32bits(p*scale) & -uint32(keep[k]&1))
		w[k] = wk
		g := (wk*d[k] - p*t[j+2]) * slopeOf(e, slope)
		d[k] = g
		sum += g
	}
	if de != nil {
		copy(de[:n], d)
	}
	return sum
}

// edgeGrads is the score gradients of any heads (h of width f) for
// edgeTemps.grads: the contract of gradEdges8Generic with w's stride h,
// x's h·f, toff h and kstride (h+7)/8, for every head; d is scratch for
// the dot products (h values an edge), de (when not nil) takes
// the score gradients (h an edge). The exponentials of all edges and heads
// are one call of hk.exp.
func edgeGrads(h, f int, hk headKernels, w, x []float32, idx []int32, b, a []float32, astride int, t []float32, tstride int, keep []uint8, slope, scale float32, d, sum, de []float32) {
	nb := (h + 7) / 8
	edgeDots(d, x, idx, b, f, hk)
	for k, v := range idx {
		av, tv, wk := a[int(v)*astride:int(v)*astride+h], t[int(v)*tstride:int(v)*tstride+3*h], w[k*h:(k+1)*h]
		for hd, x := range av {
			wk[hd] = float32(leaky(x+tv[hd], slope)) - tv[h+hd] // as Forward: no fused multiply-add
		}
	}
	hk.exp(w[:len(idx)*h])
	sum = sum[:h]
	clear(sum)
	for k, v := range idx {
		av, tv, wk, dk := a[int(v)*astride:int(v)*astride+h], t[int(v)*tstride:int(v)*tstride+3*h], w[k*h:(k+1)*h], d[k*h:(k+1)*h]
		for hd, x := range av {
			e, p := x+tv[hd], wk[hd]
			mask := -uint32(keep[k*nb+hd/8] >> (hd % 8) & 1)
			wk[hd] = math.Float32frombits(math.Float32bits(p*scale) & mask)
			g := (wk[hd]*dk[hd] - p*tv[2*h+hd]) * slopeOf(e, slope)
			dk[hd] = g
			sum[hd] += g
		}
		if de != nil {
			copy(de[k*h:(k+1)*h], dk)
		}
	}
}

// edgeDots sets d[t·h + hd] = ⟨x[rows[t], hd·f:(hd+1)·f], b[hd·f:(hd+1)·f]⟩
// for every edge t and head hd (h = len(b)/f; x rows len(b) wide), one
// hk.dots call a head.
func edgeDots(d, x []float32, rows []int32, b []float32, f int, hk headKernels) {
	hf := len(b)
	h := hf / f
	for hd := range h {
		hk.dots(d[hd:], h, x[hd*f:], hf, rows, b[hd*f:(hd+1)*f])
	}
}

// dot is ⟨a, b⟩ (len(b) ≥ len(a)).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// Finish writes the attention output R/S of every row of st into out (Rows
// × Heads·Width; 0 for a row without edges).
func Finish(sp Spec, st *State, out []float32) {
	f := sp.Width
	par.For(len(st.S), 1<<12/max(f, 1)+1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var c float32
			if s := st.S[i]; s > 0 {
				c = 1 / s
			}
			o, r := out[i*f:(i+1)*f], st.R[i*f:(i+1)*f]
			for j := range o {
				o[j] = r[j] * c
			}
		}
	})
}

// Scale writes the inputs of Backward for one partial state per row: row
// i of gp is row rows[i] of gout (nil rows: row i) times c = Share(mp[i],
// m, s) of that row's merged max m and sum s, per head, and cd[i] = c·⟨gout,
// out⟩ (out: the row's attention output). m, s, gout and out are indexed
// by rows[i], mp, gp and cd by i.
func Scale(sp Spec, rows []int32, mp, m, s, gout, out, gp, cd []float32) {
	h, f := sp.Heads, sp.Width
	n := len(mp) / h
	par.For(n, 1<<12/max(h*f, 1)+1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := i
			if rows != nil {
				v = int(rows[i])
			}
			for hd := range h {
				c := Share(mp[i*h+hd], m[v*h+hd], s[v*h+hd])
				g := gout[(v*h+hd)*f : (v*h+hd+1)*f]
				cd[i*h+hd] = c * dot(g, out[(v*h+hd)*f:(v*h+hd+1)*f])
				o := gp[(i*h+hd)*f : (i*h+hd+1)*f]
				for j := range o {
					o[j] = g[j] * c
				}
			}
		}
	})
}
