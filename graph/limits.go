package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/internal/sysmem"
)

// nodeBytes is the least memory one node costs through loading and
// preprocessing (the CSR offsets of the graph and of its symmetrised copy,
// partition owners, labels, split bits), so that a node id or count whose
// graph structure alone cannot fit is refused, naming the line that implies
// it, instead of ending the process in the allocator.
const nodeBytes = 32

// NodeBytes is nodeBytes for readers outside the package (partition/dist
// bounds a rank's share of the nodes by it).
const NodeBytes = nodeBytes

// nodeLimit is the largest node count this process's memory can take.
func nodeLimit() int64 { return min(maxNodeID+1, sysmem.Limit()/nodeBytes) }

// tooManyNodes is the error for a line implying n nodes beyond nodeLimit.
func tooManyNodes(file string, line int64, what string, n int64) error {
	return errorf(file, line, "%s implies %d nodes, whose graph structure alone needs ~%s, more than the %s this process may use",
		what, n, sysmem.GB(n*nodeBytes), sysmem.GB(sysmem.Limit()))
}

// MaxRangeNodeID is the largest node id the range readers (rangeread.go,
// OpenNpzRange) accept: their ids are int64 and the node count (the
// largest id + 1) must fit too. The serial loaders stop at maxNodeID.
const MaxRangeNodeID = math.MaxInt64 - 1

// distHint completes a serial loader's error for a node id or count
// beyond its int32 ids.
const distHint = "graphs this large are read by the distributed partitioner (mpirun -np P supergcn partition ...)"

// idBounds is what a reader accepts as node ids: ids up to maxID, and ids
// below mem, the node count this process's memory can take. The serial
// loaders collect int32 ids up to maxNodeID within nodeLimit; the range
// readers (wide) collect int64 ids up to MaxRangeNodeID, each reader
// holding a share of the nodes, which partition/dist bounds.
type idBounds struct {
	maxID, mem int64
	wide       bool
}

// serialIDs are the bounds of the serial loaders.
func serialIDs() idBounds { return idBounds{maxID: maxNodeID, mem: nodeLimit()} }

// rangeIDs are the bounds of the range readers.
var rangeIDs = idBounds{maxID: MaxRangeNodeID, mem: math.MaxInt64, wide: true}

// outside describes node id x outside [0, limit]; a serial loader's id
// beyond int32 adds where graphs that large are read.
func (b idBounds) outside(x, limit int64) string {
	msg := fmt.Sprintf("node id %d outside [0,%d]", x, limit)
	if !b.wide && x > maxNodeID {
		msg += ": " + distHint
	}
	return msg
}

// tooLarge says why a node count n is beyond b's ids ("" when it fits;
// only the serial loaders' int32 ids can be exceeded).
func (b idBounds) tooLarge(n int64) string {
	if n-1 <= b.maxID {
		return ""
	}
	return "more nodes than the int32 node ids of the serial loaders can number: " + distHint
}

// checkRows refuses a per-node array of more rows than b's node ids or
// memory allow.
func (b idBounds) checkRows(name string, rows int) error {
	if msg := b.tooLarge(int64(rows)); msg != "" {
		return errorf(name, 0, "%d rows: %s", rows, msg)
	}
	if int64(rows) > b.mem {
		return tooManyNodes(name, 0, fmt.Sprintf("%d rows", rows), int64(rows))
	}
	return nil
}

// idList collects node ids: int32 for the serial loaders, int64 for the
// range readers (wide).
type idList struct {
	wide bool
	i32  []int32
	i64  []int64
}

// newIDList returns an empty list with room for n ids.
func newIDList(wide bool, n int) idList {
	if wide {
		return idList{wide: true, i64: make([]int64, 0, n)}
	}
	return idList{i32: make([]int32, 0, n)}
}

// add appends x, which the reader's bounds admitted.
func (l *idList) add(x int64) {
	if l.wide {
		l.i64 = append(l.i64, x)
	} else {
		l.i32 = append(l.i32, int32(x))
	}
}

// reserve makes room for n more ids.
func (l *idList) reserve(n int) {
	if l.wide {
		l.i64 = slices.Grow(l.i64, n)
	} else {
		l.i32 = slices.Grow(l.i32, n)
	}
}

// len returns the number of ids.
func (l *idList) len() int {
	if l.wide {
		return len(l.i64)
	}
	return len(l.i32)
}
