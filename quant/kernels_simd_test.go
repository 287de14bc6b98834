package quant

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/dispatch"
)

// simdWidths are the row widths every kernel is compared on: all tails of
// the first chunks, and wide rows with and without a partial last chunk.
func simdWidths() []int {
	var w []int
	for i := 1; i <= 70; i++ {
		w = append(w, i)
	}
	return append(w, 128, 256, 602, 1031)
}

// simdKernels returns every available kernel set except generic.
func simdKernels(t *testing.T) []kernels {
	t.Helper()
	var ks []kernels
	for _, k := range available {
		if k.name != "generic" {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		t.Skipf("no SIMD quantisation kernels on %s/%s (available: %v)", runtime.GOOS, runtime.GOARCH, Kernels())
	}
	return ks
}

// The kernel sets offered must be this architecture's sets that
// internal/dispatch finds the CPU supports (its own test checks that
// against the CPU flags): a wiring bug would otherwise silently test
// generic against itself.
func TestSIMDKernelsOffered(t *testing.T) {
	names := Kernels()
	var want []string
	for _, k := range archKernels() {
		if dispatch.Supported(k.name) {
			want = append(want, k.name)
		}
	}
	want = append(want, "generic")
	if !slices.Equal(names, want) {
		t.Fatalf("Kernels() = %v, want %v", names, want)
	}
	for _, n := range names {
		k, err := selectKernels(n)
		if err != nil || k.name != n {
			t.Fatalf("selectKernels(%q) = %q, %v", n, k.name, err)
		}
		for _, b := range []int{2, 4, 8} {
			if k.pack[b] == nil || k.unpack[b] == nil {
				t.Fatalf("kernel %s has no %d-bit pack/unpack", n, b)
			}
		}
	}
}

// simdRow fills x with a row of the given kind.
func simdRow(x []float32, kind int, rng *rand.Rand) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for j := range x {
		switch kind {
		case 0: // ordinary values
			x[j] = float32(rng.NormFloat64()*3 + 1)
		case 1: // constant
			x[j] = 2.5
		case 2: // non-finite values among ordinary ones
			x[j] = float32(rng.NormFloat64())
			switch rng.IntN(6) {
			case 0:
				x[j] = nan
			case 1:
				x[j] = inf
			case 2:
				x[j] = -inf
			}
		case 3: // all NaN
			x[j] = nan
		case 4: // wide dynamic range, subnormals, signed zeros
			switch rng.IntN(4) {
			case 0:
				x[j] = float32(rng.NormFloat64() * 1e30)
			case 1:
				x[j] = math.Float32frombits(rng.Uint32() & 0x807fffff)
			case 2:
				x[j] = float32(math.Copysign(0, rng.NormFloat64()))
			default:
				x[j] = float32(rng.NormFloat64() * 1e-3)
			}
		}
	}
}

// simdParams returns the (zero, inv) pairs a row is packed with: its own
// parameters for every format, inv = 0, and parameters that push t below
// 0 and above levels so both clamps act.
func simdParams(x []float32, bits int) [][2]float32 {
	var ps [][2]float32
	for _, pf := range []Params{ParamsF32, ParamsBF16} {
		z, _, inv, _ := rowParams(x, Format{Bits: bits, Params: pf})
		ps = append(ps, [2]float32{z, inv})
	}
	z, _, inv, _ := rowParams(x, Format{Bits: bits})
	ps = append(ps, [2]float32{z, 0}, [2]float32{z + 1, inv * 1.7}, [2]float32{-1, 3})
	return ps
}

// Every SIMD pack kernel writes the generic kernel's bytes and leaves the
// RNG in the same state, for every width, misalignment, row kind and
// parameter pair, without touching bytes outside the row.
func TestSIMDPackMatchesGeneric(t *testing.T) {
	const sentinel = 0xA5
	gen := genericKernels()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range simdKernels(t) {
		for _, bits := range []int{2, 4, 8} {
			f := Format{Bits: bits}
			for _, width := range simdWidths() {
				for kind := 0; kind < 5; kind++ {
					off := rng.IntN(16)  // x misalignment, elements
					boff := rng.IntN(16) // dst misalignment, bytes
					xbuf := make([]float32, off+width+16)
					x := xbuf[off : off+width]
					simdRow(x, kind, rng)
					for j := off + width; j < len(xbuf); j++ {
						xbuf[j] = float32(math.NaN()) // must not be read as row data
					}
					rb := f.RowBytes(width)
					for pi, p := range simdParams(x, bits) {
						var r0 RNG
						r0.Seed(rng.Uint64())
						want := make([]byte, rb)
						for i := range want {
							want[i] = 0x5A // pack must overwrite, not OR into, the row
						}
						rw := r0
						gen.pack[bits](want, x, p[0], p[1], &rw)

						buf := make([]byte, boff+rb+32)
						for i := range buf {
							buf[i] = sentinel
						}
						got := buf[boff : boff+rb]
						rg := r0
						k.pack[bits](got, x, p[0], p[1], &rg)
						what := fmt.Sprintf("%s bits %d width %d kind %d params %d (zero %g inv %g)", k.name, bits, width, kind, pi, p[0], p[1])
						for i := range buf {
							if (i < boff || i >= boff+rb) && buf[i] != sentinel {
								t.Fatalf("%s: byte %d outside the row (at %d, %d bytes) written", what, i, boff, rb)
							}
						}
						if i := firstDiff(got, want); i >= 0 {
							t.Fatalf("%s: byte %d = %#02x, generic %#02x (value %d.. = %g)", what, i, got[i], want[i], i*8/bits, x[i*8/bits])
						}
						if rg != rw {
							t.Fatalf("%s: RNG state %v, generic %v", what, rg, rw)
						}
					}
				}
			}
		}
	}
}

// fmaRow builds a row of chunks·16 values, for zero 0 and the given inv,
// whose every value sits where the unfused t = float32(v·inv) + u and the
// fused (single rounding) one truncate to different codes, given the draws
// u that r produces. A kernel that fuses the multiply-add fails on it.
func fmaRow(t *testing.T, chunks int, inv float32, levels int, r RNG) []float32 {
	t.Helper()
	x := make([]float32, chunks*Lanes)
	found := 0
	for c := 0; c < chunks; c++ {
		r.step()
		for l := 0; l < Lanes; l++ {
			u := uniform(r[l])
			k := 1 + (c*Lanes+l)%(levels-1) // target code boundary
			v0 := float32((float64(k) - float64(u)) / float64(inv))
			x[c*Lanes+l] = v0
			for d := 0; d < 2048; d++ {
				v := math.Float32frombits(math.Float32bits(v0) + uint32(d/2)*uint32(1-2*(d%2)))
				unfused := float32(float32(v*inv) + u)
				fused := float32(float64(v)*float64(inv) + float64(u))
				if math.Floor(float64(unfused)) != math.Floor(float64(fused)) {
					x[c*Lanes+l] = v
					found++
					break
				}
			}
		}
	}
	if found < len(x)/8 {
		t.Fatalf("fmaRow: only %d of %d values separate fused from unfused", found, len(x))
	}
	return x
}

// The kernels must not fuse t = (v − zero)·inv + u into one FMA: on values
// chosen where that changes the code, they still match generic.
func TestSIMDPackNotFused(t *testing.T) {
	gen := genericKernels()
	for _, k := range simdKernels(t) {
		for _, bits := range []int{2, 4, 8} {
			levels := 1<<bits - 1
			for _, inv := range []float32{1.0 / 3, 0.7, 1.0 / 9.1} {
				var r0 RNG
				r0.Seed(uint64(bits))
				x := fmaRow(t, 4, inv, levels, r0)
				x = x[:len(x)-5] // and a partial last chunk
				want := make([]byte, Format{Bits: bits}.RowBytes(len(x)))
				got := make([]byte, len(want))
				rw, rg := r0, r0
				gen.pack[bits](want, x, 0, inv, &rw)
				k.pack[bits](got, x, 0, inv, &rg)
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("%s bits %d inv %g: byte %d = %#02x, generic %#02x", k.name, bits, inv, i, got[i], want[i])
				}
			}
		}
	}
}

// Every SIMD unpack kernel writes the generic kernel's float bits from any
// bytes (unused high bits of the last byte included), for every width and
// misalignment, without touching values outside the row.
func TestSIMDUnpackMatchesGeneric(t *testing.T) {
	sentinel := math.Float32frombits(0x7fa5a5a5)
	gen := genericKernels()
	rng := rand.New(rand.NewPCG(3, 4))
	params := [][2]float32{{0, 1}, {-3, 0.25}, {1.5, 0}, {-1e30, 7e27}, {2, 1e-40}, {-0.7, 0.013}}
	for _, k := range simdKernels(t) {
		for _, bits := range []int{2, 4, 8} {
			f := Format{Bits: bits}
			for _, width := range simdWidths() {
				for _, p := range params {
					off := rng.IntN(16)
					boff := rng.IntN(16)
					rb := f.RowBytes(width)
					sbuf := make([]byte, boff+rb+16)
					for i := range sbuf {
						sbuf[i] = byte(rng.Uint32())
					}
					src := sbuf[boff : boff+rb]
					want := make([]float32, width)
					gen.unpack[bits](want, src, p[0], p[1])

					buf := make([]float32, off+width+20)
					for i := range buf {
						buf[i] = sentinel
					}
					got := buf[off : off+width]
					k.unpack[bits](got, src, p[0], p[1])
					what := fmt.Sprintf("%s bits %d width %d (zero %g scale %g)", k.name, bits, width, p[0], p[1])
					for i := range buf {
						if (i < off || i >= off+width) && math.Float32bits(buf[i]) != math.Float32bits(sentinel) {
							t.Fatalf("%s: value %d outside the row (at %d) written", what, i, off)
						}
					}
					for j := range got {
						if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
							t.Fatalf("%s: value %d = %g, generic %g", what, j, got[j], want[j])
						}
					}
				}
			}
		}
	}
}

// Whole codec streams (many rows, several blocks and threads) agree byte for
// byte across kernels, and so do their decodings.
func TestSIMDCodecMatchesGeneric(t *testing.T) {
	simdKernels(t)
	const pad = 2 * Lanes
	for _, rows := range []int{1, 2*BlockRows + 5} {
		for _, width := range []int{16, 17, 45, 47, 100, 128, 131} {
			x := randRows(rows, width, uint64(width))
			x[7] = float32(math.NaN())
			x[min(width+3, len(x)-1)] = float32(math.Inf(1))
			for _, f := range formats() {
				var ref []byte
				var refOut []float32
				for _, kn := range Kernels() {
					c, err := NewCodec(f, 2, kn)
					if err != nil {
						t.Fatal(err)
					}
					d, p := c.Size(rows, width)
					buf := sentinelBytes(d+p, pad)
					c.Encode(buf[:d+p], x, rows, width, 5)
					out := sentinelFloats(rows*width, pad)
					if err := c.Decode(out[:rows*width], buf[:d+p], rows, width); err != nil {
						t.Fatal(err)
					}
					where := fmt.Sprintf("%s %d×%d kernel %s", c.Name(), rows, width, kn)
					checkSentinels(t, where, buf[d+p:], out[rows*width:])
					buf, out = buf[:d+p], out[:rows*width]
					if ref == nil {
						ref, refOut = buf, out
						continue
					}
					if i := firstDiff(buf, ref); i >= 0 {
						t.Fatalf("%s: byte %d differs from %s", where, i, Kernels()[0])
					}
					for i := range out {
						if math.Float32bits(out[i]) != math.Float32bits(refOut[i]) {
							t.Fatalf("%s: value %d = %g, %s gives %g", where, i, out[i], Kernels()[0], refOut[i])
						}
					}
				}
			}
		}
	}
}

// sentinelBytes and sentinelFloats return n elements followed by pad
// sentinels that checkSentinels expects unchanged.
func sentinelBytes(n, pad int) []byte {
	b := make([]byte, n+pad)
	for i := n; i < len(b); i++ {
		b[i] = 0xA5
	}
	return b
}

func sentinelFloats(n, pad int) []float32 {
	v := make([]float32, n+pad)
	for i := n; i < len(v); i++ {
		v[i] = -7.25
	}
	return v
}

func checkSentinels(t *testing.T, where string, b []byte, v []float32) {
	t.Helper()
	for i, x := range b {
		if x != 0xA5 {
			t.Fatalf("%s: encode wrote byte %d past the block", where, i)
		}
	}
	for i, x := range v {
		if x != -7.25 {
			t.Fatalf("%s: decode wrote value %d past the rows", where, i)
		}
	}
}

// The SIMD wrappers keep their tail buffers on the stack: encoding a row
// must not allocate.
func TestSIMDNoAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation may allocate")
	}
	for _, k := range simdKernels(t) {
		for _, bits := range []int{2, 4, 8} {
			width := 37
			x := randRows(1, width, 1)
			dst := make([]byte, Format{Bits: bits}.RowBytes(width))
			out := make([]float32, width)
			var r RNG
			r.Seed(1)
			n := testing.AllocsPerRun(20, func() {
				k.pack[bits](dst, x, -1, 0.5, &r)
				k.unpack[bits](out, dst, -1, 2)
			})
			if n != 0 {
				t.Errorf("%s bits %d: %.1f allocations per row", k.name, bits, n)
			}
		}
	}
}

// noasm reports whether the test binary was built with the noasm tag
// (only the generic kernels then).
func noasm() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), "noasm") {
			return true
		}
	}
	return false
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestKernelNames: names are matched in any case, "auto" is the best set,
// sve is served by neon, and an unknown name is a *dispatch.Error naming
// where it came from.
func TestKernelNames(t *testing.T) {
	names := Kernels()
	for _, n := range []string{"auto", " Auto", "AUTO"} {
		if k, err := selectKernels(n); err != nil || k.name != names[0] {
			t.Fatalf("selectKernels(%q) = %q, %v", n, k.name, err)
		}
	}
	for _, n := range names {
		if k, err := selectKernels(strings.ToUpper(n)); err != nil || k.name != n {
			t.Fatalf("selectKernels(%q) = %q, %v", strings.ToUpper(n), k.name, err)
		}
	}
	if k, err := selectKernels("sve"); dispatch.Supported("sve") && !noasm() && (err != nil || k.name != "neon") {
		t.Fatalf("sve on an SVE CPU: %q, %v", k.name, err)
	} else if !dispatch.Supported("sve") && err == nil {
		t.Fatalf("sve on a CPU without SVE: %q", k.name)
	}
	var de *dispatch.Error
	if _, err := selectKernels("bogus"); !errors.As(err, &de) || !de.Unknown || de.Source != dispatch.Field {
		t.Fatalf("bogus: %v", err)
	}
	t.Setenv(dispatch.Env, "AVX9")
	if _, err := NewCodec(Format{Bits: 2}, 1, ""); !errors.As(err, &de) || de.Source != dispatch.Env {
		t.Fatalf("%s=AVX9: %v", dispatch.Env, err)
	}
	t.Setenv(dispatch.Env, "GENERIC")
	if KernelName() != "generic" {
		t.Fatalf("%s=GENERIC: %s", dispatch.Env, KernelName())
	}
}
