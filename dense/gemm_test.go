package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// randMatrix returns a rows×cols matrix with entries uniform in [-1, 1).
func randMatrix(r *rand.Rand, rows, cols int) *Matrix {
	m := New(rows, cols)
	for i := range m.Data {
		m.Data[i] = 2*r.Float32() - 1
	}
	return m
}

// at returns op(m)[i, j].
func at(m *Matrix, t bool, i, j int) float64 {
	if t {
		i, j = j, i
	}
	return float64(m.Data[i*m.Cols+j])
}

// naiveGemm is the float64 triple-loop reference for Gemm.
func naiveGemm(tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) []float64 {
	k := a.Cols
	if tA {
		k = a.Rows
	}
	want := make([]float64, len(c.Data))
	for i := range c.Rows {
		for j := range c.Cols {
			var s float64
			for l := range k {
				s += at(a, tA, i, l) * at(b, tB, l, j)
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c.Data[i*c.Cols+j])
			}
			want[i*c.Cols+j] = v
		}
	}
	return want
}

func TestGemmMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 1, 9}, {1, 13, 4}, {33, 65, 31}, {130, 7, 129}}
	scalars := [][2]float32{{1, 0}, {0.5, 1}, {-2, 0.25}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range scalars {
					name := fmt.Sprintf("m%d_n%d_k%d_tA%v_tB%v_a%g_b%g", m, n, k, tA, tB, ab[0], ab[1])
					a := randMatrix(r, m, k)
					if tA {
						a = randMatrix(r, k, m)
					}
					b := randMatrix(r, k, n)
					if tB {
						b = randMatrix(r, n, k)
					}
					c := randMatrix(r, m, n)
					if ab[1] == 0 {
						c.Data[0] = float32(math.NaN()) // beta == 0 must ignore c
					}
					want := naiveGemm(tA, tB, ab[0], a, b, ab[1], c)
					Gemm(tA, tB, ab[0], a, b, ab[1], c)
					for i, w := range want {
						if d := math.Abs(float64(c.Data[i]) - w); d > 1e-5*float64(k)+1e-5 || math.IsNaN(float64(c.Data[i])) {
							t.Fatalf("%s: c[%d] = %g, want %g", name, i, c.Data[i], w)
						}
					}
				}
			}
		}
	}
}

func TestGemmDegenerate(t *testing.T) {
	// k == 0: c = beta·c.
	a, b := New(3, 0), New(0, 2)
	c := &Matrix{Rows: 3, Cols: 2, Data: []float32{1, 2, 3, 4, 5, 6}}
	Gemm(false, false, 1, a, b, 2, c)
	for i, v := range c.Data {
		if v != float32(2*(i+1)) {
			t.Fatalf("k=0, beta=2: c = %v", c.Data)
		}
	}
	Gemm(false, false, 1, a, b, 0, c)
	for _, v := range c.Data {
		if v != 0 {
			t.Fatalf("k=0, beta=0: c = %v", c.Data)
		}
	}
	// m == 0 must not touch anything or panic.
	Gemm(true, false, 1, New(4, 0), New(4, 3), 0, New(0, 3))
}

func TestGemmShapeMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Gemm with mismatched inner dimensions did not panic")
		}
	}()
	Gemm(false, false, 1, New(2, 3), New(4, 2), 0, New(2, 2))
}

// The tall (rows split) and long-inner (partial products) parallel paths
// equal the reference, and their result does not depend on the thread count
// (the last shape has more blocks than maxInnerParts: groups of blocks).
func TestGemmParallelPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, s := range [][3]int{{2*GemmBlock + 37, 9, 11}, {13, 7, 2*GemmBlock + 5}, {5, 3, (2*maxInnerParts+3)*GemmBlock + 17}} {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, beta := range []float32{0, 0.5} {
					a, b := randMatrix(r, m, k), randMatrix(r, k, n)
					if tA {
						a = randMatrix(r, k, m)
					}
					if tB {
						b = randMatrix(r, n, k)
					}
					c0 := randMatrix(r, m, n)
					want := naiveGemm(tA, tB, 1.5, a, b, beta, c0)
					var first []float32
					for _, th := range []int{1, 3, 8} {
						runtime.GOMAXPROCS(th)
						c := &Matrix{Rows: m, Cols: n, Data: append([]float32(nil), c0.Data...)}
						Gemm(tA, tB, 1.5, a, b, beta, c)
						for i, w := range want {
							if d := math.Abs(float64(c.Data[i]) - w); d > 1e-3*(1+math.Abs(w)) {
								t.Fatalf("%v tA=%v tB=%v beta=%g threads=%d: c[%d] = %g, want %g", s, tA, tB, beta, th, i, c.Data[i], w)
							}
						}
						if first == nil {
							first = c.Data
						} else if !slices.Equal(first, c.Data) {
							t.Fatalf("%v tA=%v tB=%v: %d threads give other bits than 1", s, tA, tB, th)
						}
					}
				}
			}
		}
	}
}

// A Work reused across products of different shapes (its scratch holding
// the last product's partials, or NaNs) gives Gemm's result bit for bit,
// on the split-inner-dimension path and the others, and keeps one scratch.
func TestWorkGemmMatchesGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var w Work
	for i, sh := range []struct {
		tA   bool
		m, k int
		n    int
		beta float32
	}{
		{true, 7, 5 * GemmBlock, 3, 0}, {true, 3, 9*GemmBlock + 17, 11, 1}, {true, 7, 5 * GemmBlock, 3, 0.5},
		{false, 3 * GemmBlock, 6, 5, 0}, {true, 5, 40, 6, 1}, {true, 2, 2*GemmBlock + 1, 2, 0},
	} {
		a := randMatrix(r, sh.m, sh.k)
		if sh.tA {
			a = randMatrix(r, sh.k, sh.m)
		}
		b := randMatrix(r, sh.k, sh.n)
		c0 := randMatrix(r, sh.m, sh.n)
		want := &Matrix{Rows: sh.m, Cols: sh.n, Data: slices.Clone(c0.Data)}
		Gemm(sh.tA, false, 0.75, a, b, sh.beta, want)
		got := &Matrix{Rows: sh.m, Cols: sh.n, Data: slices.Clone(c0.Data)}
		if i == 2 {
			for j := range w.part {
				w.part[j] = float32(math.NaN())
			}
		}
		w.Gemm(sh.tA, false, 0.75, a, b, sh.beta, got)
		for j := range want.Data {
			if math.Float32bits(got.Data[j]) != math.Float32bits(want.Data[j]) {
				t.Fatalf("shape %d: element %d = %v with a Work, %v without", i, j, got.Data[j], want.Data[j])
			}
		}
	}
	if len(w.part) == 0 {
		t.Fatal("the split path never used the Work's scratch")
	}
}
