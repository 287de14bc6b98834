package train

import (
	"testing"

	"github.com/supergcn/supergcn/internal/mix"
)

// Edges of 32-bit ids hash as checkpoints have always recorded them; edges
// with a larger id do not fold onto each other (packed into one word,
// dst=1 ← 2^32 and dst=0 ← 2^32 were the same).
func TestEdgeHashWideIDs(t *testing.T) {
	if got, want := edgeHash(7, 1<<32-1), mix.Mix64(7<<32|(1<<32-1)); got != want {
		t.Fatalf("edgeHash(7, 2^32-1) = %#x, want the packed form %#x", got, want)
	}
	seen := map[uint64][2]int64{}
	for _, d := range []int64{0, 1, 2, 1 << 32, 1<<32 + 1, 1 << 40, 1<<62 + 3} {
		for _, s := range []int64{0, 1, 1 << 32, 1<<32 + 1, 1 << 33, 1 << 40, 1<<62 + 3} {
			h := edgeHash(d, s)
			if e, ok := seen[h]; ok {
				t.Fatalf("edges %d←%d and %d←%d hash alike", d, s, e[0], e[1])
			}
			seen[h] = [2]int64{d, s}
		}
	}
}
