package metis

/*
#cgo LDFLAGS: -lmetis
#include <metis.h>

// idx_t must be 32 bits: the Go side passes []int32.
typedef char sgcn_idx_t_is_int32[(sizeof(idx_t) == 4) ? 1 : -1];
typedef char sgcn_real_t_is_float[(sizeof(real_t) == 4) ? 1 : -1];

void sgcn_sig_enter(void);
int sgcn_sig_leave(void);

// sgcn_metis_kway runs METIS_PartGraphKway with signals held back
// (sigdefer.go); *deferred is the signal that arrived meanwhile, or 0.
static int sgcn_metis_kway(idx_t nvtxs, idx_t ncon, idx_t *xadj, idx_t *adjncy,
		idx_t *vwgt, idx_t *adjwgt, idx_t nparts, real_t *ubvec, idx_t seed, idx_t *objval, idx_t *part, int *deferred) {
	idx_t options[METIS_NOPTIONS];
	METIS_SetDefaultOptions(options);
	options[METIS_OPTION_SEED] = seed;
	options[METIS_OPTION_NUMBERING] = 0;
	sgcn_sig_enter();
	int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj, adjncy, vwgt, NULL, adjwgt,
		&nparts, NULL, ubvec, options, objval, part);
	*deferred = sgcn_sig_leave();
	return rc;
}
*/
import "C"

import (
	"fmt"
	"math"
	"sync"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// Metis partitions g into parts with METIS_PartGraphKway (libmetis,
// 32-bit idx_t) and returns owner[v] in [0, parts). The adjacency is made
// undirected, loop-free and duplicate-free first, as METIS requires; vertex
// weights follow o.Weights (see Options). parts == 1 needs no METIS call.
// Errors: a non-square graph, parts < 1, a graph beyond METIS's int32
// indices, bad options, and any METIS return code other than METIS_OK.
func Metis(g *graph.CSR, parts int, o Options) ([]int32, error) {
	if err := partition.CheckSquare(g); err != nil {
		return nil, err
	}
	n := g.NumRows
	if parts < 1 || parts > math.MaxInt32 {
		return nil, fmt.Errorf("partition: metis: %d parts, want >= 1", parts)
	}
	ub, err := o.ubfactor()
	if err != nil {
		return nil, err
	}
	ncon, vwgt, err := vertexWeights(g, 0, n, o)
	if err != nil {
		return nil, err
	}
	owner := make([]int32, n)
	if parts == 1 || n == 0 {
		return owner, nil
	}
	xadj, adj, err := symAdjacency(g, g.Transpose(), 0, n)
	if err != nil {
		return nil, err
	}
	if len(adj) == 0 {
		// No edges: METIS has nothing to cut; a balanced assignment is optimal.
		return partition.Random(n, parts, uint64(o.Seed)), nil
	}
	ubvec := make([]C.real_t, ncon)
	for i := range ubvec {
		ubvec[i] = C.real_t(ub)
	}
	var vw *C.idx_t
	if vwgt != nil {
		vw = (*C.idx_t)(&vwgt[0])
	}
	var objval C.idx_t
	var deferred C.int
	rc := C.sgcn_metis_kway(C.idx_t(n), C.idx_t(ncon), (*C.idx_t)(&xadj[0]), (*C.idx_t)(&adj[0]),
		vw, nil, C.idx_t(parts), &ubvec[0], C.idx_t(int32(o.Seed)), &objval, (*C.idx_t)(&owner[0]), &deferred)
	redeliver(deferred)
	if rc != C.METIS_OK {
		hint := ""
		if rc == C.METIS_ERROR && ncon > 1 {
			// Seen with METIS 5.1: the products-scale graph (2.45 M nodes)
			// into 8,192 parts with two constraints failed after 46 min;
			// with one it took 19 min.
			hint = fmt.Sprintf(" (METIS can fail with %d balance constraints on parts this small; metis.Options.Weights %q balances one)", ncon, WeightsDegree)
		}
		return nil, fmt.Errorf("partition: METIS_PartGraphKway(%d nodes, %d edges, %d parts, ncon %d): %s%s",
			n, len(adj)/2, parts, ncon, metisStatus(int(rc)), hint)
	}
	for v, p := range owner {
		if p < 0 || int(p) >= parts {
			return nil, fmt.Errorf("partition: METIS returned part %d for node %d, outside [0,%d)", p, v, parts)
		}
	}
	return owner, nil
}

// metisStatus names a METIS return code.
func metisStatus(rc int) string {
	switch rc {
	case C.METIS_ERROR_INPUT:
		return "METIS_ERROR_INPUT (erroneous input or options)"
	case C.METIS_ERROR_MEMORY:
		return "METIS_ERROR_MEMORY (out of memory)"
	case C.METIS_ERROR:
		return "METIS_ERROR"
	}
	return fmt.Sprintf("unknown METIS status %d", rc)
}

// serial orders the calls of PartWeighted: METIS draws from a random
// state that is global to the process, so concurrent calls (ranks that are
// goroutines of one process) would not be reproducible.
var serial sync.Mutex

// Linked reports whether this build has METIS (it does with cgo).
const Linked = true

// PartWeighted partitions a node- and edge-weighted graph given in METIS's
// own CSR (xadj n+1 offsets, adjncy, adjwgt per arc, vwgt n×ncon; the graph
// symmetric, loop-free) into parts with METIS_PartGraphKway, every
// constraint within (1+imbalance) of the average, and returns each node's
// part. It has the signature of dist.InitialPartitioner.
func PartWeighted(xadj, adjncy, adjwgt, vwgt []int32, ncon, parts int, imbalance float64, seed int) ([]int32, error) {
	n := len(xadj) - 1
	switch {
	case n < 0 || ncon < 1 || len(vwgt) != n*ncon || len(adjwgt) != len(adjncy) || int(xadj[n]) != len(adjncy):
		return nil, fmt.Errorf("partition: metis: inconsistent weighted graph (%d offsets, %d arcs, %d arc weights, %d node weights, ncon %d)",
			len(xadj), len(adjncy), len(adjwgt), len(vwgt), ncon)
	case parts < 1 || parts > math.MaxInt32:
		return nil, fmt.Errorf("partition: metis: %d parts, want >= 1", parts)
	case !(imbalance > 0 && imbalance <= 10):
		return nil, fmt.Errorf("partition: metis: imbalance %g outside (0, 10]", imbalance)
	}
	owner := make([]int32, n)
	if parts == 1 || n == 0 {
		return owner, nil
	}
	if len(adjncy) == 0 {
		return partition.Random(n, parts, uint64(seed)), nil
	}
	ubvec := make([]C.real_t, ncon)
	for i := range ubvec {
		ubvec[i] = C.real_t(1 + imbalance)
	}
	var objval C.idx_t
	var deferred C.int
	serial.Lock()
	rc := C.sgcn_metis_kway(C.idx_t(n), C.idx_t(ncon), (*C.idx_t)(&xadj[0]), (*C.idx_t)(&adjncy[0]),
		(*C.idx_t)(&vwgt[0]), (*C.idx_t)(&adjwgt[0]), C.idx_t(parts), &ubvec[0], C.idx_t(int32(seed)), &objval, (*C.idx_t)(&owner[0]), &deferred)
	serial.Unlock()
	redeliver(deferred)
	if rc != C.METIS_OK {
		return nil, fmt.Errorf("partition: METIS_PartGraphKway(%d nodes, %d edges, %d parts, ncon %d, weighted): %s",
			n, len(adjncy)/2, parts, ncon, metisStatus(int(rc)))
	}
	for v, p := range owner {
		if p < 0 || int(p) >= parts {
			return nil, fmt.Errorf("partition: METIS returned part %d for node %d, outside [0,%d)", p, v, parts)
		}
	}
	return owner, nil
}
