package partition

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/graph"
)

// randomDataset builds a directed graph of n nodes with about deg in-edges
// per node (duplicates and self loops included), features, labels and a
// split. With sorted, rows are sorted by source.
func randomDataset(n, deg, featDim int, seed uint64, sorted bool) *graph.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	var src, dst []int32
	for v := 0; v < n; v++ {
		d := rng.IntN(2*deg + 1)
		for range d {
			u := int32(rng.IntN(n))
			if rng.IntN(3) > 0 { // some locality, so METIS has something to find
				u = int32((v + rng.IntN(9) - 4 + n) % n)
			}
			src = append(src, u)
			dst = append(dst, int32(v))
		}
	}
	g := graph.FromCOO(n, n, src, dst, nil)
	if sorted {
		g.SortRows()
	}
	ds := &graph.Dataset{Name: fmt.Sprintf("random-%d", n), Graph: g, FeatDim: featDim,
		Features: graph.DenseX(make([]float32, n*featDim), n, featDim), Labels: make([]int32, n), NumClasses: 5}
	for i := range graph.DenseData(ds.Features) {
		graph.DenseData(ds.Features)[i] = rng.Float32()
	}
	for v := 0; v < n; v++ {
		ds.Labels[v] = int32(rng.IntN(6)) - 1
		switch rng.IntN(5) {
		case 0:
			ds.Train = append(ds.Train, int32(v))
		case 1:
			ds.Valid = append(ds.Valid, int32(v))
		case 2:
			ds.Test = append(ds.Test, int32(v))
		}
	}
	return ds
}

// shardEqual reports the first difference between two shards (nil and
// empty slices are equal); with rowsAsSets, edge order within rows is ignored.
func shardEqual(a, b *Shard, rowsAsSets bool) error {
	if a.Rank != b.Rank || a.Ranks != b.Ranks || a.NumGlobalNodes != b.NumGlobalNodes ||
		a.FeatDim != b.FeatDim || a.NumClasses != b.NumClasses {
		return fmt.Errorf("header: %d/%d %d nodes %d feat %d classes vs %d/%d %d %d %d",
			a.Rank, a.Ranks, a.NumGlobalNodes, a.FeatDim, a.NumClasses, b.Rank, b.Ranks, b.NumGlobalNodes, b.FeatDim, b.NumClasses)
	}
	switch {
	case !slices.Equal(a.Global, b.Global):
		return fmt.Errorf("global ids differ")
	case !slices.Equal(graph.DenseData(a.Features), graph.DenseData(b.Features)):
		return fmt.Errorf("features differ")
	case (graph.SparseMatrix(a.Features) == nil) != (graph.SparseMatrix(b.Features) == nil) || (graph.SparseMatrix(a.Features) != nil && (!slices.Equal(graph.SparseMatrix(a.Features).Ptr, graph.SparseMatrix(b.Features).Ptr) || !slices.Equal(graph.SparseMatrix(a.Features).Idx, graph.SparseMatrix(b.Features).Idx) || !slices.Equal(graph.SparseMatrix(a.Features).Val, graph.SparseMatrix(b.Features).Val))):
		return fmt.Errorf("sparse features differ")
	case (a.Labels == nil) != (b.Labels == nil) || !slices.Equal(a.Labels, b.Labels):
		return fmt.Errorf("labels differ")
	case !slices.Equal(a.Split, b.Split):
		return fmt.Errorf("split differs")
	case a.Local.NumRows != b.Local.NumRows || a.Local.NumCols != b.Local.NumCols || !slices.Equal(a.Local.Ptr, b.Local.Ptr):
		return fmt.Errorf("local shape/ptr differ")
	case !slices.Equal(a.Remote.Ptr, b.Remote.Ptr):
		return fmt.Errorf("remote ptr differs")
	}
	if a.Weighted() != b.Weighted() || (a.Remote.Val == nil) != (b.Remote.Val == nil) {
		return fmt.Errorf("weighted %v vs %v", a.Weighted(), b.Weighted())
	}
	type le struct {
		u int32
		w float32
	}
	type re struct {
		src int64
		own int32
		w   float32
	}
	for v := 0; v < len(a.Global); v++ {
		var la, lb []le
		for k := a.Local.Ptr[v]; k < a.Local.Ptr[v+1]; k++ {
			la = append(la, le{a.Local.Idx[k], weightAt(a.Local.Val, k)})
			lb = append(lb, le{b.Local.Idx[k], weightAt(b.Local.Val, k)})
		}
		var ra, rb []re
		for k := a.Remote.Ptr[v]; k < a.Remote.Ptr[v+1]; k++ {
			ra = append(ra, re{a.Remote.Src[k], a.Remote.Owner[k], weightAt(a.Remote.Val, k)})
			rb = append(rb, re{b.Remote.Src[k], b.Remote.Owner[k], weightAt(b.Remote.Val, k)})
		}
		if rowsAsSets {
			lcmp := func(x, y le) int {
				if x.u != y.u {
					return int(x.u - y.u)
				}
				return cmp.Compare(x.w, y.w)
			}
			slices.SortFunc(la, lcmp)
			slices.SortFunc(lb, lcmp)
			rcmp := func(x, y re) int {
				if x.src != y.src {
					return int(x.src - y.src)
				}
				if x.own != y.own {
					return int(x.own - y.own)
				}
				return cmp.Compare(x.w, y.w)
			}
			slices.SortFunc(ra, rcmp)
			slices.SortFunc(rb, rcmp)
		}
		if !slices.Equal(la, lb) {
			return fmt.Errorf("local row %d: %v vs %v", v, la, lb)
		}
		if !slices.Equal(ra, rb) {
			return fmt.Errorf("remote row %d: %v vs %v", v, ra, rb)
		}
	}
	return nil
}

// weightAt is val[k], or 1 for nil val.
func weightAt(val []float32, k int64) float32 {
	if val == nil {
		return 1
	}
	return val[k]
}

// withWeights gives ds's graph distinct positive weights (seeded).
func withWeights(ds *graph.Dataset, seed uint64) *graph.Dataset {
	rng := rand.New(rand.NewPCG(seed, 3))
	g := *ds.Graph
	g.Val = make([]float32, len(g.Idx))
	for k := range g.Val {
		g.Val[k] = 0.25 + rng.Float32()
	}
	out := *ds
	out.Graph = &g
	return &out
}

func divide(owner []int32, k int32) []int32 {
	out := make([]int32, len(owner))
	for i, p := range owner {
		out[i] = p / k
	}
	return out
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
