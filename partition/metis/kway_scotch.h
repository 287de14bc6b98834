// The C side of partKway shared by kway_scotch32.go and kway_scotch64.go
// (whichever the build tags select includes it after scotch.h and mpi.h):
// one call of PT-Scotch's ParMETIS v3 compatibility layer
// (libptscotchparmetisv3; Debian ships no parmetis.h for it), whose
// SCOTCH_Num is 32 or 64 bits as PT-Scotch was built. PT-Scotch returns
// METIS_OK (1) on success.

extern int ParMETIS_V3_PartKway(const SCOTCH_Num *vtxdist, SCOTCH_Num *xadj, SCOTCH_Num *adjncy,
	SCOTCH_Num *vwgt, SCOTCH_Num *adjwgt, const SCOTCH_Num *wgtflag, const SCOTCH_Num *numflag,
	const SCOTCH_Num *ncon, const SCOTCH_Num *nparts, const float *tpwgts, const float *ubvec,
	const SCOTCH_Num *options, SCOTCH_Num *edgecut, SCOTCH_Num *part, MPI_Comm *comm);

static int sgcn_parmetis(int fcomm, SCOTCH_Num *vtxdist, SCOTCH_Num *xadj, SCOTCH_Num *adjncy,
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
