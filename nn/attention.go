package nn

import (
	"fmt"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/dense"
)

// Attention is the graph operator of an attention layer (GATLayer): for
// every owned node v and head h,
//
//	out[v, h] = Σ_{u ∈ N(v) ∪ {v}} α_vu,h · z[u, h],
//	α_vu,h = softmax_u(LeakyReLU(src[u, h] + dst[v, h], sp.Slope))
//
// with attention dropout on α (sp.Drop, masks from sp.Seed and the edge's
// global end points: the same on any number of ranks), where z[u, h] is
// columns [h·Width, (h+1)·Width) of row u. The neighbourhood is the
// in-edges of v with every self-loop replaced by exactly one (PyG
// add_self_loops). LocalAttention is the single-process operator;
// in a distributed run (package exchange) the remote sources' rows or
// partial softmax states come over the network. It is the Operator of the
// models of kind OpAttention.
type Attention interface {
	Operator
	// Attend sets out (Rows × Heads·Width) as above; z is Rows ×
	// Heads·Width, src and dst Rows × Heads. z, src, dst and out must stay
	// unmodified until the AttendBackward of the same p.Layer.
	Attend(p Pass, sp attn.Spec, z, src, dst, out *dense.Matrix) error
	// AttendBackward sets gz, gsrc and gdst (overwritten; shapes of z,
	// src, dst) to the gradients of the last Attend of p.Layer given gout,
	// the gradient of its out.
	AttendBackward(p Pass, gout, gz, gsrc, gdst *dense.Matrix) error
}

// LocalAttention is the single-process Attention (and AttentionV2) over one graph whose row
// v lists v's in-neighbours, self-loops as given: the caller adds them.
type LocalAttention struct {
	g         *attn.Graph
	kern      attn.RowsW
	layers    map[int]*localAttn
	v2        map[int]*localAttnV2 // GATv2 layers (attention_v2.go)
	scratch   attn.Scratch         // every layer's backward temporaries
	scratchV2 attn.ScratchV2       // GATv2 layers' backward temporaries
	gp, cd    []float32            // the scaled output gradient and ⟨g, o⟩ of the backward in progress
}

// localAttn is what one layer's Attend keeps for its backward pass.
type localAttn struct {
	sp               attn.Spec
	st               attn.State
	z, src, dst, out *dense.Matrix
}

// NewLocalAttention returns the operator of the graph with rows nodes and
// in-edges idx[ptr[v]:ptr[v+1]] of node v, aggregating with kern
// (attn.GenericRowsW, or aggr.Engine.RowsW for the SIMD kernel).
func NewLocalAttention(rows int, ptr []int64, idx []int32, kern attn.RowsW) (*LocalAttention, error) {
	g, err := attn.NewGraph(rows, rows, ptr, idx)
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	return &LocalAttention{g: g, kern: kern, layers: map[int]*localAttn{}, v2: map[int]*localAttnV2{}}, nil
}

// Rows returns the number of nodes.
func (a *LocalAttention) Rows() int { return a.g.Rows }

// Attend implements Attention.
func (a *LocalAttention) Attend(p Pass, sp attn.Spec, z, src, dst, out *dense.Matrix) error {
	if err := CheckAttend(a.g.Rows, sp, z, src, dst, out); err != nil {
		return err
	}
	l := a.layers[p.Layer]
	if l == nil {
		l = &localAttn{}
		a.layers[p.Layer] = l
	}
	l.sp, l.z, l.src, l.dst, l.out = sp, z, src, dst, out
	if err := attn.Forward(a.g, sp, z.Data, src.Data, dst.Data, attn.Ids{}, a.kern, &l.st); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	attn.Finish(sp, &l.st, out.Data)
	return nil
}

// AttendBackward implements Attention.
func (a *LocalAttention) AttendBackward(p Pass, gout, gz, gsrc, gdst *dense.Matrix) error {
	l := a.layers[p.Layer]
	if l == nil || l.z == nil {
		return fmt.Errorf("nn: attention backward of layer %d without its forward", p.Layer)
	}
	if err := CheckAttendGrad(l.z, l.src, gout, gz, gsrc, gdst); err != nil {
		return err
	}
	a.gp, a.cd = attn.Resize(a.gp, len(gout.Data)), attn.Resize(a.cd, len(gdst.Data))
	attn.Scale(l.sp, nil, l.st.M, l.st.M, l.st.S, gout.Data, l.out.Data, a.gp, a.cd)
	clear(gz.Data)
	clear(gsrc.Data)
	clear(gdst.Data)
	err := attn.Backward(a.g, l.sp, l.z.Data, l.src.Data, l.dst.Data, a.gp, a.cd, a.kern, &l.st, &a.scratch, gz.Data, gsrc.Data, gdst.Data)
	l.z = nil
	if err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	return nil
}

// CheckAttend validates the operands of Attend for rows nodes.
func CheckAttend(rows int, sp attn.Spec, z, src, dst, out *dense.Matrix) error {
	hf := sp.Heads * sp.Width
	if sp.Heads < 1 || sp.Width < 1 || z.Rows != rows || z.Cols != hf || out.Rows != rows || out.Cols != hf ||
		src.Rows != rows || src.Cols != sp.Heads || dst.Rows != rows || dst.Cols != sp.Heads {
		return fmt.Errorf("nn: attention of %d heads × %d on %d rows: z %d×%d, src %d×%d, dst %d×%d, out %d×%d",
			sp.Heads, sp.Width, rows, z.Rows, z.Cols, src.Rows, src.Cols, dst.Rows, dst.Cols, out.Rows, out.Cols)
	}
	return nil
}

// CheckAttendGrad validates AttendBackward's operands against the forward
// pass's z and src.
func CheckAttendGrad(z, src, gout, gz, gsrc, gdst *dense.Matrix) error {
	if gout.Rows != z.Rows || gout.Cols != z.Cols || gz.Rows != z.Rows || gz.Cols != z.Cols ||
		gsrc.Rows != src.Rows || gsrc.Cols != src.Cols || gdst.Rows != src.Rows || gdst.Cols != src.Cols {
		return fmt.Errorf("nn: attention backward: gout %d×%d, gz %d×%d, gsrc %d×%d, gdst %d×%d for z %d×%d",
			gout.Rows, gout.Cols, gz.Rows, gz.Cols, gsrc.Rows, gsrc.Cols, gdst.Rows, gdst.Cols, z.Rows, z.Cols)
	}
	return nil
}
