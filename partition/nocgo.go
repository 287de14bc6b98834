//go:build !cgo

package partition

import (
	"errors"

	"github.com/supergcn/supergcn/graph"
)

// errNoCgo is returned by the METIS and ParMETIS entry points of a build
// without cgo (e.g. a cross-compiled numeric-only build): the partitioners
// are C libraries. Random partitioning and partition directories work.
var errNoCgo = errors.New("partition: built without cgo: METIS and ParMETIS are not available (use --method random, or build with CGO_ENABLED=1)")

// Metis is unavailable without cgo.
func Metis(g *graph.CSR, parts int, o Options) ([]int32, error) { return nil, errNoCgo }

// ParMetisDistributed is unavailable without cgo.
func ParMetisDistributed(fcomm int, vtxdist []int32, localPtr []int32, localAdj []int32,
	vwgt []int32, ncon int, parts int, o Options) ([]int32, error) {
	return nil, errNoCgo
}

// ParMetis is unavailable without cgo.
func ParMetis(fcomm int, rank, size int, g *graph.CSR, parts int, o Options) ([]int32, error) {
	return nil, errNoCgo
}

// MetisVersion: no METIS in a build without cgo.
func MetisVersion() string { return "unavailable (built without cgo)" }

// ScotchVersion: no PT-Scotch in a build without cgo.
func ScotchVersion() string { return "unavailable (built without cgo)" }
