//go:build cgo

package metis

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
)

// TestOnRank0: every rank of a goroutine group gets rank 0's METIS owners,
// and rank 0's error reaches every rank.
func TestOnRank0(t *testing.T) {
	g := cliqueRing(6, 8)
	want, err := Metis(g, 3, Options{Weights: WeightsDegree, Seed: 2})
	mustNoErr(t, err)
	for _, parts := range []int{3, 0} {
		cs := comm.NewGroup(4)
		got := make([][]int32, len(cs))
		errs := make([]error, len(cs))
		var wg sync.WaitGroup
		for r, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[r], errs[r] = OnRank0(c, g, parts, Options{Weights: WeightsDegree, Seed: 2})
			}()
		}
		wg.Wait()
		for r := range cs {
			if parts == 3 && (errs[r] != nil || !slices.Equal(got[r], want)) {
				t.Fatalf("rank %d: %v, owners differ from Metis: %v", r, errs[r], got[r])
			}
			if parts == 0 && (errs[r] == nil || !strings.Contains(errs[r].Error(), "METIS on rank 0: partition: metis: 0 parts")) {
				t.Fatalf("rank %d with 0 parts: %v", r, errs[r])
			}
		}
	}
}
