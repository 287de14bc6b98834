package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/supergcn/supergcn/comm"
)

// PeerError is what the ranks that did not fail return when another rank
// failed a stage: Rank is the lowest failing rank, Msg its error. That rank
// returns its own error, so a job prints the cause once.
type PeerError struct {
	Rank int
	Msg  string
}

func (e *PeerError) Error() string { return fmt.Sprintf("rank %d failed: %s", e.Rank, e.Msg) }

// AgreedError is the failing rank's own error once every rank knows of it
// (the others hold a *PeerError): the job can end normally, no abort needed.
type AgreedError struct{ Err error }

func (e *AgreedError) Error() string { return e.Err.Error() }
func (e *AgreedError) Unwrap() error { return e.Err }

// Agree is agree for callers outside the package: after a stage that can
// fail on some ranks only (reading their parts), every rank learns of the
// lowest failing rank's error, which that rank reports alone.
func Agree(c comm.Comm, err error) error { return agree(c, err) }

// agree is collective: it returns nil on every rank when err is nil on
// every rank. Otherwise the lowest failing rank gets its own err back and
// every other rank a *PeerError carrying that rank's message, so no rank
// enters a later collective the others have left.
func agree(c comm.Comm, err error) error {
	flags := make([]int64, c.Size())
	if err != nil {
		flags[c.Rank()] = 1
	}
	if cerr := c.AllreduceSumI64(flags); cerr != nil {
		return cerr
	}
	first := -1
	for r, f := range flags {
		if f != 0 {
			first = r
			break
		}
	}
	if first < 0 {
		return nil
	}
	var msg []byte
	if c.Rank() == first {
		msg = []byte(err.Error())
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(msg)))
	if cerr := c.BcastBytes(n[:], first); cerr != nil {
		return cerr
	}
	if c.Rank() != first {
		msg = make([]byte, binary.LittleEndian.Uint64(n[:]))
	}
	if len(msg) > 0 {
		if cerr := c.BcastBytes(msg, first); cerr != nil {
			return cerr
		}
	}
	if c.Rank() == first {
		var ae *AgreedError
		if errors.As(err, &ae) {
			return err
		}
		return &AgreedError{Err: err}
	}
	return &PeerError{Rank: first, Msg: string(msg)}
}

// allreduceMax returns the maximum of x over the ranks, exact for any
// int64 (the ranks' values are gathered).
func allreduceMax(c comm.Comm, x int64) (int64, error) {
	all, err := gather(c, x)
	if err != nil {
		return 0, err
	}
	return slices.Max(all), nil
}

// allreduceSum returns the sum of x over the ranks.
func allreduceSum(c comm.Comm, x int64) (int64, error) {
	b := []int64{x}
	if err := c.AllreduceSumI64(b); err != nil {
		return 0, err
	}
	return b[0], nil
}

// gather returns every rank's x (index = rank) on every rank.
func gather(c comm.Comm, x int64) ([]int64, error) {
	b := make([]int64, c.Size())
	b[c.Rank()] = x
	err := c.AllreduceSumI64(b)
	return b, err
}

// exclusiveScan returns the sum of x over the ranks below this one, and the total.
func exclusiveScan(c comm.Comm, x int64) (before, total int64, err error) {
	all, err := gather(c, x)
	if err != nil {
		return 0, 0, err
	}
	for r, v := range all {
		if r < c.Rank() {
			before += v
		}
		total += v
	}
	return before, total, nil
}

// DefaultRoundBytes bounds the bytes one rank sends (and receives) in one
// all-to-all call: larger exchanges are split into rounds, so no count or
// displacement handed to MPI reaches 2^31.
const DefaultRoundBytes = 1 << 30

// elem is what exchange moves.
type elem interface {
	int64 | int32 | float32 | byte
}

// exchange sends send[displ(counts)[q] : +counts[q]] to rank q (send is
// grouped by destination, counts[q] elements for rank q) and returns what
// every rank sent here, grouped by source rank, with the counts. Each call
// of the underlying all-to-all moves at most roundBytes per rank; bigger
// exchanges take several rounds, which every rank agrees on.
func exchange[T elem](c comm.Comm, send []T, counts []int, roundBytes int) (recv []T, rcounts []int, err error) {
	p := c.Size()
	cnt := make([]int64, p)
	for q, n := range counts {
		cnt[q] = int64(n)
	}
	rc := make([]int64, p)
	ones := make([]int, p)
	displ := make([]int, p)
	for q := range ones {
		ones[q], displ[q] = 1, q
	}
	if err := c.AlltoallvI64(cnt, ones, displ, rc, ones, displ); err != nil {
		return nil, nil, err
	}
	rcounts = make([]int, p)
	var total int
	for q, n := range rc {
		rcounts[q] = int(n)
		total += int(n)
	}
	recv = make([]T, total)
	var zero T
	size := int(unsafe.Sizeof(zero))
	chunk := max(1, roundBytes/size/p) // elements per peer per round
	var most int64
	for q := 0; q < p; q++ {
		most = max(most, cnt[q], rc[q])
	}
	most, err = allreduceMax(c, most)
	if err != nil {
		return nil, nil, err
	}
	rounds := int((most + int64(chunk) - 1) / int64(chunk))
	sOff, rOff := offsets(counts), offsets(rcounts)
	if rounds <= 1 && len(send) <= math.MaxInt32 && total <= math.MaxInt32 {
		return recv, rcounts, alltoallv(c, send, counts, sOff[:p], recv, rcounts, rOff[:p])
	}
	sc, rcc := make([]int, p), make([]int, p)
	sd, rd := make([]int, p), make([]int, p)
	sbuf, rbuf := make([]T, chunk*p), make([]T, chunk*p)
	for round := 0; round < rounds; round++ {
		lo := round * chunk
		ns, nr := 0, 0
		for q := 0; q < p; q++ {
			sc[q] = max(0, min(chunk, counts[q]-lo))
			sd[q] = ns
			if sc[q] > 0 {
				copy(sbuf[ns:ns+sc[q]], send[sOff[q]+lo:])
			}
			ns += sc[q]
			rcc[q] = max(0, min(chunk, rcounts[q]-lo))
			rd[q] = nr
			nr += rcc[q]
		}
		if err := alltoallv(c, sbuf[:ns], sc, sd, rbuf[:nr], rcc, rd); err != nil {
			return nil, nil, err
		}
		for q := 0; q < p; q++ {
			if rcc[q] > 0 {
				copy(recv[rOff[q]+lo:rOff[q]+lo+rcc[q]], rbuf[rd[q]:rd[q]+rcc[q]])
			}
		}
	}
	return recv, rcounts, nil
}

// alltoallv moves int64 with AlltoallvI64 and anything else as bytes.
func alltoallv[T elem](c comm.Comm, send []T, sc, sd []int, recv []T, rc, rd []int) error {
	switch s := any(send).(type) {
	case []int64:
		return c.AlltoallvI64(s, sc, sd, any(recv).([]int64), rc, rd)
	case []byte:
		return c.AlltoallvBytes(s, sc, sd, any(recv).([]byte), rc, rd)
	}
	// int32 and float32: as bytes, 4 per element.
	var zero T
	size := int(unsafe.Sizeof(zero))
	scale := func(a []int) []int {
		b := make([]int, len(a))
		for i, x := range a {
			b[i] = x * size
		}
		return b
	}
	return c.AlltoallvBytes(asBytes(send), scale(sc), scale(sd), asBytes(recv), scale(rc), scale(rd))
}

// asBytes views s as bytes.
func asBytes[T elem](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// offsets returns the exclusive prefix sums of counts.
func offsets(counts []int) []int {
	off := make([]int, len(counts)+1)
	for q, n := range counts {
		off[q+1] = off[q] + n
	}
	return off
}
