//go:build cgo

package metis

/*
#include <metis.h>
#include <stdio.h>
#include <mpi.h>
static int sgcn_metis_ver(int i) {
	int v[3] = {METIS_VER_MAJOR, METIS_VER_MINOR, METIS_VER_SUBMINOR};
	return v[i];
}
*/
import "C"

import "fmt"

// MetisVersion is the version of the METIS headers this build was compiled
// against.
func MetisVersion() string {
	return fmt.Sprintf("%d.%d.%d", C.sgcn_metis_ver(0), C.sgcn_metis_ver(1), C.sgcn_metis_ver(2))
}
