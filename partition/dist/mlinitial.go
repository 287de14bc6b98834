package dist

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/comm"
)

// InitialPartitioner partitions a small graph, given in the 32-bit CSR of
// the METIS API (xadj: n+1 offsets; adjncy: neighbours; adjwgt: arc
// weights; vwgt: n×ncon node weights), into parts with every constraint
// within (1+imbalance) of the average, seeded; it returns each node's part.
// partition/metis provides one; Multilevel uses greedy growing and label
// propagation when none is given.
type InitialPartitioner func(xadj, adjncy, adjwgt, vwgt []int32, ncon, parts int, imbalance float64, seed int) ([]int32, error)

// wholeGraph is a level gathered on one rank: global CSR, int64 offsets.
type wholeGraph struct {
	ptr  []int64
	adj  []int32
	ew   []int64
	ncon int
	vw   []int64
}

// gatherLevel returns the whole level on every rank. Collective.
func (l *mlGraph) gatherLevel(c comm.Comm) (*wholeGraph, error) {
	mine := make([]int64, 0, 1+l.n*(1+l.ncon)+2*len(l.adj))
	for v := 0; v < l.n; v++ {
		mine = append(mine, l.ptr[v+1]-l.ptr[v])
		mine = append(mine, l.vw[v*l.ncon:(v+1)*l.ncon]...)
		for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
			mine = append(mine, int64(l.gid(int(l.adj[a]))), l.arcW(a))
		}
	}
	p := c.Size()
	counts := make([]int, p)
	send := make([]int64, 0, p*len(mine))
	for q := range counts {
		counts[q] = len(mine)
		send = append(send, mine...)
	}
	mine = nil
	all, _, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil {
		return nil, err
	}
	w := &wholeGraph{ptr: make([]int64, 1, l.nodes+1), adj: make([]int32, 0, l.arcs), ew: make([]int64, 0, l.arcs),
		ncon: l.ncon, vw: make([]int64, 0, l.nodes*int64(l.ncon))}
	for k := 0; k < len(all); {
		d := all[k]
		w.vw = append(w.vw, all[k+1:k+1+l.ncon]...)
		k += 1 + l.ncon
		for j := int64(0); j < d; j++ {
			w.adj = append(w.adj, int32(all[k]))
			w.ew = append(w.ew, all[k+1])
			k += 2
		}
		w.ptr = append(w.ptr, int64(len(w.adj)))
	}
	return w, nil
}

// n returns the node count.
func (w *wholeGraph) n() int { return len(w.ptr) - 1 }

// quality returns the cut weight of part and its balance (largest part
// over the average, over the constraints).
func (w *wholeGraph) quality(part []int32, parts int) (cut int64, imb float64) {
	for v := 0; v < w.n(); v++ {
		for a := w.ptr[v]; a < w.ptr[v+1]; a++ {
			if part[w.adj[a]] != part[v] {
				cut += w.ew[a]
			}
		}
	}
	pw := make([]int64, parts*w.ncon)
	tot := make([]int64, w.ncon)
	for v, q := range part {
		for k := 0; k < w.ncon; k++ {
			pw[int(q)*w.ncon+k] += w.vw[v*w.ncon+k]
			tot[k] += w.vw[v*w.ncon+k]
		}
	}
	for k := 0; k < w.ncon; k++ {
		if tot[k] == 0 {
			continue
		}
		for q := 0; q < parts; q++ {
			imb = max(imb, float64(pw[q*w.ncon+k])*float64(parts)/float64(tot[k]))
		}
	}
	return cut / 2, imb
}

// scaled32 returns w in the 32-bit form of InitialPartitioner, dividing
// the weights (rounding node weights up) so that every sum fits.
func (w *wholeGraph) scaled32() (xadj, adj, ew, vw []int32, err error) {
	if int64(len(w.adj)) > math.MaxInt32 || w.n() >= math.MaxInt32 {
		return nil, nil, nil, nil, fmt.Errorf("dist: multilevel: the coarsest graph (%d nodes, %d arcs) exceeds 32-bit indices", w.n(), len(w.adj))
	}
	const limit = 1 << 30
	xadj = make([]int32, len(w.ptr))
	for i, x := range w.ptr {
		xadj[i] = int32(x)
	}
	var esum int64
	for _, x := range w.ew {
		esum += x
	}
	ef := max(1, (esum+limit-1)/limit)
	ew = make([]int32, len(w.ew))
	for i, x := range w.ew {
		ew[i] = int32(max(1, x/ef))
	}
	tot := make([]int64, w.ncon)
	for i, x := range w.vw {
		tot[i%w.ncon] += x
	}
	vw = make([]int32, len(w.vw))
	for i, x := range w.vw {
		f := max(1, (tot[i%w.ncon]+limit-1)/limit)
		vw[i] = int32((x + f - 1) / f)
	}
	return xadj, w.adj, ew, vw, nil
}

// initial partitions the gathered coarsest level on min(P, tries) ranks
// with seeds seed, seed+1, …, keeps the partition with the least cut among
// those within the balance bound (else the best balanced; ties: the lower
// rank) and returns the parts of this rank's nodes. Collective.
func (l *mlGraph) initial(c comm.Comm, parts int, o *MultilevelOptions) ([]int32, string, error) {
	w, err := l.gatherLevel(c)
	if err != nil {
		return nil, "", err
	}
	p, rank := c.Size(), c.Rank()
	tries := min(p, o.InitialTries)
	score := make([]float64, 2*p) // (over the bound ? imbalance : 0, cut) per rank
	var part []int32
	var bad error
	how := "greedy growing + label propagation"
	if o.Initial != nil {
		how = "the initial partitioner"
	}
	if rank < tries {
		part, bad = w.partition(parts, o, o.Seed+uint64(rank))
		if bad == nil {
			cut, imb := w.quality(part, parts)
			if imb > 1+o.Imbalance+1e-9 {
				score[2*rank] = imb
			}
			score[2*rank+1] = float64(cut)
		}
	}
	if err := agree(c, bad); err != nil {
		return nil, "", err
	}
	if err := c.AllreduceSumF64(score); err != nil {
		return nil, "", err
	}
	best := 0
	for r := 1; r < tries; r++ {
		if score[2*r] < score[2*best] || (score[2*r] == score[2*best] && score[2*r+1] < score[2*best+1]) {
			best = r
		}
	}
	buf := make([]byte, 4*w.n())
	if rank == best {
		for v, q := range part {
			binary.LittleEndian.PutUint32(buf[4*v:], uint32(q))
		}
	}
	if err := c.BcastBytes(buf, best); err != nil {
		return nil, "", err
	}
	local := make([]int32, l.n)
	lo := int(l.vd[rank])
	for i := range local {
		local[i] = int32(binary.LittleEndian.Uint32(buf[4*(lo+i):]))
	}
	return local, fmt.Sprintf("%s, best of %d seeds (rank %d's)", how, tries, best), nil
}

// partition runs the initial partitioner (or the Go fallback) on w.
func (w *wholeGraph) partition(parts int, o *MultilevelOptions, seed uint64) ([]int32, error) {
	if o.Initial != nil {
		xadj, adj, ew, vw, err := w.scaled32()
		if err != nil {
			return nil, err
		}
		part, err := o.Initial(xadj, adj, ew, vw, w.ncon, parts, o.Imbalance, int(int32(seed)))
		if err != nil {
			return nil, err
		}
		if len(part) != w.n() {
			return nil, fmt.Errorf("dist: multilevel: the initial partitioner returned %d parts for %d nodes", len(part), w.n())
		}
		for v, q := range part {
			if q < 0 || int(q) >= parts {
				return nil, fmt.Errorf("dist: multilevel: the initial partitioner put node %d in part %d, outside [0,%d)", v, q, parts)
			}
		}
		return part, nil
	}
	return w.grow(parts, o, seed)
}

// grow is the initial partitioner without METIS: parts grown one after
// the other by breadth-first search from the lowest unassigned node of a
// seeded order, each to the average weight (constraint 0), then refined by
// balanced label propagation in one process.
func (w *wholeGraph) grow(parts int, o *MultilevelOptions, seed uint64) ([]int32, error) {
	n := w.n()
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ha, hb := mix(seed, int64(a)), mix(seed, int64(b))
		if ha < hb {
			return -1
		}
		if ha > hb {
			return 1
		}
		return 0
	})
	var total int64
	for v := 0; v < n; v++ {
		total += w.vw[v*w.ncon]
	}
	part := make([]int32, n)
	for i := range part {
		part[i] = -1
	}
	next, done := 0, int64(0)
	queue := make([]int32, 0, n)
	for q := 0; q < parts; q++ {
		target := total * int64(q+1) / int64(parts)
		queue = queue[:0]
		for head := 0; done < target || q == parts-1; {
			if head == len(queue) {
				for next < n && part[order[next]] >= 0 {
					next++
				}
				if next == n {
					break
				}
				queue = append(queue, order[next])
				part[order[next]] = int32(q)
				done += w.vw[int(order[next])*w.ncon]
				continue
			}
			v := queue[head]
			head++
			for a := w.ptr[v]; a < w.ptr[v+1] && (done < target || q == parts-1); a++ {
				if u := w.adj[a]; part[u] < 0 {
					part[u] = int32(q)
					done += w.vw[int(u)*w.ncon]
					queue = append(queue, u)
				}
			}
		}
	}
	single := comm.Single()
	vd := []int32{0, int32(n)}
	l, err := newMLGraph(single, vd, slices.Clone(w.ptr), slices.Clone(w.adj), w.ew, w.ncon, w.vw)
	if err != nil {
		return nil, err
	}
	return l.refine(single, part, parts, o.Imbalance, 2*o.RefineSweeps, 1, seed)
}
