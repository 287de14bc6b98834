package exchange

import (
	"errors"
	"fmt"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
)

// attnLayerV2 is what one GATv2 layer's AttendV2 keeps for its backward
// pass (attention_v2_plan.go says what its rows carry).
type attnLayerV2 struct {
	sp             attn.Spec
	z, t, out      *dense.Matrix
	att            []float32
	zh             []float32    // received rows: post rows z[u], pre rows their partial row sums
	own, halo, pre attn.StateV2 // owned graph (merged after AttendV2), halo graph, pre rows sent
	mown, mhalo    []float32    // the owned and halo states' max before merging
	preT           []float32    // target rows of the pre rows this rank computes
	recvMS         []float32    // max and sum of every received pre row
}

// AttendV2 implements nn.AttentionV2: the owned graph's state is computed
// while the target rows of the pre rows go to their senders and the rows
// (post: z[u]; pre: partial states) come back; the halo graph's state and
// the received partial states merge into it after.
func (p *Propagator) AttendV2(ps nn.Pass, sp attn.Spec, z, t *dense.Matrix, att []float32, out *dense.Matrix) error {
	a := p.att
	if p.kind != nn.OpAttentionV2 {
		return fmt.Errorf("exchange: GATv2 attention on a %s operator", p.kind)
	}
	if err := nn.CheckAttendV2(p.n, sp, z, t, att, out); err != nil {
		return err
	}
	pl, l := a.pl, a.layerV2(ps.Layer)
	h, f := sp.Heads, sp.Width
	l.sp, l.z, l.t, l.att, l.out = sp, z, t, att, out
	l.zh = attn.Resize(l.zh, len(pl.recvDst)*h*f)
	tw := p.c.Wtime()
	var errOwn error
	own := func() { errOwn = attn.ForwardV2(pl.own, sp, z.Data, t.Data, att, pl.ownIDs, a.kern, &l.own) }
	if p.c.Size() > 1 {
		p.lap(tw, &p.stats.AggrSeconds)
		if err := p.overlap(own, func(done <-chan struct{}) error { return p.attendRemoteV2(ps, l, done) }); err != nil {
			return fmt.Errorf("exchange: GATv2 attention forward: %w", err)
		}
		tw = p.c.Wtime()
	} else {
		own()
	}
	err := errors.Join(errOwn, attn.ForwardV2(pl.halo, sp, l.zh, t.Data, att, pl.haloIDs, a.kern, &l.halo))
	if err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	st, hs := &l.own, &l.halo
	l.mown, l.mhalo = append(l.mown[:0], st.M...), append(l.mhalo[:0], hs.M...)
	mergeStates(pl, sp, &st.State, &hs.State, l.zh, l.recvMS)
	attn.Finish(sp, &st.State, out.Data)
	p.lap(tw, &p.stats.AggrSeconds)
	p.stats.Forwards++
	return nil
}

func (a *attnOp) layerV2(i int) *attnLayerV2 {
	l := a.v2[i]
	if l == nil {
		l = &attnLayerV2{}
		a.v2[i] = l
	}
	return l
}

// attendRemoteV2 runs the forward transfers: the pre rows' target rows to
// their senders (through the forward codec), this rank's pre states, then
// the rows (post rows and the states' row sums, through the codec) and
// the states' max and sum (float32), into l.zh and l.recvMS.
func (p *Propagator) attendRemoteV2(ps nn.Pass, l *attnLayerV2, done <-chan struct{}) error {
	a, pl, sp := p.att, p.att.pl, l.sp
	h, hf := sp.Heads, sp.Heads*sp.Width
	l.preT = attn.Resize(l.preT, pl.pre.Rows*hf)
	if a.mode != ModePost {
		send := dense.New(len(pl.recvPre), hf)
		for j, r := range pl.recvPre {
			copy(send.Data[j*hf:(j+1)*hf], l.t.Data[int(pl.recvDst[r])*hf:])
		}
		recv := &dense.Matrix{Rows: pl.pre.Rows, Cols: hf, Data: l.preT}
		if err := p.moveTargetRows(ps, false, send, recv, pl.recvPreOff, pl.sendPreOff, done); err != nil {
			return err
		}
	}
	t := p.c.Wtime()
	if err := attn.ForwardV2(pl.pre, sp, l.z.Data, l.preT, l.att, pl.preIDs, a.kern, &l.pre); err != nil {
		return err
	}
	a.sbuf = dense.Reshape(a.sbuf, len(pl.sendSrc), hf)
	ms := make([]float32, 0, 2*h*pl.pre.Rows)
	j := 0
	for i, u := range pl.sendSrc {
		row := a.sbuf.Data[i*hf : (i+1)*hf]
		if u >= 0 {
			copy(row, l.z.Data[int(u)*hf:])
			continue
		}
		copy(row, l.pre.R[j*hf:])
		for hd := range h {
			ms = append(ms, l.pre.M[j*h+hd], l.pre.S[j*h+hd])
		}
		j++
	}
	p.lap(t, &p.stats.AggrSeconds)
	recv := &dense.Matrix{Rows: len(pl.recvDst), Cols: hf, Data: l.zh}
	if err := p.moveAttnRows(ps, false, a.sbuf, recv, pl.sendOff, pl.recvOff, done); err != nil {
		return err
	}
	l.recvMS = attn.Resize(l.recvMS, len(pl.recvPre)*2*h)
	if a.mode == ModePost {
		return nil
	}
	return p.alltoallF32(ms, pl.sendPreOff, 2*h, l.recvMS, pl.recvPreOff, 2*h)
}

// AttendV2Backward implements nn.AttentionV2: the halo graph's backward
// first, the owned graph's while the received rows' gradients travel back
// (post rows: their gradient; pre rows: the scaled output gradient and
// ⟨g, o⟩ per head), then the senders' pre rows, whose target rows'
// gradients return to the owners.
func (p *Propagator) AttendV2Backward(ps nn.Pass, gout, gz, gt *dense.Matrix, gatt []float32) error {
	a := p.att
	if p.kind != nn.OpAttentionV2 {
		return fmt.Errorf("exchange: GATv2 attention on a %s operator", p.kind)
	}
	l := a.v2[ps.Layer]
	if l == nil || l.z == nil {
		return fmt.Errorf("exchange: GATv2 attention backward of layer %d without its forward", ps.Layer)
	}
	if err := nn.CheckAttendV2Grad(l.z, l.att, gout, gz, gt, gatt); err != nil {
		return err
	}
	pl, sp, g := a.pl, l.sp, &a.grads
	n, h, hf := pl.n, sp.Heads, sp.Heads*sp.Width
	t := p.c.Wtime()
	g.gp, g.cd = attn.Resize(g.gp, n*hf), attn.Resize(g.cd, n*h)
	g.gph, g.cdh = attn.Resize(g.gph, n*hf), attn.Resize(g.cdh, n*h)
	attn.Scale(sp, nil, l.mown, l.own.M, l.own.S, gout.Data, l.out.Data, g.gp, g.cd)
	attn.Scale(sp, nil, l.mhalo, l.own.M, l.own.S, gout.Data, l.out.Data, g.gph, g.cdh)
	g.gzh = attn.Resize(g.gzh, len(pl.recvDst)*hf)
	clear(g.gzh)
	clear(gz.Data)
	clear(gt.Data)
	clear(gatt)
	if err := attn.BackwardV2(pl.halo, sp, l.zh, l.t.Data, l.att, g.gph, g.cdh, &l.halo, &a.scratchV2, g.gzh, gt.Data, gatt); err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	var errOwn error
	own := func() {
		errOwn = attn.BackwardV2(pl.own, sp, l.z.Data, l.t.Data, l.att, g.gp, g.cd, &l.own, &a.scratchV2, gz.Data, gt.Data, gatt)
	}
	if p.c.Size() > 1 {
		cdPre := p.preGradientsV2(l, gout)
		p.lap(t, &p.stats.AggrSeconds)
		var cd []float32
		err := p.overlap(own, func(done <-chan struct{}) error {
			var err error
			cd, err = p.moveGradientsV2(ps, l, cdPre, done)
			return err
		})
		if err != nil {
			return fmt.Errorf("exchange: GATv2 attention backward: %w", err)
		}
		if errOwn == nil {
			errOwn = p.senderBackwardV2(ps, l, cd, gz, gt, gatt)
		}
	} else {
		own()
		p.lap(t, &p.stats.AggrSeconds)
	}
	if errOwn != nil {
		return fmt.Errorf("exchange: GATv2 attention backward: %w", errOwn)
	}
	l.z = nil
	p.stats.Backwards++
	return nil
}

// preGradientsV2 writes every received pre row's scaled output gradient
// where its (never read) halo column's is, and returns per received pre
// row and head the share times ⟨g, o⟩.
func (p *Propagator) preGradientsV2(l *attnLayerV2, gout *dense.Matrix) []float32 {
	a, pl, sp := p.att, p.att.pl, l.sp
	h, f := sp.Heads, sp.Width
	cd := make([]float32, len(pl.recvPre)*h)
	for j, r := range pl.recvPre {
		v := int(pl.recvDst[r])
		for hd := range h {
			i := v*h + hd
			c := attn.Share(l.recvMS[(j*h+hd)*2], l.own.M[i], l.own.S[i])
			g, o := gout.Data[i*f:(i+1)*f], l.out.Data[i*f:(i+1)*f]
			dst := a.grads.gzh[(int(r)*h+hd)*f : (int(r)*h+hd+1)*f]
			var d float32
			for k, x := range g {
				dst[k] = x * c
				d += x * o[k]
			}
			cd[j*h+hd] = d * c
		}
	}
	return cd
}

// moveGradientsV2 returns the received rows' gradients to their senders
// (rows through the backward codec into a.sbuf) and the pre rows' scalars
// (float32), which it returns per pre row this rank computed.
func (p *Propagator) moveGradientsV2(ps nn.Pass, l *attnLayerV2, cdPre []float32, done <-chan struct{}) ([]float32, error) {
	a, pl := p.att, p.att.pl
	h, hf := l.sp.Heads, l.sp.Heads*l.sp.Width
	back := &dense.Matrix{Rows: len(pl.recvDst), Cols: hf, Data: a.grads.gzh}
	a.sbuf = dense.Reshape(a.sbuf, len(pl.sendSrc), hf)
	if err := p.moveAttnRows(ps, true, back, a.sbuf, pl.recvOff, pl.sendOff, done); err != nil {
		return nil, err
	}
	cd := make([]float32, pl.pre.Rows*h)
	if a.mode == ModePost {
		return cd, nil
	}
	return cd, p.alltoallF32(cdPre, pl.recvPreOff, h, cd, pl.sendPreOff, h)
}

// senderBackwardV2 adds the returned gradients of this rank's post rows,
// runs the backward pass of its pre rows and returns their target rows'
// gradients to the owners (through the backward codec).
func (p *Propagator) senderBackwardV2(ps nn.Pass, l *attnLayerV2, cd []float32, gz, gt *dense.Matrix, gatt []float32) error {
	a, pl, sp := p.att, p.att.pl, l.sp
	hf := sp.Heads * sp.Width
	t := p.c.Wtime()
	nPre := pl.pre.Rows
	gp := make([]float32, nPre*hf)
	j := 0
	for i, u := range pl.sendSrc {
		if u >= 0 {
			dense.Axpy(1, a.sbuf.Data[i*hf:(i+1)*hf], gz.Data[int(u)*hf:int(u+1)*hf])
			continue
		}
		copy(gp[j*hf:(j+1)*hf], a.sbuf.Data[i*hf:])
		j++
	}
	gtPre := dense.New(nPre, hf)
	if err := attn.BackwardV2(pl.pre, sp, l.z.Data, l.preT, l.att, gp, cd, &l.pre, &a.scratchV2, gz.Data, gtPre.Data, gatt); err != nil {
		return err
	}
	p.lap(t, &p.stats.AggrSeconds)
	if a.mode == ModePost {
		return nil
	}
	back := dense.New(len(pl.recvPre), hf)
	if err := p.moveTargetRows(ps, true, gtPre, back, pl.sendPreOff, pl.recvPreOff, nil); err != nil {
		return err
	}
	for j, r := range pl.recvPre {
		dense.Axpy(1, back.Data[j*hf:(j+1)*hf], gt.Data[int(pl.recvDst[r])*hf:int(pl.recvDst[r]+1)*hf])
	}
	return nil
}

// moveTargetRows moves target rows (forward) or their gradients (backward)
// through the pass's codecs, on random streams of their own (the other
// rows of the pass use the pass's); done as transferRows takes it (nil:
// nothing runs beside).
func (p *Propagator) moveTargetRows(ps nn.Pass, backward bool, send, recv *dense.Matrix, sendOff, recvOff []int, done <-chan struct{}) error {
	codecs, stream := p.peerCodecs(ps, backward, p.att.sameNode)
	tr := &transfer{c: p.c, send: send, recv: recv, sendOff: sendOff, recvOff: recvOff, codecs: codecs,
		intra: p.att.sameNode, layer: ps.Layer, dir: "forward"}
	if backward {
		tr.dir = "backward"
	}
	if done == nil {
		closed := make(chan struct{})
		close(closed)
		done = closed
	}
	return p.transferRows(tr, ps, stream|4, done)
}

var _ nn.AttentionV2 = (*Propagator)(nil)
