package exchange

import "github.com/supergcn/supergcn/quant"

// AttnBytes is what one attention layer (nn.OpAttention, Heads heads)
// moves per mode besides what RowReport counts for a plain operator: the
// bytes of its forward and backward pass, rows at the wire format plus the
// float32 scalars of attnOp (forward: a post row's Heads source terms, a
// pre row's Heads destination terms sent first and its max and sum per
// head; backward: Heads scalars a row and a pre row's Heads destination
// gradients).
type AttnBytes struct {
	Heads    int       `json:"heads"`
	Forward  RowCounts `json:"forward"`
	Backward RowCounts `json:"backward"`
	Scalars  RowCounts `json:"scalar_bytes"` // of Forward+Backward, the float32 scalars
}

// add counts one ordered pair of split sp (hybrid) for rows of width
// values at wire format f.
func (a *AttnBytes) add(sp *PairSplit, width int, f quant.Wire) {
	h := int64(4 * a.Heads)
	post, pre := int64(len(sp.Post)), int64(len(sp.Pre))
	one := func(nPost, nPre int64) (fwd, bwd, scal int64) {
		rows := f.Bytes(nPost+nPre, width)
		fs, bs := h*nPost+3*h*nPre, h*(nPost+nPre)+h*nPre
		return rows + fs, rows + bs, fs + bs
	}
	fPre, bPre, sPre := one(0, sp.Counts.Pre)
	fPost, bPost, sPost := one(sp.Counts.Post, 0)
	fHyb, bHyb, sHyb := one(post, pre)
	a.Forward = a.Forward.Add(RowCounts{Pre: fPre, Post: fPost, Hybrid: fHyb})
	a.Backward = a.Backward.Add(RowCounts{Pre: bPre, Post: bPost, Hybrid: bHyb})
	a.Scalars = a.Scalars.Add(RowCounts{Pre: sPre, Post: sPost, Hybrid: sHyb})
}
