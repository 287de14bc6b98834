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
// exchange.RowCodec. A Codec may be used by one goroutine at a time.
type Codec struct {
	f         Format
	threads   int
	k         kernels
	nonFinite atomic.Int64
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
	return &Codec{f: f, threads: max(threads, 1), k: k}, nil
}

// Format returns the codec's format.
func (c *Codec) Format() Format { return c.f }

// Kernel names the kernel set in use.
func (c *Codec) Kernel() string { return c.k.name }

// Name identifies the codec, e.g. "int2" or "int2+bf16".
func (c *Codec) Name() string {
	if c.f.HalfParams {
		return fmt.Sprintf("int%d+bf16", c.f.Bits)
	}
	return fmt.Sprintf("int%d", c.f.Bits)
}

// Size returns the encoded data and parameter bytes of rows×width values.
func (c *Codec) Size(rows, width int) (data, param int) { return c.f.Size(rows, width) }

// NonFinite returns how many non-finite values were encoded so far.
func (c *Codec) NonFinite() int64 { return c.nonFinite.Load() }

// Encode quantises src (rows×width, row-major) into dst: the packed rows,
// then one parameter pair per row. len(dst) must be data+param of Size.
func (c *Codec) Encode(dst []byte, src []float32, rows, width int, seed uint64) {
	data, param := c.f.Size(rows, width)
	if len(dst) < data+param || len(src) < rows*width {
		panic("quant: Encode buffer too small")
	}
	c.parallel(rows, func(b int) {
		var r RNG
		r.Seed(seed ^ uint64(b)*0xD1B54A32D192ED03)
		lo, hi := b*BlockRows, min((b+1)*BlockRows, rows)
		nf := 0
		for i := lo; i < hi; i++ {
			nf += c.encodeRow(dst, data, src[i*width:(i+1)*width], i, &r)
		}
		if nf > 0 {
			c.nonFinite.Add(int64(nf))
		}
	})
}

func (c *Codec) encodeRow(dst []byte, data int, x []float32, i int, r *RNG) int {
	zero, scale, inv, nf := rowParamsWith(c.k.minmax, x, c.f)
	rb := c.f.RowBytes(len(x))
	c.k.pack[c.f.Bits](dst[i*rb:(i+1)*rb], x, zero, inv, r)
	putParams(dst[data+i*c.f.ParamBytes():], zero, scale, c.f.HalfParams)
	return nf
}

// Decode writes the rows×width values encoded in src into dst.
func (c *Codec) Decode(dst []float32, src []byte, rows, width int) error {
	data, param := c.f.Size(rows, width)
	if len(src) != data+param {
		return fmt.Errorf("quant: %s block of %d×%d values has %d bytes, want %d", c.Name(), rows, width, len(src), data+param)
	}
	if len(dst) < rows*width {
		return fmt.Errorf("quant: decode into %d values, want %d", len(dst), rows*width)
	}
	rb := c.f.RowBytes(width)
	var bad atomic.Int64
	bad.Store(-1)
	c.parallel(rows, func(b int) {
		for i := b * BlockRows; i < min((b+1)*BlockRows, rows); i++ {
			zero, scale := getParams(src[data+i*c.f.ParamBytes():], c.f.HalfParams)
			if !finite(zero) || !finite(scale) || scale < 0 {
				bad.CompareAndSwap(-1, int64(i))
				continue
			}
			c.k.unpack[c.f.Bits](dst[i*width:(i+1)*width], src[i*rb:(i+1)*rb], zero, scale)
		}
	})
	if i := bad.Load(); i >= 0 {
		return fmt.Errorf("quant: row %d has invalid parameters", i)
	}
	return nil
}

// parallel runs fn over the row blocks on up to c.threads goroutines
// (internal/par, within the rank's thread budget).
func (c *Codec) parallel(rows int, fn func(block int)) {
	par.Blocks((rows+BlockRows-1)/BlockRows, c.threads, fn)
}

func putParams(dst []byte, zero, scale float32, half bool) {
	if half {
		binary.LittleEndian.PutUint16(dst, uint16(math.Float32bits(zero)>>16))
		binary.LittleEndian.PutUint16(dst[2:], uint16(math.Float32bits(scale)>>16))
		return
	}
	binary.LittleEndian.PutUint32(dst, math.Float32bits(zero))
	binary.LittleEndian.PutUint32(dst[4:], math.Float32bits(scale))
}

func getParams(src []byte, half bool) (zero, scale float32) {
	if half {
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(src)) << 16),
			math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2:])) << 16)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(src)), math.Float32frombits(binary.LittleEndian.Uint32(src[4:]))
}

func finite(v float32) bool { return v == v && v <= math.MaxFloat32 && v >= -math.MaxFloat32 }
