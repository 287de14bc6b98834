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
// and head (head-major: [h·Edges + k]) P = exp(l − M) and W = P·keep/(1−drop)
// (W shares P's storage without dropout). Backward reads P and W.
type State struct {
	M, S, R []float32
	P, W    []float32
	w       []float32 // W's own storage (W is P without dropout)
}

// Scratch is Backward's per-edge temporary storage (2·Heads·Edges values),
// reused across states and layers by calls that do not run concurrently.
type Scratch struct{ de, wt []float32 }

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
	par.For(g.Rows, rowGrain(g, hf), func(lo, hi int) {
		var eh []uint64 // the row's edge hashes (dropout)
		for v := lo; v < hi; v++ {
			forwardRow(g, sp, v, z, src, dst, ids, kern, st, &eh)
		}
	})
	return nil
}

// rowGrain is the number of rows worth a goroutine: about 16 Ki products.
func rowGrain(g *Graph, hf int) int {
	per := (g.Edges()/max(g.Rows, 1) + 1) * hf
	return max(1, (1<<14)/max(per, 1))
}

// forwardRow is Forward on row v.
func forwardRow(g *Graph, sp Spec, v int, z, src, dst []float32, ids Ids, kern RowsW, st *State, eh *[]uint64) {
	lo, hi := g.Ptr[v], g.Ptr[v+1]
	h, f, e := sp.Heads, sp.Width, int64(g.Edges())
	idx := g.Idx[lo:hi]
	scale, drop24 := 1/(1-sp.Drop), sp.Drop*(1<<24)
	if sp.Drop > 0 {
		*eh = (*eh)[:0]
		row := ids.row(v)
		for _, u := range idx {
			*eh = append(*eh, edgeHash(sp.Seed, row, ids.col(u)))
		}
	}
	for hd := range h {
		p := st.P[int64(hd)*e+lo : int64(hd)*e+hi]
		d, m := dst[v*h+hd], float32(math.Inf(-1))
		for k, u := range idx {
			l := leaky(src[int(u)*h+hd]+d, sp.Slope)
			p[k] = l
			m = max(m, l)
		}
		var s float32
		for k := range p {
			p[k] = exp32(p[k] - m)
			s += p[k]
		}
		if sp.Drop > 0 {
			w := st.W[int64(hd)*e+lo : int64(hd)*e+hi]
			for k, x := range *eh {
				var c float32
				if keepHead(x, hd, drop24) {
					c = scale
				}
				w[k] = p[k] * c
			}
		}
		st.M[v*h+hd], st.S[v*h+hd] = m, s
		out := st.R[v*h*f+hd*f : v*h*f+(hd+1)*f]
		clear(out)
		if len(idx) > 0 {
			kern(out, z[hd*f:], h*f, idx, st.W[int64(hd)*e+lo:int64(hd)*e+hi])
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
	sc.de, sc.wt = Resize(sc.de, h*e), Resize(sc.wt, h*e)
	par.For(g.Rows, rowGrain(g, hf), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			backwardRow(g, sp, v, z, src, dst, gp, cd, st, sc.de, gdst)
		}
	})
	par.For(e, 1<<14, func(lo, hi int) {
		for hd := range h {
			base := hd * e
			for j := lo; j < hi; j++ {
				sc.wt[base+j] = st.W[base+int(g.tperm[j])]
			}
		}
	})
	par.For(g.Cols, rowGrain(g, hf), func(lo, hi int) {
		for u := lo; u < hi; u++ {
			a, b := g.tptr[u], g.tptr[u+1]
			if a == b {
				continue
			}
			rows := g.trow[a:b]
			for hd := range h {
				base := int64(hd) * int64(e)
				var s float32
				for _, k := range g.tperm[a:b] {
					s += sc.de[base+k]
				}
				gsrc[u*h+hd] += s
				kern(gz[u*hf+hd*sp.Width:u*hf+(hd+1)*sp.Width], gp[hd*sp.Width:], hf, rows, sc.wt[base+a:base+b])
			}
		}
	})
	return nil
}

// backwardRow computes de of row v's edges and adds their sums to gdst.
func backwardRow(g *Graph, sp Spec, v int, z, src, dst, gp, cd []float32, st *State, deAll, gdst []float32) {
	lo, hi := g.Ptr[v], g.Ptr[v+1]
	h, f, e := sp.Heads, sp.Width, int64(g.Edges())
	idx := g.Idx[lo:hi]
	for hd := range h {
		base := int64(hd) * e
		p, w, de := st.P[base+lo:base+hi], st.W[base+lo:base+hi], deAll[base+lo:base+hi]
		gr := gp[v*h*f+hd*f : v*h*f+(hd+1)*f]
		d, c := dst[v*h+hd], cd[v*h+hd]
		var sum float32
		for k, u := range idx {
			var t float32
			if w[k] != 0 {
				t = w[k] * dot(gr, z[int(u)*h*f+hd*f:int(u)*h*f+(hd+1)*f])
			}
			t -= p[k] * c
			if src[int(u)*h+hd]+d < 0 {
				t *= sp.Slope
			}
			de[k] = t
			sum += t
		}
		gdst[v*h+hd] += sum
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
