/* A stand-in for a site's parmetis.h, for type-checking the build tag
 * parmetis where no ParMETIS is installed (scripts/test.sh runs go vet with
 * it): the declarations of ParMETIS 4.0.3's header that supergcn uses, over
 * the system's metis.h (which defines idx_t and real_t). Never linked. */
#ifndef SGCN_PARMETIS_STUB_H
#define SGCN_PARMETIS_STUB_H
#include <mpi.h>
#include <metis.h>
#define PARMETIS_MAJOR_VERSION 4
#define PARMETIS_MINOR_VERSION 0
#define PARMETIS_SUBMINOR_VERSION 3
int ParMETIS_V3_PartKway(idx_t *vtxdist, idx_t *xadj, idx_t *adjncy, idx_t *vwgt, idx_t *adjwgt,
	idx_t *wgtflag, idx_t *numflag, idx_t *ncon, idx_t *nparts, real_t *tpwgts, real_t *ubvec,
	idx_t *options, idx_t *edgecut, idx_t *part, MPI_Comm *comm);
#endif
