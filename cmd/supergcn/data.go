package main

import (
	"flag"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"io"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dataset"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/partition"
)

// dataFlags are the flags that say where a rank's data comes from.
type dataFlags struct {
	data, format, split, splitFiles string
	features, labels                string
	noLabels                        bool             // the task reads its own targets (set by train, not a flag)
	nodeFeatFromEdges               string           // --node-feat-from-edges
	edgeSplit                       string           // train's --edge-split
	edgeSplitFiles                  string           // train's --edge-split-files
	edges                           *graph.EdgeSplit // the edge split loadShard made
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
	fs.StringVar(&d.features, "features", "", "node features from a .npy file (N×F) or a scipy.sparse.save_npz .npz (kept sparse), overriding the dataset's")
	fs.StringVar(&d.labels, "labels", "", "node labels from a .npy file (N), overriding the dataset's")
	fs.StringVar(&d.nodeFeatFromEdges, "node-feat-from-edges", "", "append to the node features the "+strings.Join(graph.EdgeFeatReductions(), "|")+" of the features of each node's edges (an OGB directory's raw/edge-feat.csv[.gz], as ogbn-proteins' examples)")
	fs.StringVar(&d.synthetic, "synthetic", "", verb+" a generated graph: a spec like nodes=100000,degree=16,classes=8,feat=64,seed=1 (keys: supergcn gen --help); 'default' = the built-in dataset")
	fs.IntVar(&d.synthFeat, "synthetic-features", 0, "attach DIM synthetic class-correlated features and labels to a structure-only graph")
	fs.IntVar(&d.synthClasses, "classes", 8, "classes for --synthetic-features")
	fs.BoolVar(&d.undirected, "undirected", true, "make the graph undirected (add every reverse edge)")
	fs.BoolVar(&d.dedup, "dedup", true, "drop duplicate edges and self-loops (GCN adds its own self-loops)")
	fs.BoolVar(&d.ignoreWeights, "ignore-weights", false, "drop the edge weights of --data and train on the unweighted graph (weighted GCN and SAGE otherwise; docs/MODELS.md)")
}

// sourceFlags shape the input graph; a partition directory is already built.
var sourceFlags = []string{"format", "split", "split-files", "features", "labels", "node-feat-from-edges", "edge-split", "edge-split-files", "synthetic-features", "classes", "undirected", "dedup", "ignore-weights", "partition-method", "partition-weights"}

// The help texts of the split flags (train, eval, partition, convert).
const (
	splitHelp = "split: NAME of a directory under split/ of an OGB-layout directory (default: public, or the only one), " +
		"or random:TRAIN,VALID[,TEST][:SEED] fractions of the labelled nodes (TEST: the rest; SEED: 0), for any --data"
	splitFilesHelp = "directory with train, valid (or val) and test files: .npy node ids or boolean masks, or .csv[.gz] one id a line; for any --data"
)

// source is the dataset.Source of the flags.
func (d *dataFlags) source() *dataset.Source {
	return &dataset.Source{Data: d.data, Format: d.format, Split: d.split, SplitFiles: d.splitFiles, Features: d.features, Labels: d.labels,
		NoLabels: d.noLabels, NodeFeatFromEdges: d.nodeFeatFromEdges, EdgeSplit: d.edgeSplit, EdgeSplitFiles: d.edgeSplitFiles, Synthetic: d.synthetic, Partitions: d.partitions, SynthFeat: d.synthFeat, SynthClasses: d.synthClasses,
		Undirected: d.undirected, Dedup: d.dedup, IgnoreWeights: d.ignoreWeights, FeatNorm: d.featNorm,
		PartMethod: d.partMethod, PartWeights: d.partWeights, Seed: d.seed, Progress: d.prog,
		MaxArcsRemedy: "partition it with --method multilevel or --method ldg (or --partition-method multilevel or ldg), which have no 32-bit limit, " +
			"or build supergcn with -tags scotch64 against a 64-bit PT-Scotch or -tags parmetis against a 64-bit ParMETIS (docs/CLI.md: beyond 2^31 arcs)"}
}

// describe names the data for the metrics header: the path or spec given.
func (d *dataFlags) describe() string { return d.source().Describe() }

func (d *dataFlags) validate(fs *flag.FlagSet) error {
	if d.partitions != "" {
		for _, f := range sourceFlags {
			if flagSet(fs, f) {
				return usageError(fmt.Sprintf("--%s: has no effect with --partitions (the directory was built by supergcn partition; give it there)", f))
			}
		}
	}
	if d.data == "" && d.partitions == "" {
		for _, f := range []string{"format", "split", "split-files", "features", "labels", "node-feat-from-edges"} {
			if flagSet(fs, f) {
				return usageError(fmt.Sprintf("--%s: applies to --data; a generated graph has its own split (its spec's train/valid/test keys)", f))
			}
		}
	}
	if err := checkFormatFlag(d.format); err != nil {
		return err
	}
	if err := d.source().Validate(); err != nil {
		return err
	}
	switch d.partMethod {
	case "auto", "metis", "multilevel", "parmetis", "random", "ldg":
	default:
		return usageError(fmt.Sprintf("--partition-method: %q is not auto, metis, multilevel, parmetis, ldg or random", d.partMethod))
	}
	if d.partMethod == "ldg" && d.data == "" && d.partitions == "" {
		return usageError("--partition-method ldg: reads --data (for --synthetic, use metis, parmetis or random)")
	}
	return nil
}

// loadDataset reads or generates the whole dataset and cleans it.
func (d *dataFlags) loadDataset(log io.Writer) (*graph.Dataset, error) {
	return d.source().Load(flagtab.Writer(log))
}

// loadShard returns this rank's shard (dataset.Source.Shard), after
// resolving --partition-method auto.
func (d *dataFlags) loadShard(c comm.Comm, w *world, log io.Writer) (*partition.Shard, error) {
	if d.partitions == "" {
		d.resolvePartMethod(c, w, log)
	}
	src := d.source()
	sh, err := src.Shard(c, w.parmetisMPI(), flagtab.Writer(log))
	d.edges = src.Edges
	return sh, err
}

// inputPaths are the files and directories the data flags name.
func (d *dataFlags) inputPaths() []container.NamedPath {
	return []container.NamedPath{{Name: "--data", Path: d.data}, {Name: "--features", Path: d.features},
		{Name: "--labels", Path: d.labels}, {Name: "--partitions", Path: d.partitions}, {Name: "--edge-split-files", Path: d.edgeSplitFiles}}
}

// distinctOutputs refuses outputs that name an input or each other
// (container.CheckDistinct) as a usage error.
func distinctOutputs(inputs, outputs []container.NamedPath) error {
	if err := container.CheckDistinct(inputs, outputs); err != nil {
		return usageError(err.Error())
	}
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
			fmt.Fprintf(log, "partition: auto: metis on rank 0, every rank loading the whole graph (%s)\n", flagtab.UserMessage(err))
		}
		return
	}
	d.partMethod = "multilevel"
}

// checkDistributed refuses the flags the distributed reader cannot honour.
func (d *dataFlags) checkDistributed() error { return d.source().CheckDistributed() }

// checkFormatFlag refuses a --format that is not auto or a known format,
// as a usage error (exit 2) before anything is read.
func checkFormatFlag(format string) error {
	if format != "" && !slices.Contains(graph.Formats(), strings.ToLower(format)) {
		return usageError(fmt.Sprintf("--format: %q: unknown format (want %s)", format, strings.Join(graph.Formats(), ", ")))
	}
	return nil
}
