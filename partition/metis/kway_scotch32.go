//go:build cgo && !scotch64 && !parmetis

package metis

/*
#cgo LDFLAGS: -lptscotchparmetisv3 -lptscotch -lptscotcherr -lscotch
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "scotch_path.h"

// The Go side passes []int32: SCOTCH_Num must be 32 bits (Debian's default
// build; a 64-bit PT-Scotch needs -tags scotch64, kway_scotch64.go).
typedef char sgcn_scotch_num_is_int32[(sizeof(SCOTCH_Num) == 4) ? 1 : -1];

#include "kway_scotch.h"

static int sgcn_scotch_ver(int i) {
	int v[3] = {SCOTCH_VERSION, SCOTCH_RELEASE, SCOTCH_PATCHLEVEL};
	return v[i];
}
*/
import "C"

import (
	"fmt"
	"math"
)

// MaxArcs is the largest global arc count (adjacency entries of the
// symmetrised graph) ParMetisDistributed can take: PT-Scotch's ParMETIS v3
// layer as Debian builds it indexes with a 32-bit SCOTCH_Num. A build with
// -tags scotch64 against a 64-bit PT-Scotch lifts it (docs/CLI.md).
const MaxArcs = math.MaxInt32

// partKway calls ParMETIS_V3_PartKway on one rank's arrays (padded by the
// caller so that none is empty; vwgt nil for unit weights) and returns its
// status (1 = success).
func partKway(fcomm int, vtxdist, xadj, adj, vwgt []int32, parts int, tpwgts []float32, ub float64, seed int32, part []int32) int {
	var vw *C.SCOTCH_Num
	if vwgt != nil {
		vw = (*C.SCOTCH_Num)(&vwgt[0])
	}
	ubvec := []C.float{C.float(ub)}
	return int(C.sgcn_parmetis(C.int(fcomm), (*C.SCOTCH_Num)(&vtxdist[0]), (*C.SCOTCH_Num)(&xadj[0]), (*C.SCOTCH_Num)(&adj[0]),
		vw, 1, C.SCOTCH_Num(parts), (*C.float)(&tpwgts[0]), &ubvec[0], C.SCOTCH_Num(seed), (*C.SCOTCH_Num)(&part[0])))
}

// ParMetisLibrary names the library behind ParMetisDistributed: PT-Scotch's
// ParMETIS v3 layer, with the version of the headers this build used.
func ParMetisLibrary() string {
	return fmt.Sprintf("PT-Scotch %d.%d.%d (ParMETIS v3 interface, 32-bit SCOTCH_Num)", C.sgcn_scotch_ver(0), C.sgcn_scotch_ver(1), C.sgcn_scotch_ver(2))
}

// checkLibrary: PT-Scotch takes ranks without nodes.
func checkLibrary([]int32) error { return nil }
