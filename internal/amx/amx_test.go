package amx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// specials are float32 bit patterns at the rounding's edges.
var specials = []uint32{
	0, 0x80000000, 0x7f800000, 0xff800000, // ±0, ±Inf
	0x7fc00000, 0xffc00000, 0x7f800001, 0x7fbfffff, 0xff800001, // NaNs, signalling ones
	0x7f7fffff, 0xff7fffff, 0x7f7f7fff, 0x7f7f8000, 0x7f7f8001, // max finite: rounds to Inf or not
	0x00000001, 0x007fffff, 0x00008000, 0x00018000, 0x80008000, // subnormals, ties
	0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, // ties to even, below and above
}

func randomBits(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		if r.IntN(4) == 0 {
			x[i] = math.Float32frombits(specials[r.IntN(len(specials))])
		} else {
			x[i] = math.Float32frombits(r.Uint32())
		}
	}
	return x
}

func sameBits16(t *testing.T, what string, got, want []uint16) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d: %#04x, want %#04x", what, i, got[i], want[i])
		}
	}
}

func TestBits(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f807fff, 0x3f80}, // below the tie
		{0x3f808001, 0x3f81}, // above the tie
		{0x7f7fffff, 0x7f80}, // max finite overflows to Inf
		{0xff7fffff, 0xff80}, // and -Inf
		{0x7f800000, 0x7f80}, // Inf
		{0x7f800001, 0x7fc0}, // signalling NaN is quieted, not Inf
		{0xffc00001, 0xffc0}, // negative NaN keeps its sign
		{0x80000000, 0x8000}, // -0
		{0x00008000, 0x0000}, // subnormal tie to even
		{0x00018000, 0x0002}, // subnormal tie, odd
	}
	for _, c := range cases {
		if got := Bits(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("Bits(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	// Round is exact for bfloat16 values and within half an ulp otherwise.
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		v := float32(r.NormFloat64())
		got := Round(v)
		if Round(got) != got {
			t.Fatalf("Round(%g) = %g is not a bfloat16", v, got)
		}
		if d := math.Abs(float64(got - v)); d > math.Abs(float64(v))/256 {
			t.Fatalf("Round(%g) = %g, error %g", v, got, d)
		}
	}
}

// TestRoundRowsTwin compares the row conversions (AVX2 where the CPU has
// it) with the generic twin: odd widths, misaligned starts, sentinels
// around every row, strides, special values.
func TestRoundRowsTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, cols := range []int{0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 47, 100, 128, 255, 256} {
		for _, off := range []int{0, 1, 3} {
			rows := 5
			ss, ds := cols+off+2, cols+5
			src := randomBits(r, off+rows*ss)[off:]
			const sentinel = 0xbeef
			dst := make([]uint16, rows*ds+1)
			for i := range dst {
				dst[i] = sentinel
			}
			RoundRows(dst[1:], ds, src, ss, rows, cols)
			for i := range rows {
				want := make([]uint16, cols)
				roundRowGeneric(want, src[i*ss:i*ss+cols])
				sameBits16(t, "RoundRows", dst[1+i*ds:1+i*ds+cols], want)
				for j := 1 + i*ds + cols; j < 1+(i+1)*ds && j < len(dst); j++ {
					if dst[j] != sentinel {
						t.Fatalf("cols %d: RoundRows wrote past row %d at %d", cols, i, j)
					}
				}
			}
			if dst[0] != sentinel {
				t.Fatalf("cols %d: RoundRows wrote before the first row", cols)
			}
		}
	}
}

func TestPairRowsTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, cols := range []int{1, 7, 8, 9, 16, 47, 64, 100, 256} {
		for _, rows := range []int{1, 2, 3, 6, 7} {
			ss, ds := cols+3, cols+1
			src := randomBits(r, 1+rows*ss)[1:]
			pairs := (rows + 1) / 2
			dst := make([]uint32, pairs*ds)
			for i := range dst {
				dst[i] = 0xdeadbeef
			}
			PairRows(dst, ds, src, ss, rows, cols)
			for p := range pairs {
				for j := range cols {
					lo := uint32(Bits(src[2*p*ss+j]))
					var hi uint32
					if 2*p+1 < rows {
						hi = uint32(Bits(src[(2*p+1)*ss+j]))
					}
					if got := dst[p*ds+j]; got != lo|hi<<16 {
						t.Fatalf("cols %d rows %d: pair %d col %d: %#08x, want %#08x", cols, rows, p, j, got, lo|hi<<16)
					}
				}
				if dst[p*ds+cols] != 0xdeadbeef {
					t.Fatalf("cols %d: PairRows wrote past pair %d", cols, p)
				}
			}
		}
	}
}

func TestTransposeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, shape := range [][2]int{{1, 1}, {3, 5}, {8, 8}, {9, 17}, {16, 7}, {7, 16}, {32, 100}, {33, 47}, {512, 256}} {
		rows, cols := shape[0], shape[1]
		ss, ds := cols+1, rows+2
		src := randomBits(r, rows*ss)
		dst := make([]uint16, cols*ds)
		for i := range dst {
			dst[i] = 0xbeef
		}
		TransposeRows(dst, ds, src, ss, rows, cols)
		for j := range cols {
			for i := rows; i < ds; i++ {
				if dst[j*ds+i] != 0xbeef {
					t.Fatalf("%d×%d: wrote dst[%d][%d] past the rows", rows, cols, j, i)
				}
			}
		}
		for i := range rows {
			for j := range cols {
				if got, want := dst[j*ds+i], Bits(src[i*ss+j]); got != want {
					t.Fatalf("%d×%d: (%d,%d): %#04x, want %#04x", rows, cols, i, j, got, want)
				}
			}
		}
	}
}

// TestTiles runs the tile kernel (where the CPU and OS have AMX) against a
// float64 product of the same bfloat16 operands: the tile unit accumulates
// in float32 in its own order, so agreement is to float32 rounding of the
// sum, with both the fresh and the accumulating start.
func TestTiles(t *testing.T) {
	if err := Enable(); err != nil {
		t.Skipf("no tile kernel here: %v", err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, sh := range []struct{ rb, cb, ks int }{{1, 1, 1}, {2, 3, 4}, {3, 8, 8}, {1, 2, 13}} {
		m, n, k := sh.rb*BlockRows, sh.cb*BlockCols, sh.ks*KStep
		lda, ldb, ldc := k+16, n+8, n+24 // elements; padded strides
		a := make([]uint16, m*lda)
		b := make([]uint32, (k/2)*ldb)
		c := make([]float32, m*ldc)
		af := make([]float64, m*k)
		bf := make([]float64, k*n)
		for i := range m {
			for j := range k {
				v := Round(float32(r.NormFloat64()))
				a[i*lda+j] = Bits(v)
				af[i*k+j] = float64(v)
			}
		}
		for p := range k / 2 {
			for j := range n {
				v0, v1 := Round(float32(r.NormFloat64())), Round(float32(r.NormFloat64()))
				b[p*ldb+j] = uint32(Bits(v0)) | uint32(Bits(v1))<<16
				bf[2*p*n+j], bf[(2*p+1)*n+j] = float64(v0), float64(v1)
			}
		}
		for _, acc := range []bool{false, true} {
			start := make([]float32, len(c))
			for i := range c {
				c[i] = float32(r.NormFloat64())
				start[i] = c[i]
			}
			Tiles(a, lda*2, b, ldb*4, c, ldc*4, sh.rb, sh.cb, sh.ks, acc)
			for i := range m {
				for j := range n {
					want, mag := 0.0, 0.0
					if acc {
						want, mag = float64(start[i*ldc+j]), math.Abs(float64(start[i*ldc+j]))
					}
					for q := range k {
						want += af[i*k+q] * bf[q*n+j]
						mag += math.Abs(af[i*k+q] * bf[q*n+j])
					}
					if d := math.Abs(float64(c[i*ldc+j]) - want); d > 1e-5*mag+1e-30 {
						t.Fatalf("%v acc %v: C[%d][%d] = %g, want %g", sh, acc, i, j, c[i*ldc+j], want)
					}
				}
				for j := n; j < ldc; j++ {
					if c[i*ldc+j] != start[i*ldc+j] {
						t.Fatalf("%v: the kernel wrote C[%d][%d] outside its blocks", sh, i, j)
					}
				}
			}
		}
	}
}
