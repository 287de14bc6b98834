package main

import (
	"cmp"
	"fmt"
	"io"
	"os"

	"github.com/supergcn/supergcn/cmd/internal/evalargs"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/train"
)

func init() {
	register("eval", "score a saved model (--model FILE) on a dataset or partition directory", cmdEval)
}

func cmdEval(args []string) error {
	fs := newFlagSet("eval", "--model FILE [--data PATH | --synthetic SPEC | --partitions PDIR] [flags]")
	var d dataFlags
	d.register(fs, "score on")
	model := fs.String("model", "", "model file written by supergcn train --save")
	threads := new(int)
	threadsVar(fs, threads)
	kernel := fs.String("kernel", "", kernelHelp)
	mpiMode := fs.String("mpi", "auto", "MPI: auto|on|off")
	predictions := fs.String("predictions", "", "write the class scores (logits) of every node to FILE.npy (N × classes, float32, row = global node id)")
	embeddings := fs.String("embeddings", "", "write the last hidden layer of every node to FILE.npy (N × hidden, float32, row = global node id)")
	var pa evalargs.Pairs
	pa.Register(fs)
	fs.StringVar(&d.edgeSplit, "edge-split", "", "with --pairs: the --edge-split the model was trained with (its held-out edges removed from the graph again)")
	fs.StringVar(&d.edgeSplitFiles, "edge-split-files", "", "with --pairs: the --edge-split-files the model was trained with (likewise)")
	fs.Uint64Var(&d.seed, "seed", 1, "seed of the synthetic data / partitioning (must match training for synthetic data)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *model == "" {
		return usageError("--model: required")
	}
	if err := d.validate(fs); err != nil {
		return err
	}
	if _, err := checkKernel(*kernel); err != nil {
		return err
	}
	if err := distinctOutputs(append(d.inputPaths(), container.NamedPath{Name: "--model", Path: *model}),
		[]container.NamedPath{{Name: "--predictions", Path: *predictions}, {Name: "--embeddings", Path: *embeddings}}); err != nil {
		return err
	}
	for _, f := range [][2]string{{"predictions", *predictions}, {"embeddings", *embeddings}} {
		if err := container.CheckWritable(f[1]); err != nil {
			return usageError(fmt.Sprintf("--%s: %v", f[0], err))
		}
	}
	ck, err := train.LoadCheckpoint(*model)
	if err != nil {
		return err
	}
	if err := pa.Check(ck, *model, d.edgeSplit, d.edgeSplitFiles, d.inputPaths(), *predictions != "" || *embeddings != ""); err != nil {
		return err
	}
	d.noLabels = pa.Pairs != "" // a link model's data needs no labels
	if *embeddings != "" && ck.Model.Layers < 2 {
		return usageError(fmt.Sprintf("--embeddings: %s has one layer, so no hidden layer to write", *model))
	}
	// Preprocess the input as in training unless --feat-norm says otherwise.
	if !flagSet(fs, "feat-norm") && ck.FeatNorm != "" {
		d.featNorm = ck.FeatNorm
	} else if ck.FeatNorm != "" && d.featNorm != ck.FeatNorm {
		return usageError(fmt.Sprintf("--feat-norm: %s, but %s was trained with --feat-norm %s (its inputs must be preprocessed the same way)", d.featNorm, *model, ck.FeatNorm))
	}
	w, err := startWorld(*mpiMode)
	if err != nil {
		return err
	}
	return w.finish(func() error {
		c := w.comm
		th, _, err := jobThreads(c, *threads, rank0Stderr(c))
		if err != nil {
			return err
		}
		setThreadBudget(th)
		if err := checkBLASAddressSpace(th); err != nil {
			return err
		}
		s, err := d.loadShard(c, w, nil)
		if err != nil || pa.Pairs != "" {
			return cmp.Or(err, pa.Score(c, s, ck, th, *kernel, os.Stdout))
		}
		sc, err := train.EvaluateWith(ck, s, c, th, *kernel, train.EvalOutputs{Predictions: *predictions != "", Embeddings: *embeddings != ""})
		if err != nil {
			return err
		}
		if err := writeOutputs(c, "eval", os.Stdout, sc, *predictions, *embeddings); err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Fprintf(os.Stdout, "eval: %s (%s, %d layers): train %.4f (%d)  val %.4f (%d)  test %.4f (%d)\n",
				*model, ck.Model.Model, ck.Model.Layers, sc.TrainAcc, sc.Train, sc.ValAcc, sc.Valid, sc.TestAcc, sc.Test)
		}
		return nil
	}())
}

// writeOutputs writes, on rank 0, the per-node outputs of sc to the
// --predictions and --embeddings paths given (eval and train), each
// with a line to log (nil: none) naming command cmd.
func writeOutputs(c comm.Comm, cmd string, log io.Writer, sc *train.Scores, predictions, embeddings string) error {
	for _, o := range []struct {
		flag, path string
		m          *dense.Matrix
	}{{"predictions", predictions, sc.Predictions}, {"embeddings", embeddings, sc.Embeddings}} {
		if o.path == "" || c.Rank() != 0 {
			continue
		}
		if err := graph.WriteNpyF32(o.path, o.m.Rows, o.m.Cols, o.m.Data); err != nil {
			return fmt.Errorf("--%s: %w", o.flag, err)
		}
		if log != nil {
			fmt.Fprintf(log, "%s: wrote %s (%d × %d)\n", cmd, o.path, o.m.Rows, o.m.Cols)
		}
	}
	return nil
}
