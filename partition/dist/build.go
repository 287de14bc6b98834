package dist

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
)

// build sends every edge u→v (u ≠ v) as the two arcs (v, u) and (u, v) to
// the ranks owning v and u, so each rank receives the rows of its nodes of
// the symmetrised graph; sorting the packed (row, column, reverse) triples
// and dropping repeats gives the rows ascending and duplicate-free, which is
// Symmetrize(Dedup(RemoveSelfLoops(g))) row by row; on a weighted input
// the weights travel beside the triples and the repeats of an arc merge
// into their largest weight, as Dedup and Symmetrize merge them. For an
// input that must be symmetric already (METIS), every arc must arrive as
// often as listed (reverse bit 0) as its reverse (bit 1), as LoadMetis
// checks.
func build(c comm.Comm, r *raw, roundBytes int) (*Graph, error) {
	p := c.Size()
	counts := make([]int, p)
	for k, u := range r.src {
		v := r.dst[k]
		if u == v {
			continue
		}
		counts[blockOf(r.vd, v)]++
		counts[blockOf(r.vd, u)]++
	}
	off := offsets(counts)
	send := make([]int64, off[p])
	var sendW []float32
	if r.weighted {
		sendW = make([]float32, off[p])
	}
	next := append([]int(nil), off[:p]...)
	put := func(row, col int32, rev int64, w float32) {
		q := blockOf(r.vd, row)
		send[next[q]] = int64(row)<<32 | int64(col)<<1 | rev
		if sendW != nil {
			sendW[next[q]] = w
		}
		next[q]++
	}
	for k, u := range r.src {
		if v := r.dst[k]; u != v {
			w := float32(0)
			if r.weighted {
				w = r.val[k]
			}
			put(v, u, 0, w)
			put(u, v, 1, w)
		}
	}
	r.src, r.dst, r.val = nil, nil, nil
	recv, _, err := exchange(c, send, counts, roundBytes)
	send = nil
	if err != nil {
		return nil, err
	}
	var recvW []float32
	if r.weighted {
		if recvW, _, err = exchange(c, sendW, counts, roundBytes); err != nil {
			return nil, err
		}
		sendW = nil
		sortArcs(recv, recvW)
	} else {
		sortInt64(recv)
	}
	lo, hi := r.lo(c), r.hi(c)
	g := &Graph{Name: r.name, NumNodes: r.n, VtxDist: r.vd, Lo: lo, Hi: hi, Ptr: make([]int64, hi-lo+1),
		FeatDim: r.featDim, X: r.x, Labels: r.labels, Split: r.split, NumClasses: r.classes, Weighted: r.weighted}
	adj := make([]int32, 0, len(recv))
	if r.weighted {
		g.Val = make([]float32, 0, len(recv))
	}
	var bad error
	for i := 0; i < len(recv); {
		key := recv[i] >> 1
		var n [2]int
		w := float32(0)
		for ; i < len(recv) && recv[i]>>1 == key; i++ {
			n[recv[i]&1]++
			if recvW != nil {
				w = max(w, recvW[i])
			}
		}
		if g.Val != nil {
			g.Val = append(g.Val, w)
		}
		row, col := int32(key>>31), int32(key&(1<<31-1))
		if r.symmetric && n[0] != n[1] && bad == nil {
			v, u := row, col // v lists u but u does not list v (as often)
			if n[1] > n[0] {
				v, u = col, row
			}
			bad = &graph.ParseError{File: r.path, Msg: fmt.Sprintf("vertex %d lists neighbour %d, but vertex %d does not list %d (a METIS graph must be symmetric)",
				v+1, u+1, u+1, v+1)}
		}
		g.Ptr[int(row)-lo+1]++
		adj = append(adj, col)
	}
	if err := agree(c, bad); err != nil {
		return nil, err
	}
	recv = nil
	g.Adj = slices.Clip(adj)
	for i := 0; i < hi-lo; i++ {
		g.Ptr[i+1] += g.Ptr[i]
	}
	var cnt [5]int64
	cnt[0] = int64(len(g.Adj))
	for _, b := range g.Split {
		for k := 0; k < 3; k++ {
			if b&(1<<k) != 0 {
				cnt[1+k]++
			}
		}
	}
	for _, y := range g.Labels {
		cnt[4] = max(cnt[4], int64(y)+1)
	}
	if g.Labels == nil {
		cnt[4] = 0
	}
	sums := cnt[:4:4]
	if err := c.AllreduceSumI64(sums); err != nil {
		return nil, err
	}
	g.NumArcs, g.NumTrain, g.NumValid, g.NumTest = sums[0], sums[1], sums[2], sums[3]
	hasLabels, err := allreduceMax(c, boolInt(g.Labels != nil))
	if err != nil {
		return nil, err
	}
	if hasLabels != 0 && g.Labels == nil { // an empty block of a labelled dataset
		g.Labels = []int32{}
	}
	classes, err := allreduceMax(c, cnt[4])
	if err != nil {
		return nil, err
	}
	if g.NumClasses < 0 {
		g.NumClasses = int(classes)
	}
	if hasLabels == 0 {
		g.Labels = nil
	}
	return g, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sortArcs sorts the arc keys s and their weights w by key (the order of
// equal keys does not matter: their weights merge by maximum).
func sortArcs(s []int64, w []float32) {
	type arc struct {
		key int64
		w   float32
	}
	a := make([]arc, len(s))
	for i := range s {
		a[i] = arc{s[i], w[i]}
	}
	slices.SortFunc(a, func(x, y arc) int { return cmp.Compare(x.key, y.key) })
	for i := range a {
		s[i], w[i] = a[i].key, a[i].w
	}
}

// sortInt64 sorts s, in parallel chunks merged pairwise when it is large.
func sortInt64(s []int64) {
	w := par.Threads()
	if w <= 1 || len(s) < 1<<20 {
		slices.Sort(s)
		return
	}
	k := 1
	for k < w {
		k *= 2
	}
	bounds := make([]int, k+1)
	for i := range bounds {
		bounds[i] = len(s) * i / k
	}
	par.Blocks(k, 0, func(i int) { slices.Sort(s[bounds[i]:bounds[i+1]]) })
	tmp := make([]int64, len(s))
	src, dst := s, tmp
	for width := 1; width < k; width *= 2 {
		par.Blocks(k/(2*width), 0, func(j int) {
			a, m, b := bounds[2*j*width], bounds[(2*j+1)*width], bounds[(2*j+2)*width]
			mergeInto(dst[a:b], src[a:m], src[m:b])
		})
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

func mergeInto(dst, a, b []int64) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			dst[k] = a[i]
			i++
		} else {
			dst[k] = b[j]
			j++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// hasTrain reports whether a split byte marks a training node.
func hasTrain(b uint8) bool { return b&graph.InTrain != 0 }
