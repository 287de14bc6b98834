package main

import (
	"fmt"
	"os"

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
	threads := fs.Int("threads", 0, "threads per rank for every parallel step (0: the cores of this node divided among its ranks)")
	kernel := fs.String("kernel", "", kernelHelp)
	mpiMode := fs.String("mpi", "auto", "MPI: auto|on|off")
	fs.Uint64Var(&d.seed, "seed", 1, "seed of the synthetic data / partitioning (must match training for synthetic data)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *model == "" {
		return usageError{"--model: required"}
	}
	if err := d.validate(fs); err != nil {
		return err
	}
	if _, err := checkKernel(*kernel); err != nil {
		return err
	}
	ck, err := train.LoadCheckpoint(*model)
	if err != nil {
		return err
	}
	// Preprocess the input as in training unless --feat-norm says otherwise.
	if !flagSet(fs, "feat-norm") && ck.FeatNorm != "" {
		d.featNorm = ck.FeatNorm
	}
	w, err := startWorld(*mpiMode)
	if err != nil {
		return err
	}
	return w.finish(func() error {
		c := w.comm
		th := setThreadBudget(*threads)
		s, err := d.loadShard(c, w, nil)
		if err != nil {
			return err
		}
		sc, err := train.Evaluate(ck, s, c, th, *kernel)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Fprintf(os.Stdout, "eval: %s (%s, %d layers): train %.4f (%d)  val %.4f (%d)  test %.4f (%d)\n",
				*model, ck.Model.Model, ck.Model.Layers, sc.TrainAcc, sc.Train, sc.ValAcc, sc.Valid, sc.TestAcc, sc.Test)
		}
		return nil
	}())
}
