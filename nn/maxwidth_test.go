package nn

import (
	"testing"

	"github.com/supergcn/supergcn/graph"
)

// TestMaxWidthMatchesGraph: graph refuses a feature array wider than
// graph.MaxFeatDim when it opens it, which must be the widest input a
// model takes.
func TestMaxWidthMatchesGraph(t *testing.T) {
	if graph.MaxFeatDim != MaxWidth {
		t.Errorf("graph.MaxFeatDim %d, nn.MaxWidth %d", graph.MaxFeatDim, MaxWidth)
	}
}
