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
	// One PT-Scotch thread per rank, through its environment variable (the
	// ParMETIS layer takes no context); a value the user set wins, and ours
	// is removed again after the call. Scotch 7 otherwise starts a thread per
	// online CPU in every rank: measured on the 16-core box (products scale,
	// 16 parts), 16 ranks bound to one core each did not finish in 9.5 min and
	// 8 unbound ranks with 2 threads each in 9.3 min, against 119 s for 8
	// ranks and 118 s for 16 with one thread each (docs/RESULTS.md).
	int ours = getenv("SCOTCH_PTHREAD_NUMBER") == NULL;
	if (ours) setenv("SCOTCH_PTHREAD_NUMBER", "1", 1);
	SCOTCH_randomSeed(seed);
	SCOTCH_randomReset();
	int rc = ParMETIS_V3_PartKway(vtxdist, xadj, adjncy, vwgt, NULL, &wgtflag, &numflag, &ncon,
		&nparts, tpwgts, ubvec, options, &edgecut, part, &c);
	if (ours) unsetenv("SCOTCH_PTHREAD_NUMBER");
	return rc;
}
