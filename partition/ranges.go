package partition

import "math/bits"

// NodeRanges splits n nodes into size contiguous ranges of (nearly) equal
// node count: rank r gets [vtxdist[r], vtxdist[r+1]). The ranges are
// int32, as the ParMETIS API takes them: n must be below 2^31.
func NodeRanges(n, size int) []int32 {
	vd := make([]int32, size+1)
	for r, x := range NodeRanges64(int64(n), size) {
		vd[r] = int32(x)
	}
	return vd
}

// NodeRanges64 is NodeRanges for any n ≥ 0: vtxdist[r] = ⌊n·r/size⌋,
// computed without overflow.
func NodeRanges64(n int64, size int) []int64 {
	vd := make([]int64, size+1)
	for r := 0; r <= size; r++ {
		hi, lo := bits.Mul64(uint64(n), uint64(r))
		q, _ := bits.Div64(hi, lo, uint64(size)) // n·r/size ≤ n: no overflow
		vd[r] = int64(q)
	}
	return vd
}
