package dist

import (
	"math"

	"github.com/supergcn/supergcn/comm"
)

// balance holds the part weights (parts×ncon, over all ranks) and their
// bounds.
type balance struct {
	parts, ncon int
	w, max      []int64
}

// newBalance sums the part weights of part (the local nodes' parts) over
// the ranks; a part may weigh (1+imbalance)·total/parts per constraint.
// Collective.
func (l *mlGraph) newBalance(c comm.Comm, part []int32, parts int, imbalance float64) (*balance, error) {
	b := &balance{parts: parts, ncon: l.ncon, w: make([]int64, parts*l.ncon), max: make([]int64, parts*l.ncon)}
	for v := 0; v < l.n; v++ {
		for k := 0; k < l.ncon; k++ {
			b.w[int(part[v])*l.ncon+k] += l.vw[v*l.ncon+k]
		}
	}
	if err := c.AllreduceSumI64(b.w); err != nil {
		return nil, err
	}
	for q := 0; q < parts; q++ {
		for k := 0; k < l.ncon; k++ {
			avg := float64(l.total[k]) / float64(parts)
			b.max[q*l.ncon+k] = max(int64(math.Ceil(avg)), int64((1+imbalance)*avg))
		}
	}
	return b, nil
}

// over reports whether part q exceeds its bound in some constraint.
func (b *balance) over(q int32) bool {
	for k := 0; k < b.ncon; k++ {
		if b.w[int(q)*b.ncon+k] > b.max[int(q)*b.ncon+k] {
			return true
		}
	}
	return false
}

// imbalance returns the largest part weight over the average, over the
// constraints with weight.
func (b *balance) imbalance(total []int64) float64 {
	worst := 0.0
	for k := 0; k < b.ncon; k++ {
		if total[k] == 0 {
			continue
		}
		avg := float64(total[k]) / float64(b.parts)
		for q := 0; q < b.parts; q++ {
			worst = max(worst, float64(b.w[q*b.ncon+k])/avg)
		}
	}
	return worst
}

// refine improves part (the parts of the local nodes; extended here to
// the ghosts) by balanced label propagation: in each batch a boundary node
// moves to the adjacent part it is most strongly connected to when that
// cuts less (or when its own part is overloaded and the other is not),
// and the move fits the rank's quota of the target part: the room the part
// had at the batch's start divided among the ranks, plus what the rank
// moved out of it in the batch, so no part ever grows past its bound. The part
// weights are summed over the ranks after every batch. It returns the
// parts of the local and ghost nodes. Collective and deterministic.
func (l *mlGraph) refine(c comm.Comm, local []int32, parts int, imbalance float64, sweeps, batches int, seed uint64) ([]int32, error) {
	ans, err := askOwners(c, l.vd, l.ghost, func(i int) int64 { return int64(local[i]) })
	if err != nil {
		return nil, err
	}
	part := make([]int32, l.n+len(l.ghost))
	copy(part, local)
	for j, x := range ans {
		part[l.n+j] = int32(x)
	}
	b, err := l.newBalance(c, part, parts, imbalance)
	if err != nil {
		return nil, err
	}
	order := l.visitOrder(seed ^ 0x5bd1e995)
	conn := make([]int64, parts)
	quota := make([]int64, parts*l.ncon)
	delta := make([]int64, parts*l.ncon)
	var touched []int32
	p := int64(c.Size())
	for sweep := 0; sweep < sweeps; sweep++ {
		var moved int64
		for bt := 0; bt < batches; bt++ {
			for i := range quota {
				quota[i] = max(0, b.max[i]-b.w[i]) / p
				delta[i] = 0
			}
			var changed []int32
			for _, v := range order[l.n*bt/batches : l.n*(bt+1)/batches] {
				cur := part[v]
				touched = touched[:0]
				for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
					q := part[l.adj[a]]
					if conn[q] == 0 {
						touched = append(touched, q)
					}
					conn[q] += l.arcW(a)
				}
				best := l.bestMove(int(v), cur, touched, conn, b, quota)
				for _, q := range touched {
					conn[q] = 0
				}
				if best == cur {
					continue
				}
				for k := 0; k < l.ncon; k++ {
					w := l.vw[int(v)*l.ncon+k]
					quota[int(best)*l.ncon+k] -= w
					quota[int(cur)*l.ncon+k] += w // what leaves a part makes room in it
					delta[int(best)*l.ncon+k] += w
					delta[int(cur)*l.ncon+k] -= w
				}
				part[v] = best
				changed = append(changed, v)
			}
			if err := c.AllreduceSumI64(delta); err != nil {
				return nil, err
			}
			for i := range delta {
				b.w[i] += delta[i]
			}
			if err := l.syncGhosts(c, part, changed); err != nil {
				return nil, err
			}
			moved += int64(len(changed))
		}
		total, err := allreduceSum(c, moved)
		if err != nil {
			return nil, err
		}
		if total == 0 {
			break
		}
	}
	return part, nil
}

// bestMove returns the part node v should move to (cur to stay): the
// adjacent part with the most connection that fits the quota, taken when
// it cuts less, or when cur is overloaded and that part is not.
func (l *mlGraph) bestMove(v int, cur int32, touched []int32, conn []int64, b *balance, quota []int64) int32 {
	fits := func(q int32) bool {
		for k := 0; k < l.ncon; k++ {
			if l.vw[v*l.ncon+k] > quota[int(q)*l.ncon+k] {
				return false
			}
		}
		return true
	}
	best, bestC := cur, int64(-1)
	for _, q := range touched {
		if q == cur || !fits(q) {
			continue
		}
		if conn[q] > bestC || (conn[q] == bestC && b.w[int(q)*b.ncon] < b.w[int(best)*b.ncon]) {
			best, bestC = q, conn[q]
		}
	}
	if best == cur {
		return cur
	}
	if bestC > conn[cur] || (b.over(cur) && !b.over(best)) {
		return best
	}
	return cur
}

// cut returns the weight of the edges between parts (each counted once).
// Collective.
func (l *mlGraph) cut(c comm.Comm, part []int32) (int64, error) {
	var s int64
	for v := 0; v < l.n; v++ {
		for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
			if part[l.adj[a]] != part[v] {
				s += l.arcW(a)
			}
		}
	}
	s, err := allreduceSum(c, s)
	return s / 2, err
}
