package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/cmd/internal/evalargs"
	"github.com/supergcn/supergcn/cmd/internal/trainargs"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/task"
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
	fs.Uint64Var(&d.seed, "seed", 1, "seed of the synthetic data / partitioning (must match training for synthetic data, and for --task link its negatives)")
	targets := fs.String("targets", "", "a multilabel or regression model's target table, as train's --targets")
	fs.StringVar(&d.edgeSplit, "edge-split", "", "a link model's edge split, as train's --edge-split (the same spec and --seed give the same edges and negatives)")
	fs.StringVar(&d.edgeSplitFiles, "edge-split-files", "", "a link model's split files, as train's --edge-split-files")
	var pa evalargs.Pairs
	pa.Register(fs)
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
	d.noLabels = pa.Pairs != "" // a link model scoring pairs needs no labels
	if pa.Pairs == "" {
		kind, err := evalTask(ck, *model, *targets, d.edgeSplit, d.edgeSplitFiles, *predictions)
		if err != nil {
			return err
		}
		d.noLabels = kind.Table || kind.Pairs
	}
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
		if err != nil {
			return err
		}
		if pa.Pairs != "" {
			return pa.Score(c, s, ck, th, *kernel, os.Stdout)
		}
		y, err := trainargs.ReadTargets(ck.Task, *targets)
		if err != nil {
			return err
		}
		if d.edges != nil {
			y = &task.Table{Path: edgeSplitName(&d), Rows: int(s.NumGlobalNodes), Edges: d.edges, Seed: d.seed, NegRatio: ck.NegRatio,
				LinkMetric: ck.LinkMetric, Decoder: ck.Decoder}
		}
		sc, err := train.EvaluateTask(ck, s, c, th, *kernel, train.EvalOutputs{Predictions: *predictions != "", Embeddings: *embeddings != ""}, y)
		if err != nil {
			return err
		}
		if err := writeOutputs(c, "eval", os.Stdout, sc, *predictions, *embeddings); err != nil {
			return err
		}
		if c.Rank() == 0 {
			printEval(os.Stdout, *model, ck, sc)
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

// evalTask is the task of checkpoint ck (file model), checked against the
// target flags and --predictions before any data is read.
func evalTask(ck *train.Checkpoint, model, targets, edgeSplit, edgeSplitFiles, predictions string) (task.Kind, error) {
	kind, err := task.Lookup(ck.Task)
	if err != nil {
		return kind, fmt.Errorf("%s: %w", model, err)
	}
	if err := trainargs.CheckTargets(kind.Name, targets, edgeSplit, edgeSplitFiles); err != nil {
		return kind, usageError(fmt.Sprintf("%v (%s was trained for task %s)", err, model, kind.Name))
	}
	if predictions != "" && kind.Predictions == "" {
		return kind, usageError(fmt.Sprintf("--predictions: %s was trained for task %s, which scores pairs, not nodes (eval prints its metrics over the edge split; --embeddings writes the nodes' hidden layer)", model, kind.Name))
	}
	return kind, nil
}

// printEval prints the metrics of an evaluation: accuracies for node
// classification, else the task's metric, then its other metrics.
func printEval(w io.Writer, model string, ck *train.Checkpoint, sc *train.Scores) {
	what := ""
	if sc.Metric != "" {
		what = fmt.Sprintf(", task %s): %s", ck.Task, sc.Metric)
	} else {
		what = "):"
	}
	fmt.Fprintf(w, "eval: %s (%s, %d layers%s train %.4f (%d)  val %.4f (%d)  test %.4f (%d)\n",
		model, ck.Model.Model, ck.Model.Layers, what, sc.TrainAcc, sc.Train, sc.ValAcc, sc.Valid, sc.TestAcc, sc.Test)
	if len(sc.Extra) == 0 {
		return
	}
	split := func(k string) int { // train, val, test
		return slices.IndexFunc(task.Splits[:], func(p string) bool { return strings.HasPrefix(k, p+"_") })
	}
	keys := slices.SortedFunc(maps.Keys(sc.Extra), func(a, b string) int { return cmp.Or(split(a)-split(b), strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.4f", k, sc.Extra[k])
	}
	fmt.Fprintf(w, "eval: %s\n", strings.Join(parts, "  "))
}
