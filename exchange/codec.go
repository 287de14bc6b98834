package exchange

import (
	"fmt"
	"slices"
	"sync"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/par"
)

// RowCodec turns a block of float32 rows into bytes for the wire and back.
// It is the seam for quantized exchange: an int2/int4/int8 stochastic
// quantizer is one more RowCodec, chosen through Options.Codec.
//
// Blocks are per peer: the exchange encodes each peer's rows separately, so
// a codec may keep per-block or per-row parameters (scales, zero points).
// The peers' blocks are encoded, and decoded, concurrently: a codec's Encode
// and Decode must be safe to call from several goroutines at once.
type RowCodec interface {
	// Name identifies the codec in logs ("fp32", "int8", ...).
	Name() string
	// Size returns the encoded size of rows×width values, split into the
	// bytes of the values themselves and of the codec's parameters.
	Size(rows, width int) (data, param int)
	// Encode writes the encoding of src (rows×width, row-major) into dst,
	// whose length is data+param from Size. seed selects the random stream
	// of a stochastic codec (distinct per pass, layer, rank, peer, direction).
	Encode(dst []byte, src []float32, rows, width int, seed uint64)
	// Decode writes the rows×width values encoded in src into dst.
	Decode(dst []float32, src []byte, rows, width int) error
}

// FP32 is the lossless codec: little-endian IEEE float32, no parameters.
// The exchange sends fp32 rows without any codec (IalltoallvF32 on the rows
// themselves); FP32 exists for the byte path and as the codec reference.
type FP32 struct{}

// Name implements RowCodec.
func (FP32) Name() string { return "fp32" }

// Size implements RowCodec.
func (FP32) Size(rows, width int) (data, param int) { return 4 * rows * width, 0 }

// Encode implements RowCodec: one copy of the rows' memory, which on a
// little-endian host already is the wire format (swapped elsewhere).
func (FP32) Encode(dst []byte, src []float32, rows, width int, _ uint64) {
	b := dst[:4*rows*width]
	copy(b, container.AsBytes(src[:rows*width]))
	if !container.HostLE {
		container.SwapBytes(b, 4)
	}
}

// Decode implements RowCodec.
func (FP32) Decode(dst []float32, src []byte, rows, width int) error {
	n := rows * width
	if len(src) != 4*n || len(dst) < n {
		return fmt.Errorf("exchange: fp32 decode: %d bytes for %d×%d values", len(src), rows, width)
	}
	raw := container.AsBytes(dst[:n])
	copy(raw, src)
	if !container.HostLE {
		container.SwapBytes(raw, 4)
	}
	return nil
}

// transfer is one all-to-all of row blocks: send rows [sendOff[q],
// sendOff[q+1]) go to peer q, and peer q's rows land in recv rows
// [recvOff[q], recvOff[q+1]).
type transfer struct {
	c                comm.Comm
	send, recv       *dense.Matrix
	sendOff, recvOff []int
	codecs           []RowCodec // per peer (nil: float32); a nil slice: float32 rows for every peer
	intra            []bool     // per peer: on this rank's node (its bytes count as IntraBytes); nil: none
	// shared: some node of the communicator has several ranks, the same
	// on every rank; a coded transfer may then be split
	shared bool
	layer  int    // nn.Pass.Layer, for errors
	dir    string // "forward" or "backward", for errors
}

// NonFiniteError reports NaN or infinite values in the boundary rows a rank
// was about to quantise: a diverged model (integer codes cannot carry them).
type NonFiniteError struct {
	Rank, Layer int    // Layer is nn.Pass.Layer (0-based; -1: rows of MoveRows)
	Dir         string // "forward" or "backward"; for MoveRows its rows and direction
	Count       int64
	Codec       string
}

func (e *NonFiniteError) Error() string {
	if e.Layer == rowsLayer {
		return fmt.Sprintf("exchange: %d non-finite values in the %s rank %d sends (%s)", e.Count, e.Dir, e.Rank, e.Codec)
	}
	return fmt.Sprintf("exchange: %d non-finite values in the rows rank %d sends in the %s pass of layer %d (%s)",
		e.Count, e.Rank, e.Dir, e.Layer+1, e.Codec)
}

// sentBytes is the traffic a transfer puts on the wire from this rank;
// intra is the part of data+param sent to ranks of this rank's node.
type sentBytes struct{ data, param, intra int64 }

// add counts data and param bytes sent to peer q.
func (s *sentBytes) add(t *transfer, q int, data, param int64) {
	if q == t.c.Rank() {
		return
	}
	s.data += data
	s.param += param
	if t.intra != nil && t.intra[q] {
		s.intra += data + param
	}
}

// coded reports whether some peer's rows go through a codec.
func (t *transfer) coded() bool {
	for _, c := range t.codecs {
		if c != nil {
			return true
		}
	}
	return false
}

// split reports whether a coded transfer moves its float32 peers' rows
// apart from the coded ones: straight from the rows into the receive rows
// in an all-to-all of their own (startF32), posted before the codec runs,
// while encode and decode take only the coded peers. Every rank decides
// alike, as the collectives require: some node has several ranks
// (shared, from the node layout every rank knows), and a rank's own block
// is float32 exactly when rows between ranks of a node travel in float32
// (the Intra role has no codec), a setting all ranks share. With one rank
// a node there is nothing to split off but the rank's own empty block.
func (t *transfer) split() bool {
	r := t.c.Rank()
	return t.shared && r < len(t.codecs) && t.codecs[r] == nil && t.coded()
}

// codecOf returns peer q's codec: FP32 for float32 rows on the byte path.
func (t *transfer) codecOf(q int) RowCodec {
	if c := t.codecs[q]; c != nil {
		return c
	}
	return FP32{}
}

// startF32 sends the rows as float32 (no codec, no copy): every peer's, or
// with a codec (split) the float32 peers' only.
func (t *transfer) startF32() (comm.Request, sentBytes, error) {
	w := t.send.Cols
	sc, sd := blockLayout(t.sendOff, w)
	rc, rd := blockLayout(t.recvOff, w)
	if t.coded() {
		for q := range sc {
			if t.codecs[q] != nil {
				sc[q], rc[q] = 0, 0
			}
		}
	}
	req, err := t.c.IalltoallvF32(t.send.Data, sc, sd, t.recv.Data, rc, rd)
	var sent sentBytes
	for q := range sc {
		sent.add(t, q, 4*int64(sc[q]), 0)
	}
	return req, sent, err
}

// encoded is a transfer's send blocks encoded by a codec, with the byte
// layouts of both sides.
type encoded struct {
	send, recv     []byte
	sc, sd, rc, rd []int
	err            *NonFiniteError // non-finite inputs, reported once the collective has completed
}

// encode writes every peer's block of t.send through its codec into
// *sendBuf and sizes *recvBuf for the blocks to come; a split transfer's
// float32 peers have empty blocks (their rows travel apart).
func (t *transfer) encode(seed func(peer int) uint64, sendBuf, recvBuf *[]byte) (*encoded, sentBytes) {
	p := len(t.sendOff) - 1
	w := t.send.Cols
	e := &encoded{sc: make([]int, p), sd: make([]int, p), rc: make([]int, p), rd: make([]int, p)}
	var sent sentBytes
	sp := t.split()
	for q := 0; q < p; q++ {
		if q > 0 {
			e.sd[q] = e.sd[q-1] + e.sc[q-1]
			e.rd[q] = e.rd[q-1] + e.rc[q-1]
		}
		if sp && t.codecs[q] == nil {
			continue
		}
		codec := t.codecOf(q)
		data, param := codec.Size(t.sendOff[q+1]-t.sendOff[q], w)
		e.sc[q] = data + param
		sent.add(t, q, int64(data), int64(param))
		data, param = codec.Size(t.recvOff[q+1]-t.recvOff[q], w)
		e.rc[q] = data + param
	}
	*sendBuf = grow(*sendBuf, e.sd[p-1]+e.sc[p-1])
	*recvBuf = grow(*recvBuf, e.rd[p-1]+e.rc[p-1])
	e.send, e.recv = *sendBuf, *recvBuf
	counts := t.counters()
	par.Blocks(p, 0, func(q int) {
		if sp && t.codecs[q] == nil {
			return
		}
		rows := t.send.Data[t.sendOff[q]*w : t.sendOff[q+1]*w]
		t.codecOf(q).Encode(e.send[e.sd[q]:e.sd[q]+e.sc[q]], rows, t.sendOff[q+1]-t.sendOff[q], w, seed(q))
	})
	for _, c := range counts {
		if n := c.NonFinite() - c.before; n > 0 && e.err == nil {
			e.err = &NonFiniteError{Rank: t.c.Rank(), Layer: t.layer, Dir: t.dir, Count: n, Codec: c.name}
		} else if n > 0 {
			e.err.Count += n
		}
	}
	return e, sent
}

// counted is a codec that counts the non-finite values it encodes, with its
// count before a transfer's encoding.
type counted struct {
	nonFiniteCounter
	name   string
	before int64
}

// counters returns the distinct counting codecs of t's peers.
func (t *transfer) counters() []counted {
	var cs []counted
	for _, c := range t.codecs {
		nf, ok := c.(nonFiniteCounter)
		if ok && !slices.ContainsFunc(cs, func(x counted) bool { return x.nonFiniteCounter == nf }) {
			cs = append(cs, counted{nf, c.Name(), nf.NonFinite()})
		}
	}
	return cs
}

// startBytes posts the all-to-all of encoded blocks.
func (t *transfer) startBytes(e *encoded) (comm.Request, error) {
	return t.c.IalltoallvBytes(e.send, e.sc, e.sd, e.recv, e.rc, e.rd)
}

// decode writes the received blocks into t.recv (after the all-to-all has
// completed), or reports the non-finite values met when encoding.
func (t *transfer) decode(e *encoded) error {
	if e.err != nil {
		return e.err
	}
	w := t.recv.Cols
	var mu sync.Mutex
	sp := t.split()
	bad, first := len(e.rc), error(nil) // the lowest peer whose block failed
	par.Blocks(len(e.rc), 0, func(q int) {
		if sp && t.codecs[q] == nil {
			return // landed in t.recv through startF32
		}
		lo, hi := t.recvOff[q], t.recvOff[q+1]
		if err := t.codecOf(q).Decode(t.recv.Data[lo*w:hi*w], e.recv[e.rd[q]:e.rd[q]+e.rc[q]], hi-lo, w); err != nil {
			mu.Lock()
			if q < bad {
				bad, first = q, err
			}
			mu.Unlock()
		}
	})
	if first != nil {
		return fmt.Errorf("exchange: block from rank %d: %w", bad, first)
	}
	return nil
}

// nonFiniteCounter is implemented by codecs that count the NaN/Inf values
// they encode (quant.Codec); the exchange turns new ones into an error.
type nonFiniteCounter interface{ NonFinite() int64 }

// blockLayout turns row offsets per peer into element counts/displacements.
func blockLayout(off []int, width int) (counts, displs []int) {
	p := len(off) - 1
	counts, displs = make([]int, p), make([]int, p)
	for q := 0; q < p; q++ {
		counts[q] = (off[q+1] - off[q]) * width
		displs[q] = off[q] * width
	}
	return counts, displs
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
