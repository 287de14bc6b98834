package dist

import (
	"container/heap"

	"github.com/supergcn/supergcn/comm"
)

// fmEntry is a candidate move in the queue of fmPass.
type fmEntry struct {
	gain int64
	key  uint64 // seeded tie-break
	v    int32
	to   int32
	ver  int32 // the node's version when queued (stale entries are skipped)
}

type fmQueue []fmEntry

func (q fmQueue) Len() int { return len(q) }
func (q fmQueue) Less(i, j int) bool {
	return q[i].gain > q[j].gain || (q[i].gain == q[j].gain && q[i].key < q[j].key)
}
func (q fmQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *fmQueue) Push(x any)   { *q = append(*q, x.(fmEntry)) }
func (q *fmQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// fm is the state of one rank's boundary pass.
type fm struct {
	l       *mlGraph
	part    []int32
	b       *balance
	quota   []int64
	conn    []int64
	touched []int32
	seed    uint64
}

// best returns v's best move: the adjacent part with the most connection
// that fits the quota, and the gain (connection there minus connection to
// its own part); to < 0 when there is none.
func (f *fm) best(v int32) (to int32, gain int64) {
	l := f.l
	cur := f.part[v]
	f.touched = f.touched[:0]
	for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
		q := f.part[l.adj[a]]
		if f.conn[q] == 0 {
			f.touched = append(f.touched, q)
		}
		f.conn[q] += l.arcW(a)
	}
	to, bestC := int32(-1), int64(-1)
	for _, q := range f.touched {
		if q != cur && f.fits(v, q) && (f.conn[q] > bestC || (f.conn[q] == bestC && q < to)) {
			to, bestC = q, f.conn[q]
		}
	}
	gain = bestC - f.conn[cur]
	for _, q := range f.touched {
		f.conn[q] = 0
	}
	return to, gain
}

func (f *fm) fits(v int32, q int32) bool {
	for k := 0; k < f.l.ncon; k++ {
		if f.l.vw[int(v)*f.l.ncon+k] > f.quota[int(q)*f.l.ncon+k] {
			return false
		}
	}
	return true
}

// move puts v into part to, charging the quota and delta.
func (f *fm) move(v, to int32, delta []int64) {
	l := f.l
	from := f.part[v]
	for k := 0; k < l.ncon; k++ {
		w := l.vw[int(v)*l.ncon+k]
		f.quota[int(to)*l.ncon+k] -= w
		f.quota[int(from)*l.ncon+k] += w
		delta[int(to)*l.ncon+k] += w
		delta[int(from)*l.ncon+k] -= w
	}
	f.part[v] = to
}

// fmPass runs one Fiduccia–Mattheyses-style pass over the rank's boundary
// nodes, the ghosts' parts held fixed: the best move of the queue is made
// even at a loss, the moved node is locked, its neighbours' moves are
// re-rated; after limit moves without a new best the moves past the best
// prefix are undone. Quotas as in refine keep every part within its bound.
// The part weights are then summed over the ranks and the ghosts updated.
// It returns the moves kept over all ranks. Collective.
func (l *mlGraph) fmPass(c comm.Comm, part []int32, b *balance, seed uint64) (int64, error) {
	p := int64(c.Size())
	f := &fm{l: l, part: part, b: b, quota: make([]int64, len(b.w)), conn: make([]int64, b.parts), seed: seed}
	for i := range f.quota {
		f.quota[i] = max(0, b.max[i]-b.w[i]) / p
	}
	delta := make([]int64, len(b.w))
	ver := make([]int32, l.n)
	locked := make([]bool, l.n)
	var q fmQueue
	push := func(v int32) {
		if to, gain := f.best(v); to >= 0 {
			heap.Push(&q, fmEntry{gain, mix(seed, int64(l.gid(int(v)))), v, to, ver[v]})
		}
	}
	for v := int32(0); v < int32(l.n); v++ {
		for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
			if part[l.adj[a]] != part[v] {
				push(v)
				break
			}
		}
	}
	type done struct{ v, from int32 }
	var log []done
	var sum, bestSum int64
	bestLen, limit := 0, max(50, l.n/100)
	for q.Len() > 0 && len(log)-bestLen < limit {
		e := heap.Pop(&q).(fmEntry)
		if locked[e.v] || e.ver != ver[e.v] {
			continue
		}
		to, gain := f.best(e.v)
		if to < 0 {
			continue
		}
		if to != e.to || gain != e.gain { // stale: queue the current move
			ver[e.v]++
			heap.Push(&q, fmEntry{gain, e.key, e.v, to, ver[e.v]})
			continue
		}
		log = append(log, done{e.v, part[e.v]})
		f.move(e.v, to, delta)
		locked[e.v] = true
		sum += gain
		if sum > bestSum {
			bestSum, bestLen = sum, len(log)
		}
		for a := l.ptr[e.v]; a < l.ptr[e.v+1]; a++ {
			if u := l.adj[a]; int(u) < l.n && !locked[u] {
				ver[u]++
				push(u)
			}
		}
	}
	for i := len(log) - 1; i >= bestLen; i-- {
		f.move(log[i].v, log[i].from, delta)
	}
	changed := make([]int32, bestLen)
	for i := range changed {
		changed[i] = log[i].v
	}
	if err := c.AllreduceSumI64(delta); err != nil {
		return 0, err
	}
	for i := range delta {
		b.w[i] += delta[i]
	}
	if err := l.syncGhosts(c, part, changed); err != nil {
		return 0, err
	}
	return allreduceSum(c, int64(bestLen))
}
