package aggr

// RowsW returns the engine's weighted row micro-kernel (see kernel):
//
//	out[j] += Σ_k w[k] * x[int(idx[k])*stride + j]   for j < len(out)
//
// for callers that run their own row loops (attention's per-head weighted
// aggregation). The caller guarantees stride ≥ len(out), every row idx[k]
// inside x, len(w) ≥ len(idx) and out not overlapping x.
func (e *Engine) RowsW() func(out, x []float32, stride int, idx []int32, w []float32) {
	return e.k.rowsW
}
