// C side of package mpi. Every MPI handle stays in C: communicators travel
// to Go as Fortran handles (MPI_Fint, an int in every MPI), requests in
// sg_req blocks allocated here, datatypes and ops as the small codes below.
// Nothing here depends on the handle representation of one MPI library, so
// the same code builds against Open MPI (pointer handles) and MPICH (ints).
#ifndef SUPERGCN_MPI_BINDING_H
#define SUPERGCN_MPI_BINDING_H

#include <mpi.h>

// Element type codes (Go: dtype).
enum { SG_INT8, SG_UINT8, SG_INT32, SG_INT64, SG_FLOAT32, SG_FLOAT64 };
// Reduction codes (Go: Op).
enum { SG_SUM, SG_MAX, SG_MIN };
// Thread levels (Go: ThreadLevel).
enum { SG_SINGLE, SG_FUNNELED, SG_SERIALIZED, SG_MULTIPLE };
// Binding state (sg_state).
enum { SG_STATE_NONE, SG_STATE_ACTIVE, SG_STATE_FINALIZED };
// Binding error codes, outside MPI's range of error codes.
enum { SG_ERR_THREAD = -1, SG_ERR_NOMEM = -2 };

// sg_req is one Go Request: up to cap MPI requests (n posted so far) and,
// for Ialltoallv, the counts and displacements MPI reads until completion.
typedef struct {
	int n, cap;
	MPI_Request *reqs;
	int *ints;
} sg_req;

int sg_init_thread(int required, int *provided);
int sg_finalize(void);
int sg_state(void);
int sg_initialized(void);
int sg_finalized(void);
void sg_error_string(int code, char *buf, int len);
void sg_library_version(char *buf, int len);
double sg_wtime(void);
void sg_abort(MPI_Fint comm, int use_world, int code);

MPI_Fint sg_world(void);
int sg_comm_adopt(MPI_Fint comm, int *rank, int *size);
int sg_comm_split(MPI_Fint comm, int color, int key, MPI_Fint *out, int *rank, int *size);
int sg_comm_split_shared(MPI_Fint comm, int key, MPI_Fint *out, int *rank, int *size);
int sg_comm_free(MPI_Fint comm);
int sg_barrier(MPI_Fint comm);

int sg_bcast(void *buf, int n, int type, int root, MPI_Fint comm);
int sg_allreduce(void *buf, int n, int type, int op, MPI_Fint comm);
int sg_allgather(const void *send, int n, void *recv, int type, MPI_Fint comm);
int sg_allgatherv(const void *send, int n, void *recv, const int *counts, const int *displs, int type, MPI_Fint comm);
int sg_alltoall(const void *send, int n, void *recv, int type, MPI_Fint comm);
int sg_alltoallv(const void *send, const int *sc, const int *sd, void *recv, const int *rc, const int *rd, int type,
                 MPI_Fint comm);

sg_req *sg_req_new(int cap, int nints);
void sg_req_free(sg_req *q);
int sg_ialltoallv(const void *send, void *recv, int type, MPI_Fint comm, sg_req *q);
int sg_isend(const void *buf, int n, int type, int dest, int tag, MPI_Fint comm, sg_req *q);
int sg_irecv(void *buf, int n, int type, int src, int tag, MPI_Fint comm, sg_req *q);
int sg_req_test(sg_req *q, int *done);
int sg_req_cancel(sg_req *q);

#endif
