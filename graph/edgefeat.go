package graph

import (
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/internal/field"
)

// EdgeFeatReductions lists the values of LoadOptions.NodeFeatFromEdges.
func EdgeFeatReductions() []string { return []string{"mean", "sum", "max"} }

// checkEdgeFeatReduction checks LoadOptions.NodeFeatFromEdges ("" = off).
func checkEdgeFeatReduction(r string) error {
	if r != "" && !slices.Contains(EdgeFeatReductions(), r) {
		return field.Errorf("graph.LoadOptions.NodeFeatFromEdges", "%q is not %s", r, strings.Join(EdgeFeatReductions(), ", "))
	}
	return nil
}

// foldOGBEdgeFeatures reads raw/edge-feat.csv[.gz] (one row of F values
// per line of edge.csv) and appends to ds's node features the reduction
// (mean, sum or max) of the features of each node's edges, an edge
// counting for both its endpoints (OGB's add_inverse_edge, as ogbn-proteins'
// examples aggregate them); a node without edges gets zeros.
func foldOGBEdgeFeatures(ds *Dataset, raw, reduce string, src, dst []int32) error {
	path := findData(raw, "edge-feat", false)
	if path == "" {
		path = findData(raw, "edge_feat", false)
	}
	if path == "" {
		return field.Errorf("graph.LoadOptions.NodeFeatFromEdges", "%s has no edge-feat.csv[.gz] to fold into node features", filepath.Dir(raw))
	}
	ef, f, err := readFeatureCSV(path, len(src))
	if err != nil {
		return err
	}
	if rows := len(ef) / max(f, 1); rows != len(src) {
		return errorf(path, 0, "has %d rows of edge features for %d edges", rows, len(src))
	}
	n := ds.Graph.NumRows
	acc := make([]float64, n*f)
	if reduce == "max" {
		for i := range acc {
			acc[i] = math.Inf(-1)
		}
	}
	deg := make([]int64, n)
	for k := range src {
		row := ef[k*f : (k+1)*f]
		for _, v := range []int32{src[k], dst[k]} {
			deg[v]++
			a := acc[int(v)*f : (int(v)+1)*f]
			for j, x := range row {
				if reduce == "max" {
					a[j] = math.Max(a[j], float64(x))
				} else {
					a[j] += float64(x)
				}
			}
		}
	}
	appendFeatures(ds, n, f, func(v, j int) float32 {
		a := acc[v*f+j]
		switch {
		case deg[v] == 0:
			return 0
		case reduce == "mean":
			return float32(a / float64(deg[v]))
		}
		return float32(a)
	})
	return nil
}

// appendFeatures widens ds's n feature rows by f columns of value(v, j).
func appendFeatures(ds *Dataset, n, f int, value func(v, j int) float32) {
	old := ds.FeatDim
	x := make([]float32, n*(old+f))
	for v := range n {
		row := x[v*(old+f) : (v+1)*(old+f)]
		if old > 0 {
			copy(row[:old], ds.Features.Row(v, row[:old]))
		}
		for j := range f {
			row[old+j] = value(v, j)
		}
	}
	ds.Features, ds.FeatDim = DenseX(x, n, old+f), old+f
}

// errNotOGBEdgeFeat: edge features are read from an OGB directory only.
func errNotOGBEdgeFeat(format string) error {
	return field.Errorf("graph.LoadOptions.NodeFeatFromEdges", "reads an OGB directory's raw/edge-feat.csv; the %s format has no edge features", format)
}
