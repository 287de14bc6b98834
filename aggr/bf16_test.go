package aggr

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/amx"
)

// toBF16 rounds x to bfloat16 bits and returns them with their float32
// widening.
func toBF16(x []float32) ([]uint16, []float32) {
	b := make([]uint16, len(x))
	w := make([]float32, len(x))
	for i, v := range x {
		b[i] = amx.Bits(v)
		w[i] = math.Float32frombits(uint32(b[i]) << 16)
	}
	return b, w
}

// TestKernelsBF16 compares every kernel's bfloat16 rows with the fp32 twin
// on the widened values, bit for bit: odd widths, misaligned rows (x starts
// off values into its buffer), sentinels after out, empty and long index
// lists.
func TestKernelsBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, k := range kernelTable {
		for _, width := range testWidths() {
			for _, off := range []int{0, 1, 3} {
				stride := width + off%2
				rows := 40
				xf := randVec(rng, off+rows*stride)
				xb, xw := toBF16(xf)
				for _, n := range []int{0, 1, 7, 60} {
					idx := make([]int32, n)
					for i := range idx {
						idx[i] = int32(rng.IntN(rows))
					}
					out0 := randVec(rng, width)
					got := append(append([]float32(nil), out0...), sentinel)
					want := append([]float32(nil), out0...)
					k.rowsBF16(got[:width], xb[off:], stride, idx)
					accumRowsGeneric(want, xw[off:], stride, idx)
					for j := range want {
						if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
							t.Fatalf("%s width %d off %d n %d: out[%d] = %g, want %g", k.name, width, off, n, j, got[j], want[j])
						}
					}
					if got[width] != sentinel {
						t.Fatalf("%s width %d: wrote past out", k.name, width)
					}
				}
			}
		}
	}
}

// TestApplyBF16 checks the operator on bfloat16 rows against the generic
// kernel's Apply on the widened rows (the twin: the fp32 assembly kernels
// may add in another order), bit for bit, both directions, with and
// without accumulation, on every kernel and two thread counts; and its
// panics.
func TestApplyBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	a := testGraph(rng, 300, 250, 4000, false)
	ge, err := New(1, "generic")
	if err != nil {
		t.Fatal(err)
	}
	ref := ge.Prepare(a)
	for _, kn := range Kernels() {
		for _, threads := range []int{1, 3} {
			e, err := New(threads, kn)
			if err != nil {
				t.Fatal(err)
			}
			op := e.Prepare(a)
			for _, width := range []int{1, 8, 47, 64, 100, 256} {
				for _, tr := range []bool{false, true} {
					in, outRows := a.NumCols, a.NumRows
					if tr {
						in, outRows = outRows, in
					}
					xb, xw := toBF16(randVec(rng, in*width))
					for _, acc := range []bool{false, true} {
						out0 := randVec(rng, outRows*width)
						got := &dense.Matrix{Rows: outRows, Cols: width, Data: append([]float32(nil), out0...)}
						want := &dense.Matrix{Rows: outRows, Cols: width, Data: append([]float32(nil), out0...)}
						x := &dense.Matrix{Rows: in, Cols: width, Data: xw}
						if tr {
							op.ApplyTBF16(xb, got, acc)
							ref.ApplyT(x, want, acc)
						} else {
							op.ApplyBF16(xb, got, acc)
							ref.Apply(x, want, acc)
						}
						for i := range want.Data {
							if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
								t.Fatalf("%s threads %d width %d T %v acc %v: [%d] = %g, want %g", kn, threads, width, tr, acc, i, got.Data[i], want.Data[i])
							}
						}
					}
				}
			}
			e.Close()
		}
	}
	e := mustNew(t, 1)
	weighted := e.Prepare(testGraph(rng, 10, 10, 30, true))
	for name, fn := range map[string]func(){
		"weighted": func() { weighted.ApplyBF16(make([]uint16, 100), dense.New(10, 10), false) },
		"short x":  func() { e.Prepare(a).ApplyBF16(make([]uint16, 10), dense.New(300, 4), false) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}
