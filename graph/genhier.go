package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/supergcn/supergcn/internal/sysmem"
)

// model=hier: nested communities at several scales.
//
// Structure. Nodes are first laid out in a local order in which every
// community of every level is a contiguous range. The top level (level
// levels-1) splits the nodes into `top` communities; each community of
// level l+1 splits into communities of level l of mean size
// nodes/(top·branch^(levels-1-l)) for l ≥ 1 (at least the size of level
// l-1) and commsize for level 0. Sizes within a split are lognormal (σ
// 0.5), so communities are unequal. Above level 0, sizes follow nodes, so a
// partition into p parts meets the same structure at any size; level 0
// keeps its size, so small graphs still have many small communities.
//
// Edges. Every node v has a Pareto degree weight θ_v (exponent powerlaw,
// capped by maxdeg) and starts ≈ degree/2·θ_v/mean θ edges. Each edge's far
// end is drawn, ∝ θ, from the whole graph with probability mixing, else
// from v's community at level l with probability ∝ spread^l. Two
// corrections keep a small community from being swamped by a hub: a node
// whose expected edges at a level exceed a quarter of that community's size
// sends them one level up, and within a community a node's weight is capped
// so that it receives at most about as many. Both directions are
// stored; duplicates merge.
//
// Labels. The top communities draw a class from the prior ∝ 1/(k+1)^
// classskew; every child community keeps its parent's class with
// probability inherit, else draws afresh; a node takes the class of its
// smallest community, redrawn from the prior with probability labelnoise.
//
// Features. x_v = (μ_y + nuisance·o_c + noise·N(0,1)) / √(1+nuisance²+
// noise²) per entry: μ_y the class mean, o_c a random offset shared by the
// smallest community c of v (entries N(0,1)), so features carry the class
// weakly and the community strongly.
//
// Node ids. order=local keeps the local order (ids carry the community
// structure, as ids do in crawled or sorted real datasets); order=shuffled
// (the presets' default) numbers the nodes by a random permutation, so no
// method gains from the id order.

// Further phases of generation (after gen.go's).
const (
	genPhaseHier     = iota + 16 // community splits, per level
	genPhaseClasses              // community classes, per level
	genPhaseNodeY                // node labels
	genPhaseNuisance             // community feature offsets
	genPhaseOrder                // id permutation
)

// genLognormalSigma is the spread of community sizes within a split.
const genLognormalSigma = 0.5

// genHubShare bounds, as a fraction of a community's size, the edge ends a
// node sends into it and receives from it (the rest go a level up).
const genHubShare = 0.25

// genHier is the sampled structure, in local order.
type genHier struct {
	spec   GenSpec
	starts [][]int32 // starts[l]: first node of every level-l community, then nodes
	parent [][]int32 // parent[l][c]: the level-(l+1) community holding level-l community c
	share  []float64 // share of level l among the community edge ends (sums to 1)
	prior  []float64 // cumulative class prior
	theta  []float64 // degree weight of every node
	prefix []float64 // prefix sums of theta (len nodes+1)
	meanTh float64   // mean θ
	scale  float64   // edges started per unit of θ
	off    []int64   // node v starts edges off[v]..off[v+1]-1
	perm   []int32   // local position → node id; nil for order=local
}

// generateHier builds a model=hier dataset: see the comment above.
func generateHier(s GenSpec) (*Dataset, error) {
	n := int64(s.Nodes)
	arcs := int64(s.Degree * float64(s.Nodes))
	// CSR (Ptr and its cursor, Idx), θ and its prefix sums, stubs, the
	// permutation, labels, features.
	need := n*(8*5+4*2+4*int64(s.Feat)) + arcs*4
	if err := sysmem.Check(need, fmt.Sprintf("spec: %d nodes of degree %g with %d features", s.Nodes, s.Degree, s.Feat)); err != nil {
		return nil, err
	}
	m := &genHier{spec: s}
	m.communities()
	m.weights()
	if s.Order == "shuffled" {
		m.perm = genPermutation(s.Nodes, s.Seed)
	}
	g := m.edges()
	m.theta, m.prefix, m.off = nil, nil, nil // free before the features
	labels, leafOf := m.labels()
	ds := &Dataset{Name: s.Name, Graph: g, FeatDim: s.Feat, Labels: labels, NumClasses: s.Classes}
	ds.Features = DenseX(genHierFeatures(labels, leafOf, len(m.starts[0])-1, s), s.Nodes, s.Feat)
	if ds.Name == "" {
		ds.Name = fmt.Sprintf("hier-n%d-d%g-c%d-s%d", s.Nodes, s.Degree, s.Classes, s.Seed)
	}
	ds.Train, ds.Valid, ds.Test = genSplit(s.Nodes, s.Train, s.Valid, s.Test, s.Seed)
	return ds, nil
}

// id returns the node id of local position v.
func (m *genHier) id(v int32) int32 {
	if m.perm == nil {
		return v
	}
	return m.perm[v]
}

// communities draws the nested community ranges and their classes.
func (m *genHier) communities() {
	s := m.spec
	L := s.Levels
	n := s.Nodes
	size := make([]float64, L) // mean community size per level
	for l := range size {
		size[l] = float64(n) / float64(s.Top) / math.Pow(float64(s.Branch), float64(L-1-l))
		if l == 0 {
			size[l] = float64(s.CommSize)
		}
		if l > 0 {
			size[l] = max(size[l], size[l-1])
		}
	}
	m.starts = make([][]int32, L)
	m.parent = make([][]int32, L)
	m.starts[L-1] = []int32{0, int32(n)}
	for l := L - 1; l >= 0; l-- {
		rng := rand.New(genStream(s.Seed, genPhaseHier, l))
		above := []int32{0, int32(n)} // one parent spanning everything for the top
		if l < L-1 {
			above = m.starts[l+1]
		}
		cuts := []int32{0}
		var parent []int32
		for c := 0; c+1 < len(above); c++ {
			a, b := above[c], above[c+1]
			k := int32(math.Round(float64(b-a) / size[l]))
			if l == L-1 && L > 1 {
				k = int32(s.Top)
			}
			k = max(1, min(k, b-a))
			for _, cut := range genSplitRange(a, b, k, rng) {
				cuts = append(cuts, cut)
				parent = append(parent, int32(c))
			}
		}
		m.starts[l] = cuts
		if l < L-1 {
			m.parent[l] = parent
		}
	}
	m.share = make([]float64, L)
	total := 0.0
	for l := range m.share {
		m.share[l] = math.Pow(s.Spread, float64(l))
		total += m.share[l]
	}
	for l := range m.share {
		m.share[l] /= total
	}
	m.prior = make([]float64, s.Classes)
	acc := 0.0
	for k := range m.prior {
		acc += math.Pow(float64(k+1), -s.ClassSkew)
		m.prior[k] = acc
	}
	for k := range m.prior {
		m.prior[k] /= acc
	}
}

// genSplitRange cuts [a,b) into k ≥ 1 non-empty ranges of lognormal
// sizes and returns their ends (the last is b).
func genSplitRange(a, b, k int32, r *rand.Rand) []int32 {
	w := make([]float64, k)
	sum := 0.0
	for i := range w {
		w[i] = math.Exp(genLognormalSigma * r.NormFloat64())
		sum += w[i]
	}
	ends := make([]int32, k)
	acc, prev := 0.0, a
	for i := range w {
		acc += w[i]
		e := a + int32(math.Round(float64(b-a)*acc/sum))
		e = max(e, prev+1)
		e = min(e, b-(k-1-int32(i)))
		ends[i], prev = e, e
	}
	return ends
}

// drawClass draws a class from the prior.
func (m *genHier) drawClass(u float64) int32 {
	lo, hi := 0, len(m.prior)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if m.prior[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int32(lo)
}

// leafClasses draws the class of every community, top-down, and returns
// those of level 0.
func (m *genHier) leafClasses() []int32 {
	s := m.spec
	L := s.Levels
	var cls []int32
	for l := L - 1; l >= 0; l-- {
		r := genStream(s.Seed, genPhaseClasses, l)
		next := make([]int32, len(m.starts[l])-1)
		for c := range next {
			if l < L-1 && genUnit(r.Uint64()) < s.Inherit {
				next[c] = cls[m.parent[l][c]]
			} else {
				next[c] = m.drawClass(genUnit(r.Uint64()))
			}
		}
		cls = next
	}
	return cls
}

// weights draws the degree weights θ and the edges each node starts.
func (m *genHier) weights() {
	s := m.spec
	n := s.Nodes
	thetaCap := genThetaCap(s)
	m.theta = make([]float64, n)
	genBlocks(n, s.Threads, func(b, lo, hi int) {
		r := genStream(s.Seed, genPhaseNodes, b)
		for v := lo; v < hi; v++ {
			m.theta[v] = genTheta(r, s.PowerLaw, thetaCap)
		}
	})
	m.prefix = make([]float64, n+1)
	for v, t := range m.theta {
		m.prefix[v+1] = m.prefix[v] + t
	}
	m.meanTh = m.prefix[n] / float64(n)
	m.off = make([]int64, n+1)
	if n < 2 || s.Degree == 0 {
		return
	}
	m.scale = s.Degree / 2 / m.meanTh
	genBlocks(n, s.Threads, func(b, lo, hi int) {
		r := genStream(s.Seed, genPhaseStubs, b)
		for v := lo; v < hi; v++ {
			lam := m.scale * m.theta[v]
			k := math.Floor(lam)
			if genUnit(r.Uint64()) < lam-k {
				k++
			}
			m.off[v+1] = int64(k)
		}
	})
	for v := 0; v < n; v++ {
		m.off[v+1] += m.off[v]
	}
}

// genRanges are a node's communities, [lo[l], hi[l]) at level l.
type genRanges struct{ lo, hi [8]int32 }

// ranges returns the communities of local node v and its level-0 index.
func (m *genHier) ranges(v int32) (genRanges, int32) {
	var g genRanges
	st := m.starts[0]
	lo, hi := 0, len(st)-2
	for lo < hi { // last community starting at or before v
		mid := (lo + hi + 1) / 2
		if st[mid] <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	leaf := int32(lo)
	c := leaf
	for l := range m.starts {
		g.lo[l], g.hi[l] = m.starts[l][c], m.starts[l][c+1]
		if l+1 < len(m.starts) {
			c = m.parent[l][c]
		}
	}
	return g, leaf
}

// partner draws the far end of an edge started by local node v.
func (m *genHier) partner(v int32, g *genRanges, r *rand.PCG) int32 {
	s := m.spec
	n := int32(s.Nodes)
	if genUnit(r.Uint64()) < s.Mixing {
		return m.pickIn(v, 0, n, math.Inf(1), r)
	}
	u := genUnit(r.Uint64())
	l := 0
	for l+1 < len(m.share) && u >= m.share[l] {
		u -= m.share[l]
		l++
	}
	own := m.scale * m.theta[v] * (1 - s.Mixing) // v's expected community edge ends
	for l+1 < len(m.share) && (own*m.share[l] > genHubShare*float64(g.hi[l]-g.lo[l]) || g.hi[l]-g.lo[l] < 2) {
		l++
	}
	a, b := g.lo[l], g.hi[l]
	if b-a < 2 {
		return m.pickIn(v, 0, n, math.Inf(1), r)
	}
	// Cap: the community's members send it ≈ (1-mixing)·share·degree/2
	// ends each; a node of weight c receives genHubShare·(b-a) of them.
	c := 2 * genHubShare * float64(b-a) * m.meanTh / ((1 - s.Mixing) * m.share[l] * s.Degree)
	return m.pickIn(v, a, b, c, r)
}

// pickIn draws a node ≠ v of [a,b) (b-a ≥ 2) ∝ min(θ, c).
func (m *genHier) pickIn(v, a, b int32, c float64, r *rand.PCG) int32 {
	base, span := m.prefix[a], m.prefix[b]-m.prefix[a]
	for try := 0; try < 32; try++ {
		x := base + genUnit(r.Uint64())*span
		lo, hi := a, b-1
		for lo < hi { // last u with prefix[u] ≤ x
			mid := int32(uint32(lo+hi+1) >> 1)
			if m.prefix[mid] <= x {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo == v {
			continue
		}
		if t := m.theta[lo]; t > c && genUnit(r.Uint64())*t >= c {
			continue
		}
		return lo
	}
	k := uint64(b - a)
	return a + int32((uint64(v-a)+1+r.Uint64()%(k-1))%k)
}

// walk calls fn(v, u) for every edge (local ids), on up to threads
// goroutines; the edges of a block of nodes come from that block's stream.
func (m *genHier) walk(fn func(v, u int32)) {
	s := m.spec
	genBlocks(s.Nodes, s.Threads, func(b, lo, hi int) {
		r := genStream(s.Seed, genPhaseEdges, b)
		for v := int32(lo); v < int32(hi); v++ {
			k := m.off[v+1] - m.off[v]
			if k == 0 {
				continue
			}
			g, _ := m.ranges(v)
			for ; k > 0; k-- {
				fn(v, m.partner(v, &g, r))
			}
		}
	})
}

// edges builds the symmetric CSR in two walks over the same streams: one
// counts the entries of every row, the other fills them. Rows are then
// sorted and duplicates merged, so the fill order does not matter.
func (m *genHier) edges() *CSR {
	n := m.spec.Nodes
	g := &CSR{NumRows: n, NumCols: n, Ptr: make([]int64, n+1)}
	m.walk(func(v, u int32) {
		atomic.AddInt64(&g.Ptr[m.id(v)+1], 1)
		atomic.AddInt64(&g.Ptr[m.id(u)+1], 1)
	})
	for v := 0; v < n; v++ {
		g.Ptr[v+1] += g.Ptr[v]
	}
	g.Idx = make([]int32, g.Ptr[n])
	next := make([]int64, n)
	copy(next, g.Ptr[:n])
	m.walk(func(v, u int32) {
		iv, iu := m.id(v), m.id(u)
		g.Idx[atomic.AddInt64(&next[iv], 1)-1] = iu
		g.Idx[atomic.AddInt64(&next[iu], 1)-1] = iv
	})
	genDedupInPlace(g, m.spec.Threads)
	return g
}

// labels draws every node's label and returns the labels and level-0
// community of every node, by node id.
func (m *genHier) labels() (labels, leafOf []int32) {
	s := m.spec
	n := s.Nodes
	cls := m.leafClasses()
	labels, leafOf = make([]int32, n), make([]int32, n)
	genBlocks(n, s.Threads, func(b, lo, hi int) {
		r := genStream(s.Seed, genPhaseNodeY, b)
		_, leaf := m.ranges(int32(lo))
		for v := int32(lo); v < int32(hi); v++ {
			for v >= m.starts[0][leaf+1] {
				leaf++
			}
			y := cls[leaf]
			if genUnit(r.Uint64()) < s.LabelNoise {
				y = m.drawClass(genUnit(r.Uint64()))
			}
			id := m.id(v)
			labels[id], leafOf[id] = y, leaf
		}
	})
	return labels, leafOf
}

// genPermutation returns a random permutation of [0,n).
func genPermutation(n int, seed uint64) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	r := rand.New(genStream(seed, genPhaseOrder, 0))
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// genHierFeatures returns the n×feat features of model=hier: class mean
// plus the community offset plus noise, scaled to unit variance.
func genHierFeatures(labels, leafOf []int32, leaves int, s GenSpec) []float32 {
	dim := s.Feat
	if dim == 0 {
		return nil
	}
	means := make([]float64, s.Classes*dim)
	mr := rand.New(genStream(s.Seed, genPhaseMeans, 0))
	for i := range means {
		means[i] = mr.NormFloat64()
	}
	offs := make([]float32, leaves*dim)
	genBlocks(leaves, s.Threads, func(b, lo, hi int) {
		r := rand.New(genStream(s.Seed, genPhaseNuisance, b))
		for i := lo * dim; i < hi*dim; i++ {
			offs[i] = float32(r.NormFloat64())
		}
	})
	x := make([]float32, len(labels)*dim)
	unit := 1 / math.Sqrt(1+s.Nuisance*s.Nuisance+s.Noise*s.Noise)
	genBlocks(len(labels), s.Threads, func(b, lo, hi int) {
		r := rand.New(genStream(s.Seed, genPhaseFeat, b))
		for v := lo; v < hi; v++ {
			row := x[v*dim : (v+1)*dim]
			mu := means[int(labels[v])*dim : (int(labels[v])+1)*dim]
			o := offs[int(leafOf[v])*dim : (int(leafOf[v])+1)*dim]
			for j := range row {
				e := float64(s.Noise * r.NormFloat64()) // rounded: no FMA, same bits on every GOARCH
				e += float64(s.Nuisance * float64(o[j]))
				row[j] = float32((mu[j] + e) * unit)
			}
		}
	})
	return x
}
