package dist

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/supergcn/supergcn/comm"
)

// rater sums weights by key, a cluster id ≥ 0 (an open-addressing table
// that is cleared through the list of used slots, which lists the keys in
// the order they were first added).
type rater struct {
	keys []int64
	vals []int64
	used []int
}

// reset empties the table, sized for at least n keys.
func (r *rater) reset(n int) {
	for _, s := range r.used {
		r.keys[s] = -1
		r.vals[s] = 0
	}
	r.used = r.used[:0]
	if len(r.keys) < 2*n+2 {
		size := 1 << bits.Len(uint(2*n+2))
		r.keys, r.vals = make([]int64, size), make([]int64, size)
		for i := range r.keys {
			r.keys[i] = -1
		}
	}
}

func (r *rater) slot(k int64) int {
	mask := len(r.keys) - 1
	s := int((uint64(k)*0x9e3779b97f4a7c15)>>32) & mask
	for r.keys[s] != k && r.keys[s] != -1 {
		s = (s + 1) & mask
	}
	return s
}

func (r *rater) add(k int64, w int64) {
	s := r.slot(k)
	if r.keys[s] == -1 {
		r.keys[s] = k
		r.used = append(r.used, s)
	}
	r.vals[s] += w
}

func (r *rater) get(k int64) int64 { return r.vals[r.slot(k)] }

// visitOrder returns the local nodes by ascending degree class
// (⌊log2(degree+1)⌋, as KaMinPar's label propagation visits them), in a
// seeded random order within a class.
func (l *mlGraph) visitOrder(seed uint64) []int32 {
	order := make([]int32, l.n)
	class := func(v int32) int { return bits.Len64(uint64(l.ptr[v+1] - l.ptr[v])) }
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(class(a), class(b)); c != 0 {
			return c
		}
		return cmp.Compare(mix(seed, l.gid(int(a))), mix(seed, l.gid(int(b))))
	})
	return order
}

// clustering is the state of a size-constrained label propagation.
type clustering struct {
	l      *mlGraph
	c      comm.Comm
	cap    int64
	seed   uint64
	label  []int64         // cluster (a global node id) of every local and ghost index
	ownW   []int64         // weight (constraint 0) of the clusters named by local ids
	cache  map[int64]int64 // last weight heard of other ranks' clusters
	lo     int64
	deltas []int64 // (cluster, delta) pairs for other ranks' clusters
}

func (s *clustering) owned(cl int64) bool { return cl >= s.lo && cl-s.lo < int64(s.l.n) }

func (s *clustering) weightOf(cl int64) int64 {
	if s.owned(cl) {
		return s.ownW[cl-s.lo]
	}
	return s.cache[cl]
}

// leave takes weight w out of cluster cl.
func (s *clustering) leave(cl int64, w int64) {
	if s.owned(cl) {
		s.ownW[cl-s.lo] -= w
	} else {
		s.deltas = append(s.deltas, cl, -w)
	}
}

// cluster runs size-constrained label propagation (a cluster's weight in
// constraint 0 stays at most cap) and returns the cluster of every local and
// ghost index. Each sweep visits the nodes in batches; a node moves to the
// neighbouring cluster it is most strongly connected to (ties: a seeded
// hash) when that is stronger than its own. Joining a cluster named by
// another rank's node is granted by that rank, in rank order, up to the
// cap; leaving is reported to it. Between batches the ranks learn their
// ghosts' new clusters. Collective and deterministic for a seed and P.
func (l *mlGraph) cluster(c comm.Comm, cap int64, sweeps, batches int, seed uint64) ([]int64, error) {
	s := &clustering{l: l, c: c, cap: cap, seed: seed, label: make([]int64, l.n+len(l.ghost)),
		ownW: make([]int64, l.n), cache: map[int64]int64{}, lo: l.vd[l.rank]}
	for i := range s.label {
		s.label[i] = l.gid(i)
	}
	for i := 0; i < l.n; i++ {
		s.ownW[i] = l.vw[i*l.ncon]
	}
	order := l.visitOrder(seed)
	var rt rater
	for sweep := 0; sweep < sweeps; sweep++ {
		var moved int64
		for b := 0; b < batches; b++ {
			batch := order[l.n*b/batches : l.n*(b+1)/batches]
			m, err := s.batch(batch, &rt)
			if err != nil {
				return nil, err
			}
			moved += m
		}
		total, err := allreduceSum(c, moved)
		if err != nil {
			return nil, err
		}
		if total == 0 {
			break
		}
	}
	s.groupIsolated()
	return s.label, nil
}

// proposal is a node's wish to join another rank's cluster.
type proposal struct {
	v  int32 // local index
	to int64 // cluster
}

// batch moves the nodes of one batch; it returns how many moved.
func (s *clustering) batch(batch []int32, rt *rater) (int64, error) {
	l := s.l
	var props []proposal
	var changed []int32
	for _, v := range batch {
		cur, wv := s.label[v], l.vw[int(v)*l.ncon]
		a, b := l.ptr[v], l.ptr[v+1]
		rt.reset(int(b - a))
		for k := a; k < b; k++ {
			rt.add(s.label[l.adj[k]], l.arcW(k))
		}
		best, bestR := cur, rt.get(cur)
		for _, sl := range rt.used {
			to, r := rt.keys[sl], rt.vals[sl]
			if to == cur || s.weightOf(to)+wv > s.cap {
				continue
			}
			if r > bestR || (r == bestR && best != cur && mix(s.seed, to) < mix(s.seed, best)) {
				best, bestR = to, r
			}
		}
		if best == cur {
			continue
		}
		if s.owned(best) {
			s.ownW[best-s.lo] += wv
			s.leave(cur, wv)
			s.label[v] = best
			changed = append(changed, v)
		} else {
			props = append(props, proposal{v, best})
		}
	}
	granted, err := s.grant(props)
	if err != nil {
		return 0, err
	}
	changed = append(changed, granted...)
	if err := s.flushDeltas(); err != nil {
		return 0, err
	}
	return int64(len(changed)), l.syncGhosts(s.c, changed, func(v int32) int64 { return s.label[v] },
		func(j int, x int64) { s.label[l.n+j] = x })
}

// grant asks the owners of the proposals' clusters for room, moves the
// nodes that fit (in batch order) and returns them.
func (s *clustering) grant(props []proposal) ([]int32, error) {
	l, p := s.l, s.c.Size()
	slices.SortStableFunc(props, func(a, b proposal) int { return cmp.Compare(a.to, b.to) })
	counts := make([]int, p)
	var req []int64
	q := 0
	for i := 0; i < len(props); {
		to := props[i].to
		var sum int64
		for ; i < len(props) && props[i].to == to; i++ {
			sum += l.vw[int(props[i].v)*l.ncon]
		}
		for l.vd[q+1] <= to {
			q++
		}
		counts[q] += 2
		req = append(req, to, sum)
	}
	recv, rcounts, err := exchange(s.c, req, counts, DefaultRoundBytes)
	if err != nil {
		return nil, err
	}
	for k := 0; k+1 < len(recv); k += 2 { // grouped by asking rank, ascending
		i := int(recv[k] - s.lo)
		g := max(0, min(recv[k+1], s.cap-s.ownW[i]))
		s.ownW[i] += g
		recv[k], recv[k+1] = g, s.ownW[i]
	}
	back, _, err := exchange(s.c, recv, rcounts, DefaultRoundBytes)
	if err != nil {
		return nil, err
	}
	var moved []int32
	for i, r := 0, 0; i < len(props); r += 2 {
		to, room := props[i].to, back[r]
		used := int64(0)
		for ; i < len(props) && props[i].to == to; i++ {
			v := props[i].v
			wv := l.vw[int(v)*l.ncon]
			if used+wv > room {
				continue
			}
			used += wv
			s.leave(s.label[v], wv)
			s.label[v] = to
			moved = append(moved, v)
		}
		if used < room {
			s.deltas = append(s.deltas, to, used-room)
		}
		s.cache[to] = back[r+1] - (room - used)
	}
	return moved, nil
}

// flushDeltas sends the weight changes of other ranks' clusters to them.
func (s *clustering) flushDeltas() error {
	l, p := s.l, s.c.Size()
	type pair struct{ cl, d int64 }
	ps := make([]pair, len(s.deltas)/2)
	for k := range ps {
		ps[k] = pair{s.deltas[2*k], s.deltas[2*k+1]}
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Compare(a.cl, b.cl) })
	counts := make([]int, p)
	send := make([]int64, 0, 2*len(ps))
	q := 0
	for _, x := range ps {
		for l.vd[q+1] <= x.cl {
			q++
		}
		counts[q] += 2
		send = append(send, x.cl, x.d)
	}
	s.deltas = s.deltas[:0]
	recv, _, err := exchange(s.c, send, counts, DefaultRoundBytes)
	if err != nil {
		return err
	}
	for k := 0; k+1 < len(recv); k += 2 {
		s.ownW[recv[k]-s.lo] += recv[k+1]
	}
	return nil
}

// groupIsolated joins the rank's isolated nodes into clusters of up to cap
// (no label propagation reaches them).
func (s *clustering) groupIsolated() {
	l := s.l
	lead, w := int64(-1), int64(0)
	for v := 0; v < l.n; v++ {
		if l.ptr[v+1] != l.ptr[v] {
			continue
		}
		wv := l.vw[v*l.ncon]
		if lead < 0 || w+wv > s.cap {
			lead, w = l.gid(v), 0
		}
		w += wv
		s.label[v] = lead
	}
}
