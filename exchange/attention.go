package exchange

import (
	"errors"
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// attnOp is the distributed attention operator (nn.Attention) of a
// Propagator of kind nn.OpAttention, over the attnPlan's pairs:
//
//   - a post row carries a source's projected row z[u] (through the pass's
//     codec) and its per-head source terms src[u] (float32); the owner
//     aggregates it like a local source;
//   - a pre row is a partial softmax state: the owner first sends the
//     sender its destination's per-head terms dst[v] (float32), the sender
//     aggregates its sources of v into (max, sum of exponentials, weighted
//     row sum) and ships the row sum (codec) and the max and sum (float32);
//     the owner merges it exactly (attn.Merge).
//
// Backward is the adjoint: the owner returns, per post row, the gradient of
// z[u] and src[u], and per pre row the output gradient scaled by the
// state's share of the softmax with the scalar ⟨g, o⟩ times that share; the
// sender of a pre row returns the gradient of dst[v] (float32).
type attnOp struct {
	pl        *attnPlan
	mode      Mode
	kern      attn.RowsW
	sameNode  []bool
	layers    map[int]*attnLayer
	v2        map[int]*attnLayerV2 // GATv2 layers (attention_v2.go)
	sbuf      *dense.Matrix        // send rows × Heads·Width
	scal      []float32            // send rows' scalars
	scratch   attn.Scratch         // the backward kernels' temporaries (one runs at a time)
	scratchV2 attn.ScratchV2       // GATv2's (one runs at a time)
	grads     attnGrads
}

// attnLayer is what one layer's Attend keeps for its backward pass.
type attnLayer struct {
	sp               attn.Spec
	z, src, dst, out *dense.Matrix
	zh, sh           []float32  // received rows and their source terms (post rows), Heads·Width and Heads wide
	own, halo, pre   attn.State // owned graph (merged state after Attend), halo graph, pre rows sent
	preDst           []float32  // dst terms of the pre rows this rank computes
	recvMS           []float32  // max and sum of every received pre row
}

// attnGrads are the backward pass's temporaries, shared by the layers (one
// backward runs at a time): the scaled output gradients of the owned and
// halo states, the received rows' gradients, the pre rows' dst gradients.
type attnGrads struct {
	gp, cd, gph, cdh []float32
	gzh, gsh         []float32
	gdstPre          []float32
}

// newAttention plans the attention operator of shard s (collective).
func newAttention(s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes, split func(*partition.Shard, Mode) ([]PairSplit, error)) (*attnOp, error) {
	pl, err := buildAttnPlan(s, c, mode, split)
	if err != nil {
		return nil, err
	}
	return &attnOp{pl: pl, mode: mode, kern: e.RowsW(), sameNode: sameNodeRanks(nodes, c.Rank()),
		layers: map[int]*attnLayer{}, v2: map[int]*attnLayerV2{}}, nil
}

func (a *attnOp) layer(i int) *attnLayer {
	l := a.layers[i]
	if l == nil {
		l = &attnLayer{}
		a.layers[i] = l
	}
	return l
}

// Attend implements nn.Attention. The owned graph's state is computed
// while the rows travel; the halo graph's (post rows) and the received
// partial states (pre rows) are merged into it after.
func (p *Propagator) Attend(ps nn.Pass, sp attn.Spec, z, src, dst, out *dense.Matrix) error {
	a := p.att
	if a == nil {
		return fmt.Errorf("exchange: attention on a %s operator", p.kind)
	}
	if err := nn.CheckAttend(p.n, sp, z, src, dst, out); err != nil {
		return err
	}
	pl, l := a.pl, a.layer(ps.Layer)
	h, f := sp.Heads, sp.Width
	nRecv := len(pl.recvDst)
	l.sp, l.z, l.src, l.dst, l.out = sp, z, src, dst, out
	l.zh, l.sh = attn.Resize(l.zh, nRecv*h*f), attn.Resize(l.sh, nRecv*h)
	clear(l.sh)
	t := p.c.Wtime()
	var errOwn error
	own := func() { errOwn = attn.Forward(pl.own, sp, z.Data, src.Data, dst.Data, pl.ownIDs, a.kern, &l.own) }
	if p.c.Size() > 1 {
		p.lap(t, &p.stats.AggrSeconds)
		if err := p.overlap(own, func(done <-chan struct{}) error { return p.attendRemote(ps, l, done) }); err != nil {
			return fmt.Errorf("exchange: attention forward: %w", err)
		}
		t = p.c.Wtime()
	} else {
		own()
	}
	err := errors.Join(errOwn, attn.Forward(pl.halo, sp, l.zh, l.sh, dst.Data, pl.haloIDs, a.kern, &l.halo))
	if err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	mergeStates(pl, sp, &l.own, &l.halo, l.zh, l.recvMS)
	attn.Finish(sp, &l.own, out.Data)
	p.lap(t, &p.stats.AggrSeconds)
	p.stats.Forwards++
	return nil
}

// attendRemote runs the forward transfers (done closes when the owned
// graph's state is computed): dst terms to the senders of pre rows, this
// rank's pre states, then the rows and their scalars, which land in l.zh,
// l.sh and l.recvMS.
func (p *Propagator) attendRemote(ps nn.Pass, l *attnLayer, done <-chan struct{}) error {
	a, pl, sp := p.att, p.att.pl, l.sp
	h, hf := sp.Heads, sp.Heads*sp.Width
	l.preDst = attn.Resize(l.preDst, pl.pre.Rows*h)
	if a.mode != ModePost {
		terms := make([]float32, len(pl.recvPre)*h)
		for j, r := range pl.recvPre {
			copy(terms[j*h:(j+1)*h], l.dst.Data[int(pl.recvDst[r])*h:])
		}
		if err := p.alltoallF32(terms, pl.recvPreOff, h, l.preDst, pl.sendPreOff, h); err != nil {
			return err
		}
	}
	t := p.c.Wtime()
	if err := attn.Forward(pl.pre, sp, l.z.Data, l.src.Data, l.preDst, pl.preIDs, a.kern, &l.pre); err != nil {
		return err
	}
	a.sbuf = dense.Reshape(a.sbuf, len(pl.sendSrc), hf)
	a.scal = a.scal[:0]
	j := 0
	for i, u := range pl.sendSrc {
		row := a.sbuf.Data[i*hf : (i+1)*hf]
		if u >= 0 {
			copy(row, l.z.Data[int(u)*hf:])
			a.scal = append(a.scal, l.src.Data[int(u)*h:int(u+1)*h]...)
			continue
		}
		copy(row, l.pre.R[j*hf:])
		for hd := range h {
			a.scal = append(a.scal, l.pre.M[j*h+hd], l.pre.S[j*h+hd])
		}
		j++
	}
	p.lap(t, &p.stats.AggrSeconds)
	recv := &dense.Matrix{Rows: len(pl.recvDst), Cols: hf, Data: l.zh}
	if err := p.moveAttnRows(ps, false, a.sbuf, recv, pl.sendOff, pl.recvOff, done); err != nil {
		return err
	}
	sc, rc := scalarCounts(pl.sendSrc, pl.sendOff, h, false), scalarCounts(pl.recvDst, pl.recvOff, h, true)
	scal := make([]float32, sum(rc))
	if err := p.alltoallCounts(a.scal, sc, scal, rc); err != nil {
		return err
	}
	l.recvMS = attn.Resize(l.recvMS, len(pl.recvPre)*2*h)
	j, o := 0, 0
	for r, v := range pl.recvDst {
		if v < 0 {
			copy(l.sh[r*h:(r+1)*h], scal[o:o+h])
			o += h
			continue
		}
		copy(l.recvMS[j*2*h:(j+1)*2*h], scal[o:o+2*h])
		o += 2 * h
		j++
	}
	return nil
}

// scalarCounts is the float32 count per peer of the forward scalars of a
// row block (post rows: Heads source terms; pre rows: max and sum per
// head). Pre rows are those whose kind is ≥ 0 when preNonNeg (received
// rows: their destination), < 0 otherwise (sent rows: no post source).
func scalarCounts(kind []int32, off []int, h int, preNonNeg bool) []int {
	c := make([]int, len(off)-1)
	for q := range c {
		for _, k := range kind[off[q]:off[q+1]] {
			if pre := (k >= 0) == preNonNeg; pre {
				c[q] += 2 * h
			} else {
				c[q] += h
			}
		}
	}
	return c
}

// AttendBackward implements nn.Attention. The halo graph's backward runs
// first (its gradients travel back), the owned graph's while they travel,
// the senders' part after.
func (p *Propagator) AttendBackward(ps nn.Pass, gout, gz, gsrc, gdst *dense.Matrix) error {
	a := p.att
	if a == nil {
		return fmt.Errorf("exchange: attention on a %s operator", p.kind)
	}
	l := a.layers[ps.Layer]
	if l == nil || l.z == nil {
		return fmt.Errorf("exchange: attention backward of layer %d without its forward", ps.Layer)
	}
	if err := nn.CheckAttendGrad(l.z, l.src, gout, gz, gsrc, gdst); err != nil {
		return err
	}
	pl, sp := a.pl, l.sp
	n, h, hf := pl.n, sp.Heads, sp.Heads*sp.Width
	nRecv := len(pl.recvDst)
	t := p.c.Wtime()
	a.grads.gp, a.grads.cd = attn.Resize(a.grads.gp, n*hf), attn.Resize(a.grads.cd, n*h)
	a.grads.gph, a.grads.cdh = attn.Resize(a.grads.gph, n*hf), attn.Resize(a.grads.cdh, n*h)
	// The owned state was merged in place: its backward recomputes the
	// probabilities against the merged max, whose share is 1/S.
	attn.Scale(sp, nil, l.own.M, l.own.M, l.own.S, gout.Data, l.out.Data, a.grads.gp, a.grads.cd)
	attn.Scale(sp, nil, l.halo.M, l.own.M, l.own.S, gout.Data, l.out.Data, a.grads.gph, a.grads.cdh)
	a.grads.gzh, a.grads.gsh = attn.Resize(a.grads.gzh, nRecv*hf), attn.Resize(a.grads.gsh, nRecv*h)
	clear(a.grads.gzh)
	clear(a.grads.gsh)
	clear(gz.Data)
	clear(gsrc.Data)
	clear(gdst.Data)
	if err := attn.Backward(pl.halo, sp, l.zh, l.sh, l.dst.Data, a.grads.gph, a.grads.cdh, a.kern, &l.halo, &a.scratch, a.grads.gzh, a.grads.gsh, gdst.Data); err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	var errOwn error
	own := func() {
		errOwn = attn.Backward(pl.own, sp, l.z.Data, l.src.Data, l.dst.Data, a.grads.gp, a.grads.cd, a.kern, &l.own, &a.scratch, gz.Data, gsrc.Data, gdst.Data)
	}
	if p.c.Size() > 1 {
		p.preGradients(l, gout)
		p.lap(t, &p.stats.AggrSeconds)
		if err := p.overlap(own, func(done <-chan struct{}) error { return p.moveAttnGradients(ps, l, done) }); err != nil {
			return fmt.Errorf("exchange: attention backward: %w", err)
		}
		if errOwn == nil {
			errOwn = p.senderBackward(l, gz, gsrc, gdst)
		}
	} else {
		own()
		p.lap(t, &p.stats.AggrSeconds)
	}
	if errOwn != nil {
		return fmt.Errorf("exchange: attention backward: %w", errOwn)
	}
	l.z = nil
	p.stats.Backwards++
	return nil
}

// preGradients writes every received pre row's gradient where its (never
// read) halo column's is: the output gradient scaled by the row's share of
// the softmax, and that share times ⟨g, o⟩ per head.
func (p *Propagator) preGradients(l *attnLayer, gout *dense.Matrix) {
	a, pl, sp := p.att, p.att.pl, l.sp
	h, f := sp.Heads, sp.Width
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
			a.grads.gsh[int(r)*h+hd] = d * c
		}
	}
}

// moveAttnGradients returns the received rows' gradients to their senders
// (rows through the backward codec, a float32 scalar a head).
func (p *Propagator) moveAttnGradients(ps nn.Pass, l *attnLayer, done <-chan struct{}) error {
	a, pl := p.att, p.att.pl
	h, hf := l.sp.Heads, l.sp.Heads*l.sp.Width
	back := &dense.Matrix{Rows: len(pl.recvDst), Cols: hf, Data: a.grads.gzh}
	a.sbuf = dense.Reshape(a.sbuf, len(pl.sendSrc), hf)
	if err := p.moveAttnRows(ps, true, back, a.sbuf, pl.recvOff, pl.sendOff, done); err != nil {
		return err
	}
	a.scal = attn.Resize(a.scal, len(pl.sendSrc)*h)
	return p.alltoallF32(a.grads.gsh, pl.recvOff, h, a.scal, pl.sendOff, h)
}

// senderBackward adds the returned gradients of this rank's post rows, runs
// the backward pass of its pre rows and returns their destination terms'
// gradients to the owners.
func (p *Propagator) senderBackward(l *attnLayer, gz, gsrc, gdst *dense.Matrix) error {
	a, pl, sp := p.att, p.att.pl, l.sp
	h, hf := sp.Heads, sp.Heads*sp.Width
	t := p.c.Wtime()
	nPre := pl.pre.Rows
	gp, cd := make([]float32, nPre*hf), make([]float32, nPre*h)
	j := 0
	for i, u := range pl.sendSrc {
		if u >= 0 {
			dense.Axpy(1, a.sbuf.Data[i*hf:(i+1)*hf], gz.Data[int(u)*hf:int(u+1)*hf])
			dense.Axpy(1, a.scal[i*h:(i+1)*h], gsrc.Data[int(u)*h:int(u+1)*h])
			continue
		}
		copy(gp[j*hf:(j+1)*hf], a.sbuf.Data[i*hf:])
		copy(cd[j*h:(j+1)*h], a.scal[i*h:])
		j++
	}
	a.grads.gdstPre = attn.Resize(a.grads.gdstPre, nPre*h)
	clear(a.grads.gdstPre)
	if err := attn.Backward(pl.pre, sp, l.z.Data, l.src.Data, l.preDst, gp, cd, a.kern, &l.pre, &a.scratch, gz.Data, gsrc.Data, a.grads.gdstPre); err != nil {
		return err
	}
	p.lap(t, &p.stats.AggrSeconds)
	if a.mode == ModePost {
		return nil
	}
	back := make([]float32, len(pl.recvPre)*h)
	if err := p.alltoallF32(a.grads.gdstPre, pl.sendPreOff, h, back, pl.recvPreOff, h); err != nil {
		return err
	}
	for j, r := range pl.recvPre {
		dense.Axpy(1, back[j*h:(j+1)*h], gdst.Data[int(pl.recvDst[r])*h:int(pl.recvDst[r]+1)*h])
	}
	return nil
}

// moveAttnRows moves row blocks of Heads·Width columns through the pass's
// codecs (forward rows, or backward gradients).
func (p *Propagator) moveAttnRows(ps nn.Pass, backward bool, send, recv *dense.Matrix, sendOff, recvOff []int, done <-chan struct{}) error {
	codecs, stream := p.peerCodecs(ps, backward, p.att.sameNode)
	tr := &transfer{c: p.c, send: send, recv: recv, sendOff: sendOff, recvOff: recvOff, codecs: codecs,
		intra: p.att.sameNode, layer: ps.Layer, dir: "forward"}
	if backward {
		tr.dir = "backward"
	}
	return p.transferRows(tr, ps, stream, done)
}

// alltoallF32 sends float32 blocks of w values per row, rows per peer as
// the offsets say (sendOff for send, recvOff for recv).
func (p *Propagator) alltoallF32(send []float32, sendOff []int, sw int, recv []float32, recvOff []int, rw int) error {
	sc, _ := blockLayout(sendOff, sw)
	rc, _ := blockLayout(recvOff, rw)
	return p.alltoallCounts(send, sc, recv, rc)
}

// alltoallCounts is one float32 all-to-all of consecutive blocks of the
// given counts, its bytes counted as data (IntraBytes for ranks of this
// rank's node).
func (p *Propagator) alltoallCounts(send []float32, sc []int, recv []float32, rc []int) error {
	t := p.c.Wtime()
	sd, rd := displs(sc), displs(rc)
	req, err := p.c.IalltoallvF32(send, sc, sd, recv, rc, rd)
	if err == nil {
		err = req.Wait()
	}
	if err != nil {
		return fmt.Errorf("all-to-all: %w", err)
	}
	for q, c := range sc {
		if q == p.c.Rank() {
			continue
		}
		p.stats.DataBytes += 4 * int64(c)
		p.stats.CommBytes += 4 * int64(c)
		if p.att.sameNode[q] {
			p.stats.IntraBytes += 4 * int64(c)
		}
	}
	p.lap(t, &p.stats.CommSeconds)
	return nil
}

func displs(c []int) []int {
	d := make([]int, len(c))
	for q := 1; q < len(c); q++ {
		d[q] = d[q-1] + c[q-1]
	}
	return d
}

func sum(c []int) int {
	s := 0
	for _, x := range c {
		s += x
	}
	return s
}

var _ nn.Attention = (*Propagator)(nil)

// mergeStates folds the halo state hs and the received pre-aggregated
// states (rows in zh, max and sum pairs in recvMS, one per pre row and
// head) into the owned state st: the online softmax of every target
// over all its in-edges, local and remote.
func mergeStates(pl *attnPlan, sp attn.Spec, st, hs *attn.State, zh, recvMS []float32) {
	h, f := sp.Heads, sp.Width
	for i := range st.M {
		attn.Merge(&st.M[i], &st.S[i], st.R[i*f:(i+1)*f], hs.M[i], hs.S[i], hs.R[i*f:(i+1)*f])
	}
	for j, r := range pl.recvPre {
		v := int(pl.recvDst[r])
		for hd := range h {
			i := v*h + hd
			row := zh[(int(r)*h+hd)*f : (int(r)*h+hd+1)*f]
			attn.Merge(&st.M[i], &st.S[i], st.R[i*f:(i+1)*f], recvMS[(j*h+hd)*2], recvMS[(j*h+hd)*2+1], row)
		}
	}
}
