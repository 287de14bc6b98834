package attn

import (
	"math"

	"github.com/supergcn/supergcn/internal/rowk"
)

// exp32 is e^x in float32, within 2 ulp of the correctly rounded value
// (TestExp32): in [rowk.ExpLo, rowk.ExpHi] rowk.ExpFlush's polynomial;
// outside (underflow to subnormals and 0, overflow to +Inf, NaN) math.Exp
// through float64.
func exp32(x float32) float32 {
	if !(x >= rowk.ExpLo && x <= rowk.ExpHi) {
		return float32(math.Exp(float64(x)))
	}
	return rowk.ExpFlush(x)
}

// expAll sets x[i] = rowk.ExpFlush(x[i]): the exponentials of the kernels'
// scores (x ≤ 0 there), the pure-Go twin of the head kernels' exp
// (results below float32's smallest normal number flushed to 0, x above
// rowk.ExpHi taken as it: one polynomial everywhere, so that SIMD lanes
// compute it without a branch).
func expAll(x []float32) {
	for i, y := range x {
		x[i] = rowk.ExpFlush(y)
	}
}
