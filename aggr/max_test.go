package aggr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// TestApplyMaxMerge: a second product with merge set combines with the
// first (strictly greater wins, a row without a value takes any), rows
// without entries stay 0 with NoArg, and ScatterMax routes each gradient
// value to the product its argument names.
func TestApplyMaxMerge(t *testing.T) {
	e, err := New(2, "generic")
	if err != nil {
		t.Fatal(err)
	}
	// local: row 0 ← {0, 1}, row 1 ← {}, row 2 ← {}; halo: row 0 ← {0}, row 1 ← {1}, row 2 ← {}
	local := e.Prepare(graph.FromCOO(3, 2, []int32{0, 1}, []int32{0, 0}, nil))
	halo := e.Prepare(graph.FromCOO(3, 2, []int32{0, 1}, []int32{0, 1}, nil))
	x := &dense.Matrix{Rows: 2, Cols: 2, Data: []float32{1, 5, 3, 2}}
	recv := &dense.Matrix{Rows: 2, Cols: 2, Data: []float32{3, 7, -4, -6}}
	out := dense.New(3, 2)
	arg := make([]int32, 6)
	local.ApplyMax(x, out, arg, 0, false)
	halo.ApplyMax(recv, out, arg, 10, true)
	wantOut := []float32{3, 7, -4, -6, 0, 0}
	wantArg := []int32{1, 10, 11, 11, NoArg, NoArg} // column 0 of row 0: a tie at 3, the local one came first
	for i := range wantOut {
		if out.Data[i] != wantOut[i] || arg[i] != wantArg[i] {
			t.Fatalf("element %d: %g (arg %d), want %g (arg %d)", i, out.Data[i], arg[i], wantOut[i], wantArg[i])
		}
	}
	g := &dense.Matrix{Rows: 3, Cols: 2, Data: []float32{1, 2, 3, 4, 5, 6}}
	gx, back := dense.New(2, 2), dense.New(2, 2)
	local.ScatterMax(g, arg, 0, gx, false)
	halo.ScatterMax(g, arg, 10, back, false)
	if want := []float32{0, 0, 1, 0}; !equal(gx.Data, want) {
		t.Fatalf("local gradient %v, want %v", gx.Data, want)
	}
	if want := []float32{0, 2, 3, 4}; !equal(back.Data, want) {
		t.Fatalf("received rows' gradient %v, want %v", back.Data, want)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// refMaxRows is maxRows's reference loop, as the doc comments write it.
func refMaxRows(out []float32, arg []int32, x []float32, stride int, idx []int32, base int32) {
	for _, c := range idx {
		r := x[int(c)*stride:]
		for j := range out {
			if r[j] > out[j] {
				out[j], arg[j] = r[j], base+c
			}
		}
	}
}

// tieVec returns n values drawn from a few small integers (ties between
// rows are common), negatives included, with an occasional ±0, ±Inf or
// NaN.
func tieVec(rng *rand.Rand, n int) []float32 {
	special := []float32{float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	v := make([]float32, n)
	for i := range v {
		if rng.IntN(40) == 0 {
			v[i] = special[rng.IntN(len(special))]
		} else {
			v[i] = float32(rng.IntN(7)-5) * 0.5
		}
	}
	return v
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// TestMaxKernels checks every kernel's maxRows (asm and generic twin) bit
// for bit against the reference loop on misaligned, sentinel-padded out and
// arg buffers, every width 1…70 and wide ones, strided rows, no entries,
// ties, negative values, ±0, ±Inf and NaN (in x and in the initial out).
func TestMaxKernels(t *testing.T) {
	var widths []int
	for w := 1; w <= 70; w++ {
		widths = append(widths, w)
	}
	widths = append(widths, 95, 96, 97, 127, 128, 129, 191, 192, 193, 200, 256, 383, 384, 385, 602)
	const argSentinel = int32(-777)
	for _, k := range kernelTable {
		t.Run(k.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(k.name))))
			for _, width := range widths {
				for _, nnz := range []int{0, 1, 2, 3, 8, 17, 40} {
					stride := width + rng.IntN(3)*(1+rng.IntN(5))
					rows := 1 + rng.IntN(30)
					xoff, ooff, aoff := rng.IntN(16), rng.IntN(16), rng.IntN(16)
					x := tieVec(rng, xoff+(rows-1)*stride+width)[xoff:] // ends at the last row's last column
					idx := make([]int32, nnz)
					for i := range idx {
						idx[i] = int32(rng.IntN(rows))
					}
					if nnz > 2 {
						idx[1] = int32(rows - 1)
					}
					base := int32(rng.IntN(3) * 1000)
					obuf := make([]float32, ooff+width+16)
					abuf := make([]int32, aoff+width+16)
					for i := range obuf {
						obuf[i] = sentinel
					}
					for i := range abuf {
						abuf[i] = argSentinel
					}
					out, arg := obuf[ooff:ooff+width], abuf[aoff:aoff+width]
					copy(out, tieVec(rng, width))
					for j := range arg {
						arg[j] = int32(rng.IntN(100))
					}
					refOut, refArg := append([]float32(nil), out...), append([]int32(nil), arg...)
					refMaxRows(refOut, refArg, x, stride, idx, base)
					k.maxRows(out, arg, x, stride, idx, base)
					desc := fmt.Sprintf("width %d stride %d nnz %d xoff %d ooff %d aoff %d", width, stride, nnz, xoff, ooff, aoff)
					for i, v := range obuf {
						if (i < ooff || i >= ooff+width) && v != sentinel {
							t.Fatalf("%s: wrote out[%d]", desc, i-ooff)
						}
					}
					for i, v := range abuf {
						if (i < aoff || i >= aoff+width) && v != argSentinel {
							t.Fatalf("%s: wrote arg[%d]", desc, i-aoff)
						}
					}
					for j := range out {
						if !sameBits(out[j], refOut[j]) || arg[j] != refArg[j] {
							t.Fatalf("%s: column %d: %v (arg %d), reference %v (arg %d)", desc, j, out[j], arg[j], refOut[j], refArg[j])
						}
					}
				}
			}
		})
	}
}

// TestMaxKernelsLongRow: one long index list through every kernel's
// maxRows, where the prefetching loop runs.
func TestMaxKernelsLongRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, k := range kernelTable {
		for _, width := range []int{5, 16, 130, 1031} {
			rows := 300
			x := tieVec(rng, rows*width)
			idx := make([]int32, 5000)
			for i := range idx {
				idx[i] = int32(rng.IntN(rows))
			}
			out, arg := tieVec(rng, width), make([]int32, width)
			refOut, refArg := append([]float32(nil), out...), append([]int32(nil), arg...)
			refMaxRows(refOut, refArg, x, width, idx, 7)
			k.maxRows(out, arg, x, width, idx, 7)
			for j := range out {
				if !sameBits(out[j], refOut[j]) || arg[j] != refArg[j] {
					t.Fatalf("%s width %d: column %d: %v (arg %d), reference %v (arg %d)", k.name, width, j, out[j], arg[j], refOut[j], refArg[j])
				}
			}
		}
	}
}

// refApplyMax is ApplyMax row by row as the doc comment says (the first
// entry taken as is, or merged where greater or NoArg; then strictly
// greater entries), on one goroutine.
func refApplyMax(a *graph.CSR, x *dense.Matrix, out []float32, arg []int32, base int32, merge bool) {
	w := x.Cols
	for r := range a.NumRows {
		o, g := out[r*w:(r+1)*w], arg[r*w:(r+1)*w]
		for k, c := range a.Idx[a.Ptr[r]:a.Ptr[r+1]] {
			for j := range o {
				v := x.Data[int(c)*w+j]
				if (k == 0 && !merge) || v > o[j] || g[j] == NoArg {
					o[j], g[j] = v, base+c
				}
			}
		}
		if a.Ptr[r] == a.Ptr[r+1] && !merge {
			clear(o)
			for j := range g {
				g[j] = NoArg
			}
		}
	}
}

// TestApplyMaxKernels: ApplyMax, then a second product merged into it (the
// received rows of a distributed layer), with every kernel at one, two and
// three threads equals the row-by-row reference bit for bit, on graphs
// with rows without entries, hub rows (split into column blocks), repeated
// entries and ties.
func TestApplyMaxKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	n, m, edges := 400, 300, 6000
	graphOf := func(nIn int) *graph.CSR {
		src, dst := make([]int32, edges), make([]int32, edges)
		for i := range src {
			src[i], dst[i] = int32(rng.IntN(nIn)), int32(rng.IntN(n/2)*2) // odd rows: no entries
			if i%3 == 0 {
				dst[i] = 6 // a hub
			}
		}
		return graph.FromCOO(n, nIn, src, dst, nil)
	}
	local, halo := graphOf(m), graphOf(50)
	for _, width := range []int{1, 7, 16, 37, 64, 128, 200} {
		x := &dense.Matrix{Rows: m, Cols: width, Data: tieVec(rng, m*width)}
		recv := &dense.Matrix{Rows: 50, Cols: width, Data: tieVec(rng, 50*width)}
		want, wantArg := make([]float32, n*width), make([]int32, n*width)
		refApplyMax(local, x, want, wantArg, 0, false)
		refApplyMax(halo, recv, want, wantArg, int32(m), true)
		for _, name := range Kernels() {
			for _, threads := range []int{1, 2, 3} {
				e, err := New(threads, name)
				if err != nil {
					t.Fatal(err)
				}
				out, arg := dense.New(n, width), make([]int32, n*width)
				for i := range out.Data {
					out.Data[i], arg[i] = sentinel, 12345 // overwritten
				}
				e.Prepare(local).ApplyMax(x, out, arg, 0, false)
				e.Prepare(halo).ApplyMax(recv, out, arg, int32(m), true)
				e.Close()
				for i := range want {
					if !sameBits(out.Data[i], want[i]) || arg[i] != wantArg[i] {
						t.Fatalf("%s, %d threads, width %d: element %d: %v (arg %d), reference %v (arg %d)",
							name, threads, width, i, out.Data[i], arg[i], want[i], wantArg[i])
					}
				}
			}
		}
	}
}

// refScatter is the scatter micro-kernel's reference loop.
func refScatter(dst, g []float32, arg []int32, rows, cols, w int, lo, n int32) {
	for r := range rows {
		for j := range cols {
			if a := arg[r*w+j] - lo; a >= 0 && a < n {
				dst[int(a)*w+j] += g[r*w+j]
			}
		}
	}
}

// TestScatterKernels checks every kernel's scatter bit for bit against the
// reference loop: column blocks of 1…70 columns inside wider rows,
// misaligned sentinel-padded buffers, arguments below, inside and above the
// routed range and NoArg, rows routed nowhere, and many rows sending to one
// destination (the sums run in row order).
func TestScatterKernels(t *testing.T) {
	for _, k := range kernelTable {
		rng := rand.New(rand.NewPCG(11, uint64(len(k.name))))
		for cols := 1; cols <= 70; cols++ {
			for _, rows := range []int{0, 1, 5, 40} {
				w := cols + rng.IntN(3)*(1+rng.IntN(20))
				n := int32(1 + rng.IntN(6))
				lo := int32(rng.IntN(3) * 10)
				goff, doff := rng.IntN(16), rng.IntN(16)
				g := randVec(rng, goff+rows*w)[goff:]
				arg := make([]int32, rows*w)
				for i := range arg {
					switch rng.IntN(5) {
					case 0:
						arg[i] = NoArg
					case 1:
						arg[i] = lo + n + int32(rng.IntN(3)) // another product's rows
					default:
						arg[i] = lo + int32(rng.IntN(int(n)))
					}
				}
				if rows > 1 {
					for j := range w {
						arg[j] = NoArg // a row routed nowhere
					}
				}
				dbuf := randVec(rng, doff+int(n)*w+16)
				for i := range dbuf {
					if i < doff || i >= doff+int(n)*w {
						dbuf[i] = sentinel
					}
				}
				dst := dbuf[doff : doff+int(n)*w]
				ref := append([]float32(nil), dst...)
				refScatter(ref, g, arg, rows, cols, w, lo, n)
				k.scatter(dst, g, arg, rows, cols, w, lo, n)
				desc := fmt.Sprintf("%s: cols %d w %d rows %d n %d lo %d", k.name, cols, w, rows, n, lo)
				for i, v := range dbuf {
					if (i < doff || i >= doff+int(n)*w) && v != sentinel {
						t.Fatalf("%s: wrote dst[%d]", desc, i-doff)
					}
				}
				for i := range dst {
					if !sameBits(dst[i], ref[i]) {
						t.Fatalf("%s: dst[%d] = %v, reference %v", desc, i, dst[i], ref[i])
					}
				}
			}
		}
	}
}

// TestScatterMaxThreads: ScatterMax with every kernel, one to three
// threads, overwriting and accumulating, equals the reference bit for bit.
func TestScatterMaxThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	n, m := 300, 200
	a := graph.FromCOO(n, m, []int32{0}, []int32{0}, nil) // ScatterMax reads only the shape
	for _, w := range []int{1, 16, 37, 64, 130} {
		g := &dense.Matrix{Rows: n, Cols: w, Data: randVec(rng, n*w)}
		arg := make([]int32, n*w)
		for i := range arg {
			arg[i] = int32(rng.IntN(m+20)) - 10 // some outside [lo, lo+m)
		}
		init := randVec(rng, m*w)
		want := append([]float32(nil), init...)
		refScatter(want, g.Data, arg, n, w, w, 5, int32(m))
		for _, name := range Kernels() {
			for _, threads := range []int{1, 2, 3} {
				e, err := New(threads, name)
				if err != nil {
					t.Fatal(err)
				}
				dst := &dense.Matrix{Rows: m, Cols: w, Data: append([]float32(nil), init...)}
				e.Prepare(a).ScatterMax(g, arg, 5, dst, true)
				e.Close()
				for i := range want {
					if !sameBits(dst.Data[i], want[i]) {
						t.Fatalf("%s, %d threads, width %d: dst[%d] = %v, reference %v", name, threads, w, i, dst.Data[i], want[i])
					}
				}
			}
		}
	}
}

// TestRoutingKernel: every kernel routes the max gradients with its own
// scatter or the generic one, avx512 (a scatter store) with its own; a
// name New refuses has none.
func TestRoutingKernel(t *testing.T) {
	for _, name := range Kernels() {
		r := RoutingKernel(name)
		if r != name && r != "generic" || (name == "avx512") != (r == "avx512") {
			t.Errorf("RoutingKernel(%q) = %q", name, r)
		}
	}
	if r := RoutingKernel("bogus"); r != "" {
		t.Errorf("RoutingKernel(bogus) = %q", r)
	}
}
