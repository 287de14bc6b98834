//go:build cgo && scotch64

package metis

/*
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>
#include <scotch.h>

// A PT-Scotch built with 64-bit integers (-DINTSIZE64 -DIDXSIZE64; see the
// README's recipe): global arc counts beyond 2^31 go through.
typedef char sgcn_scotch_num_is_int64[(sizeof(SCOTCH_Num) == 8) ? 1 : -1];

extern int ParMETIS_V3_PartKway(const SCOTCH_Num *vtxdist, SCOTCH_Num *xadj, SCOTCH_Num *adjncy,
	SCOTCH_Num *vwgt, SCOTCH_Num *adjwgt, const SCOTCH_Num *wgtflag, const SCOTCH_Num *numflag,
	const SCOTCH_Num *ncon, const SCOTCH_Num *nparts, const float *tpwgts, const float *ubvec,
	const SCOTCH_Num *options, SCOTCH_Num *edgecut, SCOTCH_Num *part, MPI_Comm *comm);

static int sgcn_parmetis64(int fcomm, SCOTCH_Num *vtxdist, SCOTCH_Num *xadj, SCOTCH_Num *adjncy,
		SCOTCH_Num *vwgt, SCOTCH_Num ncon, SCOTCH_Num nparts, float *tpwgts, float *ubvec,
		SCOTCH_Num seed, SCOTCH_Num *part) {
	MPI_Comm c = MPI_Comm_f2c((MPI_Fint)fcomm);
	SCOTCH_Num wgtflag = vwgt != NULL ? 2 : 0, numflag = 0, edgecut = 0;
	SCOTCH_Num options[3] = {0, 0, 0};
	SCOTCH_randomSeed(seed);
	SCOTCH_randomReset();
	return ParMETIS_V3_PartKway(vtxdist, xadj, adjncy, vwgt, NULL, &wgtflag, &numflag, &ncon,
		&nparts, tpwgts, ubvec, options, &edgecut, part, &c);
}
*/
import "C"

import "math"

// MaxArcs: a 64-bit PT-Scotch indexes arcs with int64.
const MaxArcs = math.MaxInt64

// widen copies an int32 slice into a SCOTCH_Num (int64) one.
func widen(s []int32) []C.SCOTCH_Num {
	out := make([]C.SCOTCH_Num, len(s))
	for i, x := range s {
		out[i] = C.SCOTCH_Num(x)
	}
	return out
}

// partKway calls ParMETIS_V3_PartKway of a 64-bit PT-Scotch on one rank's
// arrays (widened to SCOTCH_Num; per-rank arrays stay int32 in Go) and
// returns its status (1 = success).
func partKway(fcomm int, vtxdist, xadj, adj, vwgt []int32, parts int, tpwgts []float32, ub float64, seed int32, part []int32) int {
	vd, xa, ad, out := widen(vtxdist), widen(xadj), widen(adj), make([]C.SCOTCH_Num, len(part))
	var vw *C.SCOTCH_Num
	if vwgt != nil {
		vw = &widen(vwgt)[0]
	}
	ubvec := []C.float{C.float(ub)}
	rc := int(C.sgcn_parmetis64(C.int(fcomm), &vd[0], &xa[0], &ad[0], vw, 1, C.SCOTCH_Num(parts),
		(*C.float)(&tpwgts[0]), &ubvec[0], C.SCOTCH_Num(seed), &out[0]))
	for i, x := range out {
		part[i] = int32(x)
	}
	return rc
}
