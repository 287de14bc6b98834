package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func formats() []Format {
	var fs []Format
	for _, b := range quantBits {
		fs = append(fs, Format{Bits: b}, Format{Bits: b, Params: ParamsBF16}, Format{Bits: b, Params: ParamsBlock})
	}
	return fs
}

func randRows(rows, width int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, rows*width)
	for i := range x {
		x[i] = float32(r.NormFloat64()*3 + 1)
	}
	return x
}

func codecs(t *testing.T, f Format) []*Codec {
	var cs []*Codec
	for _, k := range Kernels() {
		c, err := NewCodec(f, 3, k)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return cs
}

func roundTrip(t *testing.T, c *Codec, x []float32, rows, width int, seed uint64) []float32 {
	t.Helper()
	d, p := c.Size(rows, width)
	buf := make([]byte, d+p)
	c.Encode(buf, x, rows, width, seed)
	out := make([]float32, rows*width)
	if err := c.Decode(out, buf, rows, width); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every dequantised value lies within one step of its input, and the step
// is what the row's range implies.
func TestWithinOneStep(t *testing.T) {
	for _, f := range formats() {
		for _, c := range codecs(t, f) {
			for _, width := range []int{1, 2, 3, 5, 15, 16, 17, 31, 33, 64, 67, 128, 602} {
				rows := 70
				x := randRows(rows, width, uint64(width))
				y := roundTrip(t, c, x, rows, width, 42)
				for i := 0; i < rows; i++ {
					row := x[i*width : (i+1)*width]
					lo, hi := row[0], row[0]
					for _, v := range row {
						lo, hi = min(lo, v), max(hi, v)
					}
					step := float64(hi-lo) / float64(f.Levels())
					switch f.Params { // bf16 rounding of zero point (down) and scale (up)
					case ParamsBF16:
						step = step*1.01 + math.Abs(float64(lo))/128
					case ParamsBlock: // and the scale up to the next 2^(-k/16) step
						step = step*1.05 + math.Abs(float64(lo))/128
					}
					for j, v := range row {
						d := math.Abs(float64(y[i*width+j] - v))
						if d > step*(1+1e-5)+1e-6 {
							t.Fatalf("%s %s width %d row %d col %d: |%g - %g| = %g > step %g", c.Name(), c.Kernel(), width, i, j, y[i*width+j], v, d, step)
						}
					}
				}
			}
		}
	}
}

// The mean of many stochastic round trips equals the input (unbiased):
// with n draws the standard error is below S/(2√n); we allow 5 of those.
func TestUnbiased(t *testing.T) {
	const draws = 4000
	width, rows := 37, 3
	x := randRows(rows, width, 9)
	for _, f := range formats() {
		c := codecs(t, f)[0]
		sum := make([]float64, len(x))
		for s := 0; s < draws; s++ {
			y := roundTrip(t, c, x, rows, width, uint64(s)*1000003)
			for i, v := range y {
				sum[i] += float64(v)
			}
		}
		for i := 0; i < rows; i++ {
			row := x[i*width : (i+1)*width]
			lo, hi := row[0], row[0]
			for _, v := range row {
				lo, hi = min(lo, v), max(hi, v)
			}
			step := float64(hi-lo)/float64(f.Levels())*1.01 + math.Abs(float64(lo))/128
			tol := 5 * step / (2 * math.Sqrt(draws))
			for j, v := range row {
				mean := sum[i*width+j] / draws
				if math.Abs(mean-float64(v)) > tol {
					t.Errorf("%s: row %d col %d: mean %g of %d draws, input %g (tolerance %g)", c.Name(), i, j, mean, draws, v, tol)
				}
			}
		}
	}
}

// Pack/unpack is exact: codes written are the codes read, for every width.
func TestPackUnpackExact(t *testing.T) {
	for _, bits := range []int{2, 4, 8} {
		levels := 1<<bits - 1
		for _, k := range available {
			for width := 1; width <= 70; width++ {
				// Values exactly on the grid zero + q·scale with scale a power
				// of two quantise to q whatever the random draw.
				zero, scale := float32(-3), float32(0.25)
				x := make([]float32, width)
				want := make([]int, width)
				for j := range x {
					want[j] = (j*7 + 3) % (levels + 1)
					x[j] = zero + float32(want[j])*scale
				}
				// Force the row's range to the full grid so the params are exact.
				x[0], want[0] = zero, 0
				if width > 1 {
					x[width-1], want[width-1] = zero+float32(levels)*scale, levels
				}
				f := Format{Bits: bits}
				z, s, inv, _ := rowParams(x, f)
				if width > 1 && (z != zero || s != scale) {
					t.Fatalf("params %g %g, want %g %g", z, s, zero, scale)
				}
				dst := make([]byte, f.RowBytes(width)+3)
				for i := range dst {
					dst[i] = 0xA5 // sentinel beyond the row must survive
				}
				var r RNG
				r.Seed(uint64(width))
				k.pack[bits](dst[:f.RowBytes(width)], x, z, inv, &r)
				for i := f.RowBytes(width); i < len(dst); i++ {
					if dst[i] != 0xA5 {
						t.Fatalf("%s bits %d width %d: byte %d past the row overwritten", k.name, bits, width, i)
					}
				}
				out := make([]float32, width+2)
				out[width], out[width+1] = 7, 7
				k.unpack[bits](out[:width], dst, z, s)
				for j := 0; j < width; j++ {
					if width > 1 && out[j] != x[j] {
						t.Fatalf("%s bits %d width %d col %d: got %g want %g (code %d)", k.name, bits, width, j, out[j], x[j], want[j])
					}
				}
				if out[width] != 7 || out[width+1] != 7 {
					t.Fatalf("%s: unpack wrote past the row", k.name)
				}
			}
		}
	}
}

func TestConstantAndNonFiniteRows(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	width := 19
	x := make([]float32, 3*width)
	for j := 0; j < width; j++ {
		x[j] = 2.5 // constant row
		x[width+j] = float32(j)
		x[2*width+j] = nan // no finite value
	}
	x[width+3], x[width+4], x[width+5] = nan, inf, -inf
	for _, f := range formats() {
		c := codecs(t, f)[0]
		y := roundTrip(t, c, x, 3, width, 1)
		for j := 0; j < width; j++ {
			if y[j] != 2.5 && f.Params == ParamsF32 {
				t.Fatalf("%s: constant row decodes to %g", c.Name(), y[j])
			}
			if y[2*width+j] != 0 {
				t.Fatalf("%s: all-NaN row decodes to %g, want 0", c.Name(), y[2*width+j])
			}
		}
		lo, hi := y[width], y[width]
		for j := 0; j < width; j++ {
			lo, hi = min(lo, y[width+j]), max(hi, y[width+j])
		}
		if y[width+3] != lo || y[width+5] != lo || y[width+4] != hi {
			t.Fatalf("%s: NaN→%g, +Inf→%g, -Inf→%g; want min %g, max %g, min", c.Name(), y[width+3], y[width+4], y[width+5], lo, hi)
		}
		if got := c.NonFinite(); got != int64(3+width) {
			t.Fatalf("%s: NonFinite = %d, want %d", c.Name(), got, 3+width)
		}
	}
}

// The bytes depend on the seed only, not on the thread count or kernel.
func TestDeterministic(t *testing.T) {
	rows, width := 41*BlockRows+7, 45 // runs of 1, 2 and 5 blocks (Codec.parallel)
	x := randRows(rows, width, 3)
	for _, f := range formats() {
		var ref []byte
		for _, k := range Kernels() {
			for _, th := range []int{1, 2, 5} {
				c, err := NewCodec(f, th, k)
				if err != nil {
					t.Fatal(err)
				}
				d, p := c.Size(rows, width)
				buf := make([]byte, d+p)
				c.Encode(buf, x, rows, width, 99)
				if ref == nil {
					ref = buf
				} else if !bytes.Equal(ref, buf) {
					t.Fatalf("%s kernel %s threads %d: bytes differ from the first kernel's", c.Name(), k, th)
				}
			}
		}
	}
}

func TestSizesAndErrors(t *testing.T) {
	f := Format{Bits: 2}
	if d, p := f.Size(10, 17); d != 10*5 || p != 80 {
		t.Fatalf("Size = %d, %d", d, p)
	}
	if d, p := (Format{Bits: 2, Params: ParamsBF16}).Size(10, 16); d != 40 || p != 40 {
		t.Fatalf("Size(bf16) = %d, %d", d, p)
	}
	// block: 3 bytes a row and 4 per block of BlockRows rows
	if d, p := (Format{Bits: 2, Params: ParamsBlock}).Size(BlockRows+1, 16); d != 4*(BlockRows+1) || p != 3*(BlockRows+1)+8 {
		t.Fatalf("Size(block) = %d, %d", d, p)
	}
	if _, err := NewCodec(Format{Bits: 2, Params: ParamsBlock + 1}, 1, ""); err == nil {
		t.Fatal("unknown parameter layout accepted")
	}
	for _, n := range []string{"fp32", "bf16", "block"} {
		if p, err := ParseParams(n); err != nil || p.String() != n {
			t.Fatalf("ParseParams(%q) = %v, %v", n, p, err)
		}
	}
	if _, err := ParseParams("fp16"); err == nil {
		t.Fatal("ParseParams accepted fp16")
	}
	if _, err := NewCodec(Format{Bits: 3}, 1, ""); err == nil {
		t.Fatal("3 bits accepted")
	}
	if _, err := NewCodec(f, 1, "no-such-kernel"); err == nil {
		t.Fatal("unknown kernel accepted")
	}
	c, _ := NewCodec(f, 1, "generic")
	if err := c.Decode(make([]float32, 8), make([]byte, 3), 1, 8); err == nil {
		t.Fatal("short block accepted")
	}
	// fp32 bytes over int2 bytes+params for a 128-wide row: 512 / (32+8) = 12.8.
	d, p := f.Size(1, 128)
	if ratio := float64(4*128) / float64(d+p); ratio < 12 {
		t.Fatalf("int2 saves only %.1f×", ratio)
	}
}

// blockScale picks the smallest base·2^(−k/16) at least the row's need:
// never below it, at most one 2^(1/16) step above it (while the need is in
// the code range), zero only for a zero need.
func TestBlockScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		base := float32(math.Exp2(rng.Float64()*60 - 30))
		need := base * float32(math.Exp2(-rng.Float64()*20))
		if i%97 == 0 {
			need = base
		}
		code, s := blockScale(base, need)
		if s < need || s != blockCodeScale(base, code) {
			t.Fatalf("base %g need %g: code %d scale %g (decodes to %g)", base, need, code, s, blockCodeScale(base, code))
		}
		if float64(need) >= float64(base)*math.Exp2(-254.0/16) && float64(s) > float64(need)*math.Exp2(1.0/16)*(1+1e-6) {
			t.Fatalf("base %g need %g: scale %g is more than one step above", base, need, s)
		}
	}
	if code, s := blockScale(1, 0); code != zeroScaleCode || s != 0 {
		t.Fatalf("zero need: code %d scale %g", code, s)
	}
}

// A block whose rows' ranges differ by far more than the 16 octaves of the
// scale codes still decodes every value within its row's scale, and a
// block base that is not a finite non-negative number is refused.
func TestBlockParamsWideRanges(t *testing.T) {
	f := Format{Bits: 2, Params: ParamsBlock}
	const width = 33
	rows := BlockRows + 5
	x := randRows(rows, width, 5)
	for i := 0; i < rows; i += 3 {
		for j := 0; j < width; j++ {
			x[i*width+j] *= 1e-9
		}
	}
	for _, c := range codecs(t, f) {
		y := roundTrip(t, c, x, rows, width, 9)
		// Error bound per row: its own step (rounded up, zero point rounded
		// down), or the smallest scale its block's base can express.
		rowRange := func(i int) (lo, hi float64) {
			lo, hi = math.Inf(1), math.Inf(-1)
			for _, v := range x[i*width : (i+1)*width] {
				lo, hi = min(lo, float64(v)), max(hi, float64(v))
			}
			return lo, hi
		}
		for b := 0; b*BlockRows < rows; b++ {
			base := 0.0
			for i := b * BlockRows; i < min((b+1)*BlockRows, rows); i++ {
				lo, hi := rowRange(i)
				base = max(base, (hi-lo+math.Abs(lo)/128)/3)
			}
			for i := b * BlockRows; i < min((b+1)*BlockRows, rows); i++ {
				lo, hi := rowRange(i)
				bound := max(1.05*(hi-lo+math.Abs(lo)/128)/3, 1.01*base*math.Exp2(-254.0/16))
				for j := 0; j < width; j++ {
					if d := math.Abs(float64(y[i*width+j] - x[i*width+j])); d > bound*(1+1e-5)+1e-12 {
						t.Fatalf("%s row %d col %d: |%g - %g| = %g > %g", c.Kernel(), i, j, y[i*width+j], x[i*width+j], d, bound)
					}
				}
			}
		}
		d, p := c.Size(rows, width)
		buf := make([]byte, d+p)
		c.Encode(buf, x, rows, width, 1)
		binary.LittleEndian.PutUint32(buf[d:], math.Float32bits(float32(math.NaN())))
		if err := c.Decode(make([]float32, rows*width), buf, rows, width); err == nil {
			t.Fatalf("%s: NaN block base accepted", c.Kernel())
		}
	}
}
