package rowk

// Scale sets dst[j] = f·src[j] for j < len(dst) (dst may be src): a row
// scaling of a graph operator (GCN's and the mean's diagonal scalings,
// aggr and exchange). The reference loop, which the generic twin is:
//
//	for j := range dst { dst[j] = f * src[j] }
//
// One rounded product per element, so every set gives the same values.
// len(src) ≥ len(dst).
func (k Set) Scale(dst, src []float32, f float32) {
	if k.native {
		scaleNative(dst, src[:len(dst)], f)
		return
	}
	scaleGeneric(dst, src[:len(dst)], f)
}

func scaleGeneric(dst, src []float32, f float32) {
	src = src[:len(dst)]
	for j := range dst {
		dst[j] = f * src[j]
	}
}
