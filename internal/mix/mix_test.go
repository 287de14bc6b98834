package mix

import "testing"

// The finaliser's published values (SplitMix64 from state 0: the first
// output is Mix64(0x9e3779b97f4a7c15)) and injectivity on a range.
func TestMix64(t *testing.T) {
	if got := Mix64(0x9e3779b97f4a7c15); got != 0xe220a8397b1dcdaf {
		t.Errorf("Mix64(golden) = %#x, want 0xe220a8397b1dcdaf", got)
	}
	seen := map[uint64]bool{}
	for x := uint64(0); x < 1<<16; x++ {
		h := Mix64(x)
		if seen[h] {
			t.Fatalf("Mix64 not injective at %d", x)
		}
		seen[h] = true
	}
}
