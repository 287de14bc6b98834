package aggr

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// naiveAccum is the reference loop of the contract, as the doc comments
// write it; the kernel benchmarks pair every kernel with it.
func naiveAccum(out, x []float32, stride int, idx []int32) {
	for k := range idx {
		r := x[int(idx[k])*stride:]
		for j := range out {
			out[j] += r[j]
		}
	}
}

// BenchmarkKernel: one output row from 32 random rows of a 64k-row x
// (beyond L2 at the wider widths), per kernel and width: the sum, the
// weighted sum and the maximum with its argument (Max). Bytes/op counts
// the gathered rows.
func BenchmarkKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, width := range []int{16, 37, 47, 48, 64, 100, 128, 256, 602} {
		rows := 1 << 16
		if rows*width > 1<<24 {
			rows = (1 << 24) / width
		}
		x := randVec(rng, rows*width)
		const nIdx = 32
		idx := make([]int32, 1<<12)
		for i := range idx {
			idx[i] = int32(rng.IntN(rows))
		}
		w := randVec(rng, nIdx)
		out := make([]float32, width)
		run := func(name string, fn func(out []float32, idx []int32)) {
			b.Run(fmt.Sprintf("width=%d/%s", width, name), func(b *testing.B) {
				b.SetBytes(int64(nIdx * width * 4))
				i := 0
				for b.Loop() {
					fn(out, idx[i:i+nIdx])
					i = (i + nIdx) & (len(idx) - 1)
				}
			})
		}
		run("naive", func(out []float32, idx []int32) { naiveAccum(out, x, width, idx) })
		arg := make([]int32, width)
		for _, k := range kernelTable {
			run(k.name, func(out []float32, idx []int32) { k.rows(out, x, width, idx) })
			run(k.name+"W", func(out []float32, idx []int32) { k.rowsW(out, x, width, idx, w) })
			run(k.name+"Max", func(out []float32, idx []int32) { k.maxRows(out, arg, x, width, idx, 0) })
		}
	}
}

// BenchmarkApply: SpMM on a uniform random graph (50k nodes, 1M edges) per
// kernel, width and thread count; bytes = gathered rows + output rows.
func BenchmarkApply(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	n, edges := 50_000, 1_000_000
	src := make([]int32, edges)
	dst := make([]int32, edges)
	for i := range src {
		src[i], dst[i] = int32(rng.IntN(n)), int32(rng.IntN(n))
	}
	a := graph.FromCOO(n, n, src, dst, nil)
	for _, width := range []int{16, 128} {
		x := &dense.Matrix{Rows: n, Cols: width, Data: randVec(rng, n*width)}
		out := dense.New(n, width)
		for _, k := range kernelTable {
			for _, threads := range []int{1, 2} {
				e, _ := New(threads, k.name)
				op := e.Prepare(a)
				b.Run(fmt.Sprintf("width=%d/%s/threads=%d", width, k.name, threads), func(b *testing.B) {
					b.SetBytes(int64(edges+n) * int64(width) * 4)
					for b.Loop() {
						op.Apply(x, out, false)
					}
				})
				e.Close()
			}
		}
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkApplyMax: the max product (arg max recorded) and its backward
// routing with every kernel, beside the sum product (best kernel) and its
// transpose, on BenchmarkApply's graph; bytes as BenchmarkApply's (the
// routing reads no edges: its bytes are the gradient, arguments and
// destination rows). Beside the wall time it reports the process's CPU time
// per run (cpu-ns/op): with -cpu 1 on a shared machine, the time of the one
// thread without the other processes' turns.
func BenchmarkApplyMax(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	n, edges := 50_000, 1_000_000
	src := make([]int32, edges)
	dst := make([]int32, edges)
	for i := range src {
		src[i], dst[i] = int32(rng.IntN(n)), int32(rng.IntN(n))
	}
	a := graph.FromCOO(n, n, src, dst, nil)
	ops := map[string]*Op{}
	for _, name := range Kernels() {
		e, _ := New(0, name)
		defer e.Close()
		ops[name] = e.Prepare(a)
	}
	best := ops[Kernels()[0]]
	for _, width := range []int{16, 64, 128} {
		x := &dense.Matrix{Rows: n, Cols: width, Data: randVec(rng, n*width)}
		out, gx := dense.New(n, width), dense.New(n, width)
		arg := make([]int32, n*width)
		bytes := int64(edges+n) * int64(width) * 4
		type bench struct {
			name  string
			bytes int64
			fn    func()
		}
		cases := []bench{{"sum", bytes, func() { best.Apply(x, out, false) }}}
		for _, name := range Kernels() {
			op := ops[name]
			cases = append(cases, bench{"max/" + name, bytes, func() { op.ApplyMax(x, out, arg, 0, false) }})
		}
		cases = append(cases, bench{"sumT", bytes, func() { best.ApplyT(x, gx, false) }})
		for _, name := range Kernels() {
			op := ops[name]
			cases = append(cases, bench{"route/" + name, 3 * int64(n) * int64(width) * 4, func() { op.ScatterMax(x, arg, 0, gx, false) }})
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("width=%d/%s", width, c.name), func(b *testing.B) {
				b.SetBytes(c.bytes)
				c.fn() // plans, transposes and first touches outside the timing
				t := cpuTime(b)
				for b.Loop() {
					c.fn()
				}
				b.ReportMetric(float64(cpuTime(b)-t)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
