package metis

/*
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

// sgcn_comm returns 0 and the rank and size of the communicator with
// Fortran handle fcomm, or a negative code: -1 MPI not initialised (or
// already finalised), -2 invalid communicator.
static int sgcn_comm(int fcomm, int *rank, int *size) {
	int init = 0, fin = 0;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (!init || fin) return -1;
	MPI_Comm c = MPI_Comm_f2c((MPI_Fint)fcomm);
	if (c == MPI_COMM_NULL) return -2;
	if (MPI_Comm_rank(c, rank) != MPI_SUCCESS || MPI_Comm_size(c, size) != MPI_SUCCESS) return -2;
	return 0;
}

// sgcn_allreduce_i64 reduces n int64 values in place with op 0 = sum, 1 = min, 2 = max.
static int sgcn_allreduce_i64(int fcomm, int64_t *buf, int n, int op) {
	MPI_Op o = op == 0 ? MPI_SUM : (op == 1 ? MPI_MIN : MPI_MAX);
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_INT64_T, o, MPI_Comm_f2c((MPI_Fint)fcomm));
}

static int sgcn_allgatherv_i32(int fcomm, const int32_t *send, int count,
		int32_t *recv, const int *counts, const int *displs) {
	return MPI_Allgatherv(send, count, MPI_INT32_T, recv, counts, displs, MPI_INT32_T,
		MPI_Comm_f2c((MPI_Fint)fcomm));
}

*/
import "C"

import (
	"errors"
	"fmt"
	"math"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// commInfo returns the rank and size behind a Fortran communicator handle.
func commInfo(fcomm int) (rank, size int, err error) {
	var r, s C.int
	switch C.sgcn_comm(C.int(fcomm), &r, &s) {
	case 0:
		return int(r), int(s), nil
	case -1:
		return 0, 0, errors.New("partition: parmetis: MPI is not initialized (or already finalized)")
	}
	return 0, 0, fmt.Errorf("partition: parmetis: Fortran handle %d is not a valid MPI communicator", fcomm)
}

// allAgree returns nil on every rank when err is nil on every rank, and an
// error on every rank otherwise (the local one where there is one), so that
// no rank enters a collective the others have abandoned.
func allAgree(fcomm int, err error) error {
	var bad C.int64_t
	if err != nil {
		bad = 1
	}
	if rc := C.sgcn_allreduce_i64(C.int(fcomm), &bad, 1, 2); rc != C.MPI_SUCCESS {
		return fmt.Errorf("partition: parmetis: MPI_Allreduce failed (code %d)", int(rc))
	}
	if err != nil {
		return err
	}
	if bad != 0 {
		return errors.New("partition: parmetis: another rank failed (see its error)")
	}
	return nil
}

// ParMetisDistributed partitions a graph distributed by node ranges across
// the ranks of the MPI communicator whose Fortran handle is fcomm (see
// mpi.Comm.Fortran), with ParMETIS_V3_PartKway. It is collective: every rank
// of the communicator calls it with the same vtxdist, ncon, parts and o.
//
// Rank r owns global nodes [vtxdist[r], vtxdist[r+1]) (len(vtxdist) = size+1,
// vtxdist[0] = 0, non-decreasing); localPtr (len = local nodes + 1, from 0)
// and localAdj (global ids) are the rows of those nodes in the undirected,
// loop-free, duplicate-free adjacency; vwgt holds ncon weights per local node
// (node-major), or nil for unit weights. It returns the part of each local
// node.
//
// The ParMETIS v3 API is PT-Scotch's (libptscotchparmetisv3) by default,
// which honours vertex weights and uniform target weights but ignores ncon,
// ubvec and options and reports no edge cut; with the build tag parmetis it
// is a site's ParMETIS (kway_parmetis.go), which honours ubvec and the seed. So ncon > 1 constraints are folded
// into one weight: each constraint is scaled to the same global total as the
// first and the scaled values are summed, which balances a mix of them; the
// seed goes to SCOTCH_randomSeed; the imbalance Scotch applies is its own
// (its default strategy aims at a few per cent). Measure the result with
// ComputeStats.
func ParMetisDistributed(fcomm int, vtxdist []int32, localPtr []int32, localAdj []int32,
	vwgt []int32, ncon int, parts int, o Options) ([]int32, error) {
	rank, size, err := commInfo(fcomm)
	if err != nil {
		return nil, err
	}
	ub, err := o.ubfactor()
	if err == nil {
		err = checkDistributed(rank, size, vtxdist, localPtr, localAdj, vwgt, ncon, parts)
	}
	if err == nil && parts > 1 {
		err = checkLibrary(vtxdist)
	}
	if err := allAgree(fcomm, err); err != nil {
		return nil, err
	}
	nloc := int(vtxdist[rank+1] - vtxdist[rank])
	part := make([]int32, nloc)
	if parts == 1 || vtxdist[size] == 0 {
		return part, nil
	}
	if ncon > 1 {
		if vwgt, err = foldConstraints(fcomm, vwgt, ncon); err != nil {
			return nil, err
		}
	}
	tpwgts := make([]float32, parts)
	for i := range tpwgts {
		tpwgts[i] = float32(1 / float64(parts))
	}
	// C needs non-nil pointers for empty local ranges: pad with one element.
	ptr := append(localPtr[:len(localPtr):len(localPtr)], 0)
	adj := append(localAdj[:len(localAdj):len(localAdj)], 0)
	out := append(part[:nloc:nloc], 0)
	var vw []int32
	if vwgt != nil {
		vw = append(vwgt[:len(vwgt):len(vwgt)], 0)
	}
	vd := append([]int32(nil), vtxdist...)
	rc := partKway(fcomm, vd, ptr, adj, vw, parts, tpwgts, ub, int32(o.Seed), out)
	var bad error
	if rc != 1 {
		bad = fmt.Errorf("partition: ParMETIS_V3_PartKway (PT-Scotch) on rank %d: status %d", rank, rc)
	} else {
		copy(part, out[:nloc])
		for i, p := range part {
			if p < 0 || int(p) >= parts {
				bad = fmt.Errorf("partition: ParMETIS returned part %d for node %d, outside [0,%d)", p, int(vtxdist[rank])+i, parts)
				break
			}
		}
	}
	if err := allAgree(fcomm, bad); err != nil {
		return nil, err
	}
	return part, nil
}

// checkDistributed validates one rank's arguments to ParMetisDistributed.
func checkDistributed(rank, size int, vtxdist, localPtr, localAdj, vwgt []int32, ncon, parts int) error {
	if parts < 1 || parts > math.MaxInt32 {
		return fmt.Errorf("partition: parmetis: %d parts, want >= 1", parts)
	}
	if len(vtxdist) != size+1 || vtxdist[0] != 0 {
		return fmt.Errorf("partition: parmetis: vtxdist has %d entries (want %d, from 0) for %d ranks", len(vtxdist), size+1, size)
	}
	for r := 0; r < size; r++ {
		if vtxdist[r+1] < vtxdist[r] {
			return fmt.Errorf("partition: parmetis: vtxdist decreases at rank %d", r)
		}
	}
	nloc := int(vtxdist[rank+1] - vtxdist[rank])
	if len(localPtr) != nloc+1 || localPtr[0] != 0 {
		return fmt.Errorf("partition: parmetis: rank %d has %d nodes but %d row offsets", rank, nloc, len(localPtr))
	}
	for i := 0; i < nloc; i++ {
		if localPtr[i+1] < localPtr[i] {
			return fmt.Errorf("partition: parmetis: row offsets decrease at local node %d", i)
		}
	}
	if int(localPtr[nloc]) != len(localAdj) {
		return fmt.Errorf("partition: parmetis: row offsets end at %d, adjacency has %d entries", localPtr[nloc], len(localAdj))
	}
	n := vtxdist[size]
	for k, u := range localAdj {
		if u < 0 || u >= n {
			return fmt.Errorf("partition: parmetis: adjacency entry %d is node %d, outside [0,%d)", k, u, n)
		}
	}
	if ncon < 1 {
		return fmt.Errorf("partition: parmetis: ncon %d, want >= 1", ncon)
	}
	if vwgt != nil && len(vwgt) != nloc*ncon {
		return fmt.Errorf("partition: parmetis: %d vertex weights for %d nodes × %d constraints", len(vwgt), nloc, ncon)
	}
	for _, w := range vwgt {
		if w < 0 {
			return fmt.Errorf("partition: parmetis: negative vertex weight %d", w)
		}
	}
	return nil
}

// foldConstraints turns ncon weights per node into one: constraint c is
// scaled by T0/Tc (global totals) and the scaled weights are summed, so each
// constraint carries the same total; the result is scaled down if the global
// total would leave int32.
func foldConstraints(fcomm int, vwgt []int32, ncon int) ([]int32, error) {
	tot := make([]C.int64_t, ncon)
	for i, w := range vwgt {
		tot[i%ncon] += C.int64_t(w)
	}
	if rc := C.sgcn_allreduce_i64(C.int(fcomm), &tot[0], C.int(ncon), 0); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("partition: parmetis: MPI_Allreduce failed (code %d)", int(rc))
	}
	target := float64(tot[0])
	if target == 0 {
		target = 1
	}
	// Sum of the folded weights is about ncon*target (plus rounding): keep it below 2^30.
	if limit := float64(1<<30) / float64(ncon+1); target > limit {
		target = limit
	}
	scale := make([]float64, ncon)
	for c := range scale {
		if tot[c] > 0 {
			scale[c] = target / float64(tot[c])
		}
	}
	out := make([]int32, len(vwgt)/ncon)
	for v := range out {
		var s float64
		for c := 0; c < ncon; c++ {
			s += float64(vwgt[v*ncon+c]) * scale[c]
		}
		out[v] = int32(math.Max(1, math.Round(s)))
	}
	return out, nil
}

// ParMetis partitions g, which every rank of the communicator (Fortran
// handle fcomm) holds in full, into parts with ParMetisDistributed: rank
// `rank` of `size` contributes the rows of its node range (NodeRanges), with
// the vertex weights of o, and the parts of all nodes are then gathered
// (MPI_Allgatherv) so every rank returns the full owner array. Collective.
func ParMetis(fcomm int, rank, size int, g *graph.CSR, parts int, o Options) ([]int32, error) {
	r, s, err := commInfo(fcomm)
	if err != nil {
		return nil, err
	}
	if r != rank || s != size {
		err = fmt.Errorf("partition: parmetis: called as rank %d of %d, communicator says %d of %d", rank, size, r, s)
	} else if err = partition.CheckSquare(g); err == nil && int64(g.NumRows) > math.MaxInt32 {
		err = fmt.Errorf("partition: parmetis: %d nodes beyond int32", g.NumRows)
	}
	var (
		vd        []int32
		xadj, adj []int32
		vwgt      []int32
		ncon      int
	)
	if err == nil {
		vd = partition.NodeRanges(g.NumRows, size)
		lo, hi := int(vd[rank]), int(vd[rank+1])
		if ncon, vwgt, err = vertexWeights(g, lo, hi, o); err == nil {
			xadj, adj, err = symAdjacency(g, g.Transpose(), lo, hi)
		}
	}
	if err := allAgree(fcomm, err); err != nil {
		return nil, err
	}
	local, err := ParMetisDistributed(fcomm, vd, xadj, adj, vwgt, ncon, parts, o)
	if err != nil {
		return nil, err
	}
	owner := make([]int32, g.NumRows+1) // +1: a valid receive pointer even for 0 nodes
	counts := make([]C.int, size)
	displs := make([]C.int, size)
	for q := 0; q < size; q++ {
		counts[q] = C.int(vd[q+1] - vd[q])
		displs[q] = C.int(vd[q])
	}
	send := append(local[:len(local):len(local)], 0)
	if rc := C.sgcn_allgatherv_i32(C.int(fcomm), (*C.int32_t)(&send[0]), C.int(len(local)),
		(*C.int32_t)(&owner[0]), &counts[0], &displs[0]); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("partition: parmetis: MPI_Allgatherv failed (code %d)", int(rc))
	}
	return owner[:g.NumRows], nil
}

// copyInts copies an int32 slice into one of the partitioner library's
// index type (SCOTCH_Num or idx_t, 32 or 64 bits as the library was built).
func copyInts[T ~int32 | ~int64](s []int32) []T {
	out := make([]T, len(s))
	for i, x := range s {
		out[i] = T(x)
	}
	return out
}

// narrowInts copies the library's part numbers (all below parts, an int32)
// back into dst.
func narrowInts[T ~int32 | ~int64](dst []int32, s []T) {
	for i, x := range s {
		dst[i] = int32(x)
	}
}
