package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

func TestDropoutMask(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	x := randMat(r, 300, 200) // several RNG blocks
	d := &Dropout{P: 0.3}
	y := slices.Clone(d.Forward(x, true, false, 42).Data)
	mask := slices.Clone(d.mask)

	kept := 0
	for i, v := range y {
		switch {
		case mask[i>>6]>>(uint(i)&63)&1 == 1:
			kept++
			if v != x.Data[i]*float32(1/0.7) {
				t.Fatalf("kept element %d = %g, want %g/0.7", i, v, x.Data[i])
			}
		case v != 0:
			t.Fatalf("dropped element %d = %g", i, v)
		}
	}
	if frac := float64(kept) / float64(len(y)); frac < 0.68 || frac > 0.72 {
		t.Fatalf("kept fraction %.4f, want about 0.7", frac)
	}

	// Same seed: same mask, whatever the thread count.
	old := runtime.GOMAXPROCS(1)
	d.Forward(x, true, false, 42)
	runtime.GOMAXPROCS(old)
	if !slices.Equal(d.mask, mask) {
		t.Fatal("same seed gave a different mask with GOMAXPROCS=1")
	}
	d.Forward(x, true, false, 43)
	if slices.Equal(d.mask, mask) {
		t.Fatal("different seeds gave the same mask")
	}

	// Inactive: identity, no copy.
	if got := d.Forward(x, false, false, 42); got != x {
		t.Fatal("eval-mode dropout did not return its input")
	}
	g := randMat(r, 300, 200)
	if got := d.Backward(g); got != g {
		t.Fatal("inactive dropout backward did not return its input")
	}
	z := &Dropout{P: 0}
	if got := z.Forward(x, true, false, 42); got != x || z.mask != nil {
		t.Fatal("p=0 dropout is not the identity or drew a mask")
	}
}

func TestDropoutInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	x := randMat(r, 10, 10)
	want := slices.Clone((&Dropout{P: 0.5}).Forward(x, true, false, 9).Data)
	d := &Dropout{P: 0.5}
	if got := d.Forward(x, true, true, 9); got != x || !slices.Equal(x.Data, want) {
		t.Fatal("in-place dropout differs from out-of-place")
	}
}

func TestDropoutGradientFixedMask(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	x := randMat(r, 5, 4)
	c := randF64(r, 20)
	d := &Dropout{P: 0.4}
	d.Forward(x, true, false, 5)
	gx := d.Backward(f32(c, 5, 4))
	loss := func() float64 { return dot(c, d.Forward(x, true, false, 5)) }
	checkFD(t, "dropout input", x.Data, gx.Data, loss, 1e-2, 1e-3)
	zeros := 0
	for _, v := range gx.Data {
		if v == 0 {
			zeros++
		}
	}
	if zeros == 0 || zeros == len(gx.Data) {
		t.Fatalf("%d of %d gradient entries dropped; the mask is degenerate", zeros, len(gx.Data))
	}
}

func TestDropoutBackwardShapePanics(t *testing.T) {
	d := &Dropout{P: 0.5}
	d.Forward(dense.New(2, 2), true, false, 1)
	defer func() {
		if recover() == nil {
			t.Fatal("mismatched gradient did not panic")
		}
	}()
	d.Backward(dense.New(3, 2))
}

// The mask is kept as bits: on odd sizes (partial last word, several RNG
// blocks, a block boundary inside a word-aligned run) the bits say exactly
// which elements Forward kept, restore recomputes Forward's output bit for
// bit from them, and Backward gates by them.
func TestDropoutMaskBitsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, sh := range [][2]int{{1, 1}, {3, 7}, {13, 37}, {129, 127}, {dropoutBlock/64 + 1, 65}} {
		x := randMat(r, sh[0], sh[1])
		d := &Dropout{P: 0.45, pool: &arena{}}
		y := slices.Clone(d.Forward(x, true, false, 77).Data)
		if len(d.mask) != (len(y)+63)/64 {
			t.Fatalf("%v: %d mask words for %d elements", sh, len(d.mask), len(y))
		}
		kept := 0
		for i, v := range y {
			k := d.kept(i) == 1
			if k {
				kept++
			}
			if want := x.Data[i] * float32(1/(1-0.45)); (k && v != want) || (!k && v != 0) {
				t.Fatalf("%v: element %d = %v, kept bit %v (input %v)", sh, i, v, k, x.Data[i])
			}
		}
		if last := len(y) % 64; last != 0 && d.mask[len(d.mask)-1]>>last != 0 {
			t.Fatalf("%v: bits set beyond the last element", sh)
		}
		if len(y) > 1000 && (kept < len(y)/2-len(y)/10 || kept > len(y)*2/3) {
			t.Fatalf("%v: kept %d of %d at rate 0.45", sh, kept, len(y))
		}
		d.release()
		got := d.restore(x)
		for i := range y {
			if math.Float32bits(got.Data[i]) != math.Float32bits(y[i]) {
				t.Fatalf("%v: restored element %d = %v, Forward gave %v", sh, i, got.Data[i], y[i])
			}
		}
		g := randMat(r, sh[0], sh[1])
		g0 := slices.Clone(g.Data)
		d.Backward(g)
		for i, v := range g.Data {
			want := float32(0)
			if d.kept(i) == 1 {
				want = g0[i] * float32(1/(1-0.45))
			}
			if v != want {
				t.Fatalf("%v: gradient %d = %v, want %v", sh, i, v, want)
			}
		}
	}
}

// TestDropBlockStream: dropBlock draws the decisions of rand.NewPCG's
// stream in order, four per 64-bit word (the element-at-a-time rule,
// written out here), applies them and stores them as bits, for block
// lengths that end inside a word and inside a draw, with and without
// this CPU's kernels; applyWords applies the bits it stored alike.
func TestDropBlockStream(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct {
		k *wordKernels
		n int
	}{{nil, 1}, {nil, 3}, {nil, 4}, {nil, 63}, {nil, 64}, {nil, 65}, {nil, 130}, {nil, 1000}, {nil, dropoutBlock},
		{drops, 63}, {drops, 64}, {drops, 130}, {drops, 1000}, {drops, dropoutBlock}} {
		n := tc.n
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		x[0] = float32(math.Inf(-1)) // dropped: NaN as v·0 gives; kept: -Inf·scale
		const seed, sel, thresh, scale = 77, 12345, int32(19661), float32(1 / 0.7)
		out, mask := make([]float32, n), make([]uint64, (n+63)/64)
		x[n-1] = float32(math.NaN())
		x[n/2] = float32(math.Copysign(0, -1))
		dropBlock(tc.k, x, out, mask, pcg{hi: seed, lo: sel}, thresh, scale)
		again := make([]float32, n)
		applyWords(tc.k, x, again, mask, 0, len(mask), scale)
		src := rand.NewPCG(seed, sel)
		var bits uint64
		for i, v := range x {
			if i%4 == 0 {
				bits = src.Uint64()
			}
			keep := int32(bits>>(16*uint(i%4))&0xffff) >= thresh
			want := v * 0
			if keep {
				want = v * scale
			}
			if got := mask[i/64]>>(uint(i)%64)&1 == 1; got != keep {
				t.Fatalf("n %d: element %d kept %v, the stream says %v", n, i, got, keep)
			}
			if math.Float32bits(out[i]) != math.Float32bits(want) || math.Float32bits(again[i]) != math.Float32bits(want) {
				t.Fatalf("n %d: element %d = %g (applied again %g), want %g", n, i, out[i], again[i], want)
			}
		}
		for w := range mask { // bits past the block's end stay clear
			if end := n - 64*w; end < 64 && mask[w]>>uint(end) != 0 {
				t.Fatalf("n %d: word %d has bits past the end", n, w)
			}
		}
	}
}

// TestReluBias: the one-pass bias and ReLU of the GIN, GCNII and SAGE-max
// layers is dense.AddBias followed by ReLU, bit for bit (negative zeros
// and NaNs included).
func TestReluBias(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, cols := range []int{1, 7, 8, 47, 128, 131} {
		m := randMat(r, 257, cols)
		m.Data[0], m.Data[1%len(m.Data)] = float32(math.NaN()), float32(math.Copysign(0, -1))
		m.Data[2%len(m.Data)] = -float32(math.NaN())
		b := randMat(r, 1, cols).Data
		want := &dense.Matrix{Rows: m.Rows, Cols: m.Cols, Data: slices.Clone(m.Data)}
		dense.AddBias(want, b)
		ReLU(want)
		reluBias(m, b)
		for i, v := range want.Data {
			if math.Float32bits(m.Data[i]) != math.Float32bits(v) {
				t.Fatalf("%d columns: element %d = %g, AddBias and ReLU give %g", cols, i, m.Data[i], v)
			}
		}
	}
}
