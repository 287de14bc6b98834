package partition

import (
	"fmt"

	"github.com/supergcn/supergcn/graph"
)

// CheckSquare rejects adjacencies that cannot be partitioned: nil, not
// square, or with a row-offset array of the wrong length.
func CheckSquare(g *graph.CSR) error {
	if g == nil {
		return fmt.Errorf("partition: nil graph")
	}
	if g.NumRows != g.NumCols {
		return fmt.Errorf("partition: adjacency is %d×%d, want square", g.NumRows, g.NumCols)
	}
	if len(g.Ptr) != g.NumRows+1 {
		return fmt.Errorf("partition: adjacency has len(Ptr)=%d, want %d", len(g.Ptr), g.NumRows+1)
	}
	return nil
}
