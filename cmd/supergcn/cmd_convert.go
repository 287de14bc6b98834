package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/supergcn/supergcn/dataset"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
)

func init() {
	register("convert", "convert a dataset (OGB, edge list, METIS, binary) into the binary format, with optional preprocessing",
		func(args []string) error { return cmdConvert(args, os.Stdout) })
}

const convertSynopsis = "--data PATH [--format F] [--split NAME|random:TRAIN,VALID] [--split-files DIR] [--symmetrize] [--dedup] [--remove-self-loops] " +
	"[--synthetic-features DIM --classes C] --out FILE.sgb|FILE.npz"

// convertFlags are the flags of `supergcn convert`.
type convertFlags struct {
	data, format, split, splitFiles, out string
	features, labels                     string
	symmetrize, dedup, removeSelfLoops   bool
	denseFeatures                        bool
	synthFeat, classes                   int
	seed                                 uint64
}

func (c *convertFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "", "input: OGB-layout directory (CSV or npz), PyG-style .npz file, edge-list file, METIS graph file or supergcn binary file (required)")
	fs.StringVar(&c.format, "format", "auto", "input format: "+strings.Join(graph.Formats(), "|"))
	fs.StringVar(&c.split, "split", "", splitHelp)
	fs.StringVar(&c.splitFiles, "split-files", "", splitFilesHelp)
	fs.StringVar(&c.features, "features", "", "node features from a .npy file (N×F) or a scipy sparse .npz, overriding the input's")
	fs.BoolVar(&c.denseFeatures, "dense-features", false, "store sparse features dense (kept sparse by default)")
	fs.StringVar(&c.labels, "labels", "", "node labels from a .npy file (N), overriding the input's")
	fs.BoolVar(&c.symmetrize, "symmetrize", false, "make the graph undirected: add every reverse edge, merge duplicates")
	fs.BoolVar(&c.dedup, "dedup", false, "merge duplicate edges")
	fs.BoolVar(&c.removeSelfLoops, "remove-self-loops", false, "drop self-loops")
	fs.IntVar(&c.synthFeat, "synthetic-features", 0, "attach DIM synthetic features, structure-correlated labels and a 10/10/80 split")
	fs.IntVar(&c.classes, "classes", 8, "classes for --synthetic-features")
	fs.Uint64Var(&c.seed, "seed", 1, "seed for --synthetic-features")
	fs.StringVar(&c.out, "out", "", "output file: supergcn binary format, or a PyG-style .npz (arrays stored uncompressed) when named *.npz (required)")
}

// cmdConvert runs `supergcn convert`: load, preprocess in the order
// remove-self-loops, dedup, symmetrize, synthetic features, then write.
func cmdConvert(args []string, out io.Writer) error {
	fs := newFlagSet("convert", convertSynopsis)
	var c convertFlags
	c.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case c.data == "":
		return usageError("--data: required")
	case c.out == "":
		return usageError("--out: required")
	case c.synthFeat < 0:
		return usageError(fmt.Sprintf("--synthetic-features: %d is negative", c.synthFeat))
	case c.synthFeat > 0 && c.classes < 1:
		return usageError(fmt.Sprintf("--classes: %d, want ≥ 1", c.classes))
	}
	if err := checkFormatFlag(c.format); err != nil {
		return err
	}
	if err := container.CheckWritable(c.out); err != nil {
		return usageError(fmt.Sprintf("--out: %v", err))
	}
	if err := distinctOutputs([]container.NamedPath{{Name: "--data", Path: c.data}, {Name: "--features", Path: c.features},
		{Name: "--labels", Path: c.labels}}, []container.NamedPath{{Name: "--out", Path: c.out}}); err != nil {
		return err
	}
	commit := removeTempsOnSignal(c.out)
	t0 := time.Now()
	conv := dataset.Conversion{Data: c.data, Load: graph.LoadOptions{Format: c.format, Split: c.split, SplitFiles: c.splitFiles, Features: c.features, Labels: c.labels},
		RemoveSelfLoops: c.removeSelfLoops, Dedup: c.dedup, Symmetrize: c.symmetrize, SynthFeat: c.synthFeat, DenseFeatures: c.denseFeatures, Classes: c.classes, Seed: c.seed, Out: c.out}
	ds, loaded, err := conv.Run()
	if err != nil {
		return err
	}
	commit()
	defer ds.Release()
	fmt.Fprintf(out, "convert: %s: %d nodes, %d edges, %d features, %d classes, split %d/%d/%d (load %.2fs, total %.2fs) -> %s\n",
		ds.Name, ds.NumNodes(), ds.Graph.NNZ(), ds.FeatDim, ds.NumClasses,
		len(ds.Train), len(ds.Valid), len(ds.Test), loaded.Seconds(), time.Since(t0).Seconds(), c.out)
	fmt.Fprintf(out, "convert: %s\n", graph.Degrees(ds.Graph))
	return nil
}
