package plots

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// palette holds the colours of the series of every figure, distinct to
// the eye: Tableau 10, then the same hues darker. seriesColor wraps only
// past len(palette) series.
var palette = func() []color.Color {
	base := []color.RGBA{
		{0x4e, 0x79, 0xa7, 255}, {0xf2, 0x8e, 0x2b, 255}, {0xe1, 0x57, 0x59, 255}, {0x76, 0xb7, 0xb2, 255},
		{0x59, 0xa1, 0x4f, 255}, {0xed, 0xc9, 0x48, 255}, {0xb0, 0x7a, 0xa1, 255}, {0xff, 0x9d, 0xa7, 255},
		{0x9c, 0x75, 0x5f, 255}, {0xba, 0xb0, 0xac, 255},
	}
	p := make([]color.Color, 0, 2*len(base))
	for _, c := range base {
		p = append(p, c)
	}
	for _, c := range base {
		p = append(p, color.RGBA{c.R / 2, c.G / 2, c.B / 2, 255})
	}
	return p
}()

// seriesColor is the colour of series i.
func seriesColor(i int) color.Color {
	return palette[((i%len(palette))+len(palette))%len(palette)]
}

// labelledTicks places the ticks of a linear axis at a 1, 2 or 5 × 10^k
// step, about six of them, and labels every one: a gridline (drawn at the
// labelled ticks) always has its value. With integer (an axis of epochs)
// the step is at least 1.
type labelledTicks struct{ integer bool }

// Ticks implements plot.Ticker.
func (lt labelledTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	step := niceStep((hi - lo) / 6)
	if lt.integer {
		step = max(step, 1)
	}
	prec := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if v == 0 {
			v = 0 // no "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return ticks
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= x*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}
