package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/perfmodel/measure"
)

func init() {
	registerBench("gemm", "dense products of the layers (N×in·in×out and both transposes) through dense.Gemm, GFLOP/s", benchGemm)
}

// gemmResult is one line of `bench gemm --json` (and a row of --csv).
type gemmResult struct {
	measure.GemmResult
	Threads int `json:"threads"`
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
		return usageError(fmt.Sprintf("--precision: %q is not %s", *precArg, strings.Join(dense.Precisions(), " or ")))
	}
	work := &dense.Work{Precision: prec}
	if *rows < 1 || *reps < 1 {
		return usageError("--rows and --reps must be ≥ 1")
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
		if !slices.Contains(measure.GemmOps, o) {
			return usageError(fmt.Sprintf("--ops: %q is not %s", o, strings.Join(measure.GemmOps, ", ")))
		}
		ops = append(ops, o)
	}
	if err := setAloneThreads(threads); err != nil {
		return err
	}
	if int64(*rows)*int64(max(slices.Max(ins), slices.Max(outs))) > 1<<31 {
		return usageError(fmt.Sprintf("--rows: %d rows of %d columns exceed 2^31 values", *rows, max(slices.Max(ins), slices.Max(outs))))
	}
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
	return measure.Gemm(work, *rows, ops, ins, outs, *reps, func(m measure.GemmResult) error {
		res := gemmResult{GemmResult: m, Threads: *threads, Precision: prec.String()}
		switch {
		case *asJSON:
			b, _ := json.Marshal(res)
			fmt.Println(string(b))
		case *asCSV:
			fmt.Printf("%s,%d,%d,%d,%d,%d,%.3f,%.1f\n", res.Op, res.Rows, res.In, res.Out, res.Threads, res.Reps, res.MedianMS, res.GFLOPS)
		default:
			fmt.Printf("%-3s %5d %5d %10.2f %9.1f\n", res.Op, res.In, res.Out, res.MedianMS, res.GFLOPS)
		}
		return nil
	})
}

// widthList parses a comma-separated list of positive widths of flag name.
func widthList(name, s string) ([]int, error) {
	var ws []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > 1<<16 {
			return nil, usageError(fmt.Sprintf("%s: %q is not a width in [1, 65536]", name, f))
		}
		ws = append(ws, v)
	}
	return ws, nil
}
