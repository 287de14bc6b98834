package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/supergcn/supergcn/internal/par"
)

// BlockRows is the number of rows that share one random stream. Streams are
// seeded from (seed, block index), so the bytes do not depend on how many
// goroutines encode.
const BlockRows = 64

// Codec quantises row blocks for the boundary exchange. It satisfies
// exchange.RowCodec. Encode and Decode may run from several goroutines at
// once (the exchange encodes its peers' blocks together); they share only
// the count of non-finite values.
type Codec struct {
	f            Format
	threads      int
	k            kernels
	pack         packFn // the set's kernels of f.Bits, or the generic twin's
	unpack       unpackFn
	packChunks   packFn // the set's whole-chunk kernels of f.Bits, or nil
	unpackChunks unpackFn
	nonFinite    atomic.Int64
}

// NewCodec returns a codec for format f using up to threads goroutines and
// the kernel set chosen at start-up (or forced by SUPERGCN_KERNEL / kernel).
func NewCodec(f Format, threads int, kernel string) (*Codec, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	k, err := selectKernels(kernel)
	if err != nil {
		return nil, err
	}
	c := &Codec{f: f, threads: max(threads, 1), k: k, pack: k.pack[f.Bits], unpack: k.unpack[f.Bits]}
	if c.pack == nil || c.unpack == nil { // a width the set has no SIMD kernels for
		c.pack, c.unpack = packGeneric(f.Bits), unpackGeneric(f.Bits)
	} else if k.packChunks[f.Bits] != nil && k.unpackChunks[f.Bits] != nil {
		c.packChunks, c.unpackChunks = k.packChunks[f.Bits], k.unpackChunks[f.Bits]
	}
	return c, nil
}

// Format returns the codec's format.
func (c *Codec) Format() Format { return c.f }

// Kernel names the kernel set in use.
func (c *Codec) Kernel() string { return c.k.name }

// Name identifies the codec, e.g. "int2" (fp32 parameters), "int2+bf16"
// or "int2+block".
func (c *Codec) Name() string { return Wire{Bits: c.f.Bits, Params: c.f.Params}.Name() }

// Size returns the encoded data and parameter bytes of rows×width values.
func (c *Codec) Size(rows, width int) (data, param int) { return c.f.Size(rows, width) }

// NonFinite returns how many non-finite values were encoded so far.
func (c *Codec) NonFinite() int64 { return c.nonFinite.Load() }

// Encode quantises src (rows×width, row-major) into dst: the packed rows,
// then the parameters (layout Format.Params). len(dst) must be data+param of
// Size.
func (c *Codec) Encode(dst []byte, src []float32, rows, width int, seed uint64) {
	data, param := c.f.Size(rows, width)
	if len(dst) < data+param || len(src) < rows*width {
		panic("quant: Encode buffer too small")
	}
	pl := paramLayout{f: c.f, data: data, rows: rows}
	rb := c.f.RowBytes(width)
	over := c.overrun(width)
	c.parallel(rows, func(b int) {
		var r RNG
		r.Seed(seed ^ uint64(b)*0xD1B54A32D192ED03)
		lo, hi := b*BlockRows, min((b+1)*BlockRows, rows)
		var zeros, scales [BlockRows]float32
		nf, base := 0, float32(0)
		for i := lo; i < hi; i++ {
			var n int
			zeros[i-lo], scales[i-lo], _, n = rowParamsWith(c.k.minmax, src[i*width:(i+1)*width], c.f)
			nf += n
			base = max(base, scales[i-lo])
		}
		if c.f.Params == ParamsBlock {
			binary.LittleEndian.PutUint32(dst[pl.baseAt(b):], math.Float32bits(base))
		}
		for i := lo; i < hi; i++ {
			zero, scale := zeros[i-lo], scales[i-lo]
			if c.f.Params == ParamsBlock {
				var code uint8
				code, scale = blockScale(base, scale)
				dst[pl.codeAt(i)] = code
			}
			var inv float32
			if scale != 0 {
				inv = 1 / scale
			}
			if over > 0 && i+1 < hi {
				c.packOver(dst, src, i, width, rb, over, zero, inv, &r)
			} else {
				c.pack(dst[i*rb:(i+1)*rb], src[i*width:(i+1)*width], zero, inv, &r)
			}
			pl.put(dst, i, zero, scale)
		}
		if nf > 0 {
			c.nonFinite.Add(int64(nf))
		}
	})
}

// overrun returns the width, rounded up to a multiple of Lanes, that the
// whole-chunk kernels encode or decode a row of width values with, or 0
// where they do not apply. They apply to a width with a tail of at least one
// value that is no narrower than Lanes, so that what runs past row i lies
// in row i+1, and only where row i+1 is in the same block, whose goroutine
// encodes or decodes it next and so overwrites what ran into it. That saves
// the tail's second kernel call through stack buffers on all rows but a
// block's last.
func (c *Codec) overrun(width int) int {
	if c.packChunks == nil || width%Lanes == 0 || width < Lanes {
		return 0
	}
	return (width + Lanes - 1) &^ (Lanes - 1)
}

// packOver packs row i of src into its rb bytes of dst and the first bytes
// of row i+1 through the whole-chunk kernel over n values; past the row's
// last value, its last byte holds zero bits, as c.pack leaves it.
func (c *Codec) packOver(dst []byte, src []float32, i, width, rb, n int, zero, inv float32, r *RNG) {
	c.packChunks(dst[i*rb:i*rb+n*c.f.Bits/8], src[i*width:i*width+n], zero, inv, r)
	if used := width * c.f.Bits % 8; used != 0 {
		dst[(i+1)*rb-1] &= byte(1)<<used - 1
	}
}

// Decode writes the rows×width values encoded in src into dst. After an
// error, dst's rows×width values are unspecified.
func (c *Codec) Decode(dst []float32, src []byte, rows, width int) error {
	data, param := c.f.Size(rows, width)
	if len(src) != data+param {
		return fmt.Errorf("quant: %s block of %d×%d values has %d bytes, want %d", c.Name(), rows, width, len(src), data+param)
	}
	if len(dst) < rows*width {
		return fmt.Errorf("quant: decode into %d values, want %d", len(dst), rows*width)
	}
	rb := c.f.RowBytes(width)
	over := c.overrun(width)
	pl := paramLayout{f: c.f, data: data, rows: rows}
	var bad atomic.Int64
	bad.Store(-1)
	c.parallel(rows, func(b int) {
		var base float32
		if c.f.Params == ParamsBlock {
			base = math.Float32frombits(binary.LittleEndian.Uint32(src[pl.baseAt(b):]))
			if !finite(base) || base < 0 {
				bad.CompareAndSwap(-1, int64(b*BlockRows))
				return
			}
		}
		hi := min((b+1)*BlockRows, rows)
		for i := b * BlockRows; i < hi; i++ {
			zero, scale := pl.get(src, i, base)
			if !finite(zero) || !finite(scale) || scale < 0 {
				bad.CompareAndSwap(-1, int64(i))
				continue
			}
			if over > 0 && i+1 < hi { // into row i+1's values, which come next
				c.unpackChunks(dst[i*width:i*width+over], src[i*rb:i*rb+over*c.f.Bits/8], zero, scale)
			} else {
				c.unpack(dst[i*width:(i+1)*width], src[i*rb:(i+1)*rb], zero, scale)
			}
		}
	})
	if i := bad.Load(); i >= 0 {
		return fmt.Errorf("quant: row %d has invalid parameters", i)
	}
	return nil
}

// parallel runs fn over the row blocks on up to c.threads goroutines
// (internal/par, within the rank's thread budget), handing out runs of
// consecutive blocks, about eight a goroutine: a goroutine's rows then lie
// together in memory (on 2 threads decode ran 1.5× and encode 1.2× faster
// than with single blocks handed out). Each block seeds its own random
// stream, so the bytes do not depend on the runs.
func (c *Codec) parallel(rows int, fn func(block int)) {
	blocks := (rows + BlockRows - 1) / BlockRows
	run := max(1, blocks/(8*c.threads))
	par.Blocks((blocks+run-1)/run, c.threads, func(j int) {
		for b := j * run; b < min((j+1)*run, blocks); b++ {
			fn(b)
		}
	})
}

// paramLayout places the parameters of a stream of rows after its data
// bytes: per row (zero, scale) pairs of fp32 or bf16, or for ParamsBlock
// the blocks' fp32 bases, then every row's bf16 zero point, then every
// row's scale code.
type paramLayout struct {
	f          Format
	data, rows int
}

func (l paramLayout) baseAt(block int) int { return l.data + 4*block }

func (l paramLayout) zeroAt(i int) int {
	return l.data + 4*((l.rows+BlockRows-1)/BlockRows) + 2*i
}

func (l paramLayout) codeAt(i int) int { return l.zeroAt(l.rows) + i }

// put writes row i's zero point and (for fp32 and bf16) scale; the block
// layout's scale code is written by the encoder.
func (l paramLayout) put(dst []byte, i int, zero, scale float32) {
	switch l.f.Params {
	case ParamsBF16:
		o := l.data + 4*i
		binary.LittleEndian.PutUint16(dst[o:], uint16(math.Float32bits(zero)>>16))
		binary.LittleEndian.PutUint16(dst[o+2:], uint16(math.Float32bits(scale)>>16))
	case ParamsBlock:
		binary.LittleEndian.PutUint16(dst[l.zeroAt(i):], uint16(math.Float32bits(zero)>>16))
	default:
		o := l.data + 8*i
		binary.LittleEndian.PutUint32(dst[o:], math.Float32bits(zero))
		binary.LittleEndian.PutUint32(dst[o+4:], math.Float32bits(scale))
	}
}

// get reads row i's zero point and scale (base: its block's, ParamsBlock).
func (l paramLayout) get(src []byte, i int, base float32) (zero, scale float32) {
	bf16 := func(o int) float32 { return math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[o:])) << 16) }
	switch l.f.Params {
	case ParamsBF16:
		return bf16(l.data + 4*i), bf16(l.data + 4*i + 2)
	case ParamsBlock:
		return bf16(l.zeroAt(i)), blockCodeScale(base, src[l.codeAt(i)])
	}
	o := l.data + 8*i
	return math.Float32frombits(binary.LittleEndian.Uint32(src[o:])), math.Float32frombits(binary.LittleEndian.Uint32(src[o+4:]))
}

func finite(v float32) bool { return v == v && v <= math.MaxFloat32 && v >= -math.MaxFloat32 }
