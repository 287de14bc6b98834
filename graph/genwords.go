package graph

import (
	"math/rand/v2"
	"slices"
)

// genWords draws bag-of-words features: node v gets k words, k uniform in
// [1, 2·density·dim - 1] (mean density·dim), each drawn with probability
// 1/(1+noise) from the vocabulary of v's class (the words j with j mod
// classes = class; unlabelled nodes have none) and otherwise from all dim
// words; a row holds each word's count. Blocks of nodes draw from their own
// streams, so the result does not depend on threads.
func genWords(labels []int32, classes, dim int, density, noise float64, seed uint64, threads int) *CSR {
	n := len(labels)
	mean := max(1, density*float64(dim))
	topic := 1 / (1 + noise)
	blocks := make([]*CSR, (n+genBlock-1)/genBlock)
	genBlocks(n, threads, func(b, lo, hi int) {
		r := rand.New(genStream(seed, genPhaseWords, b))
		part := &CSR{NumRows: hi - lo, NumCols: dim, Ptr: make([]int64, hi-lo+1)}
		var row []int32
		for v := lo; v < hi; v++ {
			k := 1 + r.IntN(max(1, int(2*mean-1)))
			row = row[:0]
			for range k {
				y := labels[v]
				if y >= 0 && int(y) < dim && r.Float64() < topic {
					row = append(row, y+int32(classes)*int32(r.IntN((dim-int(y)+classes-1)/classes)))
				} else {
					row = append(row, int32(r.IntN(dim)))
				}
			}
			slices.Sort(row)
			for i, w := range row {
				if i > 0 && w == row[i-1] {
					part.Val[len(part.Val)-1]++
					continue
				}
				part.Idx = append(part.Idx, w)
				part.Val = append(part.Val, 1)
			}
			part.Ptr[v-lo+1] = int64(len(part.Idx))
		}
		blocks[b] = part
	})
	x := &CSR{NumRows: n, NumCols: dim, Ptr: make([]int64, 1, n+1), Idx: []int32{}, Val: []float32{}}
	for _, p := range blocks {
		base := x.Ptr[len(x.Ptr)-1]
		for _, q := range p.Ptr[1:] {
			x.Ptr = append(x.Ptr, base+q)
		}
		x.Idx = append(x.Idx, p.Idx...)
		x.Val = append(x.Val, p.Val...)
	}
	return x
}
