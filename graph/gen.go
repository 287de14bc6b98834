package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/sysmem"
)

// GenSpec describes a synthetic dataset. Two models share the spec:
//
//   - model=sbm: a degree-corrected stochastic block model with
//     class-correlated Gaussian features (the built-in dataset);
//   - model=hier: nested communities at several scales, power-law degrees,
//     a mixing parameter, labels tied to communities with label noise, and
//     features that carry the class, a community nuisance and noise
//     (genhier.go).
//
// In ParseGenSpec's text form every field is a key=value pair (key in
// parentheses); unset keys take their DefaultSpec value. Keys of one model
// are errors in a spec of the other.
type GenSpec struct {
	Name        string  // (name) dataset name; "" = derived from the spec
	Model       string  // (model) "sbm" or "hier"
	Nodes       int     // (nodes) number of nodes, ≥ 1
	Degree      float64 // (degree) target mean degree: directed entries per node, before duplicates are merged
	Classes     int     // (classes) number of classes, ≥ 1
	Communities int     // (communities) sbm: blocks, a multiple of Classes; block b has class b mod Classes; 0 = Classes
	Feat        int     // (feat) feature dimension, ≥ 0
	Homophily   float64 // (homophily) sbm: fraction of edges joining nodes of the same class (edge homophily), in [0,1]
	PowerLaw    float64 // (powerlaw) exponent γ > 2 of the Pareto law of expected degrees; 0 = all equal
	MaxDegree   int     // (maxdeg) cap on a node's expected degree; 0 = min(nodes-1, ⌈degree·√nodes/4⌉)
	Noise       float64 // (noise) feature noise σ (see genFeatures and genHierFeatures); with Words, a node's words come from its class's vocabulary with probability 1/(1+Noise)
	Words       float64 // (words) bag-of-words features of this density in (0,1], sparse (genWords); 0 = dense Gaussian features
	Train       float64 // (train) fraction of nodes in the training split
	Valid       float64 // (valid) fraction in the validation split
	Test        float64 // (test) fraction in the test split; train+valid+test ≤ 1, the rest is in no split
	Seed        uint64  // (seed) seed of every random stream
	Threads     int     // (threads) goroutines, at most the thread budget; 0 = the budget. Never changes the output.

	Hier // the keys of model=hier
}

// Hier holds the keys of model=hier (genhier.go).
type Hier struct {
	Levels     int     // (levels) nesting depth, 1..8: level 0 = the smallest communities, level levels-1 = the top
	CommSize   int     // (commsize) mean size of the smallest communities (level 0), ≥ 2
	Top        int     // (top) communities at the top level, ≥ 1
	Branch     int     // (branch) communities of level l in one of level l+1, for l ≥ 1: sizes nodes/(top·branch^(levels-1-l)), ≥ 1
	Mixing     float64 // (mixing) fraction of edge ends drawn from the whole graph, ignoring communities, in [0,1]
	Spread     float64 // (spread) level l gets a share ∝ spread^l of the other edges, in (0, 16]
	Inherit    float64 // (inherit) probability a community keeps its parent's class, in [0,1]
	LabelNoise float64 // (labelnoise) probability a node's label is redrawn from the class prior, in [0,1]
	Nuisance   float64 // (nuisance) weight of the smallest community's random feature offset, ≥ 0
	ClassSkew  float64 // (classskew) class prior ∝ 1/(k+1)^classskew, in [0,4]
	Order      string  // (order) node ids: "shuffled" (random) or "local" (every community a contiguous id range)
}

// Random streams: stream (phase, block) of a seed is independent of every
// other, so work split into fixed blocks gives the same result on any
// number of goroutines.
const genBlock = 8192 // nodes per block

// Phases of generation, each with its own random streams.
const (
	genPhaseNodes  = iota + 1 // communities and degree weights
	genPhaseStubs             // edges per node
	genPhaseEdges             // edge endpoints
	genPhaseMeans             // class mean vectors
	genPhaseFeat              // feature noise
	genPhaseSplit             // split permutation
	genPhaseLabels            // synthetic labels (AttachSyntheticFeatures)
	genPhaseWords             // bag-of-words features (genWords)
)

// genStream returns the PCG stream of (seed, phase, block).
func genStream(seed uint64, phase, block int) *rand.PCG {
	return rand.NewPCG(seed, uint64(phase)<<56^uint64(block)*0x9E3779B97F4A7C15)
}

// genBlocks runs fn(b, lo, hi) for every block [lo,hi) of genBlock nodes out
// of n, on up to threads goroutines (0 = the rank's budget, internal/par).
func genBlocks(n, threads int, fn func(b, lo, hi int)) {
	par.Blocks((n+genBlock-1)/genBlock, threads, func(b int) { fn(b, b*genBlock, min((b+1)*genBlock, n)) })
}

// genUnit returns a uniform float64 in [0,1) from 53 random bits.
func genUnit(x uint64) float64 { return float64(x>>11) * (1.0 / (1 << 53)) }

// Generate builds the dataset described by s: see GenSpec (model=hier:
// genhier.go). The graph is symmetric with sorted rows, no self-loops and
// no duplicate entries; with model=sbm labels are the class of each node's
// block; splits are random. The result depends only on s (not on
// s.Threads or the machine).
func Generate(s GenSpec) (*Dataset, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Words > 0 {
		return generateWords(s)
	}
	if s.Model == "hier" {
		return generateHier(s)
	}
	// Nodes (structure, labels, features) and edges (both directions, with
	// the generator's edge list), before anything is allocated.
	need := int64(s.Nodes)*(nodeBytes+4*int64(s.Feat)) + int64(s.Degree*float64(s.Nodes))*16
	if err := sysmem.Check(need, fmt.Sprintf("spec: %d nodes of degree %g with %d features", s.Nodes, s.Degree, s.Feat)); err != nil {
		return nil, err
	}
	if s.Communities == 0 {
		s.Communities = s.Classes
	}
	m := genModel(s)
	g := m.edges()
	labels := make([]int32, s.Nodes)
	for v, c := range m.comm {
		labels[v] = c % int32(s.Classes)
	}
	ds := &Dataset{
		Name: s.Name, Graph: g, FeatDim: s.Feat, Labels: labels, NumClasses: s.Classes,
		Features: DenseX(genFeatures(labels, s.Classes, s.Feat, s.Noise, s.Seed, s.Threads), s.Nodes, s.Feat),
	}
	if ds.Name == "" {
		ds.Name = fmt.Sprintf("sbm-n%d-d%g-c%d-h%g-s%d", s.Nodes, s.Degree, s.Classes, s.Homophily, s.Seed)
	}
	ds.Train, ds.Valid, ds.Test = genSplit(s.Nodes, s.Train, s.Valid, s.Test, s.Seed)
	return ds, nil
}

// generateWords is Generate with bag-of-words features: the graph, labels
// and split of the spec without features, then genWords.
func generateWords(s GenSpec) (*Dataset, error) {
	feat, density := s.Feat, s.Words
	s.Feat, s.Words = 0, 0
	ds, err := Generate(s)
	if err != nil {
		return nil, err
	}
	ds.Features, ds.FeatDim = SparseX(genWords(ds.Labels, ds.NumClasses, feat, density, s.Noise, s.Seed, s.Threads)), feat
	return ds, nil
}

// genSBM is the sampled block structure: each node's block and expected
// degree weight, and per block an alias table over its members.
type genSBM struct {
	spec    GenSpec
	comm    []int32   // block of each node
	theta   []float64 // degree weight of each node
	members []int32   // nodes grouped by block, ascending within a block
	start   []int64   // block b's members are members[start[b]:start[b+1]]
	prob    []float32 // alias table over members (per block)
	alias   []int32   // index within the block
	bprob   []float32 // alias table over blocks, by total weight
	balias  []int32
	mixed   []bool // per class: other classes have members to link to
}

// genModel draws blocks and degree weights and builds the alias tables.
func genModel(s GenSpec) *genSBM {
	n, k := s.Nodes, s.Communities
	m := &genSBM{spec: s, comm: make([]int32, n), theta: make([]float64, n)}
	thetaCap := genThetaCap(s)
	genBlocks(n, s.Threads, func(b, lo, hi int) {
		r := genStream(s.Seed, genPhaseNodes, b)
		for v := lo; v < hi; v++ {
			m.comm[v] = int32(r.Uint64() % uint64(k))
			m.theta[v] = genTheta(r, s.PowerLaw, thetaCap)
		}
	})
	m.start = make([]int64, k+1)
	for _, c := range m.comm {
		m.start[c+1]++
	}
	for c := 0; c < k; c++ {
		m.start[c+1] += m.start[c]
	}
	m.members = make([]int32, n)
	next := slices.Clone(m.start[:k])
	for v, c := range m.comm {
		m.members[next[c]] = int32(v)
		next[c]++
	}
	m.prob = make([]float32, n)
	m.alias = make([]int32, n)
	weight := make([]float64, k)
	for c := 0; c < k; c++ {
		mem := m.members[m.start[c]:m.start[c+1]]
		w := make([]float64, len(mem))
		for i, v := range mem {
			w[i] = m.theta[v]
			weight[c] += w[i]
		}
		genAlias(w, m.prob[m.start[c]:m.start[c+1]], m.alias[m.start[c]:m.start[c+1]])
	}
	m.bprob, m.balias = make([]float32, k), make([]int32, k)
	genAlias(weight, m.bprob, m.balias)
	classWeight := make([]float64, s.Classes)
	total := 0.0
	for c, w := range weight {
		classWeight[c%s.Classes] += w
		total += w
	}
	m.mixed = make([]bool, s.Classes)
	for y, w := range classWeight {
		m.mixed[y] = total-w > 0
	}
	return m
}

// genThetaCap returns the cap on the Pareto degree weights θ (minimum 1)
// that keeps expected degrees at most maxdeg (default min(nodes-1,
// ⌈degree·√nodes/4⌉)).
func genThetaCap(s GenSpec) float64 {
	n := s.Nodes
	if s.PowerLaw == 0 || s.Degree == 0 {
		return math.Inf(1)
	}
	mean := (s.PowerLaw - 1) / (s.PowerLaw - 2) // analytic mean of the Pareto law with minimum 1
	maxDeg := s.MaxDegree
	if maxDeg == 0 {
		maxDeg = min(n-1, int(math.Ceil(s.Degree*math.Sqrt(float64(n))/4)))
	}
	return max(1, float64(maxDeg)*mean/s.Degree)
}

// genTheta draws a degree weight from r: Pareto with minimum 1 and exponent
// powerLaw, at most thetaCap; 1 (no draw) when powerLaw is 0.
func genTheta(r *rand.PCG, powerLaw, thetaCap float64) float64 {
	if powerLaw == 0 {
		return 1
	}
	return math.Min(thetaCap, math.Pow(1-genUnit(r.Uint64()), -1/(powerLaw-1)))
}

// genAlias fills Vose's alias table (prob, alias) for sampling index i with
// probability ∝ w[i]. An all-zero w samples uniformly.
func genAlias(w []float64, prob []float32, alias []int32) {
	n := len(w)
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	scaled := make([]float64, n)
	var small, large []int32
	for i, x := range w {
		scaled[i] = 1
		if sum > 0 {
			scaled[i] = x * float64(n) / sum
		}
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		prob[s], alias[s] = float32(scaled[s]), l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) {
		prob[i], alias[i] = 1, i
	}
}

// pick draws a member of block c, ∝ degree weight, from 64 random bits.
func (m *genSBM) pick(c int32, x uint64) int32 {
	lo := m.start[c]
	size := uint64(m.start[c+1] - lo)
	i := lo + int64((x>>32)*size>>32)
	if float32(uint32(x))*(1.0/(1<<32)) < m.prob[i] {
		return m.members[i]
	}
	return m.members[lo+int64(m.alias[i])]
}

// pickBlock draws a block ∝ total weight.
func (m *genSBM) pickBlock(x uint64) int32 {
	k := uint64(len(m.bprob))
	i := int32((x >> 32) * k >> 32)
	if float32(uint32(x))*(1.0/(1<<32)) < m.bprob[i] {
		return i
	}
	return m.balias[i]
}

// stubs draws how many edges each node starts: floor(λ_v) plus one with
// probability frac(λ_v), λ_v = degree/2 · θ_v / mean θ. It returns the
// prefix sums (len n+1).
func (m *genSBM) stubs() []int64 {
	s := m.spec
	n := s.Nodes
	nb := (n + genBlock - 1) / genBlock
	part := make([]float64, nb)
	genBlocks(n, s.Threads, func(b, lo, hi int) {
		for _, t := range m.theta[lo:hi] {
			part[b] += t
		}
	})
	total := 0.0
	for _, p := range part {
		total += p
	}
	off := make([]int64, n+1)
	if n < 2 || s.Degree == 0 {
		return off
	}
	scale := s.Degree / 2 * float64(n) / total
	genBlocks(n, s.Threads, func(b, lo, hi int) {
		r := genStream(s.Seed, genPhaseStubs, b)
		for v := lo; v < hi; v++ {
			lam := scale * m.theta[v]
			k := math.Floor(lam)
			if genUnit(r.Uint64()) < lam-k {
				k++
			}
			off[v+1] = int64(k)
		}
	})
	for v := 0; v < n; v++ {
		off[v+1] += off[v]
	}
	return off
}

// partner draws the other end of an edge started by v.
func (m *genSBM) partner(v int32, r *rand.PCG) int32 {
	s := m.spec
	own := m.comm[v]
	n := uint64(s.Nodes)
	for try := 0; try < 16; try++ {
		c := own
		if m.mixed[own%int32(s.Classes)] && genUnit(r.Uint64()) >= s.Homophily {
			for c%int32(s.Classes) == own%int32(s.Classes) {
				c = m.pickBlock(r.Uint64())
			}
		}
		if u := m.pick(c, r.Uint64()); u != v {
			return u
		}
	}
	// v dominates its block (tiny blocks): any other node.
	return int32((uint64(v) + 1 + r.Uint64()%(n-1)) % n)
}

// edges samples the undirected edges, stores both directions and returns
// the CSR with sorted rows and duplicates merged.
func (m *genSBM) edges() *CSR {
	s := m.spec
	n := s.Nodes
	off := m.stubs()
	half := off[n]
	src := make([]int32, 2*half)
	dst := make([]int32, 2*half)
	genBlocks(n, s.Threads, func(b, lo, hi int) {
		r := genStream(s.Seed, genPhaseEdges, b)
		for v := lo; v < hi; v++ {
			for p := off[v]; p < off[v+1]; p++ {
				u := m.partner(int32(v), r)
				src[p], dst[p] = int32(v), u
				src[half+p], dst[half+p] = u, int32(v)
			}
		}
	})
	g := FromCOO(n, n, src, dst, nil)
	genDedupInPlace(g, s.Threads)
	return g
}

// genDedupInPlace sorts every row of the unweighted g and removes duplicate
// entries, compacting Idx in place.
func genDedupInPlace(g *CSR, threads int) {
	n := g.NumRows
	kept := make([]int64, n)
	genBlocks(n, threads, func(_, lo, hi int) {
		for v := lo; v < hi; v++ {
			row := g.Idx[g.Ptr[v]:g.Ptr[v+1]]
			slices.Sort(row)
			kept[v] = int64(len(slices.Compact(row)))
		}
	})
	w := int64(0)
	for v := 0; v < n; v++ {
		a := g.Ptr[v]
		copy(g.Idx[w:], g.Idx[a:a+kept[v]])
		g.Ptr[v] = w
		w += kept[v]
	}
	g.Ptr[n] = w
	g.Idx = g.Idx[:w:w]
}

// genFeatures returns n×dim features: row v is the mean vector of class
// labels[v] (entries N(0,1), drawn once per class) plus noise·N(0,1) per
// entry, all divided by √(1+noise²) so entries have unit variance.
// Unlabelled nodes (label < 0) get noise only.
func genFeatures(labels []int32, classes, dim int, noise float64, seed uint64, threads int) []float32 {
	n := len(labels)
	if dim == 0 {
		return nil
	}
	means := make([]float64, classes*dim)
	mr := rand.New(genStream(seed, genPhaseMeans, 0))
	for i := range means {
		means[i] = mr.NormFloat64()
	}
	x := make([]float32, n*dim)
	unit := 1 / math.Sqrt(1+noise*noise)
	genBlocks(n, threads, func(b, lo, hi int) {
		r := rand.New(genStream(seed, genPhaseFeat, b))
		for v := lo; v < hi; v++ {
			row := x[v*dim : (v+1)*dim]
			var mu []float64
			if y := labels[v]; y >= 0 {
				mu = means[int(y)*dim : (int(y)+1)*dim]
			}
			for j := range row {
				e := float64(noise * r.NormFloat64()) // rounded: no FMA, same bits on every GOARCH
				if mu != nil {
					e += mu[j]
				}
				row[j] = float32(e * unit)
			}
		}
	})
	return x
}

// genSplit draws a random permutation of the n nodes and cuts it into
// train, valid and test sets of ⌊f·n⌋ nodes each, returned ascending.
func genSplit(n int, train, valid, test float64, seed uint64) (tr, va, te []int32) {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	r := rand.New(genStream(seed, genPhaseSplit, 0))
	r.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	cut := func(f float64) []int32 {
		k := min(len(perm), int(f*float64(n)))
		part := slices.Clone(perm[:k])
		perm = perm[k:]
		slices.Sort(part)
		return part
	}
	return cut(train), cut(valid), cut(test)
}
