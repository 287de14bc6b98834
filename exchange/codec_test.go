package exchange

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/quant"
)

// fp32Reference is the wire format FP32 must produce: each value's IEEE bits,
// little-endian, in row-major order.
func fp32Reference(src []float32) []byte {
	b := make([]byte, 4*len(src))
	for i, f := range src {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// fp32Values holds every kind of value the copy must keep bit for bit:
// signed zeros, subnormals, infinities, quiet and signalling NaNs with payloads.
func fp32Values(n int, rng *rand.Rand) []float32 {
	special := []uint32{0, 0x80000000, 1, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00001, 0x7fa00000, 0xffbfffff, 0x3f800000}
	v := make([]float32, n)
	for i := range v {
		if i < len(special) {
			v[i] = math.Float32frombits(special[i])
		} else {
			v[i] = math.Float32frombits(rng.Uint32())
		}
	}
	return v
}

// TestFP32CodecIsTheWireFormat: encode and decode round-trip every bit
// pattern through the little-endian wire format, for odd shapes, empty
// blocks and misaligned buffers, and touch nothing outside their blocks.
func TestFP32CodecIsTheWireFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const pad, sentinel = 13, 0xA5
	for _, shape := range [][2]int{{0, 0}, {0, 7}, {1, 1}, {3, 5}, {7, 3}, {129, 128}, {33, 100}} {
		for _, off := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%dx%d+%d", shape[0], shape[1], off), func(t *testing.T) {
				rows, width := shape[0], shape[1]
				n := rows * width
				src := fp32Values(n+off, rng)[off:]
				buf := make([]byte, off+4*n+pad)
				for i := range buf {
					buf[i] = sentinel
				}
				dst := buf[off : off+4*n]
				FP32{}.Encode(dst, src, rows, width, 0)
				if want := fp32Reference(src[:n]); string(dst) != string(want) {
					t.Fatalf("encoded bytes differ from the little-endian wire format")
				}
				for i, b := range buf {
					if (i < off || i >= off+4*n) && b != sentinel {
						t.Fatalf("encode wrote byte %d outside its block", i)
					}
				}
				back := make([]float32, off+n+pad)
				for i := range back {
					back[i] = math.Float32frombits(0xDEADBEEF)
				}
				if err := (FP32{}).Decode(back[off:off+n], dst, rows, width); err != nil {
					t.Fatal(err)
				}
				for i, f := range back {
					switch {
					case i >= off && i < off+n && math.Float32bits(f) != math.Float32bits(src[i-off]):
						t.Fatalf("value %d: bits %#x, want %#x", i-off, math.Float32bits(f), math.Float32bits(src[i-off]))
					case (i < off || i >= off+n) && math.Float32bits(f) != 0xDEADBEEF:
						t.Fatalf("decode wrote value %d outside its block", i)
					}
				}
			})
		}
	}
}

// TestFP32DecodeRejectsAWrongLength: a block whose size does not match its
// rows is an error, not a partial copy.
func TestFP32DecodeRejectsAWrongLength(t *testing.T) {
	dst := make([]float32, 6)
	for _, n := range []int{0, 23, 25} {
		if err := (FP32{}).Decode(dst, make([]byte, n), 2, 3); err == nil {
			t.Errorf("%d bytes for 2×3 values: no error", n)
		}
	}
	if err := (FP32{}).Decode(dst[:5], make([]byte, 24), 2, 3); err == nil {
		t.Error("a 5-value destination for 2×3 values: no error")
	}
}

// BenchmarkFP32Codec: the byte path's cost for rows that travel in float32
// (ranks of one node under an int2 exchange), per direction.
func BenchmarkFP32Codec(b *testing.B) {
	const rows, width = 1 << 14, 128
	src := fp32Values(rows*width, rand.New(rand.NewPCG(1, 2)))
	wire := make([]byte, 4*rows*width)
	back := make([]float32, rows*width)
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			FP32{}.Encode(wire, src, rows, width, 0)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			if err := (FP32{}).Decode(back, wire, rows, width); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The peers' blocks decode concurrently; a damaged block is reported by the
// lowest peer that has one, whatever the order the blocks ran in.
func TestTransferDecodeNamesLowestBadPeer(t *testing.T) {
	const peers, per, width = 4, 130, 47
	codec, err := quant.NewCodec(quant.Format{Bits: 2, Params: quant.ParamsBlock}, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	send, recv := dense.New(peers*per, width), dense.New(peers*per, width)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range send.Data {
		send.Data[i] = r.Float32()
	}
	off := make([]int, peers+1)
	codecs := make([]RowCodec, peers)
	for q := range codecs {
		off[q+1], codecs[q] = (q+1)*per, codec
	}
	tr := &transfer{c: comm.NewGroup(1)[0], send: send, recv: recv, sendOff: off, recvOff: off, codecs: codecs}
	var sendBuf, recvBuf []byte
	e, _ := tr.encode(func(q int) uint64 { return uint64(q) }, &sendBuf, &recvBuf)
	copy(e.recv, e.send)
	if err := tr.decode(e); err != nil {
		t.Fatalf("intact blocks: %v", err)
	}
	data, _ := codec.Size(per, width)
	for _, q := range []int{3, 1} { // the first block base of peers 3 and 1: NaN
		binary.LittleEndian.PutUint32(e.recv[e.rd[q]+data:], math.Float32bits(float32(math.NaN())))
	}
	for range 20 {
		if err := tr.decode(e); err == nil || !strings.Contains(err.Error(), "block from rank 1:") {
			t.Fatalf("damaged blocks of peers 1 and 3: %v, want peer 1's", err)
		}
	}
}

// BenchmarkTransferCodec encodes and decodes a transfer's int2 blocks, the
// same rows split among few or many peers, on -cpu threads: the peers'
// blocks run concurrently, so small blocks still keep every thread busy.
func BenchmarkTransferCodec(b *testing.B) {
	const rows, width = 1 << 15, 128
	threads := runtime.GOMAXPROCS(0)
	codec, err := quant.NewCodec(quant.Format{Bits: 2, Params: quant.ParamsBlock}, threads, "")
	if err != nil {
		b.Fatal(err)
	}
	send, recv := dense.New(rows, width), dense.New(rows, width)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range send.Data {
		send.Data[i] = r.Float32()
	}
	for _, peers := range []int{4, 64, 512} {
		off := make([]int, peers+1)
		for q := range off {
			off[q] = q * rows / peers
		}
		codecs := make([]RowCodec, peers)
		for q := range codecs {
			codecs[q] = codec
		}
		t := &transfer{c: comm.NewGroup(1)[0], send: send, recv: recv, sendOff: off, recvOff: off, codecs: codecs}
		var sendBuf, recvBuf []byte
		b.Run(fmt.Sprintf("peers%d", peers), func(b *testing.B) {
			b.SetBytes(4 * rows * width)
			for b.Loop() {
				e, _ := t.encode(func(q int) uint64 { return uint64(q) }, &sendBuf, &recvBuf)
				copy(e.recv, e.send)
				if err := t.decode(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A coded transfer whose own block is float32 (no Intra codec) is split:
// the float32 peers' rows travel in an all-to-all of their own, straight
// from the rows, and the codec's blocks leave them out; the rows arrive
// exact from the float32 peers and quantised from the others.
func TestSplitTransfer(t *testing.T) {
	const p, per, width = 3, 40, 16
	err := comm.RunGroup(p, func(c comm.Comm) error {
		codec, err := quant.NewCodec(quant.Format{Bits: 2, Params: quant.ParamsBlock}, 1, "")
		if err != nil {
			return err
		}
		send, recv := dense.New(p*per, width), dense.New(p*per, width)
		r := rand.New(rand.NewPCG(5, uint64(c.Rank())))
		for i := range send.Data {
			send.Data[i] = r.Float32()
		}
		off := make([]int, p+1)
		codecs := make([]RowCodec, p) // ranks 0 and 1 share a node; rank 2 is alone
		for q := range codecs {
			off[q+1] = (q + 1) * per
			if (q == 2) != (c.Rank() == 2) {
				codecs[q] = codec
			}
		}
		tr := &transfer{c: c, send: send, recv: recv, sendOff: off, recvOff: off, codecs: codecs}
		if tr.split() {
			return fmt.Errorf("rank %d: split with one rank a node", c.Rank())
		}
		tr.shared = true
		if !tr.split() {
			return fmt.Errorf("rank %d: a coded transfer with a float32 own block is not split", c.Rank())
		}
		plain, _, err := tr.startF32()
		if err != nil {
			return err
		}
		var sendBuf, recvBuf []byte
		e, _ := tr.encode(func(q int) uint64 { return uint64(q) }, &sendBuf, &recvBuf)
		for q := range codecs {
			if (codecs[q] == nil) != (e.sc[q] == 0 && e.rc[q] == 0) {
				return fmt.Errorf("rank %d: peer %d's coded block %d/%d bytes (float32 peer: %v)", c.Rank(), q, e.sc[q], e.rc[q], codecs[q] == nil)
			}
		}
		req, err := tr.startBytes(e)
		if err != nil {
			return err
		}
		if err := allOf(plain, req).Wait(); err != nil {
			return err
		}
		if err := tr.decode(e); err != nil {
			return err
		}
		for q := range codecs {
			// peer q sent rows [rank*per, (rank+1)*per) of its own random matrix
			rq := rand.New(rand.NewPCG(5, uint64(q)))
			want := make([]float32, p*per*width)
			for i := range want {
				want[i] = rq.Float32()
			}
			got, exp := recv.Data[q*per*width:(q+1)*per*width], want[c.Rank()*per*width:(c.Rank()+1)*per*width]
			same := fmt.Sprint(got) == fmt.Sprint(exp)
			if same != (codecs[q] == nil) {
				return fmt.Errorf("rank %d: rows from peer %d exact: %v, want %v (float32 peer)", c.Rank(), q, same, codecs[q] == nil)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fakeRequest cannot be tested: it completes in Wait, or fails with err.
// fakeTester completes after polls Tests.
type fakeRequest struct {
	polls, waits int
	err          error
}

func (f *fakeRequest) Wait() error { f.waits++; return f.err }

type fakeTester struct{ fakeRequest }

func (f *fakeTester) Test() (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	f.polls--
	return f.polls <= 0, nil
}

// requests tests complete once every request has, waits only for those
// left, and a request that cannot be tested keeps Test false until Wait.
func TestRequests(t *testing.T) {
	a, b := &fakeTester{fakeRequest{polls: 1}}, &fakeTester{fakeRequest{polls: 3}}
	r := allOf(a, b)
	for i, want := range []bool{false, false, true} {
		if done, err := r.Test(); done != want || err != nil {
			t.Fatalf("test %d: %v, %v; want %v", i, done, err, want)
		}
	}
	if a.polls != 0 || b.polls != 0 {
		t.Errorf("a completed request was tested again: polls left %d, %d", a.polls, b.polls)
	}
	if err := r.Wait(); err != nil || a.waits+b.waits != 0 {
		t.Errorf("Wait after both tested complete: %v, %d waits; want none", err, a.waits+b.waits)
	}
	c, d := &fakeTester{fakeRequest{polls: 1}}, &fakeRequest{}
	r = allOf(c, d)
	if done, _ := r.Test(); done {
		t.Error("complete with a request that cannot be tested")
	}
	if err := r.Wait(); err != nil || c.waits != 0 || d.waits != 1 {
		t.Errorf("Wait: %v, waits %d and %d; want only the untested one", err, c.waits, d.waits)
	}
	bad := errors.New("link down")
	e, f := &fakeRequest{err: bad}, &fakeRequest{}
	if err := allOf(e, f).Wait(); !errors.Is(err, bad) || f.waits != 1 {
		t.Errorf("Wait with a failing request: %v, %d waits of the other; want its error after waiting for both", err, f.waits)
	}
}
