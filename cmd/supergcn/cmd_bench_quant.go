package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/perfmodel/measure"
	"github.com/supergcn/supergcn/quant"
)

func init() {
	registerBench("quant", "stochastic quantisation of boundary rows: quantize+pack and unpack+dequantize per kernel and bits", benchQuant)
}

func benchQuant(args []string) error {
	fs := newFlagSet("bench quant", "[flags]")
	rows := fs.Int("rows", 100_000, "rows per block")
	width := fs.Int("width", 128, "values per row")
	bitsArg := fs.String("bits", quant.QuantisedList(","), "bit widths, comma separated ("+quant.QuantisedList(", ")+")")
	threads := new(int)
	threadsVar(fs, threads)
	kernelArg := fs.String("kernel", "all", "kernels, comma separated, or all: "+strings.Join(quant.Kernels(), ","))
	reps := fs.Int("reps", 5, "timed repetitions (after one warm-up); the median is reported")
	params := quant.ParamsBlock
	fs.Func("quant-params", "(zero point, scale) layout, as train --quant-params: block (default)|bf16|fp32", quantParamsFlag(&params))
	asJSON := fs.Bool("json", false, "print one JSON object per kernel and bit width, one a line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rows < 1 || *width < 1 || *reps < 1 {
		return usageError("--rows, --width and --reps must be ≥ 1")
	}
	// x and its decoded copy (fp32) and the encoded block (≤ fp32).
	if err := sizeFlag("--rows × --width", 12*float64(*rows)*float64(*width),
		fmt.Sprintf("%d rows of width %d", *rows, *width)); err != nil {
		return err
	}
	if err := setAloneThreads(threads); err != nil {
		return err
	}
	var bits []int
	for _, s := range strings.Split(*bitsArg, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return usageError(fmt.Sprintf("--bits: %q is not a number", s))
		}
		if err := (quant.Format{Bits: b}).Validate(); err != nil {
			return usageError("--bits: " + err.Error())
		}
		bits = append(bits, b)
	}
	kernels := quant.Kernels()
	if *kernelArg != "all" {
		kernels = strings.Split(*kernelArg, ",")
	}

	if !*asJSON {
		fmt.Printf("bench quant: rows %d, width %d, threads %d, reps %d (median), fp32 %.1f MB\n",
			*rows, *width, *threads, *reps, float64(*rows)*float64(*width)*4/1e6)
		fmt.Printf("%-8s %5s %12s %10s %12s %10s %8s\n", "kernel", "bits", "encode_ms", "enc_GB/s", "decode_ms", "dec_GB/s", "ratio")
	}
	err := measure.QuantBench(*rows, *width, *threads, *reps, kernels, bits, params, func(res measure.QuantResult) error {
		if *asJSON {
			j, _ := json.Marshal(res)
			fmt.Println(string(j))
		} else {
			fmt.Printf("%-8s %5d %12.2f %10.2f %12.2f %10.2f %8.1f\n", res.Kernel, res.Bits, res.EncodeMS, res.EncodeGBS, res.DecodeMS, res.DecodeGBS, res.Compressed)
		}
		return nil
	})
	if err != nil {
		return kernelError(err)
	}
	if !*asJSON {
		fmt.Println("GB/s = rows·width·4 bytes of fp32 data / median time / 1e9 (encode: row range + quantize + pack; decode: unpack + dequantize)")
	}
	return nil
}
