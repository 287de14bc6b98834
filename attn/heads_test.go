package attn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/internal/rowk"
)

// TestHeadKernelsMatchReference runs every head kernel's accum and dots
// against the reference loops of their contracts: edge counts around the
// prefetch distance (0, 1, 7–9, 33), strides and weight strides wider than
// the 64 columns, dot products of widths 1 to 80 (whole vectors, a masked
// rest, both), operands misaligned by one float inside sentinel-padded
// buffers whose padding must stay untouched.
func TestHeadKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	t.Logf("head kernels %v", headFamily.Names())
	for _, k := range headFamily.Impls() {
		for _, n := range []int{0, 1, 7, 8, 9, 33} {
			for _, c := range []struct{ stride, wstride int }{{64, 8}, {72, 8}, {128, 16}} {
				const rows = 40
				x := padded(r, rows*c.stride)
				idx := make([]int32, n)
				for i := range idx {
					idx[i] = int32(r.IntN(rows))
				}
				w := padded(r, max(n*c.wstride, 8))
				out := padded(r, 64)
				want := make([]float64, 64)
				for j := range want {
					want[j] = float64(out.in[j])
					for e, u := range idx {
						want[j] += float64(w.in[e*c.wstride+j/8]) * float64(x.in[int(u)*c.stride+j])
					}
				}
				k.prefetch(x.in, c.stride, idx, 4*c.stride+1) // a hint: nothing read or written
				k.accum(out.in, x.in, c.stride, idx, w.in, c.wstride)
				for j := range want {
					if math.Abs(float64(out.in[j])-want[j]) > 1e-5*(1+math.Abs(want[j])) {
						t.Fatalf("%s accum, %d edges, stride %d/%d: out[%d] = %g, want %g", k.name, n, c.stride, c.wstride, j, out.in[j], want[j])
					}
				}
				for _, p := range []pad{x, w, out} {
					p.check(t)
				}
			}
		}
		for _, n := range []int{0, 1, 7, 8, 9, 33} {
			for _, c := range []struct{ width, stride, dstride int }{{64, 64, 8}, {1, 3, 1}, {7, 7, 2}, {8, 9, 1}, {23, 30, 3}, {47, 47, 1}, {80, 128, 16}} {
				const rows = 40
				x, b := padded(r, rows*c.stride), padded(r, c.width)
				idx := randIdx(r, n, rows)
				d := padded(nil, max((n-1)*c.dstride+1, 1))
				k.dots(d.in, c.dstride, x.in, c.stride, idx, b.in)
				for e, u := range idx {
					var want float64
					for j := range c.width {
						want += float64(x.in[int(u)*c.stride+j]) * float64(b.in[j])
					}
					if got := d.in[e*c.dstride]; math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("%s dots, %d edges, %v: d[%d] = %g, want %g", k.name, n, c, e*c.dstride, got, want)
					}
				}
				for _, p := range []pad{x, b, d} {
					p.check(t)
				}
			}
		}
	}
}

// TestHeadKernelsInPasses runs Forward and Backward with every head
// kernel against the generic twins on the layouts that use them (8, 12
// and 16 heads of 8; one head of 64 or 47, two of 32, three of 5 for the
// dot products) with attention dropout.
func TestHeadKernelsInPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, lay := range [][2]int{{8, 8}, {12, 8}, {16, 8}, {1, 64}, {2, 32}, {1, 47}, {3, 5}} {
		sp := Spec{Heads: lay[0], Width: lay[1], Slope: 0.2, Drop: 0.3, Seed: 9}
		h, hf := sp.Heads, sp.Heads*sp.Width
		g := degGraph(t, r, 31, []int{0, 1, 5, 9, 17, 40, 3, 0, 2})
		z, src, dst := randVec(r, 31*hf), randVec(r, 31*h), randVec(r, g.Rows*h)
		gp, cd := randVec(r, g.Rows*hf), randVec(r, g.Rows*h)
		var want [4][]float32
		for i, k := range append([]headKernels{genericHeads}, headFamily.Impls()...) {
			var st State
			if err := forward(g, sp, z, src, dst, Ids{}, GenericRowsW, k, &st); err != nil {
				t.Fatal(err)
			}
			gz, gs, gd := make([]float32, len(z)), make([]float32, len(src)), make([]float32, len(dst))
			if err := backward(g, sp, z, src, dst, gp, cd, GenericRowsW, k, &st, &Scratch{}, gz, gs, gd); err != nil {
				t.Fatal(err)
			}
			got := [4][]float32{st.R, gz, gs, gd}
			if i == 0 {
				want = got
				continue
			}
			for j, what := range []string{"R", "gz", "gsrc", "gdst"} {
				for e := range want[j] {
					if d := math.Abs(float64(got[j][e] - want[j][e])); d > 1e-5*(1+math.Abs(float64(want[j][e]))) {
						t.Fatalf("%d×%d, %s: %s[%d] = %g, generic %g", sp.Heads, sp.Width, k.name, what, e, got[j][e], want[j][e])
					}
				}
			}
		}
	}
}

// TestHeadExpMatchesExpFlush runs every head kernel's exponentials on
// sentinel-padded misaligned inputs of 0 to 41 values (whole vectors and a
// rest): random scores ≤ 0 and the special values (the range's ends, just
// outside them, ±0, ±Inf, NaN), each equal to rowk.ExpFlush bit for bit.
func TestHeadExpMatchesExpFlush(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	special := []float32{0, float32(math.Copysign(0, -1)), rowk.ExpLo, rowk.ExpHi, -87.34, -87.33, -103.9, -104, -1e30, 88.5, 1e30, -inf, inf, nan, -1e-30, 1}
	for _, k := range headFamily.Impls() {
		for _, n := range []int{0, 1, 7, 8, 9, 16, 23, 41} {
			x := padded(r, n)
			for i := range x.in {
				x.in[i] = -float32(r.ExpFloat64()) * 20
				if r.IntN(3) == 0 {
					x.in[i] = special[r.IntN(len(special))]
				}
			}
			want := make([]float32, n)
			for i, y := range x.in {
				want[i] = rowk.ExpFlush(y)
			}
			in := append([]float32(nil), x.in...)
			k.exp(x.in)
			for i := range want {
				if math.Float32bits(x.in[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(want[i])) && math.IsNaN(float64(x.in[i]))) {
					t.Fatalf("%s exp, %d values: exp(%g) = %g, rowk.ExpFlush %g", k.name, n, in[i], x.in[i], want[i])
				}
			}
			x.check(t)
		}
	}
	for _, c := range [][2]float32{{-inf, 0}, {-88, 0}, {rowk.ExpHi + 1, rowk.ExpFlush(rowk.ExpHi)}, {0, 1}} {
		if got := rowk.ExpFlush(c[0]); got != c[1] {
			t.Errorf("rowk.ExpFlush(%g) = %g, want %g", c[0], got, c[1])
		}
	}
	if got := rowk.ExpFlush(nan); !math.IsNaN(float64(got)) {
		t.Errorf("rowk.ExpFlush(NaN) = %g", got)
	}
}

// TestHeadSoftmaxGradMatchReference runs every head kernel's softmax8
// and grad8 against their pure-Go twins (the reference loops) on
// sentinel-padded misaligned operands: edge counts around the prefetch
// distance (0, 1, 7–9, 33), strides wider than 8 or 64 values, strides 0
// (terms shared by every edge), random keep bytes, dropout scales 1 and
// 2.5. softmax8's weights, max and sums and grad8's weights must be
// equal bit for bit (the same float32 operations), grad8's sums within
// 1e-5 (the dot products' order differs).
func TestHeadSoftmaxGradMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	const rows = 40
	for _, k := range headFamily.Impls() {
		for _, n := range []int{0, 1, 7, 8, 9, 33} {
			for _, c := range []struct {
				pstride, sstride, kstride int
				scale                     float32
			}{{8, 8, 1, 1}, {16, 12, 2, 2.5}, {24, 1, 0, 1}} {
				src, d := padded(r, rows*c.sstride+8), padded(r, 8)
				idx := randIdx(r, n, rows)
				keep := make([]uint8, max(n*c.kstride, 1))
				for i := range keep {
					keep[i] = uint8(r.IntN(256))
				}
				var got, want [3]pad
				for i, kk := range []headKernels{k, genericHeads} {
					out := &got
					if i == 1 {
						out = &want
					}
					out[0], out[1], out[2] = padded(nil, max(n*c.pstride, 8)), padded(nil, 8), padded(nil, 8)
					kk.softmax8(out[0].in, c.pstride, src.in, c.sstride, idx, d.in, 0.2, out[1].in, out[2].in, keep, c.kstride, c.scale)
				}
				for j, what := range []string{"p", "m", "s"} {
					if !sameBits(got[j].in, want[j].in) {
						t.Fatalf("%s softmax8, %d edges, strides %v: %s = %v, twin %v", k.name, n, c, what, got[j].in, want[j].in)
					}
					got[j].check(t)
				}
				src.check(t)
				d.check(t)
			}
			for _, c := range []struct{ wstride, stride, astride, tstride, toff, kstride int }{
				{8, 64, 8, 0, 8, 1}, {16, 72, 0, 24, 8, 2}, {8, 128, 16, 48, 16, 0}} {
				x, b := padded(r, rows*c.stride), padded(r, 64)
				a, tt := padded(r, rows*c.astride+8), padded(r, rows*c.tstride+2*c.toff+8)
				keep := make([]uint8, max(n*c.kstride, 1))
				for i := range keep {
					keep[i] = uint8(r.IntN(256))
				}
				idx := randIdx(r, n, rows)
				for _, scale := range []float32{1, 2.5} {
					w1, w2 := padded(nil, max(n*c.wstride, 8)), padded(nil, max(n*c.wstride, 8))
					s1, s2 := padded(nil, 8), padded(nil, 8)
					k.grad8(w1.in, c.wstride, x.in, c.stride, idx, b.in, a.in, c.astride, tt.in, c.tstride, c.toff, keep, c.kstride, 0.2, scale, s1.in)
					gradEdges8Generic(w2.in, c.wstride, x.in, c.stride, idx, b.in, a.in, c.astride, tt.in, c.tstride, c.toff, keep, c.kstride, 0.2, scale, s2.in)
					if !sameBits(w1.in, w2.in) {
						t.Fatalf("%s grad8, %d edges, %v, scale %g: w = %v, twin %v", k.name, n, c, scale, w1.in, w2.in)
					}
					for j := range s2.in {
						if d := math.Abs(float64(s1.in[j] - s2.in[j])); d > 1e-5*(1+math.Abs(float64(s2.in[j]))) {
							t.Fatalf("%s grad8, %d edges, %v, scale %g: sum[%d] = %g, twin %g", k.name, n, c, scale, j, s1.in[j], s2.in[j])
						}
					}
					for _, p := range []pad{w1, s1, x, b, a, tt} {
						p.check(t)
					}
				}
			}
		}
	}
}

// randIdx is n random row indices below rows.
func randIdx(r *rand.Rand, n, rows int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(r.IntN(rows))
	}
	return idx
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestHeadKeepMatchesKeepMask runs every head kernel's keepEdges on 0 to
// 33 edges (whole blocks of 8 and a rest) of rows and of columns, entries
// misaligned by one inside a longer slice, ids empty (the entries) or
// random 64-bit ones, 1 to 17 heads (a last byte of 1 to 8 heads) and the
// thresholds of dropout 0, 0.3, 0.6 and nearly 1, against Keep head by
// head (edgeHash, keepMask); the byte after the last edge stays untouched.
func TestHeadKeepMatchesKeepMask(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const rows = 50
	global := make([]int64, rows)
	for i := range global {
		global[i] = int64(r.Uint64())
	}
	for _, k := range headFamily.Impls() {
		for _, n := range []int{0, 1, 7, 8, 9, 33} {
			idx := randIdx(r, n+1, rows)[1:]
			for _, ids := range [][]int64{nil, global} {
				for _, drop := range []float32{0, 0.3, 0.6, 0.9999999} {
					thr := dropThreshold(drop)
					for _, heads := range []int{1, 3, 8, 9, 16, 17} {
						nb := (heads + 7) / 8
						for _, byRow := range []bool{true, false} {
							at, seed := int64(r.Uint64()), r.Uint64()
							keep := make([]uint8, n*nb+1)
							for i := range keep {
								keep[i] = 0xa5
							}
							if byRow {
								k.keepEdges(keep, idx, ids, 1, uint64(at)*edgeMul, seed, heads, int64(thr))
							} else {
								k.keepEdges(keep, idx, ids, edgeMul, uint64(at), seed, heads, int64(thr))
							}
							for e, u := range idx {
								id := int64(u)
								if ids != nil {
									id = ids[u]
								}
								eh := edgeHash(seed, at, id)
								if !byRow {
									eh = edgeHash(seed, id, at)
								}
								for hd := range 8 * nb {
									want := hd < heads && keepMask(eh, hd, thr) != 0
									if got := keep[e*nb+hd/8]>>(hd%8)&1 == 1; got != want {
										t.Fatalf("%s keepEdges, %d heads, drop %g, byRow %v, ids %v: head %d of edge %d: %v, keepMask %v", k.name, heads, drop, byRow, ids != nil, hd, e, got, want)
									}
								}
							}
							if keep[n*nb] != 0xa5 {
								t.Fatalf("%s keepEdges: byte after the last edge written", k.name)
							}
						}
					}
				}
			}
		}
	}
}
