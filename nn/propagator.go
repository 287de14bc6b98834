package nn

import "github.com/supergcn/supergcn/dense"

// Pass describes one application of a layer's graph operator.
type Pass struct {
	Train bool // false for evaluation passes (fp32 exchange, no dropout)
	Layer int  // index of the graph layer, for per-layer state (RNG streams, buffers)
	Epoch int
	// Exact asks for the operator with exact float32 rows whatever codecs
	// the Propagator holds (Model's one-time evaluation aggregate, reused
	// across epochs, is computed so).
	Exact bool
	// Scratch, when set, lends the Propagator its temporary buffers for
	// the length of the call (Model passes its buffer pool, so that these
	// copies do not stay allocated between passes); nil: the Propagator
	// keeps its own.
	Scratch Scratch
	// Consume says the input of this call (Forward's x, Backward's gout)
	// is dead after it (a layer's own X·W or G·Wᵀ, the dropped input of a
	// first layer that does not read it again, a gradient read for the
	// last time): a Propagator may then scale it in place instead of
	// copying it. Layers set it per call. Given to a layer's Backward, it
	// says the layer may overwrite gout.
	Consume bool
}

// Propagator applies a layer's graph operator Â to node-feature rows. It is
// the seam between the dense model and the graph: in one process Â is the
// whole normalised adjacency applied with the aggr kernels; in a distributed
// run (package exchange) it also brings in the contributions of remote
// neighbours over the network. Layers never know which one they hold.
//
// x and out have one row per owned node (Rows()); any width.
type Propagator interface {
	Rows() int
	// Forward sets out = Â·x (out is overwritten).
	Forward(p Pass, x, out *dense.Matrix) error
	// Backward sets gx = Âᵀ·gout (gx is overwritten).
	Backward(p Pass, gout, gx *dense.Matrix) error
}

// Operator kinds a Propagator implements.
type OpKind int

const (
	// OpGCN is D^-1/2 (A+I) D^-1/2 with D the in-degree counting the self-loop
	// (Kipf & Welling; PyG gcn_norm semantics). On a weighted graph A holds
	// the edge weights, I weighs 1 and D sums the weights (gcn_norm with
	// edge_weight).
	OpGCN OpKind = iota
	// OpMean is the mean over in-neighbours, D^-1 A (PyG SAGEConv aggr="mean");
	// a node without in-neighbours aggregates to 0. On a weighted graph A
	// holds the edge weights and D still counts the in-edges (DGL SAGEConv
	// mean with edge_weight).
	OpMean
	// OpSum is the plain sum A (GIN; the weighted sum on a weighted graph).
	OpSum
	// OpAttention is the operator of attention layers: an Attention over
	// the in-edges with one self-loop per node.
	OpAttention
	// OpAttentionV2 is the operator of GATv2 layers: an AttentionV2 over
	// the same edges (its scores need the targets' projected rows, which
	// changes what a distributed operator moves).
	OpAttentionV2
	// OpMax is the element-wise maximum over in-neighbours (PyG
	// SAGEConv aggr="max"): a MaxAggregator; a node without in-neighbours
	// aggregates to 0. Edge weights are not used.
	OpMax
)

// Attends reports whether k is an attention operator (the models of kind
// k take heads and attention dropout).
func (k OpKind) Attends() bool { return k == OpAttention || k == OpAttentionV2 }

func (k OpKind) String() string {
	switch k {
	case OpGCN:
		return "gcn"
	case OpMean:
		return "mean"
	case OpSum:
		return "sum"
	case OpAttention:
		return "attention"
	case OpAttentionV2:
		return "attention-v2"
	case OpMax:
		return "max"
	}
	return "unknown"
}
