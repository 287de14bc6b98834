package metis

/*
#include <metis.h>

static int sgcn_metis_kway_weighted(idx_t nvtxs, idx_t ncon, idx_t *xadj, idx_t *adjncy,
		idx_t *vwgt, idx_t *adjwgt, idx_t nparts, real_t *ubvec, idx_t seed, idx_t *objval, idx_t *part) {
	idx_t options[METIS_NOPTIONS];
	METIS_SetDefaultOptions(options);
	options[METIS_OPTION_SEED] = seed;
	options[METIS_OPTION_NUMBERING] = 0;
	return METIS_PartGraphKway(&nvtxs, &ncon, xadj, adjncy, vwgt, NULL, adjwgt,
		&nparts, NULL, ubvec, options, objval, part);
}
*/
import "C"

import (
	"fmt"
	"math"
	"sync"

	"github.com/supergcn/supergcn/partition"
)

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
	serial.Lock()
	defer serial.Unlock()
	rc := C.sgcn_metis_kway_weighted(C.idx_t(n), C.idx_t(ncon), (*C.idx_t)(&xadj[0]), (*C.idx_t)(&adjncy[0]),
		(*C.idx_t)(&vwgt[0]), (*C.idx_t)(&adjwgt[0]), C.idx_t(parts), &ubvec[0], C.idx_t(int32(seed)), &objval, (*C.idx_t)(&owner[0]))
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
