package dist

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
)

// build sends every edge u→v (u ≠ v) as the two arcs (v, u) and (u, v) to
// the ranks owning v and u, so each rank receives the rows of its nodes of
// the symmetrised graph; sorting the (row, column, reverse) triples and
// dropping repeats gives the rows ascending and duplicate-free, which is
// Symmetrize(Dedup(RemoveSelfLoops(g))) row by row; on a weighted input
// the weights travel beside the triples and the repeats of an arc merge
// into their largest weight, as Dedup and Symmetrize merge them. For an
// input that must be symmetric already (METIS), every arc must arrive as
// often as listed (reverse bit 0) as its reverse (bit 1), as LoadMetis
// checks. A triple travels as one int64 key where the node ranges allow
// (arcKeyBits), else as two (pairRows).
func build(c comm.Comm, r *raw, roundBytes int) (*Graph, error) {
	colBits, keyed := arcKeyBits(r.vd)
	return buildRows(c, r, roundBytes, colBits, keyed)
}

// features are the rows of this rank's features that r read.
func (r *raw) features(rows int) graph.Features {
	switch {
	case r.xs != nil:
		return graph.SparseX(r.xs)
	case r.featDim > 0:
		return graph.DenseX(r.x, rows, r.featDim)
	}
	return graph.Features{}
}

// buildRows is build with the arcs sent as keys of colBits-bit columns
// (keyed) or as pairs.
func buildRows(c comm.Comm, r *raw, roundBytes int, colBits uint, keyed bool) (*Graph, error) {
	lo, hi := r.lo(c), r.hi(c)
	g := &Graph{Name: r.name, NumNodes: r.n, VtxDist: r.vd, Lo: lo, Hi: hi, Ptr: make([]int64, hi-lo+1),
		FeatDim: r.featDim, Features: r.features(hi - lo), Labels: r.labels, Split: r.split, NumClasses: r.classes, Weighted: r.weighted}
	var err error
	if keyed {
		err = g.keyRows(c, r, roundBytes, colBits)
	} else {
		err = g.pairRows(c, r, roundBytes)
	}
	if err != nil {
		return nil, err
	}
	return g, g.totals(c)
}

// arcKeyBits returns the bits a column takes in an arc key, (row − the
// first row of its rank) << (colBits+1) | column << 1 | reverse, and
// whether such keys fit an int64 under the node ranges vd.
func arcKeyBits(vd []int64) (colBits uint, ok bool) {
	var most int64
	for q := 0; q+1 < len(vd); q++ {
		most = max(most, vd[q+1]-vd[q])
	}
	colBits = uint(bits.Len64(uint64(max(vd[len(vd)-1]-1, 0))))
	rowBits := uint(bits.Len64(uint64(max(most-1, 0))))
	return colBits, rowBits+colBits+1 <= 63
}

// arcCounts returns how many arcs of r's edges go to each rank.
func arcCounts(r *raw, p int) []int {
	counts := make([]int, p)
	for k, u := range r.src {
		if v := r.dst[k]; u != v {
			counts[blockOf(r.vd, v)]++
			counts[blockOf(r.vd, u)]++
		}
	}
	return counts
}

// eachArc calls put for both arcs of every edge of r that is not a loop:
// (v, u) with reverse bit 0 and (u, v) with 1, with the edge's weight.
func eachArc(r *raw, put func(row, col, rev int64, w float32)) {
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
}

// keyRows builds g's rows from arcs sent as one int64 key each (see
// arcKeyBits).
func (g *Graph) keyRows(c comm.Comm, r *raw, roundBytes int, colBits uint) error {
	send, sendW, counts := packArcs(r, c.Size(), 1, func(rec []int64, row, col, rev int64) {
		rec[0] = row<<(colBits+1) | col<<1 | rev
	})
	recv, recvW, err := exchangeArcs(c, send, sendW, counts, counts, roundBytes)
	if err != nil {
		return err
	}
	if r.weighted {
		sortArcs(recv, recvW)
	} else {
		sortInt64(recv)
	}
	rb := g.newRowBuilder(r, len(recv))
	lo, mask := int64(g.Lo), int64(1)<<colBits-1
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
		rb.add(lo+key>>colBits, key&mask, n, w)
	}
	return rb.finish(c)
}

// pairRows builds g's rows from arcs sent as two int64 each: (row − the
// first row of its rank) << 1 | reverse, and the column.
func (g *Graph) pairRows(c comm.Comm, r *raw, roundBytes int) error {
	p := c.Size()
	send, sendW, counts := packArcs(r, p, 2, func(rec []int64, row, col, rev int64) {
		rec[0], rec[1] = row<<1|rev, col
	})
	pairCounts := make([]int, p)
	for q, n := range counts {
		pairCounts[q] = 2 * n
	}
	recv, recvW, err := exchangeArcs(c, send, sendW, pairCounts, counts, roundBytes)
	if err != nil {
		return err
	}
	sortPairs(recv, recvW)
	rb := g.newRowBuilder(r, len(recv)/2)
	lo := int64(g.Lo)
	for i := 0; i < len(recv); {
		row, col := recv[i]>>1, recv[i+1]
		var n [2]int
		w := float32(0)
		for ; i < len(recv) && recv[i]>>1 == row && recv[i+1] == col; i += 2 {
			n[recv[i]&1]++
			if recvW != nil {
				w = max(w, recvW[i/2])
			}
		}
		rb.add(lo+row, col, n, w)
	}
	return rb.finish(c)
}

// sortPairs sorts the arcs of pairRows, the (local row << 1 | reverse,
// column) pairs of s, by local row, then column, with their weights w
// (nil: unweighted; the order of equal arcs does not matter: their
// weights merge by maximum).
func sortPairs(s []int64, w []float32) {
	byRowCol := func(x, y [2]int64) int { return cmp.Or(cmp.Compare(x[0]>>1, y[0]>>1), cmp.Compare(x[1], y[1])) }
	if w == nil {
		if len(s) > 0 { // in place: s viewed as pairs
			slices.SortFunc(unsafe.Slice((*[2]int64)(unsafe.Pointer(&s[0])), len(s)/2), byRowCol)
		}
		return
	}
	type arc struct {
		k [2]int64
		w float32
	}
	a := make([]arc, len(w))
	for i := range a {
		a[i] = arc{[2]int64{s[2*i], s[2*i+1]}, w[i]}
	}
	slices.SortFunc(a, func(x, y arc) int { return byRowCol(x.k, y.k) })
	for i := range a {
		s[2*i], s[2*i+1], w[i] = a[i].k[0], a[i].k[1], a[i].w
	}
}

// rowBuilder appends the merged arcs of a graph's rows, in row order.
type rowBuilder struct {
	g         *Graph
	adj       []int64
	symmetric bool   // the input must be symmetric (METIS): check it
	path      string // the input, for errors
	bad       error
}

// newRowBuilder starts g's rows for up to arcs merged arcs.
func (g *Graph) newRowBuilder(r *raw, arcs int) *rowBuilder {
	if r.weighted {
		g.Val = make([]float32, 0, arcs)
	}
	return &rowBuilder{g: g, adj: make([]int64, 0, arcs), symmetric: r.symmetric, path: r.path}
}

// add appends the arc row→col, which arrived n[0] times as listed and
// n[1] times as the reverse of a listed arc, with the largest weight w.
func (b *rowBuilder) add(row, col int64, n [2]int, w float32) {
	if b.g.Val != nil {
		b.g.Val = append(b.g.Val, w)
	}
	if b.symmetric && n[0] != n[1] && b.bad == nil {
		v, u := row, col // v lists u but u does not list v (as often)
		if n[1] > n[0] {
			v, u = col, row
		}
		b.bad = &graph.ParseError{File: b.path, Msg: fmt.Sprintf("vertex %d lists neighbour %d, but vertex %d does not list %d (a METIS graph must be symmetric)",
			v+1, u+1, u+1, v+1)}
	}
	b.g.Ptr[row-int64(b.g.Lo)+1]++
	b.adj = append(b.adj, col)
}

// finish sets the graph's adjacency and row offsets; every rank gets the
// lowest failing rank's asymmetry. Collective.
func (b *rowBuilder) finish(c comm.Comm) error {
	if err := agree(c, b.bad); err != nil {
		return err
	}
	g := b.g
	g.Adj = slices.Clip(b.adj)
	for i := 0; i < g.Hi-g.Lo; i++ {
		g.Ptr[i+1] += g.Ptr[i]
	}
	return nil
}

// totals sets the graph's arc, split and class counts, summed over the
// ranks, and makes the labels present on every rank or on none.
// Collective.
func (g *Graph) totals(c comm.Comm) error {
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
		return err
	}
	g.NumArcs, g.NumTrain, g.NumValid, g.NumTest = sums[0], sums[1], sums[2], sums[3]
	hasLabels, err := allreduceMax(c, boolInt(g.Labels != nil))
	if err != nil {
		return err
	}
	if hasLabels != 0 && g.Labels == nil { // an empty block of a labelled dataset
		g.Labels = []int32{}
	}
	classes, err := allreduceMax(c, cnt[4])
	if err != nil {
		return err
	}
	if g.NumClasses < 0 {
		g.NumClasses = int(classes)
	}
	if hasLabels == 0 {
		g.Labels = nil
	}
	return nil
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

// exchangeArcs sends each rank its arc records (counts per rank) and, when
// sendW is not nil (a weighted graph, so on every rank), their weights
// (wcounts per rank). Collective.
func exchangeArcs(c comm.Comm, send []int64, sendW []float32, counts, wcounts []int, roundBytes int) ([]int64, []float32, error) {
	recv, _, err := exchange(c, send, counts, roundBytes)
	if err != nil || sendW == nil {
		return recv, nil, err
	}
	recvW, _, err := exchange(c, sendW, wcounts, roundBytes)
	return recv, recvW, err
}

// packArcs lays r's arcs out by the rank owning their row, words int64 a
// record written by put (row counted from its rank's first row), with the
// weights beside them when r is weighted; counts holds the arcs per rank.
// r's edges are released.
func packArcs(r *raw, p, words int, put func(rec []int64, row, col, rev int64)) (send []int64, sendW []float32, counts []int) {
	counts = arcCounts(r, p)
	off := offsets(counts)
	send = make([]int64, words*off[p])
	if r.weighted {
		sendW = make([]float32, off[p])
	}
	next := append([]int(nil), off[:p]...)
	eachArc(r, func(row, col, rev int64, w float32) {
		q := blockOf(r.vd, row)
		put(send[words*next[q]:words*next[q]+words], row-r.vd[q], col, rev)
		if sendW != nil {
			sendW[next[q]] = w
		}
		next[q]++
	})
	r.src, r.dst, r.val = nil, nil, nil
	return send, sendW, counts
}
