package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/dense"
)

func init() {
	registerBench("gemm", "dense products of the layers (N×in·in×out and both transposes) through dense.Gemm, GFLOP/s", benchGemm)
}

// gemmResult is one line of `bench gemm --json` (and a row of --csv).
// The op names the product as the layers use it, for a layer of in inputs
// and out outputs over rows nodes:
//
//	NN  X·W       (rows×in)·(in×out)     forward
//	NT  G·Wᵀ      (rows×out)·(in×out)ᵀ   input gradient
//	TN  Xᵀ·G      (rows×in)ᵀ·(rows×out)  weight gradient
type gemmResult struct {
	Op       string  `json:"op"`
	Rows     int     `json:"rows"`
	In       int     `json:"in"`
	Out      int     `json:"out"`
	Threads  int     `json:"threads"`
	Reps     int     `json:"reps"`
	MedianMS float64 `json:"median_ms"`
	GFLOPS   float64 `json:"gflops"` // 2·rows·in·out / median
	// Precision of the operands: fp32, or bf16 (dense.BF16: rounded
	// operands, float32 sums; the FLOP count is the same).
	Precision string `json:"precision"`
}

func benchGemm(args []string) error {
	fs := newFlagSet("bench gemm", "[flags]")
	rows := fs.Int("rows", 200_000, "N, the node rows of the products")
	insArg := fs.String("in", "100,128,256", "layer input widths, comma separated")
	outsArg := fs.String("out", "47,128,256", "layer output widths, comma separated")
	opsArg := fs.String("ops", "NN,NT,TN", "products, comma separated: NN (X·W), NT (G·Wᵀ), TN (Xᵀ·G)")
	threads := new(int)
	threadsVar(fs, threads)
	reps := fs.Int("reps", 5, "timed repetitions (after one warm-up); the median is reported")
	asJSON := fs.Bool("json", false, "print one JSON object per product, one a line")
	asCSV := fs.Bool("csv", false, "print CSV (op,rows,in,out,threads,reps,median_ms,gflops)")
	precArg := fs.String("precision", "fp32", "operands: fp32, or bf16 (rounded to bfloat16, float32 sums; AMX where the CPU has it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	prec, perr := dense.ParsePrecision(*precArg)
	if perr != nil {
		return usageError{fmt.Sprintf("--precision: %q is not %s", *precArg, strings.Join(dense.Precisions(), " or "))}
	}
	work := &dense.Work{Precision: prec}
	if *rows < 1 || *reps < 1 {
		return usageError{"--rows and --reps must be ≥ 1"}
	}
	ins, err := widthList("--in", *insArg)
	if err != nil {
		return err
	}
	outs, err := widthList("--out", *outsArg)
	if err != nil {
		return err
	}
	var ops []string
	for _, o := range strings.Split(*opsArg, ",") {
		o = strings.ToUpper(strings.TrimSpace(o))
		if o != "NN" && o != "NT" && o != "TN" {
			return usageError{fmt.Sprintf("--ops: %q is not NN, NT or TN", o)}
		}
		ops = append(ops, o)
	}
	if err := setAloneThreads(threads); err != nil {
		return err
	}
	maxIn, maxOut := maxOf(ins), maxOf(outs)
	if int64(*rows)*int64(max(maxIn, maxOut)) > 1<<31 {
		return usageError{fmt.Sprintf("--rows: %d rows of %d columns exceed 2^31 values", *rows, max(maxIn, maxOut))}
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
	xbuf, gbuf, cbuf := fill(*rows*maxIn), fill(*rows*maxOut), make([]float32, *rows*max(maxIn, maxOut))
	wbuf, wgbuf := fill(maxIn*maxOut), make([]float32, maxIn*maxOut)
	name, _, core := dense.BLAS()
	if !*asJSON && !*asCSV {
		fmt.Printf("bench gemm: rows %d, threads %d, reps %d (median); %s core %s; %s; precision %s\n",
			*rows, *threads, *reps, name, orDash(core), dense.Backend(), prec)
		if prec == dense.BF16 {
			fmt.Printf("bf16 products: %s\n", dense.BF16Kernel())
		}
		fmt.Printf("%-3s %5s %5s %10s %9s\n", "op", "in", "out", "median ms", "GFLOP/s")
	}
	if *asCSV {
		fmt.Println("op,rows,in,out,threads,reps,median_ms,gflops")
	}
	for _, op := range ops {
		for _, in := range ins {
			for _, out := range outs {
				x := &dense.Matrix{Rows: *rows, Cols: in, Data: xbuf[:*rows*in]}
				g := &dense.Matrix{Rows: *rows, Cols: out, Data: gbuf[:*rows*out]}
				w := &dense.Matrix{Rows: in, Cols: out, Data: wbuf[:in*out]}
				var fn func()
				switch op {
				case "NN":
					c := &dense.Matrix{Rows: *rows, Cols: out, Data: cbuf[:*rows*out]}
					fn = func() { work.Gemm(false, false, 1, x, w, 0, c) }
				case "NT":
					c := &dense.Matrix{Rows: *rows, Cols: in, Data: cbuf[:*rows*in]}
					fn = func() { work.Gemm(false, true, 1, g, w, 0, c) }
				case "TN":
					c := &dense.Matrix{Rows: in, Cols: out, Data: wgbuf[:in*out]}
					fn = func() { work.Gemm(true, false, 1, x, g, 0, c) }
				}
				med, _ := timeIt(fn, *reps)
				res := gemmResult{Op: op, Rows: *rows, In: in, Out: out, Threads: *threads, Reps: *reps, MedianMS: med, Precision: prec.String(),
					GFLOPS: 2 * float64(*rows) * float64(in) * float64(out) / (med * 1e6)}
				switch {
				case *asJSON:
					b, _ := json.Marshal(res)
					fmt.Println(string(b))
				case *asCSV:
					fmt.Printf("%s,%d,%d,%d,%d,%d,%.3f,%.1f\n", res.Op, res.Rows, res.In, res.Out, res.Threads, res.Reps, res.MedianMS, res.GFLOPS)
				default:
					fmt.Printf("%-3s %5d %5d %10.2f %9.1f\n", res.Op, res.In, res.Out, res.MedianMS, res.GFLOPS)
				}
			}
		}
	}
	return nil
}

// widthList parses a comma-separated list of positive widths of flag name.
func widthList(name, s string) ([]int, error) {
	var ws []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > 1<<16 {
			return nil, usageError{fmt.Sprintf("%s: %q is not a width in [1, 65536]", name, f)}
		}
		ws = append(ws, v)
	}
	return ws, nil
}

func maxOf(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
