package partition

import "testing"

// FeatureBytes counts 4 bytes a value dense and the CSR arrays sparse, over
// the consecutive parts of a rank; 0 when the ranks do not divide the parts.
func TestFeatureBytes(t *testing.T) {
	m := &Meta{Parts: 4, FeatDim: 3, Stats: Stats{Parts: []PartStat{
		{Nodes: 10, FeatNNZ: 5}, {Nodes: 20, FeatNNZ: 7}, {Nodes: 30, FeatNNZ: 11}, {Nodes: 40, FeatNNZ: 13}}}}
	for _, c := range []struct {
		rank, ranks int
		want        int64
	}{{0, 2, 4 * 3 * 30}, {1, 2, 4 * 3 * 70}, {3, 4, 4 * 3 * 40}, {0, 3, 0}, {2, 2, 0}} {
		if got := FeatureBytes(m, c.rank, c.ranks); got != c.want {
			t.Errorf("dense FeatureBytes(rank %d of %d) = %d, want %d", c.rank, c.ranks, got, c.want)
		}
	}
	m.SparseFeatures = true
	if got, want := FeatureBytes(m, 1, 2), int64(8*31+8*11+8*41+8*13); got != want {
		t.Errorf("sparse FeatureBytes(rank 1 of 2) = %d, want %d", got, want)
	}
}
