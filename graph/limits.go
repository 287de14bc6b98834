package graph

import "github.com/supergcn/supergcn/internal/sysmem"

// nodeBytes is the least memory one node costs through loading and
// preprocessing (the CSR offsets of the graph and of its symmetrised copy,
// partition owners, labels, split bits), so that a node id or count whose
// graph structure alone cannot fit is refused, naming the line that implies
// it, instead of ending the process in the allocator.
const nodeBytes = 32

// nodeLimit is the largest node count this process's memory can take.
func nodeLimit() int64 { return min(maxNodeID+1, sysmem.Limit()/nodeBytes) }

// tooManyNodes is the error for a line implying n nodes beyond nodeLimit.
func tooManyNodes(file string, line int64, what string, n int64) error {
	return errorf(file, line, "%s implies %d nodes, whose graph structure alone needs ~%s, more than the %s this process may use",
		what, n, sysmem.GB(n*nodeBytes), sysmem.GB(sysmem.Limit()))
}
