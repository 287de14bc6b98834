package nn

import (
	"math/rand/v2"
	"testing"
)

// TestPCGMatchesRand: pcg yields math/rand/v2's PCG words for the same
// seeds, through Uint64 and through drawRow (from every start offset).
func TestPCGMatchesRand(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		s1, s2 := r.Uint64(), r.Uint64()
		want, got := rand.NewPCG(s1, s2), &pcg{hi: s1, lo: s2}
		for i := range 1000 {
			if w, g := want.Uint64(), got.Uint64(); w != g {
				t.Fatalf("seeds %#x, %#x: word %d = %#x, rand.PCG %#x", s1, s2, i, g, w)
			}
		}
		for k := range uint(4) {
			for _, n := range []int{0, 1, 3, 4, 5, 17, 256} {
				want, got := rand.NewPCG(s1, s2), &pcg{hi: s1, lo: s2}
				cur := want.Uint64()
				got.Uint64()
				u := make([]uint16, n+3)
				last := drawRow(u, n, k, got, cur)
				for j := range n {
					if (k+uint(j))&3 == 0 {
						cur = want.Uint64()
					}
					if w := uint16(cur >> (16 * ((k + uint(j)) & 3))); u[j] != w {
						t.Fatalf("k=%d n=%d: u[%d] = %#x, want %#x", k, n, j, u[j], w)
					}
				}
				if last != cur || got.Uint64() != want.Uint64() {
					t.Fatalf("k=%d n=%d: drawRow left the stream at another word", k, n)
				}
			}
		}
	}
}
