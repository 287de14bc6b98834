package measure

import "github.com/supergcn/supergcn/quant"

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
