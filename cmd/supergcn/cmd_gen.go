package main

import (
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/trainargs"
	"io"
	"os"
	"strings"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
)

func init() {
	register("gen", "generate a synthetic dataset (nested communities or a stochastic block model) into a binary file",
		func(args []string) error { return cmdGen(args, os.Stdout) })
}

const genSynopsis = "--spec SPEC --out FILE.sgb|FILE.npz"

// cmdGen runs `supergcn gen`: it generates the dataset of --spec, writes it
// in the binary format to --out and prints a one-line summary to out.
func cmdGen(args []string, out io.Writer) error {
	fs := newFlagSet("gen", genSynopsis)
	spec := fs.String("spec", "default", "a preset and/or comma-separated key=value pairs, e.g. products,nodes=100000 or nodes=100000,degree=16,classes=8,feat=64,seed=1; keys and presets:\n"+
		graph.GenSpecHelp())
	path := fs.String("out", "", "output file (required): the supergcn binary format, or a PyG-style .npz (sparse features as x_data, x_indices, x_indptr, x_shape); sparse features stay sparse in both")
	targets := fs.String("targets", "", "also write a target table for --task multilabel or regression to FILE.npy (N×T float32; docs/TASKS.md)")
	targetTask := fs.String("target-task", "multilabel", "the task of --targets: multilabel (0/1, 5% NaN) or regression")
	targetCols := fs.Int("target-tasks", 24, "tasks (columns) of --targets")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return usageError("--out: required")
	}
	if err := container.CheckWritable(*path); err != nil {
		return usageError(fmt.Sprintf("--out: %v", err))
	}
	if err := trainargs.CheckGenTargets(*targets, *targetTask, *targetCols); err != nil {
		return err
	}
	commit := removeTempsOnSignal(*path)
	s, err := graph.ParseGenSpec(*spec)
	if err != nil {
		return usageError("--" + err.Error())
	}
	t0 := time.Now()
	ds, err := graph.Generate(s)
	if err != nil {
		return err
	}
	feats := fmt.Sprintf("%d features", ds.FeatDim)
	if ds.Features.Sparse() {
		feats = fmt.Sprintf("%d sparse features (%d non-zeros)", ds.FeatDim, ds.Features.NNZ())
	}
	if strings.HasSuffix(strings.ToLower(*path), ".npz") {
		err = graph.WriteNpzDataset(*path, ds, false, false)
	} else {
		err = graph.WriteBinary(*path, ds)
	}
	if err != nil {
		return err
	}
	if err := trainargs.WriteGenTargets(*targets, ds, *targetTask, *targetCols, s.Seed); err != nil {
		return err
	}
	commit()
	fmt.Fprintf(out, "gen: %s: %d nodes, %d edges, %d classes, %s, split %d/%d/%d, %.2fs -> %s\n",
		ds.Name, ds.NumNodes(), ds.Graph.NNZ(), ds.NumClasses, feats,
		len(ds.Train), len(ds.Valid), len(ds.Test), time.Since(t0).Seconds(), *path)
	fmt.Fprintf(out, "gen: %s\n", graph.Degrees(ds.Graph))
	return nil
}
