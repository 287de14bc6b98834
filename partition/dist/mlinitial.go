package dist

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/internal/field"
)

// InitialPartitioner partitions a small graph, given in the 32-bit CSR of
// the METIS API (xadj: n+1 offsets; adjncy: neighbours; adjwgt: arc
// weights; vwgt: n×ncon node weights), into parts with every constraint
// within (1+imbalance) of the average, seeded; it returns each node's part.
// partition/metis provides one; Multilevel uses greedy growing and label
// propagation when none is given.
type InitialPartitioner func(xadj, adjncy, adjwgt, vwgt []int32, ncon, parts int, imbalance float64, seed int) ([]int32, error)

// wholeGraph is a level gathered on one rank, in the 32-bit CSR of
// InitialPartitioner (weights scaled to fit, see scale32).
type wholeGraph struct {
	xadj, adj, ew, vw []int32
	ncon              int
}

// scale32 returns the divisors that make the arc weights' sum and every
// constraint's node-weight sum fit in 2^30 (node weights are rounded up,
// arc weights down but to at least 1).
func (l *mlGraph) scale32() (ef int64, vf []int64) {
	const limit = 1 << 30
	ef = max(1, (2*l.edgeW+limit-1)/limit)
	vf = make([]int64, l.ncon)
	for k, t := range l.total {
		vf[k] = max(1, (t+limit-1)/limit)
	}
	return ef, vf
}

// gatherLevel returns the whole level on the ranks below to (nil on the
// others), its nodes numbered from the first, vd[0]. Collective.
func (l *mlGraph) gatherLevel(c comm.Comm, to int) (*wholeGraph, error) {
	var bad error
	if l.nodes > math.MaxInt32 || l.arcs > math.MaxInt32 {
		bad = field.Errorf("dist.MultilevelOptions.CoarseNodes", "the coarsest graph (%d nodes, %d arcs) exceeds the 32-bit indices of the initial partitioner: coarsen further", l.nodes, l.arcs)
	}
	if err := agree(c, bad); err != nil {
		return nil, err
	}
	ef, vf := l.scale32()
	base := l.vd[0]
	mine := make([]int64, 0, l.n*(1+l.ncon)+len(l.adj))
	for v := 0; v < l.n; v++ {
		mine = append(mine, l.ptr[v+1]-l.ptr[v])
		for k := 0; k < l.ncon; k++ {
			mine = append(mine, (l.vw[v*l.ncon+k]+vf[k]-1)/vf[k])
		}
		for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
			mine = append(mine, (l.gid(int(l.adj[a]))-base)<<32|max(1, l.arcW(a)/ef)) // below 2^31 nodes
		}
	}
	counts := make([]int, c.Size())
	send := make([]int64, 0, to*len(mine))
	for q := 0; q < to; q++ {
		counts[q] = len(mine)
		send = append(send, mine...)
	}
	mine = nil
	all, _, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil || c.Rank() >= to {
		return nil, err
	}
	send = nil
	w := &wholeGraph{xadj: make([]int32, 1, l.nodes+1), adj: make([]int32, 0, l.arcs), ew: make([]int32, 0, l.arcs),
		ncon: l.ncon, vw: make([]int32, 0, l.nodes*int64(l.ncon))}
	for k := 0; k < len(all); {
		d := all[k]
		for j := 0; j < l.ncon; j++ {
			w.vw = append(w.vw, int32(all[k+1+j]))
		}
		k += 1 + l.ncon
		for j := int64(0); j < d; j++ {
			w.adj = append(w.adj, int32(all[k]>>32))
			w.ew = append(w.ew, int32(uint32(all[k])))
			k++
		}
		w.xadj = append(w.xadj, int32(len(w.adj)))
	}
	return w, nil
}

// n returns the node count.
func (w *wholeGraph) n() int { return len(w.xadj) - 1 }

// quality returns the cut weight of part and its balance (largest part
// over the average, over the constraints).
func (w *wholeGraph) quality(part []int32, parts int) (cut int64, imb float64) {
	for v := 0; v < w.n(); v++ {
		for a := w.xadj[v]; a < w.xadj[v+1]; a++ {
			if part[w.adj[a]] != part[v] {
				cut += int64(w.ew[a])
			}
		}
	}
	pw := make([]int64, parts*w.ncon)
	tot := make([]int64, w.ncon)
	for v, q := range part {
		for k := 0; k < w.ncon; k++ {
			pw[int(q)*w.ncon+k] += int64(w.vw[v*w.ncon+k])
			tot[k] += int64(w.vw[v*w.ncon+k])
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

// initial partitions the gathered coarsest level on min(P, tries) ranks
// with seeds seed, seed+1, …, keeps the partition with the least cut among
// those within the balance bound (else the best balanced; ties: the lower
// rank) and returns the parts of this rank's nodes. Collective.
func (l *mlGraph) initial(c comm.Comm, parts int, o *MultilevelOptions) ([]int32, string, error) {
	p, rank := c.Size(), c.Rank()
	tries := min(p, o.InitialTries)
	w, err := l.gatherLevel(c, tries)
	if err != nil {
		return nil, "", err
	}
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
	buf := make([]byte, 4*l.nodes)
	if rank == best {
		for v, q := range part {
			binary.LittleEndian.PutUint32(buf[4*v:], uint32(q))
		}
	}
	if err := c.BcastBytes(buf, best); err != nil {
		return nil, "", err
	}
	local := make([]int32, l.n)
	lo := int(l.vd[rank] - l.vd[0])
	for i := range local {
		local[i] = int32(binary.LittleEndian.Uint32(buf[4*(lo+i):]))
	}
	return local, fmt.Sprintf("%s, best of %d seeds (rank %d's)", how, tries, best), nil
}

// partition runs the initial partitioner (or the Go fallback) on w.
func (w *wholeGraph) partition(parts int, o *MultilevelOptions, seed uint64) ([]int32, error) {
	if o.Initial != nil {
		part, err := o.Initial(w.xadj, w.adj, w.ew, w.vw, w.ncon, parts, o.Imbalance, int(int32(seed)))
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
		total += int64(w.vw[v*w.ncon])
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
				done += int64(w.vw[int(order[next])*w.ncon])
				continue
			}
			v := queue[head]
			head++
			for a := w.xadj[v]; a < w.xadj[v+1] && (done < target || q == parts-1); a++ {
				if u := w.adj[a]; part[u] < 0 {
					part[u] = int32(q)
					done += int64(w.vw[int(u)*w.ncon])
					queue = append(queue, u)
				}
			}
		}
	}
	single := comm.Single()
	vd := []int64{0, int64(n)}
	l, err := newMLGraph(single, vd, widen(w.xadj), len(w.adj), func(k int) int64 { return int64(w.adj[k]) }, widen(w.ew), w.ncon, widen(w.vw))
	if err != nil {
		return nil, err
	}
	return l.refine(single, part, parts, o.Imbalance, 2*o.RefineSweeps, 1, max(0, o.FMPasses), seed)
}

// widen returns s as int64.
func widen(s []int32) []int64 {
	t := make([]int64, len(s))
	for i, x := range s {
		t[i] = int64(x)
	}
	return t
}
