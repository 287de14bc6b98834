//go:build !cgo

package metis

import (
	"errors"
	"math"

	"github.com/supergcn/supergcn/graph"
)

// ErrNoCgo is returned by the METIS and ParMETIS entry points of a build
// without cgo (e.g. a cross-compiled numeric-only build): the partitioners
// are C libraries. Random partitioning (package partition) works.
var ErrNoCgo = errors.New("partition: built without cgo: METIS and ParMETIS are not available (random partitioning is; or build with CGO_ENABLED=1)")

// Metis is unavailable without cgo.
func Metis(g *graph.CSR, parts int, o Options) ([]int32, error) { return nil, ErrNoCgo }

// ParMetisDistributed is unavailable without cgo.
func ParMetisDistributed(fcomm int, vtxdist []int32, localPtr []int32, localAdj []int32,
	vwgt []int32, ncon int, parts int, o Options) ([]int32, error) {
	return nil, ErrNoCgo
}

// ParMetis is unavailable without cgo.
func ParMetis(fcomm int, rank, size int, g *graph.CSR, parts int, o Options) ([]int32, error) {
	return nil, ErrNoCgo
}

// MetisVersion: no METIS in a build without cgo.
func MetisVersion() string { return "unavailable (built without cgo)" }

// ParMetisLibrary: no ParMETIS API in a build without cgo.
func ParMetisLibrary() string { return "unavailable (built without cgo)" }

// MaxArcs: the bound of the cgo build (32-bit SCOTCH_Num).
const MaxArcs = math.MaxInt32

// Linked reports whether this build has METIS (not without cgo).
const Linked = false

// PartWeighted is unavailable without cgo.
func PartWeighted(xadj, adjncy, adjwgt, vwgt []int32, ncon, parts int, imbalance float64, seed int) ([]int32, error) {
	return nil, ErrNoCgo
}
