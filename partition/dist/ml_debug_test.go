package dist

import (
	"os"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition/metis"
)

func TestMLDebug(t *testing.T) {
	path := os.Getenv("MLDBG")
	if path == "" {
		t.Skip()
	}
	gatherOwners(t, path, 4, func(c comm.Comm, g *Graph) ([]int32, error) {
		o := MultilevelOptions{Seed: 1, Initial: metis.PartWeighted}
		if c.Rank() == 0 {
			o.Log = os.Stderr
		}
		return Multilevel(c, g, 16, o)
	})
}
