package dataset

import (
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/dist"
	"github.com/supergcn/supergcn/partition/metis"
)

// MPI is what ParMETIS needs of the MPI world the ranks run in.
type MPI struct {
	Fortran   int                      // the world communicator's Fortran handle
	Serialize func(func() error) error // runs a call into MPI as the process's MPI calls must (mpi.Serialize)
}

// Shard returns this rank's shard: from a partition directory, or the
// whole dataset partitioned in memory by PartMethod (METIS on rank 0,
// broadcast; ParMETIS across the ranks; or random), or with Data under
// several ranks and a method the distributed reader serves, Data read
// distributed (see Distributed). m is nil outside MPI; log (rank 0's, or
// nil) gets a line per step. Collective.
func (s *Source) Shard(c comm.Comm, m *MPI, log io.Writer) (*partition.Shard, error) {
	if s.Partitions != "" {
		return s.loadParts(c, log)
	}
	if s.Distributed(c) {
		return s.shardDist(c, m, log)
	}
	ds, err := s.Load(log)
	if err != nil {
		return nil, err
	}
	p := c.Size()
	owner := make([]int32, ds.NumNodes())
	if p > 1 {
		t0 := time.Now()
		st := s.step(log, fmt.Sprintf("partition: %s into %d parts", s.PartMethod, p))
		owner, err = s.partitionInMemory(ds, c, m)
		st.Done()
		if err != nil {
			return nil, err
		}
		if log != nil {
			fmt.Fprintf(log, "partition: %s into %d parts (%.2fs)\n", s.PartMethod, p, time.Since(t0).Seconds())
		}
	}
	sh := partition.Split(ds, owner, c.Rank(), p)
	// The shard holds copies of everything it uses: unmap a binary file's
	// image now (its pages would otherwise stay resident for the whole run).
	if err := ds.Release(); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Data, err)
	}
	return sh, nil
}

// loadParts reads this rank's parts of the partition directory.
func (s *Source) loadParts(c comm.Comm, log io.Writer) (*partition.Shard, error) {
	t0 := time.Now()
	if err := checkPartitionMemory(s.Partitions, c, log); err != nil {
		return nil, err
	}
	st := s.step(log, "data: reading "+s.Partitions)
	sh, err := partition.Load(s.Partitions, c.Rank(), c.Size())
	st.Done()
	if err = dist.Agree(c, err); err != nil {
		return nil, err
	}
	if s.FeatNorm == "row" {
		sh.Features.NormalizeRows()
	}
	if log != nil {
		fmt.Fprintf(log, "data: partitions %s on %d rank(s) (%.2fs)\n", s.Partitions, c.Size(), time.Since(t0).Seconds())
	}
	return sh, nil
}

// checkPartitionMemory prints what loading the partition directory needs
// per rank, from its meta.json, and refuses a load that cannot fit; a
// directory partition.Load will refuse anyway is left to it.
func checkPartitionMemory(dir string, c comm.Comm, log io.Writer) error {
	m, err := partition.ReadMeta(dir)
	if err != nil {
		return nil
	}
	need := int64(0)
	for r := range c.Size() {
		need = max(need, partition.LoadBytes(m, r, c.Size()))
	}
	if need == 0 {
		return nil
	}
	if log != nil {
		fmt.Fprintf(log, "data: partitions %s: loading needs ~%s per rank (this process may use %s)\n", dir, sysmem.GB(need), sysmem.GB(sysmem.Limit()))
	}
	return sysmem.Check(need, fmt.Sprintf("dataset.Source.Partitions %s: loading %d parts on %d rank(s)", dir, m.Parts, c.Size()))
}

func (s *Source) partitionInMemory(ds *graph.Dataset, c comm.Comm, m *MPI) ([]int32, error) {
	p := c.Size()
	opts := metis.Options{Weights: s.PartWeights, Seed: int(s.Seed), TrainMask: ds.SplitMask()}
	switch s.PartMethod {
	case "random":
		return partition.Random(ds.NumNodes(), p, s.Seed), nil
	case "parmetis":
		if m == nil {
			return nil, refuse("", "dataset.Source.PartMethod parmetis: needs MPI (run under mpirun)")
		}
		var owner []int32
		err := m.Serialize(func() error {
			var err error
			owner, err = metis.ParMetis(m.Fortran, c.Rank(), p, ds.Graph, p, opts)
			return err
		})
		return owner, err
	}
	// METIS on rank 0, then broadcast (or rank 0's error on every rank).
	return metis.OnRank0(c, ds.Graph, p, opts)
}

// Distributed reports whether Shard reads Data distributed: several
// ranks, a PartMethod other than metis, and settings the distributed
// reader honours (CheckDistributed).
func (s *Source) Distributed(c comm.Comm) bool {
	return c.Size() > 1 && s.Data != "" && s.PartMethod != "metis" && s.CheckDistributed() == nil
}

// DistSource is the dist.Source of Data; method names the partitioner
// (parmetis has the 32-bit arc limit). log nil or io.Discard: no progress.
func (s *Source) DistSource(method string, log io.Writer) dist.Source {
	src := dist.Source{Path: s.Data, Format: s.Format, Split: s.Split, SplitFiles: s.SplitFiles, Features: s.Features, Labels: s.Labels,
		IgnoreWeights: s.IgnoreWeights}
	if log != nil && log != io.Discard {
		src.Progress = s.Progress
	}
	if method == "parmetis" {
		src.MaxArcs = metis.MaxArcs
		src.MaxArcsRemedy = s.MaxArcsRemedy
	}
	return src
}

// PrintDist prints the data line of a distributed read to log (nil: none).
func PrintDist(log io.Writer, g *dist.Graph, ranks int, t0 time.Time) {
	if log == nil {
		return
	}
	edges := "edges"
	if g.Weighted {
		edges = "weighted edges"
	}
	feats := fmt.Sprintf("%d features", g.FeatDim)
	if g.Features.Sparse() {
		feats = fmt.Sprintf("%d sparse features", g.FeatDim)
	}
	fmt.Fprintf(log, "data: %s: %d nodes, %d %s, %s, %d classes, split %d/%d/%d, read by %d ranks (%.2fs)\n",
		g.Name, g.NumNodes, g.NumArcs, edges, feats, g.NumClasses, g.NumTrain, g.NumValid, g.NumTest, ranks, time.Since(t0).Seconds())
}

// ParMetisDist partitions the distributed graph with ParMETIS (PT-Scotch);
// m nil (outside MPI) is refused.
func ParMetisDist(c comm.Comm, m *MPI, g *dist.Graph, parts int, weights string, o metis.Options) ([]int32, error) {
	if m == nil {
		return nil, refuse("", "parmetis: needs MPI (run under mpirun)")
	}
	ncon, vwgt, err := dist.VertexWeights(c, g, weights)
	if err != nil {
		return nil, err
	}
	vtxdist, ptr, adj, err := dist.LocalCSR32(c, g)
	if err != nil {
		return nil, err
	}
	// Hand the heap the reading stages freed back to the system before
	// PT-Scotch allocates its own: the two peaks then do not add up in RSS.
	debug.FreeOSMemory()
	var owner []int32
	err = m.Serialize(func() error {
		var err error
		owner, err = metis.ParMetisDistributed(m.Fortran, vtxdist, ptr, adj, vwgt, ncon, parts, o)
		return err
	})
	return owner, err
}

// MultilevelDist partitions the distributed graph with dist.Multilevel,
// METIS partitioning the coarsest graph where this build links it; log
// (rank 0's, or nil) gets a line per level.
func MultilevelDist(c comm.Comm, g *dist.Graph, parts int, weights string, seed uint64, imbalance float64, log io.Writer) ([]int32, error) {
	o := dist.MultilevelOptions{Weights: weights, Seed: seed, Imbalance: imbalance}
	if metis.Linked {
		o.Initial = metis.PartWeighted
	}
	if log != nil && log != io.Discard {
		o.Log = log
	}
	return dist.Multilevel(c, g, parts, o)
}

// shardDist reads Data distributed and partitions it in memory into one
// part per rank (partition/dist), never holding the whole graph.
func (s *Source) shardDist(c comm.Comm, m *MPI, log io.Writer) (*partition.Shard, error) {
	t0 := time.Now()
	g, err := dist.Read(c, s.DistSource(s.PartMethod, log))
	if err == nil {
		err = storeDenseIfDense(c, g, log)
	}
	if err != nil {
		return nil, err
	}
	PrintDist(log, g, c.Size(), t0)
	p := c.Size()
	t1 := time.Now()
	st := s.step(log, fmt.Sprintf("partition: %s into %d parts", s.PartMethod, p))
	var owner []int32
	switch s.PartMethod {
	case "random":
		owner = dist.RandomOwners(g, p, s.Seed)
	case "ldg":
		owner, err = dist.LDG(c, g, p, dist.LDGOptions{ByDegree: s.PartWeights != metis.WeightsNone})
	default:
		weights := s.PartWeights
		if weights == metis.WeightsDegreeTrain && g.NumTrain == 0 {
			weights = metis.WeightsDegree
		}
		if s.PartMethod == "multilevel" {
			owner, err = MultilevelDist(c, g, p, weights, s.Seed, 0, log)
		} else {
			owner, err = ParMetisDist(c, m, g, p, weights, metis.Options{Weights: weights, Seed: int(s.Seed)})
		}
	}
	st.Done()
	if err != nil {
		return nil, err
	}
	if log != nil {
		fmt.Fprintf(log, "partition: %s into %d parts, distributed (%.2fs)\n", s.PartMethod, p, time.Since(t1).Seconds())
	}
	sh, err := dist.Shard(c, g, owner, 0)
	if err != nil {
		return nil, err
	}
	if s.FeatNorm == "row" {
		sh.Features.NormalizeRows()
	}
	return sh, nil
}

// storeDenseIfDense stores the sparse feature rows of the distributed
// graph g dense when the whole matrix is denser than
// graph.DenseFeatureDensity, as Load does for a dataset read whole (said
// on log). Collective.
func storeDenseIfDense(c comm.Comm, g *dist.Graph, log io.Writer) error {
	var nnz int64
	if g.Features.Sparse() {
		nnz = g.Features.NNZ()
	}
	all := []int64{nnz}
	if err := c.AllreduceSumI64(all); err != nil {
		return err
	}
	if !g.Features.Sparse() || g.NumNodes == 0 {
		return nil
	}
	density := float64(all[0]) / (float64(g.NumNodes) * float64(g.FeatDim))
	if density <= graph.DenseFeatureDensity {
		return nil
	}
	if log != nil {
		fmt.Fprintf(log, "data: %s: sparse features are %.0f %% non-zero: stored dense (sparse pays below %.0f %%)\n",
			g.Name, 100*density, 100*graph.DenseFeatureDensity)
	}
	g.Features = g.Features.Dense()
	return nil
}
