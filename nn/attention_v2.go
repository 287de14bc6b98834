package nn

import (
	"fmt"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/dense"
)

// AttentionV2 is the graph operator of GATv2 layers (GATv2Layer): for
// every owned node v and head h,
//
//	out[v, h] = Σ_{u ∈ N(v) ∪ {v}} α_vu,h · z[u, h],
//	α_vu,h = softmax_u(Σ_j att[h, j] · LeakyReLU(z[u, h, j] + t[v, h, j], sp.Slope))
//
// with z the projected source rows, t the projected target rows (both Rows
// × Heads·Width), att Heads × Width, and neighbourhood and attention
// dropout as Attention's. It is the Operator of the models of kind
// OpAttentionV2.
type AttentionV2 interface {
	Operator
	// AttendV2 sets out (Rows × Heads·Width) as above. z, t, att and out
	// must stay unmodified until the AttendV2Backward of the same p.Layer.
	AttendV2(p Pass, sp attn.Spec, z, t *dense.Matrix, att []float32, out *dense.Matrix) error
	// AttendV2Backward sets gz, gt (shapes of z and t) and gatt (att's
	// length; this rank's edges' share) to the gradients of the last
	// AttendV2 of p.Layer given gout, the gradient of its out.
	AttendV2Backward(p Pass, gout, gz, gt *dense.Matrix, gatt []float32) error
}

// localAttnV2 is what one GATv2 layer's AttendV2 keeps for its backward.
type localAttnV2 struct {
	sp        attn.Spec
	st        attn.StateV2
	z, t, out *dense.Matrix
	att       []float32
}

// AttendV2 implements AttentionV2.
func (a *LocalAttention) AttendV2(p Pass, sp attn.Spec, z, t *dense.Matrix, att []float32, out *dense.Matrix) error {
	if err := CheckAttendV2(a.g.Rows, sp, z, t, att, out); err != nil {
		return err
	}
	l := a.v2[p.Layer]
	if l == nil {
		l = &localAttnV2{}
		a.v2[p.Layer] = l
	}
	l.sp, l.z, l.t, l.att, l.out = sp, z, t, att, out
	if err := attn.ForwardV2(a.g, sp, z.Data, t.Data, att, attn.Ids{}, a.kern, &l.st); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	attn.Finish(sp, &l.st.State, out.Data)
	return nil
}

// AttendV2Backward implements AttentionV2.
func (a *LocalAttention) AttendV2Backward(p Pass, gout, gz, gt *dense.Matrix, gatt []float32) error {
	l := a.v2[p.Layer]
	if l == nil || l.z == nil {
		return fmt.Errorf("nn: GATv2 attention backward of layer %d without its forward", p.Layer)
	}
	if err := CheckAttendV2Grad(l.z, l.att, gout, gz, gt, gatt); err != nil {
		return err
	}
	h := l.sp.Heads
	a.gp, a.cd = attn.Resize(a.gp, len(gout.Data)), attn.Resize(a.cd, gout.Rows*h)
	attn.Scale(l.sp, nil, l.st.M, l.st.M, l.st.S, gout.Data, l.out.Data, a.gp, a.cd)
	clear(gz.Data)
	clear(gt.Data)
	clear(gatt)
	err := attn.BackwardV2(a.g, l.sp, l.z.Data, l.t.Data, l.att, a.gp, a.cd, &l.st, &a.scratchV2, gz.Data, gt.Data, gatt)
	l.z = nil
	if err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	return nil
}

// CheckAttendV2 validates the operands of AttendV2 for rows nodes.
func CheckAttendV2(rows int, sp attn.Spec, z, t *dense.Matrix, att []float32, out *dense.Matrix) error {
	hf := sp.Heads * sp.Width
	if sp.Heads < 1 || sp.Width < 1 || z.Rows != rows || z.Cols != hf || t.Rows != rows || t.Cols != hf ||
		out.Rows != rows || out.Cols != hf || len(att) != hf {
		return fmt.Errorf("nn: GATv2 attention of %d heads × %d on %d rows: z %d×%d, t %d×%d, att %d, out %d×%d",
			sp.Heads, sp.Width, rows, z.Rows, z.Cols, t.Rows, t.Cols, len(att), out.Rows, out.Cols)
	}
	return nil
}

// CheckAttendV2Grad validates AttendV2Backward's operands against the
// forward pass's z and att.
func CheckAttendV2Grad(z *dense.Matrix, att []float32, gout, gz, gt *dense.Matrix, gatt []float32) error {
	same := func(m *dense.Matrix) bool { return m.Rows == z.Rows && m.Cols == z.Cols }
	if !same(gout) || !same(gz) || !same(gt) || len(gatt) != len(att) {
		return fmt.Errorf("nn: GATv2 attention backward: gout %d×%d, gz %d×%d, gt %d×%d, gatt %d for z %d×%d, att %d",
			gout.Rows, gout.Cols, gz.Rows, gz.Cols, gt.Rows, gt.Cols, len(gatt), z.Rows, z.Cols, len(att))
	}
	return nil
}
