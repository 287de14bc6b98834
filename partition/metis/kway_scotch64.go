//go:build cgo && scotch64 && !parmetis

package metis

/*
#cgo LDFLAGS: -lptscotchparmetisv3 -lptscotch -lptscotcherr -lscotch
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "scotch_path.h"

// A PT-Scotch built with 64-bit integers (-DINTSIZE64 -DIDXSIZE64; see the
// docs/CLI.md's recipe): global arc counts beyond 2^31 go through.
typedef char sgcn_scotch_num_is_int64[(sizeof(SCOTCH_Num) == 8) ? 1 : -1];

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

// MaxArcs: a 64-bit PT-Scotch indexes arcs with int64.
const MaxArcs = math.MaxInt64

// partKway calls ParMETIS_V3_PartKway of a 64-bit PT-Scotch on one rank's
// arrays (widened to SCOTCH_Num; per-rank arrays stay int32 in Go) and
// returns its status (1 = success).
func partKway(fcomm int, vtxdist, xadj, adj, vwgt []int32, parts int, tpwgts []float32, ub float64, seed int32, part []int32) int {
	vd, xa, ad, out := copyInts[C.SCOTCH_Num](vtxdist), copyInts[C.SCOTCH_Num](xadj), copyInts[C.SCOTCH_Num](adj), make([]C.SCOTCH_Num, len(part))
	var vw *C.SCOTCH_Num
	if vwgt != nil {
		vw = &copyInts[C.SCOTCH_Num](vwgt)[0]
	}
	ubvec := []C.float{C.float(ub)}
	rc := int(C.sgcn_parmetis(C.int(fcomm), &vd[0], &xa[0], &ad[0], vw, 1, C.SCOTCH_Num(parts),
		(*C.float)(&tpwgts[0]), &ubvec[0], C.SCOTCH_Num(seed), &out[0]))
	narrowInts(part, out)
	return rc
}

// ParMetisLibrary names the library behind ParMetisDistributed: PT-Scotch's
// ParMETIS v3 layer, with the version of the headers this build used.
func ParMetisLibrary() string {
	return fmt.Sprintf("PT-Scotch %d.%d.%d (ParMETIS v3 interface, 64-bit SCOTCH_Num)", C.sgcn_scotch_ver(0), C.sgcn_scotch_ver(1), C.sgcn_scotch_ver(2))
}

// checkLibrary: PT-Scotch takes ranks without nodes.
func checkLibrary([]int32) error { return nil }
