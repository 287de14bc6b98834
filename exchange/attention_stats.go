package exchange

import (
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/quant"
)

// AttnBytes is what one attention layer (Kind nn.OpAttention: GAT, or
// nn.OpAttentionV2: GATv2; Heads heads) moves per mode besides what
// RowReport counts for a plain operator: the bytes of its forward and
// backward pass, rows at the wire format plus the float32 scalars.
//
// GAT (attnOp): forward a post row's Heads source terms, a pre row's Heads
// destination terms sent first and its max and sum per head; backward
// Heads scalars a row and a pre row's Heads destination gradients.
//
// GATv2 (attention_v2.go): a post row is one row each way, no scalars; a
// pre row sends the target's row to the sender and gets back the row sum
// (two rows) plus max and sum per head forward, and backward the scaled
// output gradient with ⟨g, o⟩ per head goes to the sender and the target
// row's gradient comes back (two rows, Heads scalars). Its hybrid plan is
// GATv2's (pre rows weighted, splitShardV2), not the plain operator's.
type AttnBytes struct {
	Model    string    `json:"model"` // gat or gatv2
	Heads    int       `json:"heads"`
	Forward  RowCounts `json:"forward"`
	Backward RowCounts `json:"backward"`
	Scalars  RowCounts `json:"scalar_bytes"` // of Forward+Backward, the float32 scalars

	kind nn.OpKind
}

// newAttnBytes returns the empty count of an attention layer of kind (an
// attention kind) with heads heads.
func newAttnBytes(kind nn.OpKind, heads int) *AttnBytes {
	a := &AttnBytes{Model: "gat", Heads: heads, kind: kind}
	if kind == nn.OpAttentionV2 {
		a.Model = "gatv2"
	}
	return a
}

// add counts one ordered pair of split sp (hybrid; for GATv2 its own
// hybrid split) for rows of width values at wire format f.
func (a *AttnBytes) add(sp *PairSplit, width int, f quant.Wire) {
	h := int64(4 * a.Heads)
	post, pre := int64(len(sp.Post)), int64(len(sp.Pre))
	one := func(nPost, nPre int64) (fwd, bwd, scal int64) {
		rows := f.Bytes(nPost+nPre, width)
		fs, bs := h*nPost+3*h*nPre, h*(nPost+nPre)+h*nPre
		return rows + fs, rows + bs, fs + bs
	}
	if a.kind == nn.OpAttentionV2 {
		one = func(nPost, nPre int64) (fwd, bwd, scal int64) {
			// the rows (post rows and row sums) in one message, the
			// target rows (or their gradients) in another
			rows := f.Bytes(nPost+nPre, width) + f.Bytes(nPre, width)
			fs, bs := 2*h*nPre, h*nPre
			return rows + fs, rows + bs, fs + bs
		}
	}
	fPre, bPre, sPre := one(0, sp.Counts.Pre)
	fPost, bPost, sPost := one(sp.Counts.Post, 0)
	fHyb, bHyb, sHyb := one(post, pre)
	a.Forward = a.Forward.Add(RowCounts{Pre: fPre, Post: fPost, Hybrid: fHyb})
	a.Backward = a.Backward.Add(RowCounts{Pre: bPre, Post: bPost, Hybrid: bHyb})
	a.Scalars = a.Scalars.Add(RowCounts{Pre: sPre, Post: sPost, Hybrid: sHyb})
}
