package mpi

// #include "binding.h"
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// Elem is the element types the collectives carry, with their MPI datatypes:
// int8 MPI_INT8_T, uint8 (byte) MPI_UINT8_T, int32 MPI_INT32_T, int64
// MPI_INT64_T, float32 MPI_FLOAT, float64 MPI_DOUBLE.
type Elem interface {
	int8 | uint8 | int32 | int64 | float32 | float64
}

// dtype is T's datatype code (binding.h).
func dtype[T Elem]() C.int {
	var z T
	switch any(z).(type) {
	case int8:
		return C.SG_INT8
	case uint8:
		return C.SG_UINT8
	case int32:
		return C.SG_INT32
	case int64:
		return C.SG_INT64
	case float32:
		return C.SG_FLOAT32
	}
	return C.SG_FLOAT64
}

// elemSize is T's size in bytes.
func elemSize[T Elem]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// ptr is the address of s's first element, or nil for an empty s.
func ptr[T Elem](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Op is a reduction operation.
type Op int

// The reductions.
const (
	Sum Op = iota // MPI_SUM
	Max           // MPI_MAX
	Min           // MPI_MIN
)

// Compile-time checks that the Go constants equal binding.h's codes.
var (
	_ = [1]int{}[Sum-C.SG_SUM]
	_ = [1]int{}[Max-C.SG_MAX]
	_ = [1]int{}[Min-C.SG_MIN]
	_ = [1]int{}[ThreadSingle-C.SG_SINGLE]
	_ = [1]int{}[ThreadFunneled-C.SG_FUNNELED]
	_ = [1]int{}[ThreadSerialized-C.SG_SERIALIZED]
	_ = [1]int{}[ThreadMultiple-C.SG_MULTIPLE]
)

func (o Op) String() string {
	switch o {
	case Sum:
		return "MPI_SUM"
	case Max:
		return "MPI_MAX"
	case Min:
		return "MPI_MIN"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// ReservedTag is the tag of the point-to-point messages that carry large
// Alltoallv and Alltoall calls. User tags (Isend, Irecv) are 0..ReservedTag-1:
// MPI guarantees tags up to 32767 everywhere.
const ReservedTag = 32767

// limits are the largest values passed to MPI in one call. Production code
// uses defaultLimits; the tests lower them to run the large-message paths on
// small buffers.
type limits struct {
	maxCount   int // largest count or displacement given to MPI (a C int)
	chunkBytes int // largest piece of a split message, in bytes
}

// defaultLimits: C int counts, pieces of at most 1 GiB.
func defaultLimits() limits { return limits{maxCount: math.MaxInt32, chunkBytes: 1 << 30} }

// chunk is the number of elements of size elem in one piece.
func (l limits) chunk(elem int) int {
	return max(1, min(l.maxCount, l.chunkBytes/elem))
}

// pieces is the number of pieces a message of n elements is split into
// (one, possibly empty, when it needs no split).
func (l limits) pieces(n, elem int) int {
	if n <= l.maxCount {
		return 1
	}
	k := l.chunk(elem)
	return (n + k - 1) / k
}

// checkLayout checks counts and displacements against a buffer of n elements
// for size ranks, and reports whether any exceeds l.maxCount.
func checkLayout(what string, n int, counts, displs []int, size int, l limits) (large bool, err error) {
	if len(counts) != size || len(displs) != size {
		return false, fmt.Errorf("%s: %d counts and %d displacements for %d ranks", what, len(counts), len(displs), size)
	}
	for r, k := range counts {
		d := displs[r]
		if k < 0 || d < 0 || k > n || d > n-k {
			return false, fmt.Errorf("%s: block %d (count %d, displacement %d) outside the buffer of %d elements",
				what, r, k, d, n)
		}
		large = large || k > l.maxCount || d > l.maxCount
	}
	return large, nil
}

// cInts converts checked counts or displacements (each at most maxCount,
// which fits a C int) into dst.
func cInts(dst []C.int, src []int) {
	for i, v := range src {
		dst[i] = C.int(v)
	}
}

// cRank checks that a rank or root fits a C int (MPI checks the rest).
func cRank(call string, r int) (C.int, error) {
	if r < math.MinInt32 || r > math.MaxInt32 {
		return 0, fmt.Errorf("mpi: %s: rank %d out of the C int range", call, r)
	}
	return C.int(r), nil
}
