package attn

import (
	"fmt"
	"math"

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
// (Rows×Heads), the weighted row sum R (Rows × Heads·Width), and per edge
// and head (edge-major: [k·Heads + h]) P = exp(l − M) and W =
// P·keep/(1−drop) (W shares P's storage without dropout). Backward reads
// P and W.
type State struct {
	M, S, R []float32
	P, W    []float32
	w       []float32 // W's own storage (W is P without dropout)
}

// Scratch is Backward's per-edge temporary storage (2·Heads·Edges values:
// per edge its weights W and score gradients de, side by side, so that
// the transposed pass gathers one block per edge), reused across states
// and layers by calls that do not run concurrently.
type Scratch struct{ wd []float32 }

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

// Forward computes the partial softmax state st of every row of g (see the
// package comment): z holds the projected source rows (Cols × Heads·Width,
// head h in columns [h·Width, (h+1)·Width)), src the source terms (Cols ×
// Heads), dst the destination terms (Rows × Heads). A row without edges
// gets M = −Inf, S = 0, R = 0.
func Forward(g *Graph, sp Spec, z, src, dst []float32, ids Ids, kern RowsW, st *State) error {
	if err := check(g, sp, z, src, dst); err != nil {
		return err
	}
	h, e, hf := sp.Heads, g.Edges(), sp.Heads*sp.Width
	st.M, st.S = Resize(st.M, g.Rows*h), Resize(st.S, g.Rows*h)
	st.R = Resize(st.R, g.Rows*hf)
	st.P = Resize(st.P, h*e)
	if sp.Drop > 0 {
		st.w = Resize(st.w, h*e)
		st.W = st.w
	} else {
		st.W = st.P
	}
	narrow := fused(sp)
	par.For(g.Rows, rowGrain(g, hf), func(lo, hi int) {
		var zb, buf []float32 // gathered source rows; head-major weights
		for v0 := lo; v0 < hi; {
			v1 := blockEnd(g.Ptr, v0, hi)
			a0, b0 := g.Ptr[v0], g.Ptr[v1]
			gather(st.P[a0*int64(h):b0*int64(h)], src, h, g.Idx[a0:b0])
			if narrow {
				zb = Resize(zb, int(b0-a0)*hf)
				gather(zb, z, hf, g.Idx[a0:b0])
			}
			for v := v0; v < v1; v++ {
				a, b := g.Ptr[v], g.Ptr[v+1]
				idx := g.Idx[a:b]
				p := st.P[a*int64(h) : b*int64(h)]
				softmaxRow(sp, dst[v*h:(v+1)*h], p, st.M[v*h:(v+1)*h], st.S[v*h:(v+1)*h])
				w := p
				if sp.Drop > 0 {
					w = st.W[a*int64(h) : b*int64(h)]
					dropRow(sp, ids.row(v), idx, ids, p, w)
				}
				out := st.R[v*hf : (v+1)*hf]
				clear(out)
				if narrow {
					fusedRows(out, zb[(a-a0)*int64(hf):(b-a0)*int64(hf)], sp, w)
				} else {
					perHead(out, z, sp, idx, w, kern, &buf)
				}
			}
			v0 = v1
		}
	})
	return nil
}

// gatherEdges bounds the edges of a block whose source rows are gathered
// together: enough independent loads to overlap their cache misses, few
// enough for the gathered rows to stay in the first cache levels.
const gatherEdges = 64

// blockEnd is the end of the block of rows (of CSR pointers ptr) that
// starts at v: rows up to hi whose edges stay within gatherEdges, at
// least one.
func blockEnd(ptr []int64, v, hi int) int {
	end := v + 1
	for end < hi && ptr[end+1]-ptr[v] <= gatherEdges {
		end++
	}
	return end
}

// gather copies row idx[k] of x (rows of width w) to row k of dst.
func gather(dst, x []float32, w int, idx []int32) {
	for k, u := range idx {
		copy(dst[k*w:(k+1)*w], x[int(u)*w:int(u)*w+w])
	}
}

// rowGrain is the number of rows worth a goroutine: about 16 Ki products.
func rowGrain(g *Graph, hf int) int {
	per := (g.Edges()/max(g.Rows, 1) + 1) * hf
	return max(1, (1<<14)/max(per, 1))
}

// softmaxRow turns the source terms p (edge-major, one row's edges, all
// heads) into p = exp(l − m) of l = LeakyReLU(p + d), m the per-head max
// and s the per-head sum of p.
func softmaxRow(sp Spec, d, p, m, s []float32) {
	h := len(d)
	m, s = m[:h], s[:h]
	for hd := range m {
		m[hd] = float32(math.Inf(-1))
	}
	for k := 0; k < len(p); k += h {
		pk := p[k : k+h]
		for hd, x := range pk {
			l := leaky(x+d[hd], sp.Slope)
			pk[hd] = l
			m[hd] = max(m[hd], l)
		}
	}
	clear(s)
	for k := 0; k < len(p); k += h {
		pk := p[k : k+h]
		for hd, x := range pk {
			y := exp32(x - m[hd])
			pk[hd] = y
			s[hd] += y
		}
	}
}

// dropRow writes w = p·keep/(1−drop) for one row (global id row) of
// edges idx, all heads, without branches on the masks.
func dropRow(sp Spec, row int64, idx []int32, ids Ids, p, w []float32) {
	h := sp.Heads
	scale, thr := 1/(1-sp.Drop), dropThreshold(sp.Drop)
	for k, u := range idx {
		eh := edgeHash(sp.Seed, row, ids.col(u))
		pk, wk := p[k*h:k*h+h], w[k*h:k*h+h]
		for hd, x := range pk {
			wk[hd] = math.Float32frombits(math.Float32bits(x*scale) & keepMask(eh, hd, thr))
		}
	}
}

// fused reports whether sp's heads are narrow enough (Width < 16, more
// than one head) for the fused loop over all heads of an edge (fusedRows);
// wider heads go through the SIMD row kernel per head (perHead).
func fused(sp Spec) bool { return sp.Heads > 1 && sp.Width < 16 }

// fusedRows adds Σ_k W_k,h · rows[k, h·Width:(h+1)·Width] to out
// (Heads·Width) for every head h: rows holds the gathered source rows of
// the edges, w their weights edge-major (k·Heads + h). Four columns at a
// time are summed in registers, over the edges in order.
func fusedRows(out, rows []float32, sp Spec, w []float32) {
	h, f := sp.Heads, sp.Width
	hf, n := h*f, len(w)/h
	rows = rows[:n*hf]
	for hd := range h {
		j, end := hd*f, (hd+1)*f
		for ; j+4 <= end; j += 4 {
			o := out[j : j+4 : j+4]
			o0, o1, o2, o3 := o[0], o[1], o[2], o[3]
			for k := range n {
				c, r := w[k*h+hd], rows[k*hf+j:k*hf+j+4:k*hf+j+4]
				o0 += c * r[0]
				o1 += c * r[1]
				o2 += c * r[2]
				o3 += c * r[3]
			}
			o[0], o[1], o[2], o[3] = o0, o1, o2, o3
		}
		for ; j < end; j++ {
			o := out[j]
			for k := range n {
				o += w[k*h+hd] * rows[k*hf+j]
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
// st is Forward's state for the same operands (P and W are read); sc
// holds the temporaries.
func Backward(g *Graph, sp Spec, z, src, dst, gp, cd []float32, kern RowsW, st *State, sc *Scratch, gz, gsrc, gdst []float32) error {
	if err := check(g, sp, z, src, dst); err != nil {
		return err
	}
	h, e, hf := sp.Heads, g.Edges(), sp.Heads*sp.Width
	switch {
	case len(gp) != g.Rows*hf || len(cd) != g.Rows*h || len(gdst) != g.Rows*h:
		return fmt.Errorf("attn: backward: %d rows: gp %d, cd %d, gdst %d values", g.Rows, len(gp), len(cd), len(gdst))
	case len(gz) != len(z) || len(gsrc) != len(src):
		return fmt.Errorf("attn: backward: %d columns: gz %d, gsrc %d values", g.Cols, len(gz), len(gsrc))
	case len(st.P) != h*e || len(st.W) != h*e:
		return fmt.Errorf("attn: backward: state of %d edge values, want %d", len(st.P), h*e)
	}
	sc.wd = Resize(sc.wd, 2*h*e)
	par.For(g.Rows, rowGrain(g, hf), func(lo, hi int) {
		sum := make([]float32, h)
		var zb, sb []float32 // the block's gathered z and src rows
		for v0 := lo; v0 < hi; {
			v1 := blockEnd(g.Ptr, v0, hi)
			a0, b0 := g.Ptr[v0], g.Ptr[v1]
			zb, sb = Resize(zb, int(b0-a0)*hf), Resize(sb, int(b0-a0)*h)
			gather(zb, z, hf, g.Idx[a0:b0])
			gather(sb, src, h, g.Idx[a0:b0])
			for v := v0; v < v1; v++ {
				a, b := g.Ptr[v]-a0, g.Ptr[v+1]-a0
				backwardRow(sp, v, int(g.Ptr[v]), zb[a*int64(hf):b*int64(hf)], sb[a*int64(h):b*int64(h)], dst, gp, cd, st, sc.wd, sum)
				for hd, s := range sum {
					gdst[v*h+hd] += s
				}
			}
			v0 = v1
		}
	})
	narrow := fused(sp)
	par.For(g.Cols, rowGrain(g, hf), func(lo, hi int) {
		sum := make([]float32, h)
		var wd, w, gb, buf []float32
		for u0 := lo; u0 < hi; {
			u1 := blockEnd(g.tptr, u0, hi)
			a0, b0 := g.tptr[u0], g.tptr[u1]
			n := int(b0 - a0)
			wd, w = Resize(wd, 2*h*n), Resize(w, h*n)
			for t, k := range g.tperm[a0:b0] {
				copy(wd[2*h*t:2*h*(t+1)], sc.wd[2*h*int(k):2*h*(int(k)+1)])
			}
			if narrow {
				gb = Resize(gb, n*hf)
				gather(gb, gp, hf, g.trow[a0:b0])
			}
			for u := u0; u < u1; u++ {
				a, b := int(g.tptr[u]-a0), int(g.tptr[u+1]-a0)
				clear(sum)
				for t := a; t < b; t++ {
					copy(w[h*t:h*(t+1)], wd[2*h*t:2*h*t+h])
					for hd, d := range wd[2*h*t+h : 2*h*(t+1)] {
						sum[hd] += d
					}
				}
				for hd, s := range sum {
					gsrc[u*h+hd] += s
				}
				out := gz[u*hf : (u+1)*hf]
				if narrow {
					fusedRows(out, gb[a*hf:b*hf], sp, w[a*h:b*h])
				} else {
					perHead(out, gp, sp, g.trow[int(a0)+a:int(a0)+b], w[a*h:b*h], kern, &buf)
				}
			}
			u0 = u1
		}
	})
	return nil
}

// backwardRow computes de of row v's edges (all heads; the first edge has
// index lo, zu and su are their gathered z and src rows), stores them with
// the edges' weights W into wd (per edge: W then de) and returns their
// per-head sums in sum.
func backwardRow(sp Spec, v, lo int, zu, su, dst, gp, cd []float32, st *State, wd, sum []float32) {
	h, f := sp.Heads, sp.Width
	hf, n := h*f, len(su)/h
	p, w := st.P[lo*h:(lo+n)*h], st.W[lo*h:(lo+n)*h]
	gr, d, c := gp[v*hf:(v+1)*hf], dst[v*h:(v+1)*h], cd[v*h:(v+1)*h]
	sum = sum[:h]
	clear(sum)
	for k := range n {
		zk, sk := zu[k*hf:(k+1)*hf], su[k*h:(k+1)*h]
		pk, wk := p[k*h:k*h+h], w[k*h:k*h+h]
		e := 2 * h * (lo + k)
		copy(wd[e:e+h], wk)
		dk := wd[e+h : e+2*h]
		for hd, x := range sk {
			var t float32
			if wk[hd] != 0 {
				t = wk[hd] * dot(gr[hd*f:(hd+1)*f], zk[hd*f:(hd+1)*f])
			}
			t = (t - pk[hd]*c[hd]) * slopeOf(x+d[hd], sp.Slope)
			dk[hd] = t
			sum[hd] += t
		}
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
