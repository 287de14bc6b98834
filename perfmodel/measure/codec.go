package measure

import (
	"math/rand/v2"
	"strings"

	"github.com/supergcn/supergcn/quant"
)

// Codec times c encoding the rows×width values x (a new seed each run)
// and decoding them again, reps times each after a warm-up, before run
// ahead of every run (Time); it returns the median milliseconds and the
// encoded bytes (data and parameters).
func Codec(c *quant.Codec, x []float32, rows, width, reps int, before func()) (encMS, decMS float64, size int, err error) {
	d, p := c.Size(rows, width)
	buf, out := make([]byte, d+p), make([]float32, len(x))
	seed := uint64(0)
	encMS, _ = Time(before, func() { seed++; c.Encode(buf, x, rows, width, seed) }, reps)
	decMS, _ = Time(before, func() {
		if e := c.Decode(out, buf, rows, width); e != nil {
			err = e
		}
	}, reps)
	return encMS, decMS, d + p, err
}

// QuantResult is one kernel at one width of QuantBench (a line of `bench
// quant --json`). GB/s count the fp32 data (rows·width·4 bytes), whichever
// direction.
type QuantResult struct {
	Kernel     string  `json:"kernel"`
	Bits       int     `json:"bits"`
	Params     string  `json:"quant_params"`
	Rows       int     `json:"rows"`
	Width      int     `json:"width"`
	Threads    int     `json:"threads"`
	Reps       int     `json:"reps"`
	EncodeMS   float64 `json:"encode_median_ms"`
	EncodeGBS  float64 `json:"encode_gbs"`
	DecodeMS   float64 `json:"decode_median_ms"`
	DecodeGBS  float64 `json:"decode_gbs"`
	EncodedMB  float64 `json:"encoded_mb"` // data + parameters
	Compressed float64 `json:"ratio"`      // fp32 bytes / encoded bytes
}

// QuantBench times the codec of every kernel at every width of bits with
// params on one block of rows×width normal values (Codec), passing each
// result to each in the order kernels, then bits.
func QuantBench(rows, width, threads, reps int, kernels []string, bits []int, params quant.Params, each func(QuantResult) error) error {
	n := rows * width
	x := make([]float32, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	gb := float64(n) * 4 / 1e9
	for _, kn := range kernels {
		for _, b := range bits {
			c, err := quant.NewCodec(quant.Format{Bits: b, Params: params}, threads, strings.TrimSpace(kn))
			if err != nil {
				return err
			}
			encMS, decMS, size, err := Codec(c, x, rows, width, reps, func() {})
			if err != nil {
				return err
			}
			if err := each(QuantResult{Kernel: c.Kernel(), Bits: b, Params: params.String(), Rows: rows, Width: width,
				Threads: threads, Reps: reps, EncodeMS: encMS, EncodeGBS: gb / (encMS / 1e3), DecodeMS: decMS,
				DecodeGBS: gb / (decMS / 1e3), EncodedMB: float64(size) / 1e6, Compressed: float64(n*4) / float64(size)}); err != nil {
				return err
			}
		}
	}
	return nil
}
