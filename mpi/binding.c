// C side of package mpi; see binding.h. The Go side holds its mutex around
// every call here except sg_abort, sg_state, sg_initialized, sg_finalized
// and sg_library_version.
#include "binding.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The binding's init state (MPI's own state is the rest): whether InitThread
// succeeded and Finalize has run, and the thread that initialised MPI, which
// must also finalise it (MPI's "main thread").
static int state = SG_STATE_NONE;
static pthread_t main_thread;

static MPI_Datatype dtype(int t) {
	switch (t) {
	case SG_INT8: return MPI_INT8_T;
	case SG_UINT8: return MPI_UINT8_T;
	case SG_INT32: return MPI_INT32_T;
	case SG_INT64: return MPI_INT64_T;
	case SG_FLOAT32: return MPI_FLOAT;
	case SG_FLOAT64: return MPI_DOUBLE;
	}
	return MPI_DATATYPE_NULL;
}

static MPI_Op op(int o) {
	switch (o) {
	case SG_SUM: return MPI_SUM;
	case SG_MAX: return MPI_MAX;
	case SG_MIN: return MPI_MIN;
	}
	return MPI_OP_NULL;
}

static int level_to_mpi(int l) {
	switch (l) {
	case SG_SINGLE: return MPI_THREAD_SINGLE;
	case SG_FUNNELED: return MPI_THREAD_FUNNELED;
	case SG_SERIALIZED: return MPI_THREAD_SERIALIZED;
	}
	return MPI_THREAD_MULTIPLE;
}

static int level_from_mpi(int l) {
	if (l == MPI_THREAD_SINGLE) return SG_SINGLE;
	if (l == MPI_THREAD_FUNNELED) return SG_FUNNELED;
	if (l == MPI_THREAD_SERIALIZED) return SG_SERIALIZED;
	return SG_MULTIPLE;
}

int sg_init_thread(int required, int *provided) {
	int got = MPI_THREAD_SINGLE;
	int rc = MPI_Init_thread(NULL, NULL, level_to_mpi(required), &got);
	if (rc != MPI_SUCCESS) return rc;
	*provided = level_from_mpi(got);
	main_thread = pthread_self();
	__atomic_store_n(&state, SG_STATE_ACTIVE, __ATOMIC_SEQ_CST);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

int sg_finalize(void) {
	if (!pthread_equal(pthread_self(), main_thread)) return SG_ERR_THREAD;
	__atomic_store_n(&state, SG_STATE_FINALIZED, __ATOMIC_SEQ_CST);
	return MPI_Finalize();
}

int sg_state(void) { return __atomic_load_n(&state, __ATOMIC_SEQ_CST); }

int sg_initialized(void) {
	int flag = 0;
	MPI_Initialized(&flag);
	return flag;
}

int sg_finalized(void) {
	int flag = 0;
	MPI_Finalized(&flag);
	return flag;
}

void sg_error_string(int code, char *buf, int len) {
	char msg[MPI_MAX_ERROR_STRING + 1];
	int n = 0;
	const char *s = msg;
	if (code == SG_ERR_THREAD) {
		s = "called from a thread other than the one that initialised MPI";
	} else if (code == SG_ERR_NOMEM) {
		s = "out of C memory";
	} else if (MPI_Error_string(code, msg, &n) != MPI_SUCCESS) {
		s = "unknown MPI error";
	} else {
		msg[n] = 0;
	}
	strncpy(buf, s, len - 1);
	buf[len - 1] = 0;
}

void sg_library_version(char *buf, int len) {
	char v[MPI_MAX_LIBRARY_VERSION_STRING + 1];
	int n = 0;
	if (MPI_Get_library_version(v, &n) != MPI_SUCCESS) n = 0;
	v[n] = 0;
	strncpy(buf, v, len - 1);
	buf[len - 1] = 0;
}

double sg_wtime(void) { return MPI_Wtime(); }

void sg_abort(MPI_Fint comm, int use_world, int code) {
	MPI_Abort(use_world ? MPI_COMM_WORLD : MPI_Comm_f2c(comm), code);
}

MPI_Fint sg_world(void) { return MPI_Comm_c2f(MPI_COMM_WORLD); }

// rank_size sets MPI_ERRORS_RETURN on c and reports its rank and size.
static int rank_size(MPI_Comm c, int *rank, int *size) {
	int rc = MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(c, rank);
	if (rc == MPI_SUCCESS) rc = MPI_Comm_size(c, size);
	return rc;
}

int sg_comm_adopt(MPI_Fint comm, int *rank, int *size) { return rank_size(MPI_Comm_f2c(comm), rank, size); }

// finish_new reports a communicator made by a split: size 0 for MPI_COMM_NULL.
static int finish_new(int rc, MPI_Comm c, MPI_Fint *out, int *rank, int *size) {
	*size = 0;
	*rank = -1;
	if (rc != MPI_SUCCESS || c == MPI_COMM_NULL) return rc;
	*out = MPI_Comm_c2f(c);
	rc = rank_size(c, rank, size);
	if (rc != MPI_SUCCESS) MPI_Comm_free(&c);
	return rc;
}

int sg_comm_split(MPI_Fint comm, int color, int key, MPI_Fint *out, int *rank, int *size) {
	MPI_Comm c = MPI_COMM_NULL;
	int rc = MPI_Comm_split(MPI_Comm_f2c(comm), color < 0 ? MPI_UNDEFINED : color, key, &c);
	return finish_new(rc, c, out, rank, size);
}

int sg_comm_split_shared(MPI_Fint comm, int key, MPI_Fint *out, int *rank, int *size) {
	MPI_Comm c = MPI_COMM_NULL;
	int rc = MPI_Comm_split_type(MPI_Comm_f2c(comm), MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &c);
	return finish_new(rc, c, out, rank, size);
}

int sg_comm_free(MPI_Fint comm) {
	MPI_Comm c = MPI_Comm_f2c(comm);
	return MPI_Comm_free(&c);
}

int sg_barrier(MPI_Fint comm) { return MPI_Barrier(MPI_Comm_f2c(comm)); }

int sg_bcast(void *buf, int n, int type, int root, MPI_Fint comm) {
	return MPI_Bcast(buf, n, dtype(type), root, MPI_Comm_f2c(comm));
}

int sg_allreduce(void *buf, int n, int type, int o, MPI_Fint comm) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, dtype(type), op(o), MPI_Comm_f2c(comm));
}

int sg_allgather(const void *send, int n, void *recv, int type, MPI_Fint comm) {
	MPI_Datatype t = dtype(type);
	return MPI_Allgather(send, n, t, recv, n, t, MPI_Comm_f2c(comm));
}

int sg_allgatherv(const void *send, int n, void *recv, const int *counts, const int *displs, int type, MPI_Fint comm) {
	MPI_Datatype t = dtype(type);
	return MPI_Allgatherv(send, n, t, recv, counts, displs, t, MPI_Comm_f2c(comm));
}

int sg_alltoall(const void *send, int n, void *recv, int type, MPI_Fint comm) {
	MPI_Datatype t = dtype(type);
	return MPI_Alltoall(send, n, t, recv, n, t, MPI_Comm_f2c(comm));
}

int sg_alltoallv(const void *send, const int *sc, const int *sd, void *recv, const int *rc, const int *rd, int type,
                 MPI_Fint comm) {
	MPI_Datatype t = dtype(type);
	return MPI_Alltoallv(send, sc, sd, t, recv, rc, rd, t, MPI_Comm_f2c(comm));
}

sg_req *sg_req_new(int cap, int nints) {
	sg_req *q = calloc(1, sizeof *q);
	if (q == NULL) return NULL;
	q->cap = cap;
	q->reqs = malloc((cap > 0 ? cap : 1) * sizeof(MPI_Request));
	q->ints = nints > 0 ? malloc(nints * sizeof(int)) : NULL;
	if (q->reqs == NULL || (nints > 0 && q->ints == NULL)) {
		sg_req_free(q);
		return NULL;
	}
	for (int i = 0; i < cap; i++) q->reqs[i] = MPI_REQUEST_NULL;
	return q;
}

void sg_req_free(sg_req *q) {
	if (q == NULL) return;
	free(q->reqs);
	free(q->ints);
	free(q);
}

// next returns the slot for the next request of q, or NULL when q is full.
static MPI_Request *next(sg_req *q) { return q->n < q->cap ? &q->reqs[q->n] : NULL; }

// sg_ialltoallv reads the counts and displacements from q->ints: send
// counts, send displacements, receive counts, receive displacements, one
// block of comm-size entries each.
int sg_ialltoallv(const void *send, void *recv, int type, MPI_Fint comm, sg_req *q) {
	MPI_Comm c = MPI_Comm_f2c(comm);
	MPI_Datatype t = dtype(type);
	MPI_Request *r = next(q);
	int p = 0, rc;
	if (r == NULL) return MPI_ERR_REQUEST;
	rc = MPI_Comm_size(c, &p);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Ialltoallv(send, q->ints, q->ints + p, t, recv, q->ints + 2 * p, q->ints + 3 * p, t, c, r);
	if (rc == MPI_SUCCESS) q->n++;
	return rc;
}

int sg_isend(const void *buf, int n, int type, int dest, int tag, MPI_Fint comm, sg_req *q) {
	MPI_Request *r = next(q);
	int rc;
	if (r == NULL) return MPI_ERR_REQUEST;
	rc = MPI_Isend(buf, n, dtype(type), dest, tag, MPI_Comm_f2c(comm), r);
	if (rc == MPI_SUCCESS) q->n++;
	return rc;
}

int sg_irecv(void *buf, int n, int type, int src, int tag, MPI_Fint comm, sg_req *q) {
	MPI_Request *r = next(q);
	int rc;
	if (r == NULL) return MPI_ERR_REQUEST;
	rc = MPI_Irecv(buf, n, dtype(type), src, tag, MPI_Comm_f2c(comm), r);
	if (rc == MPI_SUCCESS) q->n++;
	return rc;
}

// status_error turns MPI_ERR_IN_STATUS into the first failing request's code.
static int status_error(int rc, MPI_Status *st, int n) {
	if (rc != MPI_ERR_IN_STATUS) return rc;
	for (int i = 0; i < n; i++) {
		int e = st[i].MPI_ERROR;
		if (e != MPI_SUCCESS && e != MPI_ERR_PENDING) return e;
	}
	return rc;
}

int sg_req_test(sg_req *q, int *done) {
	MPI_Status *st;
	int rc;
	*done = 1;
	if (q->n == 0) return MPI_SUCCESS;
	st = malloc(q->n * sizeof(MPI_Status));
	if (st == NULL) return SG_ERR_NOMEM;
	rc = status_error(MPI_Testall(q->n, q->reqs, done, st), st, q->n);
	free(st);
	return rc;
}

// sg_req_cancel cancels the requests posted so far and waits for them, for
// an operation whose posting failed part-way.
int sg_req_cancel(sg_req *q) {
	for (int i = 0; i < q->n; i++) {
		if (q->reqs[i] != MPI_REQUEST_NULL) MPI_Cancel(&q->reqs[i]);
	}
	return MPI_Waitall(q->n, q->reqs, MPI_STATUSES_IGNORE);
}
