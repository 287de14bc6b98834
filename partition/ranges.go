package partition

// NodeRanges splits n nodes into size contiguous ranges of (nearly) equal
// node count: rank r gets [vtxdist[r], vtxdist[r+1]).
func NodeRanges(n, size int) []int32 {
	vd := make([]int32, size+1)
	for r := 0; r <= size; r++ {
		vd[r] = int32(int64(n) * int64(r) / int64(size))
	}
	return vd
}
