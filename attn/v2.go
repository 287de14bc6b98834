package attn

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/internal/par"
)

// StateV2 is GATv2's forward state: GAT's per-row softmax state, and per
// edge and head the probabilities P and the weights W (P with dropout
// applied; W is P without dropout), kept for the backward pass.
type StateV2 struct {
	State
	P, W []float32
	w    []float32 // W's own storage
}

// ScratchV2 is BackwardV2's per-edge temporary storage (2·Heads·Edges
// values: per edge its weights and score gradients side by side, in the
// transposed order so that the pass over the columns reads them in turn), reused
// across states and layers by calls that do not run concurrently.
type ScratchV2 struct{ wd []float32 }

// GATv2 (Brody et al., ICLR 2022; PyG GATv2Conv) scores edge k of row v
// (source u_k) at head h from the projected rows of both ends:
//
//	l_k = Σ_j a[h, j] · LeakyReLU(z[u_k, h, j] + t[v, h, j], slope)
//
// where z holds the projected source rows (the rows aggregated, as in
// GAT) and t the projected target rows; softmax, attention dropout, the
// weighted aggregation, the partial states, Merge, Share, Scale and Finish
// are GAT's (the package comment). A state of some of v's edges needs v's
// target row t[v] besides the sources: a distributed operator that lets
// another rank pre-aggregate v's edges ships it t[v], and gets back the
// gradient of t[v].

// checkV2 validates the operand lengths of a GATv2 pass over g.
func checkV2(g *Graph, sp Spec, z, t, att []float32) error {
	hf := sp.Heads * sp.Width
	switch {
	case sp.Heads < 1 || sp.Width < 1:
		return fmt.Errorf("attn: %d heads of width %d", sp.Heads, sp.Width)
	case len(z) != g.Cols*hf || len(t) != g.Rows*hf || len(att) != hf:
		return fmt.Errorf("attn: GATv2 pass of %d rows × %d columns: z has %d values, t %d, att %d (want %d, %d, %d)",
			g.Rows, g.Cols, len(z), len(t), len(att), g.Cols*hf, g.Rows*hf, hf)
	case !(sp.Drop >= 0 && sp.Drop < 1):
		return fmt.Errorf("attn: dropout %g is not in [0, 1)", sp.Drop)
	}
	return nil
}

// ForwardV2 is Forward with GATv2's scores: z is Cols × Heads·Width, t
// Rows × Heads·Width, att Heads × Width. A row without edges gets M =
// −Inf, S = 0, R = 0.
func ForwardV2(g *Graph, sp Spec, z, t, att []float32, ids Ids, kern RowsW, st *StateV2) error {
	if err := checkV2(g, sp, z, t, att); err != nil {
		return err
	}
	if err := checkIDs(g, ids); err != nil {
		return err
	}
	h, f, e := sp.Heads, sp.Width, g.Edges()
	hf := h * f
	st.M, st.S = Resize(st.M, g.Rows*h), Resize(st.S, g.Rows*h)
	st.R = Resize(st.R, g.Rows*hf)
	st.P = Resize(st.P, h*e)
	if sp.Drop > 0 {
		st.w = Resize(st.w, h*e)
		st.W = st.w
	} else {
		st.W = st.P
	}
	forEdges(g.Rows, g.Ptr, func(lo, hi int) {
		var buf []float32
		var eg edgeTemps // a row's dropout masks
		for v := lo; v < hi; v++ {
			a, b := g.Ptr[v], g.Ptr[v+1]
			idx := g.Idx[a:b]
			p := st.P[a*int64(h) : b*int64(h)]
			tv := t[v*hf : (v+1)*hf]
			for k, u := range idx {
				zu := z[int(u)*hf : int(u)*hf+hf]
				for hd := range h {
					p[k*h+hd] = scoreV2(zu[hd*f:(hd+1)*f], tv[hd*f:(hd+1)*f], att[hd*f:(hd+1)*f], sp.Slope)
				}
			}
			softmaxScores(p, st.M[v*h:(v+1)*h], st.S[v*h:(v+1)*h])
			w := p
			if sp.Drop > 0 {
				w = st.W[a*int64(h) : b*int64(h)]
				copy(w, p)
				eg.hash(sp, heads, idx, ids, ids.row(v), true)
				eg.drop(sp, w)
			}
			out := st.R[v*hf : (v+1)*hf]
			clear(out)
			perHead(out, z, sp, idx, w, kern, &buf)
		}
	})
	return nil
}

// scoreV2 is Σ_j a[j]·LeakyReLU(z[j] + t[j]).
func scoreV2(z, t, a []float32, slope float32) float32 {
	t, a = t[:len(z)], a[:len(z)]
	var s float32
	for j, x := range z {
		s += a[j] * leaky(x+t[j], slope)
	}
	return s
}

// softmaxScores turns the scores p (edge-major, one row's edges, all
// heads) into p = exp(l − m), m the per-head max and s the per-head sum.
func softmaxScores(p, m, s []float32) {
	h := len(m)
	for hd := range m {
		m[hd] = float32(math.Inf(-1))
	}
	for k := 0; k < len(p); k += h {
		for hd, l := range p[k : k+h] {
			m[hd] = max(m[hd], l)
		}
	}
	clear(s)
	for k := 0; k < len(p); k += h {
		pk := p[k : k+h]
		for hd, l := range pk {
			y := exp32(l - m[hd])
			pk[hd] = y
			s[hd] += y
		}
	}
}

// attBlockRows is the rows of one block of BackwardV2's attention-vector
// gradient: the blocks' partial sums are added in block order, so the
// gradient is the same at every thread count.
const attBlockRows = 256

// BackwardV2 accumulates the adjoint of ForwardV2 into gz (Cols ×
// Heads·Width), gt (Rows × Heads·Width) and gatt (Heads × Width), given gp
// and cd as Backward takes them. Per edge k (row v, source u) and head h,
// with x_j = z[u,h,j] + t[v,h,j]:
//
//	ds_k      = W_k·⟨gp[v,h], z[u,h]⟩ − P_k·cd[v,h]
//	gz[u,h]  += W_k·gp[v,h] + ds_k · a[h] ⊙ LeakyReLU'(x)
//	gt[v,h]  += ds_k · a[h] ⊙ LeakyReLU'(x)
//	gatt[h]  += ds_k · LeakyReLU(x)
//
// The rows' pass computes ds (kept per edge in sc), gt and gatt; the
// columns' pass (the transpose) gz, recomputing LeakyReLU'(x).
func BackwardV2(g *Graph, sp Spec, z, t, att, gp, cd []float32, st *StateV2, sc *ScratchV2, gz, gt, gatt []float32) error {
	if err := checkV2(g, sp, z, t, att); err != nil {
		return err
	}
	h, e, hf := sp.Heads, g.Edges(), sp.Heads*sp.Width
	switch {
	case len(gp) != g.Rows*hf || len(cd) != g.Rows*h || len(gt) != g.Rows*hf:
		return fmt.Errorf("attn: GATv2 backward: %d rows: gp %d, cd %d, gt %d values", g.Rows, len(gp), len(cd), len(gt))
	case len(gz) != len(z) || len(gatt) != hf:
		return fmt.Errorf("attn: GATv2 backward: gz %d values for z's %d, gatt %d for %d", len(gz), len(z), len(gatt), hf)
	case len(st.P) != h*e || len(st.W) != h*e:
		return fmt.Errorf("attn: GATv2 backward: state of %d edge values, want %d", len(st.P), h*e)
	}
	sc.wd = Resize(sc.wd, 2*h*e)
	blocks := (g.Rows + attBlockRows - 1) / attBlockRows
	part := make([]float32, blocks*hf)
	par.Blocks(blocks, 0, func(i int) {
		ga := part[i*hf : (i+1)*hf]
		for v := i * attBlockRows; v < min(g.Rows, (i+1)*attBlockRows); v++ {
			backwardRowV2(g, sp, v, z, t, att, gp, cd, st, sc.wd, gt, ga)
		}
	})
	for i := range blocks {
		for j, x := range part[i*hf : (i+1)*hf] {
			gatt[j] += x
		}
	}
	forEdges(g.Cols, g.tptr, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			columnV2(g, sp, u, z, t, att, gp, sc.wd, gz[u*hf:(u+1)*hf])
		}
	})
	return nil
}

// backwardRowV2 is BackwardV2's pass over row v's edges: it stores every
// edge's weights W and score gradients ds into wd (per edge, at its
// transposed position: W then ds, Heads each) and adds to gt[v] and ga.
func backwardRowV2(g *Graph, sp Spec, v int, z, t, att, gp, cd []float32, st *StateV2, wd, gt, ga []float32) {
	h, f := sp.Heads, sp.Width
	hf := h * f
	tv, gr, gtv := t[v*hf:(v+1)*hf], gp[v*hf:(v+1)*hf], gt[v*hf:(v+1)*hf]
	for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
		u := int(g.Idx[k])
		zu := z[u*hf : (u+1)*hf]
		pk, wk := st.P[int(k)*h:int(k)*h+h], st.W[int(k)*h:int(k)*h+h]
		e := 2 * h * int(g.tpos[k])
		copy(wd[e:e+h], wk)
		for hd := range h {
			c := hd * f
			var ds float32
			if wk[hd] != 0 {
				ds = wk[hd] * dot(gr[c:c+f], zu[c:c+f])
			}
			ds -= pk[hd] * cd[v*h+hd]
			wd[e+h+hd] = ds
			if ds == 0 {
				continue
			}
			for j := c; j < c+f; j++ {
				x := zu[j] + tv[j]
				sl := slopeOf(x, sp.Slope)
				gtv[j] += ds * att[j] * sl
				ga[j] += ds * x * sl
			}
		}
	}
}

// columnV2 is BackwardV2's pass over column u's edges (the transpose):
// gzu += W·gp[v] + ds·a ⊙ LeakyReLU'(z[u] + t[v]) for each.
func columnV2(g *Graph, sp Spec, u int, z, t, att, gp, wd, gzu []float32) {
	h, f := sp.Heads, sp.Width
	hf := h * f
	zu := z[u*hf : (u+1)*hf]
	for i := g.tptr[u]; i < g.tptr[u+1]; i++ {
		v, k := int(g.trow[i]), int(i) // wd is in the transposed order
		tv, gr := t[v*hf:(v+1)*hf], gp[v*hf:(v+1)*hf]
		w, ds := wd[2*h*k:2*h*k+h], wd[2*h*k+h:2*h*(k+1)]
		for hd := range h {
			c := hd * f
			wk, dk := w[hd], ds[hd]
			if wk != 0 {
				for j := c; j < c+f; j++ {
					gzu[j] += wk * gr[j]
				}
			}
			if dk == 0 {
				continue
			}
			for j := c; j < c+f; j++ {
				gzu[j] += dk * att[j] * slopeOf(zu[j]+tv[j], sp.Slope)
			}
		}
	}
}
