package graph

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// genHierSpec parses a model=hier spec or fails the test.
func genHierSpec(t *testing.T, text string) GenSpec {
	t.Helper()
	s, err := ParseGenSpec(text)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "hier" {
		t.Fatalf("%s: model %q", text, s.Model)
	}
	return s
}

func genMust(t *testing.T, s GenSpec) *Dataset {
	t.Helper()
	ds, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestGenHierDeterministic(t *testing.T) {
	for _, order := range []string{"shuffled", "local"} {
		s := genHierSpec(t, "products,nodes=20000,feat=8,order="+order)
		s.Threads = 1
		a := genMust(t, s)
		s.Threads = 4
		b := genMust(t, s)
		if d := binEqual(a, b); d != "" {
			t.Fatalf("order=%s: 1 vs 4 threads differ in %s", order, d)
		}
		s.Seed++
		c := genMust(t, s)
		if slices.Equal(a.Graph.Idx, c.Graph.Idx) || slices.Equal(xd(a), xd(c)) || slices.Equal(a.Labels, c.Labels) {
			t.Fatalf("order=%s: a different seed gave the same graph, features or labels", order)
		}
	}
}

// TestGenHierOrder checks order=shuffled is order=local renumbered by
// genPermutation: the same graph and labels, only the ids differ.
func TestGenHierOrder(t *testing.T) {
	loc := genMust(t, genHierSpec(t, "products,nodes=15000,feat=0,order=local"))
	spec := genHierSpec(t, "products,nodes=15000,feat=0")
	shuf := genMust(t, spec)
	perm := genPermutation(spec.Nodes, spec.Seed)
	if slices.Equal(loc.Graph.Idx, shuf.Graph.Idx) {
		t.Fatal("shuffled ids equal local ids")
	}
	for v := range loc.Graph.NumRows {
		row := loc.Graph.Idx[loc.Graph.Ptr[v]:loc.Graph.Ptr[v+1]]
		want := make([]int32, len(row))
		for i, u := range row {
			want[i] = perm[u]
		}
		slices.Sort(want)
		p := perm[v]
		if got := shuf.Graph.Idx[shuf.Graph.Ptr[p]:shuf.Graph.Ptr[p+1]]; !slices.Equal(got, want) {
			t.Fatalf("row of local node %d (id %d) differs", v, p)
		}
		if loc.Labels[v] != shuf.Labels[p] {
			t.Fatalf("label of local node %d differs", v)
		}
	}
}

// genHierStats measures, on an order=local graph of spec, the fraction of
// arcs inside the communities of level levels-2 and of the top level, and
// the cut fraction of 16 equal id ranges (a fixed partitioning that follows
// the structure).
func genHierStats(t *testing.T, text string) (mid, top, cut16 float64) {
	t.Helper()
	s := genHierSpec(t, text+",order=local")
	ds := genMust(t, s)
	m := &genHier{spec: s}
	m.communities()
	g := ds.Graph
	n := int64(g.NumRows)
	L := s.Levels
	var inMid, inTop, cut int64
	for v := int32(0); v < int32(g.NumRows); v++ {
		r, _ := m.ranges(v)
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			if u >= r.lo[L-2] && u < r.hi[L-2] {
				inMid++
			}
			if u >= r.lo[L-1] && u < r.hi[L-1] {
				inTop++
			}
			if int64(u)*16/n != int64(v)*16/n {
				cut++
			}
		}
	}
	nnz := float64(g.NNZ())
	return float64(inMid) / nnz, float64(inTop) / nnz, float64(cut) / nnz
}

// TestGenHierScale checks the structure does not change with the size:
// intra-community fractions above level 0 and the cut of 16 id ranges
// agree within a band at 40k and 160k nodes.
func TestGenHierScale(t *testing.T) {
	base := "products,feat=0"
	m1, t1, c1 := genHierStats(t, base+",nodes=40000")
	m2, t2, c2 := genHierStats(t, base+",nodes=160000")
	t.Logf("40k: mid %.3f top %.3f cut16 %.3f; 160k: mid %.3f top %.3f cut16 %.3f", m1, t1, c1, m2, t2, c2)
	for _, c := range []struct {
		what   string
		a, b   float64
		lo, hi float64
	}{
		{"fraction inside level levels-2", m1, m2, 0.5, 0.95},
		{"fraction inside the top level", t1, t2, 0.8, 1},
		{"cut of 16 id ranges", c1, c2, 0.03, 0.3},
	} {
		if c.a < c.lo || c.a > c.hi || c.b < c.lo || c.b > c.hi || math.Abs(c.a-c.b) > 0.04 {
			t.Errorf("%s: %.3f at 40k, %.3f at 160k; want both in [%g,%g], within 0.04", c.what, c.a, c.b, c.lo, c.hi)
		}
	}
}

func TestGenHierProperties(t *testing.T) {
	for _, spec := range []string{
		"products,nodes=30000",
		"reddit,nodes=20000,degree=100,feat=16",
		"papers,nodes=30000,feat=16,train=0.1,valid=0.1,test=0.1",
		"model=hier,nodes=5000,degree=10,classes=5,levels=1,powerlaw=0,feat=16,order=local",
	} {
		s := genHierSpec(t, spec)
		ds := genMust(t, s)
		mean, maxDeg, h := genCheckGraph(t, ds)
		t.Logf("%s: mean degree %.2f, max %d, label homophily %.3f", spec, mean, maxDeg, h)
		if mean < 0.75*s.Degree || mean > 1.02*s.Degree {
			t.Errorf("%s: mean degree %.2f, spec %g", spec, mean, s.Degree)
		}
		if s.PowerLaw > 0 && float64(maxDeg) < 8*mean {
			t.Errorf("%s: max degree %d not ≫ mean %.1f", spec, maxDeg, mean)
		}
		if h < 0.3 || h > 0.95 {
			t.Errorf("%s: label homophily %.3f: labels should follow the communities, with noise", spec, h)
		}
		genCheckSplit(t, ds, s.Train, s.Valid, s.Test)
		genCheckFeatures(t, ds)
		if acc := genCentroidAccuracy(ds); s.Feat >= 100 && (acc < 2.0/float64(s.Classes) || acc > 0.9) {
			t.Errorf("%s: nearest class centroid on the features alone: %.3f test accuracy", spec, acc)
		}
	}
}

// genCentroidAccuracy classifies the test nodes by the nearest mean
// feature vector of the training nodes of each class.
func genCentroidAccuracy(ds *Dataset) float64 {
	dim, c := ds.FeatDim, ds.NumClasses
	sum := make([]float64, c*dim)
	cnt := make([]float64, c)
	for _, v := range ds.Train {
		y := int(ds.Labels[v])
		cnt[y]++
		for j := 0; j < dim; j++ {
			sum[y*dim+j] += float64(xd(ds)[int(v)*dim+j])
		}
	}
	right := 0
	for _, v := range ds.Test {
		best, arg := math.Inf(1), -1
		for y := 0; y < c; y++ {
			if cnt[y] == 0 {
				continue
			}
			d := 0.0
			for j := 0; j < dim; j++ {
				e := float64(xd(ds)[int(v)*dim+j]) - sum[y*dim+j]/cnt[y]
				d += e * e
			}
			if d < best {
				best, arg = d, y
			}
		}
		if arg == int(ds.Labels[v]) {
			right++
		}
	}
	return float64(right) / float64(len(ds.Test))
}

func TestGenHierTiny(t *testing.T) {
	for _, spec := range []string{
		"model=hier,nodes=1,degree=0,classes=1", "model=hier,nodes=2,degree=1,classes=2",
		"model=hier,nodes=7,degree=4,classes=3,commsize=2,top=7", "model=hier,nodes=300,degree=8,feat=0,levels=8,commsize=2",
		"model=hier,nodes=1000,degree=20,mixing=1,top=1", "model=hier,nodes=1000,degree=20,mixing=0,levels=2,top=1000",
	} {
		s := genHierSpec(t, spec)
		ds := genMust(t, s)
		genCheckGraph(t, ds)
		genCheckSplit(t, ds, s.Train, s.Valid, s.Test)
	}
}

func TestGenSpecHelpAndRoundTrip(t *testing.T) {
	help := GenSpecHelp()
	for _, p := range genPresets {
		if !strings.Contains(help, "\n  "+p.name+" ") && !strings.HasPrefix(help, "  "+p.name+" ") {
			t.Errorf("preset %s missing from GenSpecHelp", p.name)
		}
		if _, err := ParseGenSpec(p.name); err != nil {
			t.Errorf("preset %s: %v", p.name, err)
		}
	}
	for _, k := range genKeys {
		if !strings.Contains(help, "  "+k.name+" ") {
			t.Errorf("key %s missing from GenSpecHelp", k.name)
		}
	}
	for _, text := range []string{"products,nodes=1000,order=local,mixing=0.2", "reddit", "papers,nodes=5000", "sbm-products", ""} {
		s, err := ParseGenSpec(text)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseGenSpec(s.String())
		if err != nil || back != s {
			t.Errorf("%q: String round trip: %+v, %v", text, back, err)
		}
	}
}

func TestDegrees(t *testing.T) {
	// A star of 1+100 nodes plus 9 isolated ones (both directions stored).
	var src, dst []int32
	for v := int32(1); v <= 100; v++ {
		src, dst = append(src, 0, v), append(dst, v, 0)
	}
	s := Degrees(FromCOO(110, 110, src, dst, nil))
	if s.Max != 100 || s.Median != 1 || s.Isolated != 9 || math.Abs(s.Mean-200.0/110) > 1e-12 {
		t.Fatalf("star: %+v", s)
	}
	if !strings.HasPrefix(s.String(), "degrees: mean 1.82, median 1,") {
		t.Fatalf("String: %s", s)
	}
	// Pareto degrees with exponent 2.5 estimate close to 2.5.
	ds := genMust(t, genHierSpec(t, "model=hier,nodes=200000,degree=6,feat=0,powerlaw=2.5,levels=1,commsize=100000,mixing=1,maxdeg=100000"))
	if tail := Degrees(ds.Graph).Tail; tail < 2.2 || tail > 2.9 {
		t.Errorf("tail exponent %.2f of a powerlaw=2.5 graph", tail)
	}
}
