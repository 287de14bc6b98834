package dist

import "container/heap"

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

// fmPass runs one Fiduccia–Mattheyses-style pass over the rank's boundary
// nodes, the ghosts' parts held fixed: the best move of the queue is made
// even at a loss, the moved node is locked, its neighbours' moves are
// re-rated; after max(50, n/100) moves without a new best the moves past
// the best prefix are undone. The mover's quotas keep every part within its
// bound. It returns the moves kept over all ranks. Collective.
func (m *mover) fmPass(seed uint64) (int64, error) {
	l := m.l
	m.start()
	ver := make([]int32, l.n)
	locked := make([]bool, l.n)
	var q fmQueue
	push := func(v int32) {
		if to, gain := m.fmBest(v); to >= 0 {
			heap.Push(&q, fmEntry{gain, mix(seed, l.gid(int(v))), v, to, ver[v]})
		}
	}
	for v := int32(0); v < int32(l.n); v++ {
		for a := l.ptr[v]; a < l.ptr[v+1]; a++ {
			if m.part[l.adj[a]] != m.part[v] {
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
		if to, gain := m.fmBest(e.v); to != e.to || gain != e.gain { // stale: queue the current move
			ver[e.v]++
			if to >= 0 {
				heap.Push(&q, fmEntry{gain, e.key, e.v, to, ver[e.v]})
			}
			continue
		}
		log = append(log, done{e.v, m.part[e.v]})
		m.move(e.v, e.to)
		locked[e.v] = true
		if sum += e.gain; sum > bestSum {
			bestSum, bestLen = sum, len(log)
		}
		for a := l.ptr[e.v]; a < l.ptr[e.v+1]; a++ {
			if u := l.adj[a]; int(u) < l.n && !locked[u] {
				ver[u]++
				push(u)
			}
		}
	}
	changed := make([]int32, bestLen)
	for i := len(log) - 1; i >= 0; i-- {
		if i >= bestLen {
			m.move(log[i].v, log[i].from)
		} else {
			changed[i] = log[i].v
		}
	}
	if err := m.finish(changed); err != nil {
		return 0, err
	}
	return allreduceSum(m.c, int64(bestLen))
}

// fmBest returns v's best move and its gain (connection there minus to its
// own part); to < 0 when no other adjacent part fits.
func (m *mover) fmBest(v int32) (to int32, gain int64) {
	m.rate(v)
	defer m.unrate()
	to = m.strongest(v)
	if to < 0 {
		return -1, 0
	}
	return to, m.conn[to] - m.conn[m.part[v]]
}
