package measure

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/perfmodel"
)

// copyProp is a Propagator that copies its input (Â = I) and counts the
// wall and CPU time it spends, so that a benchmark of a Model times its
// dense stage alone, as training's dense_s does (the epoch's compute less
// the aggregation's time).
type copyProp struct {
	n         int
	wall, cpu time.Duration
}

func (c *copyProp) Rows() int { return c.n }

func (c *copyProp) Forward(_ nn.Pass, x, out *dense.Matrix) error {
	c.copy(x, out)
	return nil
}

func (c *copyProp) Backward(_ nn.Pass, gout, gx *dense.Matrix) error {
	c.copy(gout, gx)
	return nil
}

func (c *copyProp) copy(src, dst *dense.Matrix) {
	t, u := time.Now(), cpuTime()
	par.For(src.Rows, dense.RowGrain(src.Cols), func(lo, hi int) {
		copy(dst.Data[lo*src.Cols:hi*src.Cols], src.Data[lo*src.Cols:hi*src.Cols])
	})
	c.wall += time.Since(t)
	c.cpu += cpuTime() - u
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// denseBenchRows is the rows of BenchmarkDenseStage's graph: a rank's
// share of a products-like graph (100 features, 47 classes, 8 % of the
// nodes labelled for training, as ogbn-products).
const denseBenchRows = 200_000

// BenchmarkDenseStage times the dense stage of one training epoch, the
// forward pass, the softmax cross-entropy and the backward pass of the
// whole model with the graph operator replaced by a timed copy (its time
// taken out), of GCN 2×128 and SAGE 3×256 with LayerNorm (dropout 0.5, as
// `supergcn train` runs them) at denseBenchRows rows of products' widths,
// beside the square product of the GEMM rate (`bench roofline`'s,
// N×1024·1024×1024) and STREAM triad, on GOMAXPROCS threads:
//
//	go test -tags "$TAGS" -run '^$' -bench DenseStage -benchtime 5x -cpu 1,2 ./perfmodel/measure/
//
// Each model reports its dense time (dense-s/op, wall; dense-cpu-s/op, the
// process's CPU time: on a shared machine the one to compare), the
// compulsory work's rates (GFLOP/s, GB/s: perfmodel.Roofline's dense
// stage over the dense time), gemm-% (the flop rate against the GEMM rate
// of the same run), bound-% (the roofline bound, max(flops/GEMM rate,
// bytes/triad rate), against the dense time) and gemm-cpu-% (the flops a
// CPU second against the GEMM's: the ratio to read on a shared machine,
// where other processes' turns inflate the wall times).
func BenchmarkDenseStage(b *testing.B) {
	threads := runtime.GOMAXPROCS(0)
	defer par.SetThreads(par.Threads())
	par.SetThreads(threads)
	var mach perfmodel.Machine
	var gemmCPU float64 // GFLOP per CPU second (all threads) of the square product
	b.Run("gemm", func(b *testing.B) {
		n := rooflineRows(threads)
		r := rand.New(rand.NewPCG(3, 4))
		x, w, c := randMatrix(r, n, rooflineWidth), randMatrix(r, rooflineWidth, rooflineWidth), dense.New(n, rooflineWidth)
		var work dense.Work
		work.Gemm(false, false, 1, x, w, 0, c) // warm-up
		b.ResetTimer()
		u := cpuTime()
		for range b.N {
			work.Gemm(false, false, 1, x, w, 0, c)
		}
		flops := 2 * float64(n) * rooflineWidth * rooflineWidth
		mach.GemmGFLOPS = flops * float64(b.N) / b.Elapsed().Seconds() / 1e9
		b.ReportMetric(mach.GemmGFLOPS, "GFLOP/s")
		gemmCPU = flops * float64(b.N) / (cpuTime() - u).Seconds() / 1e9
		b.ReportMetric(gemmCPU, "GFLOP/cpu-s")
	})
	mach.StreamGBs = Stream(threads, 128, 3).Triad
	fmt.Printf("DenseStage: BLAS %s, %d threads: GEMM %.1f GFLOP/s, STREAM triad %.1f GB/s\n",
		dense.Backend(), threads, mach.GemmGFLOPS, mach.StreamGBs)
	for _, m := range []struct {
		name string
		cfg  nn.Config
	}{
		{"gcn_2x128", nn.Config{Model: "gcn", Layers: 2, Hidden: 128, Norm: "none"}},
		{"sage_3x256_ln", nn.Config{Model: "sage", Layers: 3, Hidden: 256, Norm: "layer"}},
	} {
		b.Run(m.name, func(b *testing.B) {
			cfg := m.cfg
			cfg.In, cfg.Out, cfg.Dropout, cfg.Seed = 100, 47, 0.5, 1
			denseStage(b, cfg, mach, gemmCPU)
		})
	}
}

// denseStage runs BenchmarkDenseStage's epochs of the model of cfg and
// reports their rates against mach (gemmCPU: the GEMM's flops per CPU
// second).
func denseStage(b *testing.B, cfg nn.Config, mach perfmodel.Machine, gemmCPU float64) {
	n := denseBenchRows
	prop := &copyProp{n: n}
	model, err := nn.NewModel(cfg, prop)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	x := randMatrix(r, n, cfg.In)
	labels := make([]int32, n)
	var rows []int32
	for i := range labels {
		labels[i] = int32(r.IntN(cfg.Out))
		if i%12 == 0 {
			rows = append(rows, int32(i))
		}
	}
	var grad *dense.Matrix
	epoch := func() {
		p := nn.Pass{Train: true}
		logits, err := model.Forward(p, x)
		if err != nil {
			b.Fatal(err)
		}
		if _, grad, err = nn.SoftmaxCrossEntropyInto(grad, logits, labels, rows, float64(len(rows))); err != nil {
			b.Fatal(err)
		}
		if _, err := model.Backward(p, grad, false); err != nil {
			b.Fatal(err)
		}
	}
	epoch() // buffers allocated, as after training's first epoch
	prop.wall, prop.cpu = 0, 0
	b.ResetTimer()
	u := cpuTime()
	for range b.N {
		epoch()
	}
	wall := (b.Elapsed() - prop.wall).Seconds() / float64(b.N)
	cpu := (cpuTime() - u - prop.cpu).Seconds() / float64(b.N)
	pm := perfmodel.Model{Kind: cfg.Model, Layers: cfg.Layers, Hidden: cfg.Hidden, In: cfg.In, Classes: cfg.Out,
		LayerNorm: cfg.Norm == "layer", Dropout: cfg.Dropout > 0}
	work, err := perfmodel.Roofline(pm, perfmodel.Graph{Nodes: int64(n), TrainNodes: int64(len(rows))}, false)
	if err != nil {
		b.Fatal(err)
	}
	w := work[perfmodel.StageDense]
	bound, binds := mach.Bound(w)
	b.ReportMetric(wall, "dense-s/op")
	b.ReportMetric(cpu, "dense-cpu-s/op")
	b.ReportMetric(w.Flops/wall/1e9, "GFLOP/s")
	b.ReportMetric(w.Bytes/wall/1e9, "GB/s")
	b.ReportMetric(100*w.Flops/wall/1e9/mach.GemmGFLOPS, "gemm-%")
	b.ReportMetric(100*bound/wall, "bound-%")
	b.ReportMetric(100*w.Flops/cpu/1e9/gemmCPU, "gemm-cpu-%")
	b.Logf("%s: %.3g GFLOP, %.3g GB compulsory; bound %.4f s (%s); aggregation copies %.4f s/op",
		cfg.Model, w.Flops/1e9, w.Bytes/1e9, bound, binds, prop.wall.Seconds()/float64(b.N))
}

// randMatrix is a rows×cols matrix of uniform values in [-0.5, 0.5).
func randMatrix(r *rand.Rand, rows, cols int) *dense.Matrix {
	m := dense.New(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(r.Float64() - 0.5)
	}
	return m
}
