// Package mpi is a thin cgo binding to the system MPI library: the
// initialisation, communicator, collective and point-to-point calls that
// supergcn needs, generic over the element types of Elem.
//
// It builds against Open MPI by default (pkg-config ompi), against MPICH
// with the build tag mpich (pkg-config mpich), and against any MPI with the
// build tag mpienv (flags from CGO_CFLAGS/CGO_LDFLAGS). No MPI handle
// reaches Go: a Comm holds the communicator's Fortran handle (an integer in
// every MPI, see Comm.Fortran), a Request a block of C memory.
//
// # Which goroutine may call MPI
//
// InitThread requests MPI_THREAD_SERIALIZED (or MULTIPLE when asked), because
// goroutines move between OS threads: a FUNNELED or SINGLE MPI would need
// every call on one OS thread. The rules:
//
//   - InitThread and Finalize must be called from the same goroutine
//     (normally main). InitThread locks that goroutine to its OS thread
//     (runtime.LockOSThread) until Finalize, which MPI requires to run on the
//     thread that initialised it; Finalize from another goroutine returns an
//     error instead.
//   - Every other function may be called from any goroutine. The package
//     serialises all MPI calls with one mutex, which is what
//     MPI_THREAD_SERIALIZED asks of the caller. A blocking collective holds
//     the mutex until it returns, so a rank must never block in one on an
//     operation that only another goroutine of the same rank could complete.
//     Request.Wait does not hold it while waiting: it polls MPI_Testall and
//     releases the mutex between polls, so other goroutines can post.
//   - Collectives on one communicator must be issued in the same order on
//     every rank; with several goroutines that order is a race, so issue the
//     collectives of a communicator from one goroutine.
//   - Comm.Abort is the exception: it does not take the mutex, so that it ends
//     the job even while another goroutine is blocked inside MPI.
//   - Other cgo code that calls MPI directly (the ParMETIS binding) must run
//     inside Serialize, which holds the same mutex.
//
// # Errors
//
// MPI_ERRORS_RETURN is set on MPI_COMM_WORLD, MPI_COMM_SELF and every
// communicator this package creates or adopts, so MPI failures come back as
// *Error values carrying the call name and MPI_Error_string's text. Argument
// errors found before calling MPI (a count array of the wrong length, a
// displacement beyond the buffer) are plain errors. An argument error found
// on one rank of a collective is returned there without communicating, and
// the other ranks may then wait forever, as in MPI; Allgatherv, Alltoallv and
// Ialltoallv instead agree on argument errors first, so every rank returns.
//
// # Messages over 2 GiB
//
// Counts and displacements are Go ints; MPI's are C ints. When a count or
// displacement exceeds math.MaxInt32 elements the package changes method
// instead of failing:
//
//   - Bcast and Allreduce send the buffer in pieces of at most 2^30 bytes,
//     one MPI call each.
//   - Isend and Irecv post one request per piece of at most 2^30 bytes, with
//     the same tag (MPI keeps their order); for such messages the receive
//     buffer must have exactly the length of the message.
//   - Alltoallv, Ialltoallv and Alltoall exchange point-to-point (Isend/Irecv
//     to and from every peer, each message in pieces of at most 2^30 bytes,
//     tag ReservedTag) instead of MPI_Alltoallv.
//   - Allgatherv and Allgather broadcast each rank's block in pieces instead
//     of calling MPI_Allgatherv.
//
// Whether a call of Bcast, Allreduce, Allgather or Alltoall is large is the
// same on every rank (their counts agree). For Allgatherv, Alltoallv and
// Ialltoallv it is not, so these first agree with a one-integer
// MPI_Allreduce: that costs a few microseconds per call, and makes Ialltoallv
// wait for every rank to start it.
//
// # Non-blocking calls and the cgo pointer rules
//
// Isend, Irecv and Ialltoallv return while MPI still holds pointers to the Go
// buffers, which cgo forbids for unpinned Go memory. The package pins the
// buffers with a runtime.Pinner and copies the counts and displacements into
// C memory; Request.Wait (or a Request.Test that reports completion) unpins
// and frees them. Every Request must therefore be completed: a Request that
// is dropped unfinished makes the Go runtime panic when the pinner is
// collected, and MPI may write into the buffer meanwhile. Buffers must not be
// touched until the Request completes.
package mpi
