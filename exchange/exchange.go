// Package exchange is the distributed graph operator: an nn.Propagator over
// the rows a rank owns that aggregates local edges with the aggr kernels and
// brings in the contributions of cut edges from other ranks with one
// all-to-all per layer and direction.
//
// The operator is Â = diag(L)·A·diag(R) with A the adjacency (row v =
// in-neighbours of v, parallel edges counted), entry (v,u) the weight w_uv
// of edge u→v on a weighted shard (Shard.Local.Val and Remote.Val), 1 on
// an unweighted one:
//
//	OpGCN:  A gets a self-loop of weight 1 on every node, d(v) = Σ_u w_uv + 1, L = R = d^-1/2
//	        (PyG's gcn_norm with edge_weight and fill value 1)
//	OpMean: L = 1/d_in(v), the in-edge count (0 without in-neighbours), R = 1
//	        (DGL's SAGEConv mean with edge_weight: the mean of w_uv·x_u)
//	OpSum:  L = R = 1
//
// Every rank knows the full in-degree (and weighted degree) of its nodes
// (local plus remote in-edges) and scales on the owner. The weights of cut
// edges are applied where the edge is aggregated: by the receiver's halo
// CSR for a post-aggregated edge, by the sender's send CSR for a
// pre-aggregated one (the receiver ships the weights in the plan), so the
// wire carries the same rows as on the unweighted graph.
//
// The plan (built once in New) decides per ordered pair of ranks which cut
// edges are post-aggregated (the sender sends the source row once, the
// receiver adds it into every destination) and which pre-aggregated (the
// sender sums into one partial row per destination); see Mode and SplitCut.
// Per rank it becomes a send CSR S (send-buffer rows × local nodes) and a halo
// CSR H (local nodes × receive-buffer rows):
//
//	Forward:  xs = R∘x; send = S·xs; start all-to-all; out = L∘(A_loc·xs); wait; out += L∘(H·recv)
//	Backward: g = L∘gout; back = Hᵀ·g; start reverse all-to-all; gx = R∘(A_locᵀ·g); wait; gx += R∘(Sᵀ·recv)
//
// The output scalings ride in the products (scaledProduct: each finished
// row scaled while in cache, the received rows' weights scaled), so out is
// written once; the input's scaled copy xs (and g) is what the rows sent
// are made of.
//
// That is the flat exchange (flat.go). With several ranks per node,
// Options.Exchange "two-level" (the default when the ranks span several
// nodes and some node has several ranks) plans the cut edges per node pair
// instead, so a row crosses between two nodes once, and moves rows inside a
// node through the node communicator (twolevel.go). Both are patterns
// (pattern.go) under one driver, the Propagator.
//
// Rows travel as float32 (IalltoallvF32) unless a RowCodec is configured
// for their role in Options.Codecs (e.g. the quant package's stochastic
// quantizer, built from a quant.Wires). The exchange is locality-aware:
// rows to another rank of the same node (Options.Nodes) go through the
// Intra codec in every pass that has a codec (nil: float32, a copy over
// shared memory costs less than the codec), rows to other nodes through
// the pass's; when no peer of a pass has a codec the rows go as float32
// with no copy, so a quantised width costs nothing on a single node, and
// when some have one the float32 peers' rows still go with no copy, in an
// all-to-all of their own posted before the codec runs.
// A pass with nn.Pass.Exact sends float32 whatever the codecs.
// A codec that counts non-finite inputs (quant.Codec) makes Forward/Backward
// return an error once the all-to-all has completed; the caller should then
// abort the job.
//
// Time is split (Stats) by what the rank is doing: aggregating (aggr_s),
// encoding and decoding rows (quant_s), inside MPI moving bytes (comm_s), and
// waiting for the other ranks to reach the all-to-all (sync_s: the
// all-to-all's start agrees on its method with one small collective, which
// returns only once every rank has arrived). The local aggregation runs while
// the rows are on the wire; comm_s is only what is left of the transfer after
// it.
package exchange

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/rowk"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// Options configures a Propagator.
type Options struct {
	// Mode is "hybrid" (default when empty), "post" or "pre".
	Mode string
	// Codecs encode the rows of each role (quant.Role): training forward
	// rows, backward gradients, evaluation rows (between nodes), and rows
	// between ranks of one node in every pass whose role has a codec (a
	// float32 pass stays float32 throughout); nil sends float32. A codec
	// is used by this rank's Propagator only (quant.Codec is not safe for
	// concurrent use), so every rank passes its own, one per role.
	Codecs [quant.NumRoles]RowCodec
	// Logf, when set, receives one line about the plan (build time, rows).
	Logf func(format string, args ...any)
	// Exchange names a pattern of the table (Exchanges, or an alias;
	// patterns.go): "flat" (one all-to-all of every rank pair's rows),
	// "two-level" (cut edges planned per node pair, rows crossing between
	// nodes once; see twolevel.go), "two-level-paired" (the same, each rank
	// talking to one rank per other node); or "" (ChooseExchange: two-level
	// when the ranks span more than one node and some node has more than one
	// rank). Every rank
	// must pass the same value. Mode applies to the same-node rank pairs;
	// the two-level inter-node stage always uses its node-pair cover.
	Exchange string
	// Nodes is the node layout (nil: comm.NodeLayout of the communicator,
	// computed in New). Tests pass emulated layouts through the goroutine
	// group instead.
	Nodes *comm.Nodes
}

// Stats are the counters of a Propagator since New or the last ResetStats.
type Stats struct {
	AggrSeconds  float64 `json:"aggr_s"`     // local aggregation, S and H products, scaling
	CommSeconds  float64 `json:"comm_s"`     // in MPI moving rows: posting, and waiting after the local aggregation
	QuantSeconds float64 `json:"quant_s"`    // encoding and decoding rows (codec passes)
	SyncSeconds  float64 `json:"sync_s"`     // waiting for the other ranks to reach the all-to-all
	CommBytes    int64   `json:"comm_bytes"` // bytes this rank sent to other ranks: DataBytes+ParamBytes
	DataBytes    int64   `json:"data_bytes"` // ... of which encoded values
	ParamBytes   int64   `json:"param_bytes"`
	IntraBytes   int64   `json:"intra_bytes"` // of CommBytes, the bytes moved between ranks of this rank's node
	RowBytes     int64   `json:"row_bytes"`   // of CommBytes, the bytes of MoveRows (a link task's pair rows)
	Forwards     int     `json:"forwards"`
	Backwards    int     `json:"backwards"`
	PlanSeconds  float64 `json:"plan_s"` // plan build time (kept by ResetStats)
}

// Propagator is the graph operator of one rank. It is not safe for
// concurrent use; every rank must call Forward/Backward in the same order.
type Propagator struct {
	c      comm.Comm
	kind   nn.OpKind
	mode   Mode
	n      int
	local  *aggr.Op
	left   []float32                // nil = all ones
	right  []float32                // nil = all ones
	codecs [quant.NumRoles]RowCodec // nil = float32 rows
	pat    pattern                  // how the rows move: flat, two-level
	att    *attnOp                  // the attention operator (OpAttention, OpAttentionV2 only)
	maxes  map[int]*maxLayer        // per layer, the max operator's arg max (OpMax only, max.go)
	plan   PlanStats
	stats  Stats

	// sameNode[q]: world rank q is another rank of this rank's node;
	// shared: some node has several ranks (MoveRows' codecs per peer)
	sameNode []bool
	shared   bool

	xs, g             *dense.Matrix // reused buffers
	byteSend, byteRec []byte
	posted            func() // set by overlapPosted: transferRows calls it once it has posted
}

// New builds the exchange plan of shard s (collective: every rank of c calls
// it) and returns its operator. s.Rank/s.Ranks must match c. When any rank
// fails, every rank returns an error (none is left waiting in a collective).
func New(s *partition.Shard, c comm.Comm, e *aggr.Engine, kind nn.OpKind, o Options) (*Propagator, error) {
	mode, err := ParseMode(o.Mode)
	if err == nil {
		err = checkShard(s, c)
	}
	if err == nil && kind.Attends() && s.Weighted() {
		err = fmt.Errorf("exchange: rank %d: the attention operator (GAT) does not use edge weights: drop them (dataset.Source.IgnoreWeights)", s.Rank)
	}
	exch, xerr := ParseExchange(o.Exchange)
	if err == nil {
		err = xerr
	}
	if err == nil && kind == nn.OpMax {
		exch, err = maxExchange(s, exch)
	}
	if err := agree(c, err); err != nil {
		return nil, err
	}
	nodes := o.Nodes
	if nodes == nil {
		if nodes, err = comm.NodeLayout(c); err != nil {
			return nil, fmt.Errorf("exchange: %w", err)
		}
	}
	if err := agree(c, checkNodes(nodes, c)); err != nil {
		return nil, err
	}
	p := &Propagator{c: c, kind: kind, mode: mode, n: len(s.Global), codecs: o.Codecs,
		sameNode: sameNodeRanks(nodes, c.Rank()), shared: sharedNodes(nodes)}
	if kind.Attends() {
		// The attention operator plans its own exchange (flat,
		// attention_plan.go) and runs no row product: no other plan.
		split := SplitShard
		if kind == nn.OpAttentionV2 { // GATv2's pre rows weigh more (attention_v2_plan.go)
			w := preWeight(o.Codecs[quant.Forward])
			split = func(s *partition.Shard, m Mode) ([]PairSplit, error) { return splitShardV2(s, m, w) }
		}
		if p.att, err = newAttention(s, c, e, mode, nodes, split); err != nil {
			return nil, err
		}
		p.plan = p.att.pl.stats
	} else if err := p.planRows(s, e, ChooseExchange(exch, nodes), nodes); err != nil {
		return nil, err
	}
	p.stats.PlanSeconds = p.plan.Seconds
	if o.Logf != nil {
		o.Logf("exchange: rank %d: %s plan built in %.3fs: %s", c.Rank(), p.Exchange(), p.plan.Seconds, p.describe())
	}
	return p, nil
}

// planRows plans the row operator of a GCN, mean or sum kind: the named
// exchange pattern, the local product and the scalings (collective).
func (p *Propagator) planRows(s *partition.Shard, e *aggr.Engine, exch string, nodes *comm.Nodes) error {
	t0 := p.c.Wtime()
	pat, plan, err := buildPattern(exch, s, p.c, e, p.mode, nodes)
	if err != nil {
		return err
	}
	plan.Seconds = p.c.Wtime() - t0
	p.pat, p.plan = pat, plan
	p.left, p.right = scalings(p.kind, s)
	p.local = e.Prepare(localCSR(p.kind, s.Local))
	return nil
}

// describe is the plan's one-line summary for Options.Logf.
func (p *Propagator) describe() string {
	if p.pat == nil {
		return describeFlat(p.plan) // the attention plan is flat
	}
	return p.pat.describe(p.plan)
}

// sameNodeRanks marks the other ranks of me's node.
func sameNodeRanks(nodes *comm.Nodes, me int) []bool {
	same := make([]bool, len(nodes.Node))
	for _, q := range nodes.Ranks[nodes.Node[me]] {
		same[q] = q != me
	}
	return same
}

// sharedNodes reports whether some node of the layout has several ranks.
func sharedNodes(nodes *comm.Nodes) bool {
	return nodes != nil && slices.ContainsFunc(nodes.Ranks, func(r []int) bool { return len(r) > 1 })
}

// agree makes a local failure collective: every rank learns whether any
// rank failed, and those that did not return an error naming the count.
func agree(c comm.Comm, err error) error {
	failed := []int64{0}
	if err != nil {
		failed[0] = 1
	}
	if cerr := c.AllreduceSumI64(failed); cerr != nil {
		return errors.Join(err, fmt.Errorf("exchange: %w", cerr))
	}
	if err == nil && failed[0] > 0 {
		return fmt.Errorf("exchange: rank %d: plan failed on %d other rank(s)", c.Rank(), failed[0])
	}
	return err
}

// checkShard validates what New relies on.
func checkShard(s *partition.Shard, c comm.Comm) error {
	if s.Rank != c.Rank() || s.Ranks != c.Size() {
		return fmt.Errorf("exchange: shard is rank %d of %d, communicator rank %d of %d", s.Rank, s.Ranks, c.Rank(), c.Size())
	}
	if s.Local == nil {
		return fmt.Errorf("exchange: rank %d: shard has no local graph", s.Rank)
	}
	if s.Local.NumRows != len(s.Global) || s.Local.NumCols != len(s.Global) {
		return fmt.Errorf("exchange: rank %d: local graph is %d×%d for %d nodes", s.Rank, s.Local.NumRows, s.Local.NumCols, len(s.Global))
	}
	if s.Weighted() && len(s.Remote.Val) != len(s.Remote.Src) {
		return fmt.Errorf("exchange: rank %d: weighted local graph with %d weights for %d cut edges", s.Rank, len(s.Remote.Val), len(s.Remote.Src))
	}
	if !s.Weighted() && s.Remote.Val != nil {
		return fmt.Errorf("exchange: rank %d: cut edges carry weights but the local graph has none", s.Rank)
	}
	if err := checkDistinct(s.Global); err != nil {
		return fmt.Errorf("exchange: rank %d: %w", s.Rank, err)
	}
	return nil
}

// scalings returns L and R of the operator kind on shard s (nil = ones).
func scalings(kind nn.OpKind, sh *partition.Shard) (left, right []float32) {
	if kind != nn.OpGCN && kind != nn.OpMean {
		return nil, nil
	}
	count, weight := inDegrees(sh)
	n := len(count)
	switch kind {
	case nn.OpGCN:
		s := make([]float32, n)
		for v := range s {
			s[v] = float32(1 / math.Sqrt(weight[v]+1))
		}
		return s, s
	default:
		l := make([]float32, n)
		for v := range l {
			if d := count[v]; d > 0 {
				l[v] = float32(1 / float64(d))
			}
		}
		return l, nil
	}
}

// localCSR returns the local adjacency the kind aggregates: with a
// self-loop appended to every row for GCN, as given otherwise.
func localCSR(kind nn.OpKind, a *graph.CSR) *graph.CSR {
	if kind != nn.OpGCN {
		return a
	}
	return graph.AddSelfLoops(a, graph.LoopLast)
}

// Rows returns the number of owned nodes.
func (p *Propagator) Rows() int { return p.n }

// Kind returns the operator kind.
func (p *Propagator) Kind() nn.OpKind { return p.kind }

// Exchange returns the exchange pattern that runs (one of Exchanges).
func (p *Propagator) Exchange() string {
	return p.plan.Exchange
}

// Mode returns the aggregation mode of the cut edges.
func (p *Propagator) Mode() Mode { return p.mode }

// Stats returns the counters since New or the last ResetStats.
func (p *Propagator) Stats() Stats { return p.stats }

// ResetStats zeroes the counters (the plan build time is kept).
func (p *Propagator) ResetStats() { p.stats = Stats{PlanSeconds: p.stats.PlanSeconds} }

// PlanStats returns the rows per peer under every mode and the build time.
func (p *Propagator) PlanStats() PlanStats { return p.plan }

// Forward sets out = Â·x. x and out have Rows() rows, equal widths, and must
// not alias.
func (p *Propagator) Forward(ps nn.Pass, x, out *dense.Matrix) error {
	if err := p.checkShapes("Forward", x, out); err != nil {
		return err
	}
	t := p.c.Wtime()
	xs, done := scaled(ps, &p.xs, x, p.right)
	defer done()
	p.pat.sendForward(xs)
	p.lap(t, &p.stats.AggrSeconds)
	err := p.overlapPosted(func() { scaledProduct(p.local, false, xs, out, p.left, false) }, func(done <-chan struct{}) error {
		return p.pat.moveForward(p, ps, done)
	})
	if err != nil {
		return fmt.Errorf("exchange: forward: %w", err)
	}
	p.finishPass(&p.stats.Forwards, func() { p.pat.addForward(out, p.left) })
	return nil
}

// Backward sets gx = Âᵀ·gout. gout and gx have Rows() rows, equal widths,
// and must not alias.
func (p *Propagator) Backward(ps nn.Pass, gout, gx *dense.Matrix) error {
	if err := p.checkShapes("Backward", gout, gx); err != nil {
		return err
	}
	t := p.c.Wtime()
	g, done := scaled(ps, &p.g, gout, p.left)
	defer done()
	p.pat.sendBackward(g)
	p.lap(t, &p.stats.AggrSeconds)
	err := p.overlapPosted(func() { scaledProduct(p.local, true, g, gx, p.right, false) }, func(done <-chan struct{}) error {
		return p.pat.moveBackward(p, ps, done)
	})
	if err != nil {
		return fmt.Errorf("exchange: backward: %w", err)
	}
	p.finishPass(&p.stats.Backwards, func() { p.pat.addBackward(gx, p.right) })
	return nil
}

func (p *Propagator) checkShapes(op string, in, out *dense.Matrix) error {
	if p.pat == nil || p.kind == nn.OpMax {
		return fmt.Errorf("exchange: %s on a %s operator, which has no sum product (Attend, MaxForward)", op, p.kind)
	}
	if in.Rows != p.n || out.Rows != p.n || in.Cols != out.Cols {
		return fmt.Errorf("exchange: %s: shapes %d×%d → %d×%d, want %d rows and equal widths", op, in.Rows, in.Cols, out.Rows, out.Cols, p.n)
	}
	if len(in.Data) != in.Rows*in.Cols || len(out.Data) != out.Rows*out.Cols {
		return fmt.Errorf("exchange: %s: matrix data length does not match its shape", op)
	}
	return nil
}

// scaled is scaleRows into a buffer borrowed from ps.Scratch when the pass
// carries one (the Model's pool: the copy then lives only for this pass),
// or into x itself when ps.Consume says x is dead after the pass; done
// gives a borrowed buffer back once the pass is over. The products are the
// same in all three cases.
func scaled(ps nn.Pass, buf **dense.Matrix, x *dense.Matrix, s []float32) (xs *dense.Matrix, done func()) {
	switch {
	case s != nil && ps.Consume: // x is the caller's to lose
		scaleInPlace(x, s)
		return x, func() {}
	case s == nil || ps.Scratch == nil:
		return scaleRows(buf, x, s), func() {}
	}
	m := ps.Scratch.Take(x.Rows, x.Cols)
	return scaleRows(&m, x, s), func() { ps.Scratch.Give(m) }
}

// scaleRows returns s∘x (row i times s[i], the row kernel rowk.Set.Scale)
// in *buf, or x itself when s is nil.
func scaleRows(buf **dense.Matrix, x *dense.Matrix, s []float32) *dense.Matrix {
	if s == nil {
		return x
	}
	*buf = dense.Reshape(*buf, x.Rows, x.Cols)
	out, w, k := *buf, x.Cols, rowk.Default()
	par.For(len(s), dense.RowGrain(w), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k.Scale(out.Data[i*w:(i+1)*w], x.Data[i*w:(i+1)*w], s[i])
		}
	})
	return out
}

// scaledProduct sets out = diag(s)·A·x (A = op's matrix, or its transpose
// when transposed; adds it with acc), A·x when s is nil: the scaling rides
// in the product's pass (aggr.Op.ApplyScaled), no pass over out follows.
func scaledProduct(op opApplier, transposed bool, x, out *dense.Matrix, s []float32, acc bool) {
	switch {
	case s == nil && transposed:
		op.ApplyT(x, out, acc)
	case s == nil:
		op.Apply(x, out, acc)
	case transposed:
		op.ApplyTScaled(x, out, s, acc)
	default:
		op.ApplyScaled(x, out, s, acc)
	}
}

// scaleInPlace multiplies row i of m by s[i] (nothing when s is nil).
func scaleInPlace(m *dense.Matrix, s []float32) {
	if s == nil {
		return
	}
	w, k := m.Cols, rowk.Default()
	par.For(len(s), dense.RowGrain(w), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := m.Data[i*w : (i+1)*w]
			k.Scale(row, row, s[i])
		}
	})
}

// ShardFromDataset returns the one-rank shard of ds: every node owned, the
// whole graph local, no remote edges. It shares ds's slices (no copy).
func ShardFromDataset(ds *graph.Dataset) *partition.Shard {
	n := ds.NumNodes()
	global := make([]int64, n)
	for i := range global {
		global[i] = int64(i)
	}
	return &partition.Shard{
		Rank: 0, Ranks: 1, NumGlobalNodes: int64(n), Global: global,
		FeatDim: ds.FeatDim, Features: ds.Features, Labels: ds.Labels, NumClasses: ds.NumClasses, Split: ds.SplitMask(),
		Local:  ds.Graph,
		Remote: partition.RemoteEdges{Ptr: make([]int64, n+1)},
	}
}

var _ nn.Propagator = (*Propagator)(nil)
