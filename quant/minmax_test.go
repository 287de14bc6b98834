package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// minmaxRef is the plain definition minmax kernels are checked against:
// finite is whether no value is NaN or ±Inf, and then lo and hi are the
// minimum and maximum by < (for an empty x, +Inf and −Inf).
func minmaxRef(x []float32) (lo, hi float32, finite bool) {
	lo, hi, finite = float32(math.Inf(1)), float32(math.Inf(-1)), true
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			finite = false
			continue
		}
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi, finite
}

// minmaxWidths are the row widths minmax is checked on: every width up to
// 70 (all vector tails and accumulator counts of the first iterations),
// and wide rows with and without a partial last vector.
func minmaxWidths() []int {
	var w []int
	for i := 0; i <= 70; i++ {
		w = append(w, i)
	}
	return append(w, 128, 1031)
}

// nonFinites are NaNs of several payloads and signs (quiet and signalling)
// and the infinities.
func nonFinites() []float32 {
	return []float32{
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffbfffff),
		float32(math.Inf(1)), float32(math.Inf(-1)),
	}
}

// minmaxRow fills x with a row of the given kind (finite values only).
func minmaxRow(x []float32, kind int, rng *rand.Rand) {
	for j := range x {
		switch kind {
		case 0: // ordinary values
			x[j] = float32(rng.NormFloat64()*3 + 1)
		case 1: // all equal
			x[j] = -7.25
		case 2: // signed zeros only
			x[j] = float32(math.Copysign(0, rng.NormFloat64()))
		case 3: // signed zeros and positive values: the minimum is a zero
			x[j] = float32(math.Copysign(0, rng.NormFloat64()))
			if rng.IntN(2) == 0 {
				x[j] = rng.Float32() + 0.5
			}
		case 4: // signed zeros and negative values: the maximum is a zero
			x[j] = float32(math.Copysign(0, rng.NormFloat64()))
			if rng.IntN(2) == 0 {
				x[j] = -rng.Float32() - 0.5
			}
		case 5: // extremes: ±MaxFloat32, subnormals, wide range
			switch rng.IntN(4) {
			case 0:
				x[j] = float32(math.Copysign(math.MaxFloat32, rng.NormFloat64()))
			case 1:
				x[j] = math.Float32frombits(rng.Uint32() & 0x807fffff)
			default:
				x[j] = float32(rng.NormFloat64() * 1e30)
			}
		}
	}
}

const minmaxKinds = 6

// checkMinmax compares one kernel's minmax of x with minmaxRef.
func checkMinmax(t *testing.T, k kernels, x []float32, what string) {
	t.Helper()
	lo, hi, fin := k.minmax(x)
	wlo, whi, wfin := minmaxRef(x)
	if fin != wfin {
		t.Fatalf("%s %s: finite = %v, want %v (x = %v)", k.name, what, fin, wfin, x)
	}
	if fin && (lo != wlo || hi != whi) { // == : a zero of either sign
		t.Fatalf("%s %s: lo, hi = %g, %g, want %g, %g (x = %v)", k.name, what, lo, hi, wlo, whi, x)
	}
}

// Every kernel's minmax (generic included) matches minmaxRef on every
// width, misalignment and row kind, with a non-finite value at every
// position, and the row's unique minimum and maximum at every position.
// The values around the row are guards that change the result if read.
func TestMinmaxMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	guards := append([]float32{-1e38, 1e38}, nonFinites()...)
	for _, k := range available {
		if k.minmax == nil {
			t.Fatalf("kernel %s has no minmax", k.name)
		}
		for _, width := range minmaxWidths() {
			for kind := 0; kind < minmaxKinds; kind++ {
				off := rng.IntN(16)
				buf := make([]float32, off+width+16)
				for i := range buf {
					buf[i] = guards[rng.IntN(len(guards))]
				}
				x := buf[off : off+width]
				minmaxRow(x, kind, rng)
				what := fmt.Sprintf("width %d kind %d off %d", width, kind, off)
				checkMinmax(t, k, x, what)

				// Positions to vary: all of them for narrow rows, a sample
				// (first, last, around vector boundaries, random) of wide ones.
				pos := make([]int, 0, 80)
				if width <= 70 {
					for p := 0; p < width; p++ {
						pos = append(pos, p)
					}
				} else {
					for _, p := range []int{0, 1, 15, 16, 63, 64, width - 17, width - 16, width - 15, width - 2, width - 1} {
						pos = append(pos, p)
					}
					for i := 0; i < 20; i++ {
						pos = append(pos, rng.IntN(width))
					}
				}
				nf := nonFinites()
				for _, p := range pos {
					saved := x[p]
					v := nf[rng.IntN(len(nf))]
					x[p] = v
					checkMinmax(t, k, x, fmt.Sprintf("%s, %g (%#08x) at %d", what, v, math.Float32bits(v), p))
					x[p] = -3e37 // the unique minimum
					checkMinmax(t, k, x, fmt.Sprintf("%s, minimum at %d", what, p))
					x[p] = 3e37 // the unique maximum
					checkMinmax(t, k, x, fmt.Sprintf("%s, maximum at %d", what, p))
					x[p] = saved
				}
				if width >= 2 { // several non-finite values, first and last
					a, b := x[0], x[width-1]
					x[0], x[width-1] = float32(math.Inf(1)), float32(math.Inf(-1))
					checkMinmax(t, k, x, what+", ±Inf at both ends")
					x[0], x[width-1] = a, b
				}
			}
		}
	}
}

// The SIMD kernels agree with generic on the codec's rows: rowParamsWith
// gives the same bits of zero point, scale and reciprocal, and the same
// non-finite count, as rowParams, for every format.
func TestMinmaxRowParamsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	nf := nonFinites()
	for _, k := range simdKernels(t) {
		for _, width := range minmaxWidths() {
			for kind := 0; kind < minmaxKinds+1; kind++ {
				x := make([]float32, width)
				if kind < minmaxKinds {
					minmaxRow(x, kind, rng)
				} else { // a few non-finite values among ordinary ones
					minmaxRow(x, 0, rng)
					for i := 0; i < 3 && width > 0; i++ {
						x[rng.IntN(width)] = nf[rng.IntN(len(nf))]
					}
				}
				for _, f := range formats() {
					z, s, inv, n := rowParamsWith(k.minmax, x, f)
					wz, ws, winv, wn := rowParams(x, f)
					if math.Float32bits(z) != math.Float32bits(wz) || math.Float32bits(s) != math.Float32bits(ws) ||
						math.Float32bits(inv) != math.Float32bits(winv) || n != wn {
						t.Fatalf("%s width %d kind %d bits %d params %v: params %g %g %g %d, generic %g %g %g %d",
							k.name, width, kind, f.Bits, f.Params, z, s, inv, n, wz, ws, winv, wn)
					}
				}
			}
		}
	}
}

// Rows whose minimum or maximum is a zero, of either sign and in any order,
// encode to the same bytes with every kernel, and a zero minimum is sent
// as +0: the sign of the zero a kernel finds never reaches the stream.
func TestMinmaxSignedZerosEncodeSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	rows := BlockRows + 7
	for _, width := range []int{1, 5, 8, 16, 17, 33, 64, 128, 131} {
		x := make([]float32, rows*width)
		kinds := make([]int, rows)
		for i := 0; i < rows; i++ {
			kinds[i] = 2 + i%3 // zeros only; zero minimum; zero maximum
			row := x[i*width : (i+1)*width]
			minmaxRow(row, kinds[i], rng)
			if kinds[i] == 2 {
				row[rng.IntN(width)] = float32(math.Copysign(0, -1)) // at least one −0
			}
		}
		for _, f := range formats() {
			var ref []byte
			for _, kn := range Kernels() {
				c, err := NewCodec(f, 1, kn)
				if err != nil {
					t.Fatal(err)
				}
				d, p := c.Size(rows, width)
				buf := make([]byte, d+p)
				c.Encode(buf, x, rows, width, 11)
				for i := 0; i < rows; i++ {
					row := x[i*width : (i+1)*width]
					if lo, _, _ := minmaxRef(row); lo != 0 {
						continue
					}
					pl := paramLayout{f: f, data: d, rows: rows}
					var bits uint32
					switch f.Params {
					case ParamsBF16:
						bits = uint32(binary.LittleEndian.Uint16(buf[d+4*i:]))
					case ParamsBlock:
						bits = uint32(binary.LittleEndian.Uint16(buf[pl.zeroAt(i):]))
					default:
						bits = binary.LittleEndian.Uint32(buf[d+8*i:])
					}
					if bits != 0 {
						t.Fatalf("%s %s width %d row %d (kind %d): zero point bits %#x, want +0", c.Name(), kn, width, i, kinds[i], bits)
					}
				}
				if ref == nil {
					ref = buf
					continue
				}
				if i := firstDiff(buf, ref); i >= 0 {
					t.Fatalf("%s width %d kernel %s: byte %d differs from %s", c.Name(), width, kn, i, Kernels()[0])
				}
			}
		}
	}
}

// Rows with non-finite values still take the counting path through the
// SIMD kernels: the codec's NonFinite count and bytes match generic.
func TestMinmaxNonFiniteCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	nf := nonFinites()
	rows, width := 3*BlockRows, 45
	x := randRows(rows, width, 13)
	want := 0
	for i := 0; i < rows; i += 3 {
		for j := 0; j <= i%5; j++ {
			p := i*width + rng.IntN(width)
			if !math.IsNaN(float64(x[p])) && !math.IsInf(float64(x[p]), 0) {
				want++
			}
			x[p] = nf[rng.IntN(len(nf))]
		}
	}
	f := Format{Bits: 4}
	var ref []byte
	for _, kn := range Kernels() {
		c, err := NewCodec(f, 2, kn)
		if err != nil {
			t.Fatal(err)
		}
		d, p := c.Size(rows, width)
		buf := make([]byte, d+p)
		c.Encode(buf, x, rows, width, 3)
		if got := c.NonFinite(); got != int64(want) {
			t.Fatalf("%s: NonFinite = %d, want %d", kn, got, want)
		}
		if ref == nil {
			ref = buf
		} else if i := firstDiff(buf, ref); i >= 0 {
			t.Fatalf("%s: byte %d differs from %s", kn, i, Kernels()[0])
		}
	}
}

// The minmax kernels do not allocate.
func TestMinmaxNoAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation may allocate")
	}
	x := randRows(1, 131, 1)
	for _, k := range available {
		n := testing.AllocsPerRun(20, func() {
			k.minmax(x)
			k.minmax(x[:5])
		})
		if n != 0 {
			t.Errorf("%s: %.1f allocations per call", k.name, n)
		}
	}
}

func BenchmarkMinmax(b *testing.B) {
	x := randRows(cacheRows, benchWidth, 2)
	for _, k := range available {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(int64(len(x)) * 4)
			for b.Loop() {
				for i := 0; i < cacheRows; i++ {
					k.minmax(x[i*benchWidth : (i+1)*benchWidth])
				}
			}
		})
	}
}
