package graph

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseGenSpec(t *testing.T) {
	s, err := ParseGenSpec("")
	if err != nil || s != DefaultSpec {
		t.Fatalf("empty spec = %+v, %v; want DefaultSpec", s, err)
	}
	s, err = ParseGenSpec(" nodes=100000, degree=20,classes=8,feat=64,communities=16,homophily=0.7," +
		"powerlaw=2.2,maxdeg=500,noise=2.5,train=0.1,valid=0.1,test=0.2,seed=9,threads=3,name=x ")
	if err != nil {
		t.Fatal(err)
	}
	want := GenSpec{Name: "x", Model: "sbm", Nodes: 100000, Degree: 20, Classes: 8, Communities: 16, Feat: 64, Homophily: 0.7,
		PowerLaw: 2.2, MaxDegree: 500, Noise: 2.5, Train: 0.1, Valid: 0.1, Test: 0.2, Seed: 9, Threads: 3,
		Hier: DefaultSpec.Hier}
	if s != want {
		t.Fatalf("parsed %+v\nwant   %+v", s, want)
	}
	back, err := ParseGenSpec(s.String())
	want.Threads = DefaultSpec.Threads // String leaves out threads
	if err != nil || back != want {
		t.Fatalf("String round trip: %+v, %v", back, err)
	}
	s, err = ParseGenSpec("sbm-products,seed=7")
	if err != nil || s.Model != "sbm" || s.Nodes != 2449029 || s.Classes != 47 || s.Seed != 7 {
		t.Fatalf("preset: %+v, %v", s, err)
	}
	for _, c := range []struct{ spec, key string }{
		{"nodes=10,colour=red", `"colour"`},
		{"nodes=ten", "nodes"},
		{"degree=1e999", "degree"},
		{"homophily=1.5", "homophily"},
		{"powerlaw=1.5", "powerlaw"},
		{"classes=8,communities=12", "communities"},
		{"nodes=0", "nodes"},
		{"train=0.6,valid=0.3,test=0.3", "test"},
		{"seed=-1", "seed"},
		{"noise=-1", "noise"},
		{"bogus", `"bogus"`},
		{"nodes=100,degree=100", "degree"},
		{"model=tree", "model"},
		{"levels=3", "levels"}, // a model=hier key in an sbm spec
		{"products,homophily=0.5", "homophily"},
		{"products,levels=0", "levels"},
		{"products,levels=9", "levels"},
		{"products,commsize=1", "commsize"},
		{"products,branch=0", "branch"},
		{"products,top=0", "top"},
		{"products,mixing=1.1", "mixing"},
		{"products,mixing=NaN", "mixing"},
		{"products,spread=0", "spread"},
		{"products,inherit=-0.1", "inherit"},
		{"products,labelnoise=2", "labelnoise"},
		{"products,nuisance=-1", "nuisance"},
		{"products,classskew=5", "classskew"},
		{"products,order=sorted", "order"},
		{"nodes=10,sbm", `"sbm"`},
	} {
		_, err := ParseGenSpec(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.key) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseGenSpec(%q) = %v, want a one-line error naming %s", c.spec, err, c.key)
		}
	}
}

// genSmall is a spec of a few blocks, quick to generate.
func genSmall() GenSpec {
	s := DefaultSpec
	s.Nodes, s.Degree, s.Feat = 20000, 10, 16
	return s
}

func TestGenerateDeterministic(t *testing.T) {
	s := genSmall()
	s.Threads = 1
	a, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Threads = 3
	b, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	if d := binEqual(a, b); d != "" {
		t.Fatalf("1 vs 3 threads differ in %s", d)
	}
	s.Seed++
	c, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Graph.Idx, c.Graph.Idx) || slices.Equal(xd(a), xd(c)) || slices.Equal(a.Train, c.Train) {
		t.Fatal("a different seed gave the same graph, features or split")
	}
}

// genCheckGraph checks symmetry, sorted rows without duplicates or
// self-loops, and returns (mean degree, max degree, edge homophily).
func genCheckGraph(t *testing.T, ds *Dataset) (mean float64, maxDeg int64, homophily float64) {
	t.Helper()
	g := ds.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	same := 0
	for v := 0; v < g.NumRows; v++ {
		row := g.Idx[g.Ptr[v]:g.Ptr[v+1]]
		for k, u := range row {
			if int(u) == v {
				t.Fatalf("self-loop at %d", v)
			}
			if k > 0 && u <= row[k-1] {
				t.Fatalf("row %d not strictly increasing: %v", v, row)
			}
			if ds.Labels[u] == ds.Labels[v] {
				same++
			}
		}
		maxDeg = max(maxDeg, int64(len(row)))
	}
	tr := g.Transpose()
	if !slices.Equal(tr.Ptr, g.Ptr) || !slices.Equal(tr.Idx, g.Idx) {
		t.Fatal("graph is not symmetric")
	}
	nnz := float64(g.NNZ())
	return nnz / float64(g.NumRows), maxDeg, float64(same) / nnz
}

// genCheckSplit checks split sizes, order and disjointness.
func genCheckSplit(t *testing.T, ds *Dataset, train, valid, test float64) {
	t.Helper()
	n := ds.NumNodes()
	seen := make([]bool, n)
	for i, part := range [][]int32{ds.Train, ds.Valid, ds.Test} {
		f := []float64{train, valid, test}[i]
		if want := int(f * float64(n)); len(part) != want {
			t.Fatalf("split %d has %d nodes, want %d", i, len(part), want)
		}
		for k, v := range part {
			if seen[v] || (k > 0 && v <= part[k-1]) {
				t.Fatalf("split %d: node %d repeated or out of order", i, v)
			}
			seen[v] = true
		}
	}
}

func TestGenerateProperties(t *testing.T) {
	for _, spec := range []string{
		"nodes=20000,degree=10,homophily=0.8,feat=16",
		"nodes=20000,degree=10,homophily=0.3,feat=16,classes=4,communities=12,seed=5",
		"nodes=20000,degree=6,homophily=0.9,feat=16,classes=5,powerlaw=0",
	} {
		s, err := ParseGenSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		mean, maxDeg, h := genCheckGraph(t, ds)
		t.Logf("%s: mean degree %.2f, max %d, homophily %.3f", spec, mean, maxDeg, h)
		if mean < 0.9*s.Degree || mean > 1.02*s.Degree {
			t.Errorf("%s: mean degree %.2f, spec %g", spec, mean, s.Degree)
		}
		if math.Abs(h-s.Homophily) > 0.03 {
			t.Errorf("%s: edge homophily %.3f, spec %g", spec, h, s.Homophily)
		}
		if s.PowerLaw > 0 && float64(maxDeg) < 10*mean {
			t.Errorf("%s: max degree %d not ≫ mean %.1f", spec, maxDeg, mean)
		}
		if s.PowerLaw == 0 && float64(maxDeg) > 4*mean {
			t.Errorf("%s: max degree %d without power law, mean %.1f", spec, maxDeg, mean)
		}
		genCheckSplit(t, ds, s.Train, s.Valid, s.Test)
		genCheckFeatures(t, ds)
	}
}

// genCheckFeatures checks labels are in range, every class occurs, and
// features have unit variance and class-dependent means: the mean feature
// vectors of two classes differ by much more than sampling error.
func genCheckFeatures(t *testing.T, ds *Dataset) {
	t.Helper()
	dim, c := ds.FeatDim, ds.NumClasses
	if len(xd(ds)) != ds.NumNodes()*dim {
		t.Fatalf("len(X)=%d", len(xd(ds)))
	}
	sum := make([]float64, c*dim)
	cnt := make([]float64, c)
	sq := 0.0
	for v, y := range ds.Labels {
		if y < 0 || int(y) >= c {
			t.Fatalf("label %d of node %d", y, v)
		}
		cnt[y]++
		for j := 0; j < dim; j++ {
			x := float64(xd(ds)[v*dim+j])
			sum[int(y)*dim+j] += x
			sq += x * x
		}
	}
	if v := sq / float64(len(xd(ds))); v < 0.9 || v > 1.1 {
		t.Errorf("feature variance %.3f, want ≈ 1", v)
	}
	for y := 0; y < c; y++ {
		if cnt[y] == 0 {
			t.Fatalf("class %d has no nodes", y)
		}
	}
	dist := 0.0 // squared distance of the mean vectors of classes 0 and 1
	for j := 0; j < dim; j++ {
		d := sum[j]/cnt[0] - sum[dim+j]/cnt[1]
		dist += d * d
	}
	// Sampling noise alone gives about dim·(1/cnt0+1/cnt1) ≈ 0.01.
	if dist < 0.05 {
		t.Errorf("class means too close: squared distance %.4f", dist)
	}
}

func TestGenerateTiny(t *testing.T) {
	for _, spec := range []string{
		"nodes=1,degree=0,classes=1", "nodes=2,degree=1,classes=2", "nodes=5,degree=4,classes=5,homophily=1",
		"nodes=50,degree=3,classes=2,communities=50", "nodes=300,degree=8,feat=0,classes=3,homophily=0",
	} {
		s, err := ParseGenSpec(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		ds, err := Generate(s)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		genCheckGraph(t, ds)
		genCheckSplit(t, ds, s.Train, s.Valid, s.Test)
	}
}

func TestGenerateRejectsBadSpec(t *testing.T) {
	s := DefaultSpec
	s.Homophily = math.NaN()
	if _, err := Generate(s); err == nil || !strings.Contains(err.Error(), "homophily") {
		t.Fatalf("NaN homophily: %v", err)
	}
}

func TestAttachSyntheticFeatures(t *testing.T) {
	// A 60×60 grid, one direction only: regions must still cover it.
	const side = 60
	var src, dst []int32
	for i := 0; i < side; i++ {
		for j := 0; j < side; j++ {
			v := int32(i*side + j)
			if j+1 < side {
				src, dst = append(src, v), append(dst, v+1)
			}
			if i+1 < side {
				src, dst = append(src, v), append(dst, v+side)
			}
		}
	}
	// Plus 10 isolated nodes, each its own component.
	g := FromCOO(side*side+10, side*side+10, src, dst, nil)
	mk := func() *Dataset { return &Dataset{Name: "grid", Graph: g} }
	a := mk()
	if err := AttachSyntheticFeatures(a, 8, 4, 3); err != nil {
		t.Fatal(err)
	}
	b := mk()
	if err := AttachSyntheticFeatures(b, 8, 4, 3); err != nil {
		t.Fatal(err)
	}
	if d := binEqual(a, b); d != "" {
		t.Fatalf("same seed differs in %s", d)
	}
	if a.FeatDim != 8 || a.NumClasses != 4 {
		t.Fatalf("FeatDim %d, NumClasses %d", a.FeatDim, a.NumClasses)
	}
	genCheckFeatures(t, a)
	genCheckSplit(t, a, 0.1, 0.1, 0.8)
	same := 0
	for k, u := range src {
		if a.Labels[u] == a.Labels[dst[k]] {
			same++
		}
	}
	if h := float64(same) / float64(len(src)); h < 0.8 {
		t.Errorf("label homophily on a grid %.3f, want ≥ 0.8", h)
	}
	for _, c := range []struct{ dim, classes int }{{0, 4}, {8, 0}, {8, side*side + 11}} {
		if err := AttachSyntheticFeatures(mk(), c.dim, c.classes, 1); err == nil {
			t.Errorf("dim %d classes %d accepted", c.dim, c.classes)
		}
	}
	if err := AttachSyntheticFeatures(&Dataset{}, 8, 4, 1); err == nil {
		t.Error("dataset without graph accepted")
	}
}

// BenchmarkGenerate1M times Generate at 1M nodes, mean degree 20, 64
// features: go test ./graph -run '^$' -bench Generate1M -benchtime 1x
func BenchmarkGenerate1M(b *testing.B) {
	s, err := ParseGenSpec("nodes=1000000,degree=20,classes=16,feat=64")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		ds, err := Generate(s)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(ds.Graph.NNZ()), "edges")
	}
}

// TestGenerateSBMUnchanged pins model=sbm's output: sbm-products and the
// built-in dataset must stay the graphs earlier measurements used (the
// digests are those of the generator before model=hier existed).
func TestGenerateSBMUnchanged(t *testing.T) {
	for _, c := range []struct {
		spec string
		want uint64
	}{
		{"sbm-products,nodes=3000", 0xcf44b59f6f9cedb7},
		{"nodes=3000", 0x8ad13777db2031a},
	} {
		s, err := ParseGenSpec(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := genDigest(ds); got != c.want {
			t.Errorf("%s: digest %#x, want %#x", c.spec, got, c.want)
		}
	}
}

// genDigest is an FNV-1a hash of a dataset's graph, labels and splits (not
// the features: NormFloat64's logarithm is assembly on some GOARCHes).
func genDigest(ds *Dataset) uint64 {
	h := fnv.New64a()
	for _, x := range []any{ds.Graph.Ptr, ds.Graph.Idx, ds.Labels, ds.Train, ds.Valid, ds.Test} {
		binary.Write(h, binary.LittleEndian, x)
	}
	return h.Sum64()
}
