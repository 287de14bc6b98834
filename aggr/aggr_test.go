package aggr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// mustNew returns New(threads, "") or fails the test.
func mustNew(t testing.TB, threads int) *Engine {
	t.Helper()
	e, err := New(threads, "")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// testGraph returns a rows×cols CSR with empty rows, one hub row holding
// about a third of the edges, duplicates, and optional weights.
func testGraph(rng *rand.Rand, rows, cols, edges int, weighted bool) *graph.CSR {
	src := make([]int32, edges)
	dst := make([]int32, edges)
	hub := int32(rng.IntN(rows))
	for e := range src {
		src[e] = int32(rng.IntN(cols))
		switch {
		case e%3 == 0:
			dst[e] = hub
		default:
			// skip every 5th row: empty rows
			d := rng.IntN(rows)
			if d%5 == 4 && int32(d) != hub {
				d--
			}
			dst[e] = int32(d)
		}
	}
	var val []float32
	if weighted {
		val = randVec(rng, edges)
	}
	return graph.FromCOO(rows, cols, src, dst, val)
}

// paddedMatrix returns a rows×cols matrix whose Data starts off floats into
// a buffer padded with sentinels on both sides.
func paddedMatrix(rng *rand.Rand, rows, cols, off int) (*dense.Matrix, []float32) {
	buf := make([]float32, off+rows*cols+17)
	for i := range buf {
		buf[i] = sentinel
	}
	m := &dense.Matrix{Rows: rows, Cols: cols, Data: buf[off : off+rows*cols : off+rows*cols]}
	copy(m.Data, randVec(rng, rows*cols))
	return m, buf
}

func checkSentinels(t *testing.T, desc string, buf []float32, off, n int) {
	t.Helper()
	for i := range buf {
		if (i < off || i >= off+n) && buf[i] != sentinel {
			t.Fatalf("%s: wrote outside out at buffer index %d (data at [%d,%d))", desc, i, off, off+n)
		}
	}
}

// refProduct is the float64 reference of out (+)= diag(scale)·A·x, with
// the per-element magnitude for the tolerance.
func refProduct(a *graph.CSR, x, out0 *dense.Matrix, scale []float32, acc bool) (ref, mag []float64) {
	f := x.Cols
	ref = make([]float64, a.NumRows*f)
	mag = make([]float64, a.NumRows*f)
	for v := 0; v < a.NumRows; v++ {
		s := 1.0
		if scale != nil {
			s = float64(scale[v])
		}
		for j := 0; j < f; j++ {
			var sum, m float64
			for k := a.Ptr[v]; k < a.Ptr[v+1]; k++ {
				t := float64(x.Data[int(a.Idx[k])*f+j])
				if a.Val != nil {
					t *= float64(a.Val[k])
				}
				sum += t
				m += math.Abs(t)
			}
			sum *= s
			m *= math.Abs(s)
			if acc {
				o := float64(out0.Data[v*f+j])
				sum += o
				m += math.Abs(o)
			}
			ref[v*f+j], mag[v*f+j] = sum, m
		}
	}
	return ref, mag
}

type opCase struct {
	name       string
	transposed bool
	scaled     bool
}

var opCases = []opCase{{"Apply", false, false}, {"ApplyT", true, false}, {"ApplyScaled", false, true}, {"ApplyTScaled", true, true}}

func runOp(op *Op, c opCase, x, out *dense.Matrix, scale []float32, acc bool) {
	switch {
	case c.transposed && c.scaled:
		op.ApplyTScaled(x, out, scale, acc)
	case c.transposed:
		op.ApplyT(x, out, acc)
	case c.scaled:
		op.ApplyScaled(x, out, scale, acc)
	default:
		op.Apply(x, out, acc)
	}
}

// TestOps checks Apply/ApplyT/ApplyScaled/ApplyTScaled for every kernel,
// thread counts 1,2,3,7, weighted and unweighted, accumulate or not, on
// misaligned sentinel-padded matrices, against the float64 reference.
func TestOps(t *testing.T) {
	type shape struct{ rows, cols, edges, width int }
	shapes := []shape{
		{300, 250, 4000, 1}, {300, 250, 4000, 7}, {1000, 1100, 20000, 16}, {500, 400, 6000, 33},
		{700, 700, 9000, 128}, {40, 60, 900, 256}, {13, 20, 300, 602}, {9, 9, 40, 1031}, {5, 7, 0, 20}, {100, 0, 0, 1031},
	}
	for _, k := range kernelTable {
		for _, threads := range []int{1, 2, 3, 7} {
			e, err := New(threads, k.name)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(threads), 3))
			for si, sh := range shapes {
				for _, weighted := range []bool{false, true} {
					a := testGraph(rng, sh.rows, sh.cols, sh.edges, weighted)
					op := e.Prepare(a)
					for _, c := range opCases {
						at := a
						if c.transposed {
							at = a.Transpose()
						}
						for _, acc := range []bool{false, true} {
							desc := fmt.Sprintf("%s threads %d shape %d weighted %v %s acc %v", k.name, threads, si, weighted, c.name, acc)
							xoff, ooff := rng.IntN(16), rng.IntN(16)
							x, _ := paddedMatrix(rng, at.NumCols, sh.width, xoff)
							out, obuf := paddedMatrix(rng, at.NumRows, sh.width, ooff)
							out0 := &dense.Matrix{Rows: out.Rows, Cols: out.Cols, Data: append([]float32(nil), out.Data...)}
							var scale []float32
							if c.scaled {
								scale = randVec(rng, at.NumRows)
							}
							ref, mag := refProduct(at, x, out0, scale, acc)
							runOp(op, c, x, out, scale, acc)
							checkSentinels(t, desc, obuf, ooff, len(out.Data))
							for i, g := range out.Data {
								if !close32(g, ref[i], mag[i]) {
									t.Fatalf("%s: out[%d][%d]=%v, reference %v", desc, i/sh.width, i%sh.width, g, ref[i])
								}
							}
						}
					}
				}
			}
			e.Close()
		}
	}
}

// TestIndexAdd checks the COO scatter-add against the direct edge loop.
func TestIndexAdd(t *testing.T) {
	for _, k := range kernelTable {
		for _, threads := range []int{1, 2, 3, 7} {
			e, _ := New(threads, k.name)
			rng := rand.New(rand.NewPCG(uint64(threads), 4))
			for _, width := range []int{1, 9, 64, 130} {
				nOut, nIn, edges := 900, 700, 15000
				dst := make([]int32, edges)
				src := make([]int32, edges)
				for i := range dst {
					dst[i] = int32(rng.IntN(nOut))
					if i%4 == 0 {
						dst[i] = 17 // hub
					}
					src[i] = int32(rng.IntN(nIn))
				}
				op := e.PrepareIndexAdd(dst, src, nOut, nIn)
				x, _ := paddedMatrix(rng, nIn, width, 3)
				for _, acc := range []bool{false, true} {
					out, obuf := paddedMatrix(rng, nOut, width, 5)
					ref := make([]float64, len(out.Data))
					mag := make([]float64, len(out.Data))
					if acc {
						for i, o := range out.Data {
							ref[i], mag[i] = float64(o), math.Abs(float64(o))
						}
					}
					for i := range dst {
						for j := 0; j < width; j++ {
							v := float64(x.Data[int(src[i])*width+j])
							ref[int(dst[i])*width+j] += v
							mag[int(dst[i])*width+j] += math.Abs(v)
						}
					}
					op.Apply(x, out, acc)
					desc := fmt.Sprintf("%s threads %d width %d acc %v", k.name, threads, width, acc)
					checkSentinels(t, desc, obuf, 5, len(out.Data))
					for i, g := range out.Data {
						if !close32(g, ref[i], mag[i]) {
							t.Fatalf("%s: out[%d]=%v, reference %v", desc, i, g, ref[i])
						}
					}
					// backward: gx[src[e]] += g[dst[e]]
					gx := dense.New(nIn, width)
					op.ApplyT(out, gx, false)
					refT := make([]float64, len(gx.Data))
					magT := make([]float64, len(gx.Data))
					for i := range dst {
						for j := 0; j < width; j++ {
							v := float64(out.Data[int(dst[i])*width+j])
							refT[int(src[i])*width+j] += v
							magT[int(src[i])*width+j] += math.Abs(v)
						}
					}
					for i, g := range gx.Data {
						if !close32(g, refT[i], magT[i]) {
							t.Fatalf("%s ApplyT: gx[%d]=%v, reference %v", desc, i, g, refT[i])
						}
					}
				}
			}
			e.Close()
		}
	}
}

// TestPlanCovers checks that every plan covers each output element exactly
// once, including hub splits and column blocks of few wide rows.
func TestPlanCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, threads := range []int{1, 2, 3, 7, 16, 64} {
		for _, sh := range [][3]int{{5000, 60000, 16}, {5000, 60000, 128}, {20, 4000, 1031}, {3, 10, 300}, {1, 100000, 64}, {2000, 0, 8}, {0, 0, 8}} {
			rows := sh[0]
			var a *graph.CSR
			if rows == 0 {
				a = &graph.CSR{Ptr: []int64{0}}
			} else {
				a = testGraph(rng, rows, rows, sh[1], false)
			}
			f := sh[2]
			p := newPlan(a, f, threads)
			seen := make([]uint8, rows*f)
			for _, tk := range p.tasks {
				if tk.r0 >= tk.r1 || tk.c0 >= tk.c1 {
					t.Fatalf("threads %d shape %v: empty task %+v", threads, sh, tk)
				}
				for v := tk.r0; v < tk.r1; v++ {
					for j := tk.c0; j < tk.c1; j++ {
						seen[int(v)*f+int(j)]++
					}
				}
			}
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("threads %d shape %v: element (%d,%d) covered %d times (%d tasks)", threads, sh, i/f, i%f, s, len(p.tasks))
				}
			}
			if work := (a.NNZ() + int64(rows)) * int64(f); threads >= 2 && rows >= 100 && work >= int64(4*threads*minTaskWork) && len(p.tasks) < threads {
				t.Fatalf("threads %d shape %v: only %d tasks", threads, sh, len(p.tasks))
			}
		}
	}
}

func TestShapeChecks(t *testing.T) {
	e := mustNew(t, 2)
	defer e.Close()
	a := graph.FromCOO(3, 4, []int32{0, 1, 3}, []int32{0, 2, 2}, nil)
	op := e.Prepare(a)
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s: no panic", name)
			}
		}()
		f()
	}
	mustPanic("rows", func() { op.Apply(dense.New(3, 2), dense.New(3, 2), false) })
	mustPanic("cols", func() { op.Apply(dense.New(4, 2), dense.New(3, 3), false) })
	x := dense.New(4, 2)
	mustPanic("overlap", func() { op.Apply(x, &dense.Matrix{Rows: 3, Cols: 2, Data: x.Data[2:8]}, false) })
	mustPanic("scale", func() { op.ApplyScaled(dense.New(4, 2), dense.New(3, 2), make([]float32, 2), false) })
	bad := &graph.CSR{NumRows: 1, NumCols: 1, Ptr: []int64{0, 1}, Idx: []int32{5}}
	mustPanic("invalid csr", func() { e.Prepare(bad) })
	mustPanic("index add range", func() { e.PrepareIndexAdd([]int32{0}, []int32{9}, 1, 2) })
	// after Close the engine still computes (on the caller)
	e.Close()
	out := dense.New(3, 2)
	x = &dense.Matrix{Rows: 4, Cols: 2, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8}}
	op.Apply(x, out, false)
	want := []float32{1, 2, 0, 0, 3 + 7, 4 + 8}
	for i := range want {
		if out.Data[i] != want[i] {
			t.Fatalf("after Close: out=%v, want %v", out.Data, want)
		}
	}
}

// TestConcurrentApply runs products of two Ops of one Engine from several
// goroutines at once (runs on the pool are serialised) and checks each.
func TestConcurrentApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	e := mustNew(t, 3)
	defer e.Close()
	a := testGraph(rng, 2000, 2000, 40000, true)
	ops := []*Op{e.Prepare(a), e.Prepare(a)}
	x := &dense.Matrix{Rows: 2000, Cols: 24, Data: randVec(rng, 2000*24)}
	ref, mag := refProduct(a, x, nil, nil, false)
	refT, magT := refProduct(a.Transpose(), x, nil, nil, false)
	errs := make(chan string, 8)
	var done = make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			out := dense.New(2000, 24)
			for it := 0; it < 5; it++ {
				op := ops[(g+it)%2]
				tr := (g+it)%3 == 0
				r, m := ref, mag
				if tr {
					op.ApplyT(x, out, false)
					r, m = refT, magT
				} else {
					op.Apply(x, out, false)
				}
				for i, v := range out.Data {
					if !close32(v, r[i], m[i]) {
						errs <- fmt.Sprintf("goroutine %d iteration %d transposed %v: out[%d]=%v, reference %v", g, it, tr, i, v, r[i])
						return
					}
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
	close(errs)
	for msg := range errs {
		t.Fatal(msg)
	}
}
