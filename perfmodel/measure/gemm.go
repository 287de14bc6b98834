package measure

import (
	"fmt"
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
)

// GemmOps are the products of a layer of in inputs and out outputs over
// rows nodes, as the layers use them: NN X·W (rows×in)·(in×out) forward,
// NT G·Wᵀ (rows×out)·(in×out)ᵀ the input gradient, TN Xᵀ·G
// (rows×in)ᵀ·(rows×out) the weight gradient.
var GemmOps = []string{"NN", "NT", "TN"}

// GemmResult is one product's median milliseconds and GFLOP/s
// (2·rows·in·out / median).
type GemmResult struct {
	Op       string  `json:"op"`
	Rows     int     `json:"rows"`
	In       int     `json:"in"`
	Out      int     `json:"out"`
	Reps     int     `json:"reps"`
	MedianMS float64 `json:"median_ms"`
	GFLOPS   float64 `json:"gflops"`
}

// Gemm times every op of GemmOps given, for every in × out width, over
// rows rows through work (its precision), reps times after a warm-up;
// each calls back with its result (in order op, in, out).
func Gemm(work *dense.Work, rows int, ops []string, ins, outs []int, reps int, each func(GemmResult) error) error {
	maxIn, maxOut := 0, 0
	for _, w := range ins {
		maxIn = max(maxIn, w)
	}
	for _, w := range outs {
		maxOut = max(maxOut, w)
	}
	if rows < 1 || maxIn < 1 || maxOut < 1 || int64(rows)*int64(max(maxIn, maxOut)) > 1<<31 {
		return fmt.Errorf("%d rows of up to %d columns: want positive sizes within 2^31 values", rows, max(maxIn, maxOut))
	}
	r := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(r.Float64() - 0.5)
		}
		return d
	}
	// Buffers of the widest shapes, viewed narrower per product.
	xbuf, gbuf, cbuf := fill(rows*maxIn), fill(rows*maxOut), make([]float32, rows*max(maxIn, maxOut))
	wbuf, wgbuf := fill(maxIn*maxOut), make([]float32, maxIn*maxOut)
	for _, op := range ops {
		for _, in := range ins {
			for _, out := range outs {
				x := &dense.Matrix{Rows: rows, Cols: in, Data: xbuf[:rows*in]}
				g := &dense.Matrix{Rows: rows, Cols: out, Data: gbuf[:rows*out]}
				w := &dense.Matrix{Rows: in, Cols: out, Data: wbuf[:in*out]}
				var fn func()
				switch op {
				case "NN":
					c := &dense.Matrix{Rows: rows, Cols: out, Data: cbuf[:rows*out]}
					fn = func() { work.Gemm(false, false, 1, x, w, 0, c) }
				case "NT":
					c := &dense.Matrix{Rows: rows, Cols: in, Data: cbuf[:rows*in]}
					fn = func() { work.Gemm(false, true, 1, g, w, 0, c) }
				case "TN":
					c := &dense.Matrix{Rows: in, Cols: out, Data: wgbuf[:in*out]}
					fn = func() { work.Gemm(true, false, 1, x, g, 0, c) }
				default:
					return fmt.Errorf("product %q is not NN, NT or TN", op)
				}
				med, _ := Time(func() {}, fn, reps)
				err := each(GemmResult{Op: op, Rows: rows, In: in, Out: out, Reps: reps, MedianMS: med,
					GFLOPS: 2 * float64(rows) * float64(in) * float64(out) / (med * 1e6)})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}
