package exchange

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
)

// RowCodec turns a block of float32 rows into bytes for the wire and back.
// It is the seam for quantized exchange: an int2/int4/int8 stochastic
// quantizer is one more RowCodec, chosen through Options.Codec.
//
// Blocks are per peer: the exchange encodes each peer's rows separately, so
// a codec may keep per-block or per-row parameters (scales, zero points).
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

// Encode implements RowCodec.
func (FP32) Encode(dst []byte, src []float32, rows, width int, _ uint64) {
	for i, f := range src[:rows*width] {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
	}
}

// Decode implements RowCodec.
func (FP32) Decode(dst []float32, src []byte, rows, width int) error {
	n := rows * width
	if len(src) != 4*n || len(dst) < n {
		return fmt.Errorf("exchange: fp32 decode: %d bytes for %d×%d values", len(src), rows, width)
	}
	for i := range dst[:n] {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
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
	layer            int    // nn.Pass.Layer, for errors
	dir              string // "forward" or "backward", for errors
}

// NonFiniteError reports NaN or infinite values in the boundary rows a rank
// was about to quantise: a diverged model (integer codes cannot carry them).
type NonFiniteError struct {
	Rank, Layer int    // Layer is nn.Pass.Layer (0-based)
	Dir         string // "forward" or "backward"
	Count       int64
	Codec       string
}

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("exchange: %d non-finite values in the rows rank %d sends in the %s pass of layer %d (%s)",
		e.Count, e.Rank, e.Dir, e.Layer+1, e.Codec)
}

// sentBytes is the traffic a transfer puts on the wire from this rank.
type sentBytes struct{ data, param int64 }

// startF32 sends the rows as float32 (no codec, no copy).
func (t *transfer) startF32() (comm.Request, sentBytes, error) {
	w := t.send.Cols
	sc, sd := blockLayout(t.sendOff, w)
	rc, rd := blockLayout(t.recvOff, w)
	req, err := t.c.IalltoallvF32(t.send.Data, sc, sd, t.recv.Data, rc, rd)
	return req, sentBytes{data: 4 * t.remoteRows() * int64(w)}, err
}

// startCodec encodes every peer's block with codec into buf, sends bytes,
// and returns a request whose Wait decodes into t.recv.
func (t *transfer) startCodec(codec RowCodec, seed func(peer int) uint64, sendBuf, recvBuf *[]byte) (comm.Request, sentBytes, error) {
	p := len(t.sendOff) - 1
	w := t.send.Cols
	sc, sd, sent := make([]int, p), make([]int, p), sentBytes{}
	for q := 0; q < p; q++ {
		data, param := codec.Size(t.sendOff[q+1]-t.sendOff[q], w)
		sc[q] = data + param
		if q > 0 {
			sd[q] = sd[q-1] + sc[q-1]
		}
		if q != t.c.Rank() {
			sent.data += int64(data)
			sent.param += int64(param)
		}
	}
	rc, rd := make([]int, p), make([]int, p)
	for q := 0; q < p; q++ {
		data, param := codec.Size(t.recvOff[q+1]-t.recvOff[q], w)
		rc[q] = data + param
		if q > 0 {
			rd[q] = rd[q-1] + rc[q-1]
		}
	}
	*sendBuf = grow(*sendBuf, sd[p-1]+sc[p-1])
	*recvBuf = grow(*recvBuf, rd[p-1]+rc[p-1])
	nf, counts := codec.(nonFiniteCounter)
	var nf0 int64
	if counts {
		nf0 = nf.NonFinite()
	}
	for q := 0; q < p; q++ {
		rows := t.send.Data[t.sendOff[q]*w : t.sendOff[q+1]*w]
		codec.Encode((*sendBuf)[sd[q]:sd[q]+sc[q]], rows, t.sendOff[q+1]-t.sendOff[q], w, seed(q))
	}
	var encErr error
	if counts {
		if n := nf.NonFinite() - nf0; n > 0 {
			encErr = &NonFiniteError{Rank: t.c.Rank(), Layer: t.layer, Dir: t.dir, Count: n, Codec: codec.Name()}
		}
	}
	req, err := t.c.IalltoallvBytes(*sendBuf, sc, sd, *recvBuf, rc, rd)
	if err != nil {
		return nil, sent, err
	}
	return &decodeRequest{req: req, t: t, codec: codec, buf: *recvBuf, counts: rc, displs: rd, encErr: encErr}, sent, nil
}

// nonFiniteCounter is implemented by codecs that count the NaN/Inf values
// they encode (quant.Codec); the exchange turns new ones into an error.
type nonFiniteCounter interface{ NonFinite() int64 }

// remoteRows counts the rows this rank sends to other ranks.
func (t *transfer) remoteRows() int64 {
	me := t.c.Rank()
	return int64(t.sendOff[len(t.sendOff)-1] - (t.sendOff[me+1] - t.sendOff[me]))
}

// decodeRequest completes a codec transfer: wait, then decode every block.
type decodeRequest struct {
	req            comm.Request
	t              *transfer
	codec          RowCodec
	buf            []byte
	counts, displs []int
	encErr         error // reported once the collective has completed
}

// Test drives the underlying transfer when it can be polled (comm.Tester);
// decoding still happens in Wait.
func (d *decodeRequest) Test() (bool, error) {
	if t, ok := d.req.(comm.Tester); ok {
		return t.Test()
	}
	return false, nil
}

func (d *decodeRequest) Wait() error {
	if err := d.req.Wait(); err != nil {
		return err
	}
	if d.encErr != nil {
		return d.encErr
	}
	w := d.t.recv.Cols
	for q := range d.counts {
		lo, hi := d.t.recvOff[q], d.t.recvOff[q+1]
		src := d.buf[d.displs[q] : d.displs[q]+d.counts[q]]
		if err := d.codec.Decode(d.t.recv.Data[lo*w:hi*w], src, hi-lo, w); err != nil {
			return fmt.Errorf("exchange: block from rank %d: %w", q, err)
		}
	}
	return nil
}

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
