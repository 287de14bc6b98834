package dist

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/comm"
)

// contract builds the coarse level whose nodes are the clusters of label
// (one per distinct cluster id, hosted by the rank owning that id and
// numbered in id order), with node weights and parallel arc weights summed
// and arcs inside a cluster dropped. It returns the coarse level and the
// coarse id of each local node. Collective.
func (l *mlGraph) contract(c comm.Comm, label []int64) (*mlGraph, []int64, error) {
	idx, cvd, cidOf, vw, err := l.clusterNodes(c, label)
	if err != nil {
		return nil, nil, err
	}
	// The coarse id of every local and ghost index.
	ul := uniqueSorted(label)
	ans, err := askOwners(c, l.vd, ul, func(i int) int64 { return cidOf[i] })
	if err != nil {
		return nil, nil, err
	}
	ucid := ans
	var bad error
	for j, x := range ans {
		if x < 0 && bad == nil {
			bad = fmt.Errorf("dist: multilevel: cluster %d has no coarse node", ul[j])
		}
	}
	if err := agree(c, bad); err != nil {
		return nil, nil, err
	}
	pos := make([]int32, len(label))
	for i, cl := range label {
		j, _ := slices.BinarySearch(ul, cl)
		pos[i] = int32(j)
	}
	g, err := l.coarseRows(c, cvd, idx, pos, ucid, vw)
	if err != nil {
		return nil, nil, err
	}
	cid := make([]int64, l.n)
	for i := range cid {
		cid[i] = ucid[pos[i]]
	}
	return g, cid, nil
}

// clusterNodes sums the clusters' node weights at the ranks owning their
// names and numbers the clusters. It returns the local nodes ordered by
// cluster, the coarse distribution, the coarse id of each cluster named by
// a local node (-1: none) and the weights of this rank's coarse nodes.
// Collective.
func (l *mlGraph) clusterNodes(c comm.Comm, label []int64) (idx []int32, cvd, cidOf []int64, vw []int64, err error) {
	p, rank := c.Size(), c.Rank()
	lo := l.vd[rank]
	idx = make([]int32, l.n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Or(cmp.Compare(label[a], label[b]), cmp.Compare(a, b)) })
	width := 1 + l.ncon
	counts := make([]int, p)
	var send []int64
	q := 0
	for i := 0; i < len(idx); {
		cl := label[idx[i]]
		rec := len(send)
		send = append(send, cl)
		send = append(send, make([]int64, l.ncon)...)
		for ; i < len(idx) && label[idx[i]] == cl; i++ {
			for k := 0; k < l.ncon; k++ {
				send[rec+1+k] += l.vw[int(idx[i])*l.ncon+k]
			}
		}
		for l.vd[q+1] <= cl {
			q++
		}
		counts[q] += width
	}
	recv, _, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cw := make([]int64, l.n*l.ncon)
	used := make([]bool, l.n)
	for k := 0; k+width <= len(recv); k += width {
		i := int(recv[k] - lo)
		used[i] = true
		for j := 0; j < l.ncon; j++ {
			cw[i*l.ncon+j] += recv[k+1+j]
		}
	}
	nc := 0
	for _, u := range used {
		if u {
			nc++
		}
	}
	cnt, err := gather(c, int64(nc))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cvd = make([]int64, p+1)
	for r, x := range cnt {
		cvd[r+1] = cvd[r] + x
	}
	cidOf = make([]int64, l.n)
	vw = make([]int64, 0, nc*l.ncon)
	next := cvd[rank]
	for i, u := range used {
		cidOf[i] = -1
		if u {
			cidOf[i] = next
			next++
			vw = append(vw, cw[i*l.ncon:(i+1)*l.ncon]...)
		}
	}
	return idx, cvd, cidOf, vw, nil
}

// coarseRows sends the rows of each coarse node (the local nodes in idx,
// grouped by cluster, their arcs summed by coarse neighbour) to the rank
// hosting it, which merges them into the coarse level. pos maps a local or
// ghost index to its cluster's position in ucid, the coarse ids. Collective.
func (l *mlGraph) coarseRows(c comm.Comm, cvd []int64, idx, pos []int32, ucid []int64, vw []int64) (*mlGraph, error) {
	p, rank := c.Size(), c.Rank()
	counts := make([]int, p)
	send := make([]int64, 0, 2*len(l.adj)+2*l.n)
	acc := make([]int64, len(ucid))
	var touched []int32
	q := 0
	for i := 0; i < len(idx); {
		self := pos[idx[i]]
		touched = touched[:0]
		for ; i < len(idx) && pos[idx[i]] == self; i++ {
			v := idx[i]
			for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
				j := pos[l.adj[a]]
				if j == self {
					continue
				}
				if acc[j] == 0 {
					touched = append(touched, j)
				}
				acc[j] += l.arcW(a)
			}
		}
		row := ucid[self]
		for cvd[q+1] <= row {
			q++
		}
		rec := len(send)
		send = append(send, row, int64(len(touched)))
		for _, j := range touched {
			send = append(send, ucid[j], acc[j])
			acc[j] = 0
		}
		counts[q] += len(send) - rec
	}
	recv, _, err := exchange(c, send, counts, DefaultRoundBytes)
	send = nil
	if err != nil {
		return nil, err
	}
	nc := int(cvd[rank+1] - cvd[rank])
	ptr, arcs := mergeRows(recv, nc, cvd[rank])
	ew := make([]int64, len(arcs))
	for k, a := range arcs {
		ew[k] = min(a.w, math.MaxInt64/4)
	}
	return newMLGraph(c, cvd, ptr, len(arcs), func(k int) int64 { return arcs[k].col }, ew, l.ncon, vw)
}

// coarseArc is an arc of a coarse row: its column (a global id) and weight.
type coarseArc struct{ col, w int64 }

// mergeRows builds the CSR of nc coarse rows (global ids from lo) from the
// row records of coarseRows, merging the arcs to one neighbour: the arcs
// are put in their rows, then each row is sorted by neighbour.
func mergeRows(recv []int64, nc int, lo int64) (ptr []int64, arcs []coarseArc) {
	type arc = coarseArc
	start := make([]int64, nc+1)
	for k := 0; k < len(recv); k += 2 + 2*int(recv[k+1]) {
		start[recv[k]-lo+1] += recv[k+1]
	}
	for i := 0; i < nc; i++ {
		start[i+1] += start[i]
	}
	arcs = make([]arc, start[nc])
	next := slices.Clone(start[:nc])
	for k := 0; k < len(recv); {
		row, m := recv[k]-lo, int(recv[k+1])
		k += 2
		for j := 0; j < m; j++ {
			arcs[next[row]] = arc{recv[k], recv[k+1]}
			next[row]++
			k += 2
		}
	}
	recv, next = nil, nil // garbage from here
	ptr = make([]int64, nc+1)
	distinct := int64(0)
	for i := 0; i < nc; i++ { // merge row i in place, to arcs[ptr[i]:]
		row := arcs[start[i]:start[i+1]]
		slices.SortFunc(row, func(a, b arc) int { return cmp.Compare(a.col, b.col) })
		for k := range row {
			if k > 0 && row[k].col == arcs[distinct-1].col {
				arcs[distinct-1].w += row[k].w
				continue
			}
			arcs[distinct] = row[k]
			distinct++
		}
		ptr[i+1] = distinct
	}
	return ptr, arcs[:distinct]
}

// project returns the parts of this level's local nodes from the parts of
// the coarse level's (coarse ids cid, hosted as cvd says). Collective.
func project(c comm.Comm, cvd []int64, coarsePart []int32, cid []int64) ([]int32, error) {
	u := uniqueSorted(cid)
	ans, err := askOwners(c, cvd, u, func(i int) int64 { return int64(coarsePart[i]) })
	if err != nil {
		return nil, err
	}
	part := make([]int32, len(cid))
	for i, x := range cid {
		j, _ := slices.BinarySearch(u, x)
		part[i] = int32(ans[j])
	}
	return part, nil
}
