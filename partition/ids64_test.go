package partition

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// NodeRanges64 splits counts up to math.MaxInt64 without overflow, as
// NodeRanges does below 2^31.
func TestNodeRanges64(t *testing.T) {
	for _, n := range []int64{0, 1, 7, 1000, math.MaxInt32} {
		for _, size := range []int{1, 3, 8} {
			want := NodeRanges(int(n), size)
			for r, x := range NodeRanges64(n, size) {
				if x != int64(want[r]) {
					t.Fatalf("n=%d size=%d: vtxdist[%d] = %d, want %d", n, size, r, x, want[r])
				}
			}
		}
	}
	for _, n := range []int64{3_000_000_000, 1 << 40, math.MaxInt64} {
		vd := NodeRanges64(n, 7)
		if vd[0] != 0 || vd[7] != n || !slices.IsSorted(vd) {
			t.Fatalf("n=%d: %v", n, vd)
		}
		for r := 0; r < 7; r++ {
			if d := vd[r+1] - vd[r]; d < n/7 || d > n/7+1 {
				t.Fatalf("n=%d: rank %d gets %d nodes", n, r, d)
			}
		}
	}
}

// A directory of a graph past 2^31 nodes passes ReadMeta; a part past the
// int32 local ids of a part file does not.
func TestReadMetaBeyondInt32(t *testing.T) {
	ds := randomDataset(150, 4, 2, 8, true)
	dir, _ := writeRandom(t, ds, 2)
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	m.NumNodes = 3_000_000_000
	mustNoErr(t, WriteMeta(dir, m))
	got, err := ReadMeta(dir)
	if err != nil || got.NumNodes != 3_000_000_000 {
		t.Fatalf("ReadMeta: %+v, %v", got, err)
	}
	m.Stats.Parts[1].Nodes = 3_000_000_000
	mustNoErr(t, WriteMeta(dir, m))
	if _, err := ReadMeta(dir); err == nil || !strings.Contains(err.Error(), "part 1 has 3000000000 nodes") {
		t.Fatalf("a part of 3e9 nodes: %v", err)
	}
}
