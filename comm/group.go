package comm

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// AbortError is what a group's Abort panics with in the aborting rank, and
// what every collective of the other ranks returns once the group is aborted.
type AbortError struct {
	Rank int // the rank that called Abort
	Code int
}

func (e *AbortError) Error() string {
	return fmt.Sprintf("comm: rank %d aborted the group with code %d", e.Rank, e.Code)
}

// NewGroup returns the p ranks of a communicator whose ranks are goroutines
// of this process (for tests). Collectives have MPI semantics: every rank
// calls the same collectives in the same order, a blocking collective
// returns when the rank's part is complete, and a non-blocking all-to-all
// moves its data only while the ranks wait on it, so its buffers must stay
// untouched until Wait returns. Mismatched collectives (different kinds at
// the same position) return an error on every rank.
//
// Abort cancels the group: every pending and later collective of every rank
// returns an *AbortError, and the calling goroutine panics with that
// *AbortError (Abort never returns). RunGroup recovers it.
func NewGroup(p int) []Comm { return NewGroupNodes(p, p) }

// NewGroupNodes is NewGroup with the ranks placed on emulated nodes,
// perNode consecutive ranks to a node (the last node may have fewer):
// SplitShared groups the ranks of a node. perNode < 1 means one node.
func NewGroupNodes(p, perNode int) []Comm {
	if p < 1 {
		panic(fmt.Sprintf("comm.NewGroup: %d ranks", p))
	}
	if perNode < 1 {
		perNode = p
	}
	nodes := make([]int, p)
	for r := range nodes {
		nodes[r] = r / perNode
	}
	return newGroup(nodes, &abortState{ch: make(chan struct{})}, time.Now())
}

// newGroup returns the members of a group whose rank r is on node nodes[r].
func newGroup(nodes []int, ab *abortState, t0 time.Time) []Comm {
	g := &group{p: len(nodes), ops: map[int64]*op{}, ab: ab, t0: t0}
	cs := make([]Comm, len(nodes))
	for r := range cs {
		cs[r] = &member{g: g, rank: r, node: nodes[r]}
	}
	return cs
}

// RunGroup runs fn on each of p ranks of a new group, one goroutine per
// rank, and waits for all. It returns the ranks' errors joined (nil if none),
// each prefixed with its rank; an Abort becomes its rank's *AbortError.
func RunGroup(p int, fn func(c Comm) error) error { return RunGroupNodes(p, p, fn) }

// RunGroupNodes is RunGroup on a group of NewGroupNodes(p, perNode).
func RunGroupNodes(p, perNode int, fn func(c Comm) error) error {
	return runMembers(NewGroupNodes(p, perNode), fn)
}

// RunGroupLayout is RunGroup on len(nodes) ranks, rank r on emulated node
// nodes[r] (any mapping, e.g. round-robin: 0, 1, 0, 1).
func RunGroupLayout(nodes []int, fn func(c Comm) error) error {
	if len(nodes) < 1 {
		panic("comm.RunGroupLayout: no ranks")
	}
	return runMembers(newGroup(nodes, &abortState{ch: make(chan struct{})}, time.Now()), fn)
}

// runMembers runs fn on every member of a group (see RunGroup).
func runMembers(cs []Comm, fn func(c Comm) error) error {
	p := len(cs)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					ae, ok := v.(*AbortError)
					if !ok {
						panic(v)
					}
					errs[r] = ae
				}
			}()
			errs[r] = fn(c)
		}()
	}
	wg.Wait()
	var all []error
	for r, err := range errs {
		if err != nil {
			all = append(all, fmt.Errorf("rank %d: %w", r, err))
		}
	}
	return errors.Join(all...)
}

// group is the state the ranks share.
type group struct {
	p   int
	t0  time.Time
	mu  sync.Mutex
	ops map[int64]*op // collectives in flight, by sequence number
	ab  *abortState   // shared with the groups split from this one
}

// abortState is the abort of a group and of every group split from it.
type abortState struct {
	mu      sync.Mutex
	ch      chan struct{}
	aborted *AbortError // set before ch is closed
}

// op is one collective: every rank posts its arguments, then each rank
// reads what it needs from the others' (arrived closed), then all leave
// (left closed) before anyone may touch its buffers again.
type op struct {
	seq      int64
	kind     string
	mismatch string
	args     []any
	arrived  int
	nLeft    int
	all      chan struct{}
	left     chan struct{}
	result   any // built once by the first rank to read (Split's groups)
}

// member is one rank's handle.
type member struct {
	g    *group
	rank int
	node int   // emulated node (SplitShared)
	seq  int64 // collectives this rank has started
}

func (m *member) Rank() int      { return m.rank }
func (m *member) Size() int      { return m.g.p }
func (m *member) Wtime() float64 { return time.Since(m.g.t0).Seconds() }

// Abort cancels the group and panics with *AbortError (see NewGroup).
func (m *member) Abort(code int) {
	ab := m.g.ab
	ab.mu.Lock()
	if ab.aborted == nil {
		ab.aborted = &AbortError{Rank: m.rank, Code: code}
		close(ab.ch)
	}
	ae := ab.aborted
	ab.mu.Unlock()
	panic(ae)
}

// post enters this rank's next collective with its arguments.
func (m *member) post(kind string, args any) *op {
	g := m.g
	m.seq++
	g.mu.Lock()
	defer g.mu.Unlock()
	o := g.ops[m.seq]
	if o == nil {
		o = &op{seq: m.seq, kind: kind, args: make([]any, g.p), all: make(chan struct{}), left: make(chan struct{})}
		g.ops[m.seq] = o
	}
	if o.kind != kind && o.mismatch == "" {
		o.mismatch = fmt.Sprintf("comm: collective %d: rank %d calls %s, another rank %s", m.seq, m.rank, kind, o.kind)
	}
	o.args[m.rank] = args
	o.arrived++
	if o.arrived == g.p {
		close(o.all)
	}
	return o
}

// finish waits for every rank to post o, runs read (this rank's part of the
// collective, reading the others' arguments), and waits for every rank to
// be done reading.
func (m *member) finish(o *op, read func() error) error {
	if err := m.wait(o.all); err != nil {
		return err
	}
	var err error
	if o.mismatch != "" {
		err = errors.New(o.mismatch)
	} else {
		err = badArgsOf(o)
	}
	if err == nil && read != nil {
		err = read()
	}
	g := m.g
	g.mu.Lock()
	o.nLeft++
	if o.nLeft == g.p {
		close(o.left)
		delete(g.ops, o.seq)
	}
	g.mu.Unlock()
	if werr := m.wait(o.left); werr != nil {
		return werr
	}
	return err
}

// badArgs stands for the arguments of a rank that failed its own checks:
// the rank still takes part in the collective so no other rank hangs, and
// every rank returns an error.
type badArgs struct{ err error }

// fail takes part in collective kind with invalid arguments and returns err.
func (m *member) fail(kind string, err error) error {
	m.finish(m.post(kind, badArgs{err}), nil)
	return err
}

// badArgsOf returns the error of the first rank that posted badArgs.
func badArgsOf(o *op) error {
	for r, a := range o.args {
		if b, ok := a.(badArgs); ok {
			return fmt.Errorf("comm: %s: rank %d: %w", o.kind, r, b.err)
		}
	}
	return nil
}

// wait blocks until ch closes or the group aborts.
func (m *member) wait(ch chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-m.g.ab.ch:
		return m.g.ab.aborted
	}
}

func (m *member) Barrier() error {
	return m.finish(m.post("barrier", nil), func() error { return nil })
}

func (m *member) BcastBytes(buf []byte, root int) error {
	if err := checkRoot(root, m.g.p); err != nil {
		return m.fail("bcast", err)
	}
	type bcast struct {
		buf  []byte
		root int
	}
	o := m.post("bcast", bcast{buf, root})
	return m.finish(o, func() error {
		src := o.args[root].(bcast)
		if a := o.args[m.rank].(bcast); a.root != root || len(src.buf) != len(buf) {
			return fmt.Errorf("comm: BcastBytes: rank %d has root %d and %d bytes, root %d has %d", m.rank, root, len(buf), a.root, len(src.buf))
		}
		if m.rank != root {
			copy(buf, src.buf)
		}
		return nil
	})
}

func (m *member) AllreduceSumF32(buf []float32) error {
	return allreduce(m, "allreduce-sum-f32", buf, func(a, b float32) float32 { return a + b })
}

func (m *member) AllreduceSumF64(buf []float64) error {
	return allreduce(m, "allreduce-sum-f64", buf, func(a, b float64) float64 { return a + b })
}

func (m *member) AllreduceSumI64(buf []int64) error {
	return allreduce(m, "allreduce-sum-i64", buf, func(a, b int64) int64 { return a + b })
}

func (m *member) AllreduceMaxF64(buf []float64) error {
	return allreduce(m, "allreduce-max-f64", buf, func(a, b float64) float64 { return max(a, b) })
}

// allreduce combines the ranks' buffers in rank order (so every rank gets
// bit-identical results) into a temporary, copied in place once all ranks
// have read the originals.
func allreduce[T any](m *member, kind string, buf []T, f func(a, b T) T) error {
	o := m.post(kind, buf)
	tmp := make([]T, len(buf))
	err := m.finish(o, func() error {
		for r, a := range o.args {
			b := a.([]T)
			if len(b) != len(buf) {
				return fmt.Errorf("comm: %s: rank %d has %d elements, rank %d has %d", kind, m.rank, len(buf), r, len(b))
			}
			if r == 0 {
				copy(tmp, b)
				continue
			}
			for i := range tmp {
				tmp[i] = f(tmp[i], b[i])
			}
		}
		return nil
	})
	if err == nil {
		copy(buf, tmp)
	}
	return err
}

// a2a is one rank's arguments to an all-to-all.
type a2a[T any] struct {
	send   []T
	sc, sd []int
}

// startAlltoallv posts an all-to-all and returns the request that completes
// it: waiting copies every peer's block for this rank into recv.
func startAlltoallv[T any](m *member, kind string, send []T, sc, sd []int, recv []T, rc, rd []int) (Request, error) {
	p := m.g.p
	if err := checkLayout("send", len(send), sc, sd, p); err != nil {
		return nil, m.fail(kind, err)
	}
	if err := checkLayout("recv", len(recv), rc, rd, p); err != nil {
		return nil, m.fail(kind, err)
	}
	o := m.post(kind, a2a[T]{send, sc, sd})
	return &groupRequest{m: m, o: o, read: func() error {
		for q, a := range o.args {
			peer := a.(a2a[T])
			n := peer.sc[m.rank]
			if n != rc[q] {
				return fmt.Errorf("comm: %s: rank %d sends %d elements to rank %d, which expects %d", kind, q, n, m.rank, rc[q])
			}
			copy(recv[rd[q]:rd[q]+n], peer.send[peer.sd[m.rank]:peer.sd[m.rank]+n])
		}
		return nil
	}}, nil
}

// groupRequest is an all-to-all posted and not yet waited on.
type groupRequest struct {
	m    *member
	o    *op
	read func() error
	done bool
	err  error
}

func (r *groupRequest) Wait() error {
	if !r.done {
		r.done = true
		r.err = r.m.finish(r.o, r.read)
	}
	return r.err
}

func alltoallv[T any](m *member, kind string, send []T, sc, sd []int, recv []T, rc, rd []int) error {
	req, err := startAlltoallv(m, kind, send, sc, sd, recv, rc, rd)
	if err != nil {
		return err
	}
	return req.Wait()
}

func (m *member) AlltoallvI64(send []int64, sc, sd []int, recv []int64, rc, rd []int) error {
	return alltoallv(m, "alltoallv-i64", send, sc, sd, recv, rc, rd)
}

func (m *member) AlltoallvBytes(send []byte, sc, sd []int, recv []byte, rc, rd []int) error {
	return alltoallv(m, "alltoallv-bytes", send, sc, sd, recv, rc, rd)
}

func (m *member) IalltoallvF32(send []float32, sc, sd []int, recv []float32, rc, rd []int) (Request, error) {
	return startAlltoallv(m, "alltoallv-f32", send, sc, sd, recv, rc, rd)
}

func (m *member) IalltoallvBytes(send []byte, sc, sd []int, recv []byte, rc, rd []int) (Request, error) {
	return startAlltoallv(m, "alltoallv-bytes", send, sc, sd, recv, rc, rd)
}

// Split implements Comm.Split: the first rank to read the arguments builds
// the new groups, which share this group's abort.
func (m *member) Split(color, key int) (Comm, error) {
	type splitArgs struct{ color, key, node int }
	o := m.post("split", splitArgs{color, key, m.node})
	var out Comm
	err := m.finish(o, func() error {
		m.g.mu.Lock()
		defer m.g.mu.Unlock()
		if o.result == nil {
			byColor := map[int][]int{} // color → parent ranks, ordered by (key, rank)
			for r, a := range o.args {
				if c := a.(splitArgs).color; c >= 0 {
					byColor[c] = append(byColor[c], r)
				}
			}
			members := make([]Comm, m.g.p)
			for _, rs := range byColor {
				sort.SliceStable(rs, func(i, j int) bool { return o.args[rs[i]].(splitArgs).key < o.args[rs[j]].(splitArgs).key })
				nodes := make([]int, len(rs))
				for i, r := range rs {
					nodes[i] = o.args[r].(splitArgs).node
				}
				for i, c := range newGroup(nodes, m.g.ab, m.g.t0) {
					members[rs[i]] = c
				}
			}
			o.result = members
		}
		out = o.result.([]Comm)[m.rank]
		return nil
	})
	if err != nil {
		return nil, err
	}
	if color < 0 {
		return nil, nil
	}
	return out, nil
}

// SplitShared implements Comm.SplitShared over the emulated nodes.
func (m *member) SplitShared() (Comm, error) { return m.Split(m.node, m.rank) }
