// Package comm is the collective-communication interface that the exchange
// and the training loop use. It keeps those packages free of cgo: the MPI
// implementation lives in comm/mpicomm (cgo, system MPI); Single is the
// one-process implementation and NewGroup runs P ranks as goroutines for
// tests.
//
// Counts and displacements are in elements, one entry per peer. Every rank
// must call every collective in the same order (MPI semantics).
package comm

// Request is an outstanding non-blocking operation.
type Request interface {
	// Wait blocks until the operation completes; buffers may be reused after.
	Wait() error
}

// Tester is implemented by requests that can report completion without
// blocking (MPI_Test). MPI libraries move a non-blocking collective mostly
// inside MPI calls, so polling Test while computing is what makes the
// transfer overlap the computation. After Test reports completion, Wait
// returns at once.
type Tester interface {
	Test() (done bool, err error)
}

// Comm is a communicator over Size() ranks.
type Comm interface {
	Rank() int
	Size() int
	Barrier() error
	// Abort ends every rank of the job with the given exit code.
	Abort(code int)
	// Wtime is a wall-clock time in seconds (MPI_Wtime for MPI).
	Wtime() float64

	BcastBytes(buf []byte, root int) error
	AllreduceSumF32(buf []float32) error // in place
	AllreduceSumF64(buf []float64) error // in place
	AllreduceSumI64(buf []int64) error   // in place
	AllreduceMaxF64(buf []float64) error // in place

	AlltoallvI64(send []int64, sendCounts, sendDispls []int, recv []int64, recvCounts, recvDispls []int) error
	AlltoallvBytes(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) error
	// Non-blocking forms: the buffers must not be touched until Wait returns.
	IalltoallvF32(send []float32, sendCounts, sendDispls []int, recv []float32, recvCounts, recvDispls []int) (Request, error)
	IalltoallvBytes(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) (Request, error)

	// Split is MPI_Comm_split: the ranks that pass the same color form a
	// new communicator, ranked by key (ties by rank in this one). A negative
	// color leaves the rank out: it gets a nil Comm and a nil error.
	// Collective.
	Split(color, key int) (Comm, error)
	// SplitShared is MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) keyed by rank:
	// the ranks that share a node, in the order of their ranks here.
	// Collective.
	SplitShared() (Comm, error)
}
