//go:build cgo && parmetis

package metis

/*
#cgo LDFLAGS: -lparmetis -lmetis
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include <parmetis.h>

// A site's ParMETIS (Karypis's library, parmetis.h and metis.h of one
// build): idx_t is 32 or 64 bits (IDXTYPEWIDTH) and real_t float or double
// (REALTYPEWIDTH), as the site built it. ParMETIS returns METIS_OK (1).
static int64_t sgcn_idx_max(void) {
	return IDXTYPEWIDTH == 64 ? INT64_MAX : INT32_MAX;
}

static int sgcn_parmetis_ver(int i) {
	int v[3] = {PARMETIS_MAJOR_VERSION, PARMETIS_MINOR_VERSION, PARMETIS_SUBMINOR_VERSION};
	return v[i];
}

static int sgcn_parmetis(int fcomm, idx_t *vtxdist, idx_t *xadj, idx_t *adjncy, idx_t *vwgt,
		idx_t nparts, real_t *tpwgts, real_t ub, idx_t seed, idx_t *part) {
	MPI_Comm c = MPI_Comm_f2c((MPI_Fint)fcomm);
	idx_t wgtflag = vwgt != NULL ? 2 : 0, numflag = 0, ncon = 1, edgecut = 0;
	idx_t options[3] = {1, 0, seed}; // use options, no debug output, seed
	real_t ubvec[1] = {ub};
	return ParMETIS_V3_PartKway(vtxdist, xadj, adjncy, vwgt, NULL, &wgtflag, &numflag, &ncon,
		&nparts, tpwgts, ubvec, options, &edgecut, part, &c);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// MaxArcs is the largest global arc count the linked ParMETIS indexes: its
// idx_t is 32 or 64 bits as the site built it.
var MaxArcs = int64(C.sgcn_idx_max())

// ParMetisLibrary names the library behind ParMetisDistributed.
func ParMetisLibrary() string {
	return fmt.Sprintf("ParMETIS %d.%d.%d (idx_t %d-bit, real_t %d-bit)", C.sgcn_parmetis_ver(0), C.sgcn_parmetis_ver(1),
		C.sgcn_parmetis_ver(2), 8*unsafe.Sizeof(C.idx_t(0)), 8*unsafe.Sizeof(C.real_t(0)))
}

// checkLibrary refuses what ParMETIS cannot take: it aborts the job when a
// rank owns no vertex ("Poor initial vertex distribution").
func checkLibrary(vtxdist []int32) error {
	for r := 0; r+1 < len(vtxdist); r++ {
		if vtxdist[r+1] == vtxdist[r] {
			return fmt.Errorf("partition: parmetis: rank %d owns no node, which ParMETIS cannot take (use fewer ranks than nodes)", r)
		}
	}
	return nil
}

// partKway calls ParMETIS_V3_PartKway of the site's ParMETIS on one rank's
// arrays (copied to idx_t and real_t; the caller pads them so that none is
// empty; vwgt nil for unit weights) and returns its status (1 = success).
func partKway(fcomm int, vtxdist, xadj, adj, vwgt []int32, parts int, tpwgts []float32, ub float64, seed int32, part []int32) int {
	vd, xa, ad, out := copyInts[C.idx_t](vtxdist), copyInts[C.idx_t](xadj), copyInts[C.idx_t](adj), make([]C.idx_t, len(part))
	var vw *C.idx_t
	if vwgt != nil {
		vw = &copyInts[C.idx_t](vwgt)[0]
	}
	tp := make([]C.real_t, len(tpwgts))
	for i, w := range tpwgts {
		tp[i] = C.real_t(w)
	}
	rc := int(C.sgcn_parmetis(C.int(fcomm), &vd[0], &xa[0], &ad[0], vw, C.idx_t(parts), &tp[0], C.real_t(ub), C.idx_t(seed), &out[0]))
	narrowInts(part, out)
	return rc
}
