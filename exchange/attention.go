package exchange

import (
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
	pl       *attnPlan
	mode     Mode
	kern     attn.RowsW
	sameNode []bool
	layers   map[int]*attnLayer
	sbuf     *dense.Matrix // send rows × Heads·Width
	scal     []float32     // send rows' scalars
	done     chan struct{} // closed: transfers run without a local product beside them
}

// attnLayer is what one layer's Attend keeps for its backward pass.
type attnLayer struct {
	sp               attn.Spec
	z, src, dst, out *dense.Matrix
	zext, sext       []float32  // owned rows, then received rows (Heads·Width and Heads wide)
	local, pre       attn.State // the owned rows' (merged) state, the pre rows' sent
	mloc             []float32  // the owned rows' max before merging
	preDst           []float32  // dst terms of the pre rows this rank computes
	recvMS           []float32  // max and sum of every received pre row
	gp, cd           []float32
	gzext, gsext     []float32
	gdstPre          []float32
}

// newAttention plans the attention operator of shard s (collective).
func newAttention(s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes) (*attnOp, error) {
	pl, err := buildAttnPlan(s, c, mode)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	close(done)
	return &attnOp{pl: pl, mode: mode, kern: e.RowsW(), sameNode: sameNodeRanks(nodes, c.Rank()),
		layers: map[int]*attnLayer{}, done: done}, nil
}

func (a *attnOp) layer(i int) *attnLayer {
	l := a.layers[i]
	if l == nil {
		l = &attnLayer{}
		a.layers[i] = l
	}
	return l
}

// Attend implements nn.Attention.
func (p *Propagator) Attend(ps nn.Pass, sp attn.Spec, z, src, dst, out *dense.Matrix) error {
	a := p.att
	if a == nil {
		return fmt.Errorf("exchange: attention on a %s operator", p.kind)
	}
	if err := nn.CheckAttend(p.n, sp, z, src, dst, out); err != nil {
		return err
	}
	pl, l := a.pl, a.layer(ps.Layer)
	n, h, hf := pl.n, sp.Heads, sp.Heads*sp.Width
	nRecv := len(pl.recvDst)
	l.sp, l.z, l.src, l.dst, l.out = sp, z, src, dst, out
	l.zext, l.sext = attn.Resize(l.zext, (n+nRecv)*hf), attn.Resize(l.sext, (n+nRecv)*h)
	copy(l.zext, z.Data)
	copy(l.sext, src.Data)
	clear(l.sext[n*h:])
	if p.c.Size() > 1 {
		if err := p.attendRemote(ps, l); err != nil {
			return fmt.Errorf("exchange: attention forward: %w", err)
		}
	}
	t := p.c.Wtime()
	if err := attn.Forward(pl.local, sp, l.zext, l.sext, dst.Data, pl.localIDs, a.kern, &l.local); err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	l.mloc = append(l.mloc[:0], l.local.M...)
	st := &l.local
	for j, r := range pl.recvPre {
		v, f := int(pl.recvDst[r]), sp.Width
		for hd := range h {
			row := l.zext[(n+int(r))*hf+hd*f : (n+int(r))*hf+(hd+1)*f]
			i := v*h + hd
			attn.Merge(&st.M[i], &st.S[i], st.R[i*f:(i+1)*f], l.recvMS[(j*h+hd)*2], l.recvMS[(j*h+hd)*2+1], row)
		}
	}
	attn.Finish(sp, st, out.Data)
	p.lap(t, &p.stats.AggrSeconds)
	p.stats.Forwards++
	return nil
}

// attendRemote runs the forward transfers: dst terms to the senders of pre
// rows, this rank's pre states, then the rows and their scalars, which land
// in l.zext, l.sext and l.recvMS.
func (p *Propagator) attendRemote(ps nn.Pass, l *attnLayer) error {
	a, pl, sp := p.att, p.att.pl, l.sp
	n, h, hf := pl.n, sp.Heads, sp.Heads*sp.Width
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
	nSend := len(pl.sendSrc)
	a.sbuf = dense.Reshape(a.sbuf, nSend, hf)
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
	recv := &dense.Matrix{Rows: len(pl.recvDst), Cols: hf, Data: l.zext[n*hf:]}
	if err := p.moveAttnRows(ps, false, a.sbuf, recv, pl.sendOff, pl.recvOff); err != nil {
		return err
	}
	scal := make([]float32, 0, len(pl.recvDst)*2*h)
	sc, rc := scalarCounts(pl.sendSrc, pl.sendOff, h, false), scalarCounts(pl.recvDst, pl.recvOff, h, true)
	scal = scal[:sum(rc)]
	if err := p.alltoallCounts(a.scal, sc, scal, rc); err != nil {
		return err
	}
	l.recvMS = attn.Resize(l.recvMS, len(pl.recvPre)*2*h)
	j, o := 0, 0
	for r, v := range pl.recvDst {
		if v < 0 {
			copy(l.sext[(n+r)*h:(n+r+1)*h], scal[o:o+h])
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

// AttendBackward implements nn.Attention.
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
	l.gp, l.cd = attn.Resize(l.gp, n*hf), attn.Resize(l.cd, n*h)
	attn.Scale(sp, nil, l.mloc, l.local.M, l.local.S, gout.Data, l.out.Data, l.gp, l.cd)
	l.gzext, l.gsext = attn.Resize(l.gzext, (n+nRecv)*hf), attn.Resize(l.gsext, (n+nRecv)*h)
	clear(l.gzext)
	clear(l.gsext)
	clear(gdst.Data)
	if err := attn.Backward(pl.local, sp, l.zext, l.sext, l.dst.Data, l.gp, l.cd, a.kern, &l.local, l.gzext, l.gsext, gdst.Data); err != nil {
		return fmt.Errorf("exchange: %w", err)
	}
	copy(gz.Data, l.gzext[:n*hf])
	copy(gsrc.Data, l.gsext[:n*h])
	p.lap(t, &p.stats.AggrSeconds)
	if p.c.Size() > 1 {
		if err := p.attendRemoteBackward(ps, l, gout, gz, gsrc, gdst); err != nil {
			return fmt.Errorf("exchange: attention backward: %w", err)
		}
	}
	l.z = nil
	p.stats.Backwards++
	return nil
}

// attendRemoteBackward returns the gradients of the received rows to their
// senders, runs the pre rows' backward there and returns the gradients of
// the dst terms to the owners.
func (p *Propagator) attendRemoteBackward(ps nn.Pass, l *attnLayer, gout, gz, gsrc, gdst *dense.Matrix) error {
	a, pl, sp := p.att, p.att.pl, l.sp
	n, h, f, hf := pl.n, sp.Heads, sp.Width, sp.Heads*sp.Width
	// Pre rows' gradients go where their (never read) columns' are.
	for j, r := range pl.recvPre {
		v := int(pl.recvDst[r])
		for hd := range h {
			i := v*h + hd
			c := attn.Share(l.recvMS[(j*h+hd)*2], l.local.M[i], l.local.S[i])
			g, o := gout.Data[i*f:(i+1)*f], l.out.Data[i*f:(i+1)*f]
			dst := l.gzext[(n+int(r))*hf+hd*f : (n+int(r))*hf+(hd+1)*f]
			var d float32
			for k, x := range g {
				dst[k] = x * c
				d += x * o[k]
			}
			l.gsext[(n+int(r))*h+hd] = d * c
		}
	}
	back := &dense.Matrix{Rows: len(pl.recvDst), Cols: hf, Data: l.gzext[n*hf:]}
	a.sbuf = dense.Reshape(a.sbuf, len(pl.sendSrc), hf)
	if err := p.moveAttnRows(ps, true, back, a.sbuf, pl.recvOff, pl.sendOff); err != nil {
		return err
	}
	a.scal = attn.Resize(a.scal, len(pl.sendSrc)*h)
	if err := p.alltoallF32(l.gsext[n*h:], pl.recvOff, h, a.scal, pl.sendOff, h); err != nil {
		return err
	}
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
	l.gdstPre = attn.Resize(l.gdstPre, nPre*h)
	clear(l.gdstPre)
	if err := attn.Backward(pl.pre, sp, l.z.Data, l.src.Data, l.preDst, gp, cd, a.kern, &l.pre, gz.Data, gsrc.Data, l.gdstPre); err != nil {
		return err
	}
	p.lap(t, &p.stats.AggrSeconds)
	if a.mode == ModePost {
		return nil
	}
	back2 := make([]float32, len(pl.recvPre)*h)
	if err := p.alltoallF32(l.gdstPre, pl.sendPreOff, h, back2, pl.recvPreOff, h); err != nil {
		return err
	}
	for j, r := range pl.recvPre {
		dense.Axpy(1, back2[j*h:(j+1)*h], gdst.Data[int(pl.recvDst[r])*h:int(pl.recvDst[r]+1)*h])
	}
	return nil
}

// moveAttnRows moves row blocks of Heads·Width columns through the pass's
// codecs (forward rows, or backward gradients).
func (p *Propagator) moveAttnRows(ps nn.Pass, backward bool, send, recv *dense.Matrix, sendOff, recvOff []int) error {
	codecs, stream := p.peerCodecs(ps, backward, p.att.sameNode)
	tr := &transfer{c: p.c, send: send, recv: recv, sendOff: sendOff, recvOff: recvOff, codecs: codecs,
		intra: p.att.sameNode, layer: ps.Layer, dir: "forward"}
	if backward {
		tr.dir = "backward"
	}
	return p.transferRows(tr, ps, stream, p.att.done)
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
