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
// parts of the local and ghost nodes. fmPasses boundary passes (fmPass)
// follow. Collective and deterministic.
func (l *mlGraph) refine(c comm.Comm, local []int32, parts int, imbalance float64, sweeps, batches, fmPasses int, seed uint64) ([]int32, error) {
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
	m := l.newMover(c, part, b)
	for sweep := 0; sweep < sweeps; sweep++ {
		var moved int64
		for bt := 0; bt < batches; bt++ {
			m.start()
			var changed []int32
			for _, v := range order[l.n*bt/batches : l.n*(bt+1)/batches] {
				m.rate(v)
				best := m.bestMove(v)
				m.unrate()
				if best != part[v] {
					m.move(v, best)
					changed = append(changed, v)
				}
			}
			if err := m.finish(changed); err != nil {
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
	for i := 0; i < fmPasses; i++ {
		moved, err := m.fmPass(seed + uint64(i))
		if err != nil || moved == 0 {
			return part, err
		}
	}
	return part, nil
}

// mover moves nodes between parts within a rank's quotas: per batch, a
// rank may move into a part its share (1/P) of the room the part had at
// the batch's start, plus what it moved out of that part in the batch.
type mover struct {
	l       *mlGraph
	c       comm.Comm
	part    []int32 // local and ghost nodes
	b       *balance
	quota   []int64
	delta   []int64 // this batch's weight changes, parts×ncon
	conn    []int64 // by part: the rated node's connection
	touched []int32 // the parts with conn > 0
}

func (l *mlGraph) newMover(c comm.Comm, part []int32, b *balance) *mover {
	return &mover{l: l, c: c, part: part, b: b, quota: make([]int64, len(b.w)), delta: make([]int64, len(b.w)),
		conn: make([]int64, b.parts)}
}

// start begins a batch: quotas from the current part weights.
func (m *mover) start() {
	p := int64(m.c.Size())
	for i := range m.quota {
		m.quota[i] = max(0, m.b.max[i]-m.b.w[i]) / p
		m.delta[i] = 0
	}
}

// finish ends a batch: the part weights summed over the ranks, the ghosts
// told the new parts of changed. Collective.
func (m *mover) finish(changed []int32) error {
	if err := m.c.AllreduceSumI64(m.delta); err != nil {
		return err
	}
	for i, d := range m.delta {
		m.b.w[i] += d
	}
	l := m.l
	return l.syncGhosts(m.c, changed, func(v int32) int64 { return int64(m.part[v]) },
		func(j int, x int64) { m.part[l.n+j] = int32(x) })
}

// rate sums v's arc weights by the neighbours' parts into conn.
func (m *mover) rate(v int32) {
	l := m.l
	for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
		q := m.part[l.adj[a]]
		if m.conn[q] == 0 {
			m.touched = append(m.touched, q)
		}
		m.conn[q] += l.arcW(a)
	}
}

// unrate clears what rate summed.
func (m *mover) unrate() {
	for _, q := range m.touched {
		m.conn[q] = 0
	}
	m.touched = m.touched[:0]
}

// fits reports whether v fits the quota of part q.
func (m *mover) fits(v, q int32) bool {
	l := m.l
	for k := 0; k < l.ncon; k++ {
		if l.vw[int(v)*l.ncon+k] > m.quota[int(q)*l.ncon+k] {
			return false
		}
	}
	return true
}

// move puts v into part to, charging the quotas and the batch's changes.
func (m *mover) move(v, to int32) {
	l := m.l
	from := m.part[v]
	for k := 0; k < l.ncon; k++ {
		w := l.vw[int(v)*l.ncon+k]
		m.quota[int(to)*l.ncon+k] -= w
		m.quota[int(from)*l.ncon+k] += w // what leaves a part makes room in it
		m.delta[int(to)*l.ncon+k] += w
		m.delta[int(from)*l.ncon+k] -= w
	}
	m.part[v] = to
}

// strongest returns the adjacent part other than v's own with the most
// connection (ties: the lighter part, then the lower index) that fits the
// quota, or -1 (conn as rate left it).
func (m *mover) strongest(v int32) int32 {
	cur, best := m.part[v], int32(-1)
	for _, q := range m.touched {
		if q == cur || !m.fits(v, q) {
			continue
		}
		if best < 0 || m.conn[q] > m.conn[best] || (m.conn[q] == m.conn[best] &&
			(m.b.w[int(q)*m.b.ncon] < m.b.w[int(best)*m.b.ncon] || (m.b.w[int(q)*m.b.ncon] == m.b.w[int(best)*m.b.ncon] && q < best))) {
			best = q
		}
	}
	return best
}

// bestMove returns the part v should move to (its own to stay): the
// strongest other part, taken when it cuts less, or when v's part is over
// the bound and that part is not.
func (m *mover) bestMove(v int32) int32 {
	cur := m.part[v]
	best := m.strongest(v)
	if best >= 0 && (m.conn[best] > m.conn[cur] || (m.b.over(cur) && !m.b.over(best))) {
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
