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

// sgcn_scotch_threads is the number of threads PT-Scotch should run per rank:
// the CPUs this process may run on, shared among the ranks of its node that
// see the same CPUs. Scotch 7 otherwise starts one thread per online CPU in
// every rank, so P ranks bound to one core each (mpirun's default) run P
// threads per core that meet at barriers — minutes instead of seconds.
static int sgcn_scotch_threads(MPI_Comm c) {
	cpu_set_t set;
	int mine = 0, local = 1;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	if (sched_getaffinity(0, sizeof set, &set) == 0) mine = CPU_COUNT(&set);
	if (mine < 1) mine = online > 0 ? (int)online : 1;
	MPI_Comm node;
	if (MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
		MPI_Comm_size(node, &local);
		MPI_Comm_free(&node);
	}
	int n = mine;
	if (online > 0 && local > 0 && online / local < n) n = (int)(online / local);
	return n < 1 ? 1 : n;
}

static int sgcn_parmetis(int fcomm, SCOTCH_Num *vtxdist, SCOTCH_Num *xadj, SCOTCH_Num *adjncy,
		SCOTCH_Num *vwgt, SCOTCH_Num ncon, SCOTCH_Num nparts, float *tpwgts, float *ubvec,
		SCOTCH_Num seed, SCOTCH_Num *part) {
	MPI_Comm c = MPI_Comm_f2c((MPI_Fint)fcomm);
	SCOTCH_Num wgtflag = vwgt != NULL ? 2 : 0, numflag = 0, edgecut = 0;
	SCOTCH_Num options[3] = {0, 0, 0};
	// The thread count goes to Scotch through its environment variable (the
	// ParMETIS layer takes no context); a value the user set wins, and ours
	// is removed again after the call. Every rank computes it (collective).
	int threads = sgcn_scotch_threads(c);
	int ours = getenv("SCOTCH_PTHREAD_NUMBER") == NULL;
	if (ours) {
		char buf[24];
		snprintf(buf, sizeof buf, "%d", threads);
		setenv("SCOTCH_PTHREAD_NUMBER", buf, 1);
	}
	SCOTCH_randomSeed(seed);
	SCOTCH_randomReset();
	int rc = ParMETIS_V3_PartKway(vtxdist, xadj, adjncy, vwgt, NULL, &wgtflag, &numflag, &ncon,
		&nparts, tpwgts, ubvec, options, &edgecut, part, &c);
	if (ours) unsetenv("SCOTCH_PTHREAD_NUMBER");
	return rc;
}
