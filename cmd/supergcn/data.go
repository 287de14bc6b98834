package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/mpi"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/dist"
	"github.com/supergcn/supergcn/partition/metis"
)

// dataFlags are the flags that say where a rank's data comes from.
type dataFlags struct {
	data, format, split, splitFiles string
	features, labels                string
	synthetic                       string
	partitions                      string
	synthFeat, synthClasses         int
	undirected, dedup               bool
	ignoreWeights                   bool
	featNorm                        string
	partMethod, partWeights         string
	seed                            uint64
	prog                            *progress.Reporter // long steps, on rank 0 (nil: silent)
}

// step starts reporting a long step when log is set (rank 0, not quiet).
func (d *dataFlags) step(log io.Writer, name string) *progress.Step {
	if log == nil || log == io.Discard {
		return (*progress.Reporter)(nil).Start(name, 0, "")
	}
	return d.prog.Start(name, 0, "")
}

func (d *dataFlags) register(fs *flag.FlagSet, verb string) {
	d.registerSource(fs, verb)
	fs.StringVar(&d.partitions, "partitions", "", "partition directory written by supergcn partition (each rank reads only its parts)")
	fs.StringVar(&d.featNorm, "feat-norm", "none", "input feature normalisation: none|row (divide each row by its L1 sum)")
	fs.StringVar(&d.partMethod, "partition-method", "auto", "in-memory partitioning under mpirun without --partitions: auto (multilevel for --data where the distributed reader can honour the flags, else metis)|metis (whole graph on every rank)|multilevel|parmetis|ldg|random (these four read --data distributed: each rank only its share)")
	fs.StringVar(&d.partWeights, "partition-weights", "degree+train", "vertex weights for METIS/ParMETIS: none|degree|degree+train")
}

// registerSource adds the flags that name and clean the input graph, shared
// by train, eval and partition; verb completes the --synthetic help.
func (d *dataFlags) registerSource(fs *flag.FlagSet, verb string) {
	fs.StringVar(&d.data, "data", "", "dataset: OGB-layout directory (CSV or npz), PyG-style .npz file, edge-list file, METIS graph file or supergcn binary file (format detected; docs/DATA.md)")
	fs.StringVar(&d.format, "format", "auto", "force the --data format: "+strings.Join(graph.Formats(), "|"))
	fs.StringVar(&d.split, "split", "", splitHelp)
	fs.StringVar(&d.splitFiles, "split-files", "", splitFilesHelp)
	fs.StringVar(&d.features, "features", "", "node features from a .npy file (N×F), overriding the dataset's")
	fs.StringVar(&d.labels, "labels", "", "node labels from a .npy file (N), overriding the dataset's")
	fs.StringVar(&d.synthetic, "synthetic", "", verb+" a generated graph: a spec like nodes=100000,degree=16,classes=8,feat=64,seed=1 (keys: supergcn gen --help); 'default' = the built-in dataset")
	fs.IntVar(&d.synthFeat, "synthetic-features", 0, "attach DIM synthetic class-correlated features and labels to a structure-only graph")
	fs.IntVar(&d.synthClasses, "classes", 8, "classes for --synthetic-features")
	fs.BoolVar(&d.undirected, "undirected", true, "make the graph undirected (add every reverse edge)")
	fs.BoolVar(&d.dedup, "dedup", true, "drop duplicate edges and self-loops (GCN adds its own self-loops)")
	fs.BoolVar(&d.ignoreWeights, "ignore-weights", false, "drop the edge weights of --data and train on the unweighted graph (weighted GCN and SAGE otherwise; docs/MODELS.md)")
}

// sourceFlags shape the input graph; a partition directory is already built.
var sourceFlags = []string{"format", "split", "split-files", "features", "labels", "synthetic-features", "classes", "undirected", "dedup", "ignore-weights", "partition-method", "partition-weights"}

// The help texts of the split flags (train, eval, partition, convert).
const (
	splitHelp = "split: NAME of a directory under split/ of an OGB-layout directory (default: public, or the only one), " +
		"or random:TRAIN,VALID[,TEST][:SEED] fractions of the labelled nodes (TEST: the rest; SEED: 0), for any --data"
	splitFilesHelp = "directory with train, valid (or val) and test files: .npy node ids or boolean masks, or .csv[.gz] one id a line; for any --data"
)

// loadOptions are the graph.LoadOptions of the flags.
func (d *dataFlags) loadOptions() graph.LoadOptions {
	return graph.LoadOptions{Format: d.format, Split: d.split, SplitFiles: d.splitFiles, Features: d.features, Labels: d.labels}
}

// describe names the data for the metrics header: the path or spec given.
func (d *dataFlags) describe() string {
	switch {
	case d.partitions != "":
		return "partitions:" + d.partitions
	case d.data != "":
		return d.data
	case d.synthetic != "":
		return "synthetic:" + d.synthetic
	}
	return "synthetic:default"
}

func (d *dataFlags) validate(fs *flag.FlagSet) error {
	if d.partitions != "" {
		for _, f := range sourceFlags {
			if flagSet(fs, f) {
				return usageError{fmt.Sprintf("--%s: has no effect with --partitions (the directory was built by supergcn partition; give it there)", f)}
			}
		}
	}
	if d.data == "" && d.partitions == "" {
		for _, f := range []string{"format", "split", "split-files", "features", "labels"} {
			if flagSet(fs, f) {
				return usageError{fmt.Sprintf("--%s: applies to --data; a generated graph has its own split (its spec's train/valid/test keys)", f)}
			}
		}
	}
	switch d.partWeights {
	case "none", "degree", "degree+train":
	default:
		return usageError{fmt.Sprintf("--partition-weights: %q is not none, degree or degree+train", d.partWeights)}
	}
	if d.synthFeat < 0 || d.synthClasses < 1 || d.synthClasses > graph.MaxClasses {
		return usageError{fmt.Sprintf("--synthetic-features %d --classes %d: want features ≥ 0 and classes in [1, %d]", d.synthFeat, d.synthClasses, graph.MaxClasses)}
	}
	n := 0
	for _, s := range []string{d.data, d.synthetic, d.partitions} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return usageError{"use only one of --data, --synthetic and --partitions"}
	}
	if d.synthetic != "" && d.synthetic != "default" {
		if _, err := graph.ParseGenSpec(d.synthetic); err != nil {
			return usageError{fmt.Sprintf("--synthetic: %v", err)}
		}
	}
	switch d.featNorm {
	case "none", "row":
	default:
		return usageError{fmt.Sprintf("--feat-norm: %q is not none or row", d.featNorm)}
	}
	switch d.partMethod {
	case "auto", "metis", "multilevel", "parmetis", "random", "ldg":
	default:
		return usageError{fmt.Sprintf("--partition-method: %q is not auto, metis, multilevel, parmetis, ldg or random", d.partMethod)}
	}
	if d.partMethod == "ldg" && d.data == "" && d.partitions == "" {
		return usageError{"--partition-method ldg: reads --data (for --synthetic, use metis, parmetis or random)"}
	}
	return nil
}

// loadDataset reads or generates the whole dataset and preprocesses it.
func (d *dataFlags) loadDataset(log io.Writer) (*graph.Dataset, error) {
	t0 := time.Now()
	var ds *graph.Dataset
	var err error
	verb := "reading "
	if d.data == "" {
		verb = "generating "
	}
	st := d.step(log, "data: "+verb+d.describe())
	defer st.Done()
	switch {
	case d.data != "":
		ds, err = graph.Load(d.data, d.loadOptions())
	default:
		spec := graph.DefaultSpec
		if d.synthetic != "" && d.synthetic != "default" {
			spec, err = graph.ParseGenSpec(d.synthetic)
			if err != nil {
				return nil, fmt.Errorf("--synthetic: %w", err)
			}
		}
		if d.seed != 0 && d.synthetic == "" {
			spec.Seed = d.seed
		}
		if ds, err = graph.Generate(spec); err != nil && d.synthetic != "" {
			err = fmt.Errorf("--synthetic: %w", err)
		}
	}
	st.Done()
	if err != nil {
		return nil, err
	}
	if ds.Graph.Val != nil && d.ignoreWeights {
		ds.Graph.Val = nil
		if log != nil {
			fmt.Fprintf(log, "data: %s: edge weights ignored (--ignore-weights)\n", d.data)
		}
	}
	// Generated graphs are already symmetric, without self-loops or duplicates.
	if d.dedup && d.data != "" {
		ds.Graph = graph.Dedup(graph.RemoveSelfLoops(ds.Graph))
	}
	if d.undirected && d.data != "" {
		ds.Graph = graph.Symmetrize(ds.Graph)
	}
	if d.synthFeat > 0 {
		if ds.FeatDim > 0 || ds.Labels != nil {
			return nil, usageError{fmt.Sprintf("--synthetic-features: %s already has %d features and labels; the flag is for structure-only graphs", ds.Name, ds.FeatDim)}
		}
		if err := graph.AttachSyntheticFeatures(ds, d.synthFeat, d.synthClasses, d.seed+1); err != nil {
			return nil, err
		}
	}
	if d.featNorm == "row" && ds.FeatDim > 0 {
		graph.RowNormalize(ds.X, ds.FeatDim)
	}
	if log != nil {
		edges := "edges"
		if ds.Graph.Val != nil {
			edges = "weighted edges"
		}
		fmt.Fprintf(log, "data: %s: %d nodes, %d %s, %d features, %d classes, split %d/%d/%d (%.2fs)\n",
			ds.Name, ds.NumNodes(), ds.Graph.NNZ(), edges, ds.FeatDim, ds.NumClasses, len(ds.Train), len(ds.Valid), len(ds.Test), time.Since(t0).Seconds())
	}
	return ds, nil
}

// loadShard returns this rank's shard: from a partition directory, or the
// whole dataset partitioned in memory (METIS on rank 0, broadcast; ParMETIS
// across the ranks; or random).
func (d *dataFlags) loadShard(c comm.Comm, w *world, log io.Writer) (*partition.Shard, error) {
	if d.partitions != "" {
		t0 := time.Now()
		if err := checkPartitionMemory(d.partitions, c, log); err != nil {
			return nil, err
		}
		st := d.step(log, "data: reading "+d.partitions)
		s, err := partition.Load(d.partitions, c.Rank(), c.Size())
		st.Done()
		if err = dist.Agree(c, err); err != nil {
			return nil, err
		}
		if s.FeatDim > 0 && d.featNorm == "row" {
			graph.RowNormalize(s.X, s.FeatDim)
		}
		if log != nil {
			fmt.Fprintf(log, "data: partitions %s on %d rank(s) (%.2fs)\n", d.partitions, c.Size(), time.Since(t0).Seconds())
		}
		return s, nil
	}
	auto := d.partMethod == "auto"
	d.resolvePartMethod(c, w, log)
	if d.distributedShard(c) {
		s, err := d.loadShardDist(c, w, log)
		if !auto || !errors.Is(err, dist.ErrWeighted) {
			return s, err
		}
		if log != nil {
			fmt.Fprintf(log, "partition: auto: %s has edge weights, which the distributed reader does not carry: metis on rank 0, every rank loading the whole graph\n", d.data)
		}
		d.partMethod = "metis"
	}
	ds, err := d.loadDataset(log)
	if err != nil {
		return nil, err
	}
	p := c.Size()
	owner := make([]int32, ds.NumNodes())
	if p > 1 {
		t0 := time.Now()
		st := d.step(log, fmt.Sprintf("partition: %s into %d parts", d.partMethod, p))
		owner, err = d.partitionInMemory(ds, c, w)
		st.Done()
		if err != nil {
			return nil, err
		}
		if log != nil {
			fmt.Fprintf(log, "partition: %s into %d parts (%.2fs)\n", d.partMethod, p, time.Since(t0).Seconds())
		}
	}
	s := partition.Split(ds, owner, c.Rank(), p)
	// The shard holds copies of everything it uses: unmap a binary file's
	// image now (its pages would otherwise stay resident for the whole run).
	if err := ds.Release(); err != nil {
		return nil, fmt.Errorf("%s: %w", d.data, err)
	}
	return s, nil
}

// checkPartitionMemory prints (rank 0) what loading the partition
// directory needs per rank, from its meta.json, and refuses a load that
// cannot fit; a directory Load will refuse anyway is left to it.
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
	return sysmem.Check(need, fmt.Sprintf("--partitions %s: loading %d parts on %d rank(s)", dir, m.Parts, c.Size()))
}

func (d *dataFlags) partitionInMemory(ds *graph.Dataset, c comm.Comm, w *world) ([]int32, error) {
	p := c.Size()
	opts := metis.Options{Weights: d.partWeights, Seed: int(d.seed), TrainMask: ds.SplitMask()}
	switch d.partMethod {
	case "random":
		return partition.Random(ds.NumNodes(), p, d.seed), nil
	case "parmetis":
		if !w.mpi {
			return nil, usageError{"--partition-method parmetis: needs MPI (run under mpirun)"}
		}
		var owner []int32
		err := mpi.Serialize(func() error {
			var err error
			owner, err = metis.ParMetis(w.fortranComm(), c.Rank(), p, ds.Graph, p, opts)
			return err
		})
		return owner, err
	}
	// METIS on rank 0, then broadcast (or rank 0's error on every rank).
	return metis.OnRank0(c, ds.Graph, p, opts)
}

// inputPaths are the files and directories the data flags name.
func (d *dataFlags) inputPaths() []container.NamedPath {
	return []container.NamedPath{{Name: "--data", Path: d.data}, {Name: "--features", Path: d.features},
		{Name: "--labels", Path: d.labels}, {Name: "--partitions", Path: d.partitions}}
}

// distinctOutputs refuses outputs that name an input or each other
// (container.CheckDistinct) as a usage error.
func distinctOutputs(inputs, outputs []container.NamedPath) error {
	if err := container.CheckDistinct(inputs, outputs); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

// maxThreads bounds --threads: more goroutines calling cgo BLAS than this
// exhaust the runtime's OS threads long before they add speed.
const maxThreads = 1024

// setThreadBudget makes n (≥ 1) the rank's thread budget, which every
// parallel loop (aggregation, dense products and elementwise passes,
// quantisation, preprocessing) stays within: internal/par reads it as
// GOMAXPROCS. Commands call it once, from --threads, before any work.
func setThreadBudget(n int) int {
	par.SetThreads(n)
	runtime.GOMAXPROCS(n)
	return n
}

// setAloneThreads resolves *n (0: auto, see aloneThreads) for a process
// that works alone, stores it in *n and makes it the thread budget.
func setAloneThreads(n *int) error {
	t, _, err := aloneThreads(*n)
	if err != nil {
		return err
	}
	*n = setThreadBudget(t)
	return nil
}

// resolvePartMethod replaces --partition-method auto by the method it
// stands for: multilevel, reading --data distributed, under MPI with more
// than one rank where the distributed reader honours the cleaning flags;
// otherwise metis on rank 0 (saying why where --data was given).
func (d *dataFlags) resolvePartMethod(c comm.Comm, w *world, log io.Writer) {
	if d.partMethod != "auto" {
		return
	}
	d.partMethod = "metis"
	if c.Size() < 2 || d.data == "" || !w.mpi {
		return
	}
	if err := d.checkDistributed(); err != nil {
		if log != nil {
			fmt.Fprintf(log, "partition: auto: metis on rank 0, every rank loading the whole graph (%v)\n", err)
		}
		return
	}
	d.partMethod = "multilevel"
}

// distributedShard reports whether loadShard takes the distributed path:
// --data under mpirun with --partition-method multilevel, parmetis, ldg or random, on
// the default cleaning (symmetrise, deduplicate) without synthetic features.
func (d *dataFlags) distributedShard(c comm.Comm) bool {
	return c.Size() > 1 && d.data != "" && d.partMethod != "metis" && d.checkDistributed() == nil
}

// checkDistributed refuses the flags the distributed reader cannot honour.
func (d *dataFlags) checkDistributed() error {
	switch {
	case !d.undirected:
		return usageError{"--undirected=false: the distributed reader (ldg, or --data under mpirun) always symmetrises: use METIS in one process for a directed graph"}
	case !d.dedup:
		return usageError{"--dedup=false: the distributed reader (ldg, or --data under mpirun) always drops duplicate edges and self-loops: use METIS in one process to keep them"}
	case d.synthFeat > 0:
		return usageError{"--synthetic-features: not available with the distributed reader (ldg, or --data under mpirun): attach them once with supergcn convert --synthetic-features"}
	}
	return nil
}

// distSource is the dist.Source of the data flags; method names the
// partitioner (parmetis has the 32-bit arc limit).
func (d *dataFlags) distSource(method string, log io.Writer) dist.Source {
	src := dist.Source{Path: d.data, Format: d.format, Split: d.split, SplitFiles: d.splitFiles, Features: d.features, Labels: d.labels,
		IgnoreWeights: d.ignoreWeights}
	if log != nil && log != io.Discard {
		src.Progress = d.prog
	}
	if method == "parmetis" {
		src.MaxArcs = metis.MaxArcs
		src.MaxArcsRemedy = "partition it with --method multilevel or --method ldg (or --partition-method multilevel or ldg), which have no 32-bit limit, " +
			"or build supergcn with -tags scotch64 against a 64-bit PT-Scotch or -tags parmetis against a 64-bit ParMETIS (README: beyond 2^31 arcs)"
	}
	return src
}

// printDist prints the data line of a distributed read (rank 0).
func (d *dataFlags) printDist(log io.Writer, g *dist.Graph, ranks int, t0 time.Time) {
	if log == nil {
		return
	}
	fmt.Fprintf(log, "data: %s: %d nodes, %d edges, %d features, %d classes, split %d/%d/%d, read by %d ranks (%.2fs)\n",
		g.Name, g.NumNodes, g.NumArcs, g.FeatDim, g.NumClasses, g.NumTrain, g.NumValid, g.NumTest, ranks, time.Since(t0).Seconds())
}

// parmetisDist partitions the distributed graph with ParMETIS (PT-Scotch).
func parmetisDist(w *world, g *dist.Graph, parts int, weights string, o metis.Options) ([]int32, error) {
	if !w.mpi {
		return nil, usageError{"parmetis: needs MPI (run under mpirun)"}
	}
	ncon, vwgt, err := dist.VertexWeights(w.comm, g, weights)
	if err != nil {
		return nil, err
	}
	ptr, adj, err := dist.LocalCSR32(w.comm, g)
	if err != nil {
		return nil, err
	}
	// Hand the heap the reading stages freed back to the system before
	// PT-Scotch allocates its own: the two peaks then do not add up in RSS.
	debug.FreeOSMemory()
	var owner []int32
	err = mpi.Serialize(func() error {
		var err error
		owner, err = metis.ParMetisDistributed(w.fortranComm(), g.VtxDist, ptr, adj, vwgt, ncon, parts, o)
		return err
	})
	return owner, err
}

// multilevelDist partitions the distributed graph with dist.Multilevel,
// METIS partitioning the coarsest graph where this build links it; log
// (rank 0's, or nil) gets a line per level.
func multilevelDist(c comm.Comm, g *dist.Graph, parts int, weights string, seed uint64, imbalance float64, log io.Writer) ([]int32, error) {
	o := dist.MultilevelOptions{Weights: weights, Seed: seed, Imbalance: imbalance}
	if metis.Linked {
		o.Initial = metis.PartWeighted
	}
	if log != nil && log != io.Discard {
		o.Log = log
	}
	return dist.Multilevel(c, g, parts, o)
}

// loadShardDist reads --data distributed and partitions it in memory into
// one part per rank (partition/dist), never holding the whole graph.
func (d *dataFlags) loadShardDist(c comm.Comm, w *world, log io.Writer) (*partition.Shard, error) {
	t0 := time.Now()
	g, err := dist.Read(c, d.distSource(d.partMethod, log))
	if err != nil {
		return nil, err
	}
	d.printDist(log, g, c.Size(), t0)
	p := c.Size()
	t1 := time.Now()
	st := d.step(log, fmt.Sprintf("partition: %s into %d parts", d.partMethod, p))
	var owner []int32
	switch d.partMethod {
	case "random":
		owner = dist.RandomOwners(g, p, d.seed)
	case "ldg":
		owner, err = dist.LDG(c, g, p, dist.LDGOptions{ByDegree: d.partWeights != metis.WeightsNone})
	default:
		weights := d.partWeights
		if weights == metis.WeightsDegreeTrain && g.NumTrain == 0 {
			weights = metis.WeightsDegree
		}
		if d.partMethod == "multilevel" {
			owner, err = multilevelDist(c, g, p, weights, d.seed, 0, log)
		} else {
			owner, err = parmetisDist(w, g, p, weights, metis.Options{Weights: weights, Seed: int(d.seed)})
		}
	}
	st.Done()
	if err != nil {
		return nil, err
	}
	if log != nil {
		fmt.Fprintf(log, "partition: %s into %d parts, distributed (%.2fs)\n", d.partMethod, p, time.Since(t1).Seconds())
	}
	s, err := dist.Shard(c, g, owner, 0)
	if err != nil {
		return nil, err
	}
	if s.FeatDim > 0 && d.featNorm == "row" {
		graph.RowNormalize(s.X, s.FeatDim)
	}
	return s, nil
}
