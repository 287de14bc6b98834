package main

import (
	"flag"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"io"
	"os"
	"strings"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dataset"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/dist"
	"github.com/supergcn/supergcn/partition/metis"
)

func init() {
	register("partition", "partition a dataset (METIS, or distributed under mpirun: multilevel, ParMETIS, LDG; or random) into a partition directory", cmdPartition)
}

// partitionFlags are the flags of `supergcn partition`.
type partitionFlags struct {
	d         dataFlags
	parts     int
	method    string
	weights   string
	imbalance float64
	ldgRounds int
	ldgPasses int
	out       string
	threads   int
	commit    func() // marks --out complete (removeTempsOnSignal)
}

func cmdPartition(args []string) error {
	var f partitionFlags
	fs := newFlagSet("partition", "(--data PATH | --synthetic SPEC) --parts N --method auto|metis|multilevel|parmetis|ldg|random --out PDIR [flags]")
	d := &f.d
	d.registerSource(fs, "partition")
	fs.Uint64Var(&d.seed, "seed", 1, "random seed (partitioner, synthetic data)")
	fs.IntVar(&f.parts, "parts", 0, "number of parts (a multiple of the ranks that will train on it)")
	fs.StringVar(&f.method, "method", "auto", "auto (multilevel under mpirun with --data, else metis) | metis (one process) | multilevel (distributed, every rank of mpirun or one process) | parmetis (every rank of mpirun) | ldg (streaming, no global partitioner) | random")
	fs.IntVar(&f.ldgRounds, "ldg-rounds", 32, "ldg: batches per rank between which the ranks exchange their placements")
	fs.IntVar(&f.ldgPasses, "ldg-passes", 3, "ldg: streams over the nodes (later ones re-place each node knowing all its neighbours' parts)")
	fs.StringVar(&f.weights, "weights", metis.WeightsDegreeTrain, "vertex weights: none|degree|degree+train (ncon=2: work and labelled nodes)")
	fs.Float64Var(&f.imbalance, "imbalance", metis.DefaultImbalance, "allowed load imbalance per constraint (0.05 = 5%)")
	fs.StringVar(&f.out, "out", "", "partition directory to write (replaced if it holds a partition)")
	threadsVar(fs, &f.threads)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f.resolveMethod()
	if err := f.validate(); err != nil {
		return err
	}
	f.commit = removeTempsOnSignal(f.out)
	if f.method != "ldg" {
		var ldgOnly string
		fs.Visit(func(fl *flag.Flag) {
			if strings.HasPrefix(fl.Name, "ldg-") && ldgOnly == "" {
				ldgOnly = fl.Name
			}
		})
		if ldgOnly != "" {
			return usageError(fmt.Sprintf("--%s: applies to --method ldg only (not %s)", ldgOnly, f.method))
		}
	}
	d.prog = progress.ForStderr(false)
	if f.distributed() {
		// Every rank reads its share of --data; the parts are written by all.
		w, err := startWorld("auto")
		if err != nil {
			return err
		}
		if err := f.setJobThreads(w); err != nil {
			return w.finish(err)
		}
		var log io.Writer = io.Discard
		if w.comm.Rank() == 0 {
			log = os.Stdout
		} else {
			d.prog = nil
		}
		return w.finish(f.run(w, log, true))
	}
	if f.method != "parmetis" {
		if err := setAloneThreads(&f.threads); err != nil {
			return err
		}
		return f.run(nil, os.Stdout, false)
	}
	// ParMETIS: every rank loads the graph and partitions its node range;
	// rank 0 writes the directory.
	w, err := startWorld("on")
	if err != nil {
		return err
	}
	if err := f.setJobThreads(w); err != nil {
		return w.finish(err)
	}
	var log io.Writer = io.Discard
	if w.comm.Rank() == 0 {
		log = os.Stdout
	}
	return w.finish(f.run(w, log, false))
}

// setJobThreads makes this rank's --threads (auto: the cores its node's
// ranks share, divided among them) its thread budget: ranks launched without
// a binding would otherwise each run as many threads as the node has cores.
func (f *partitionFlags) setJobThreads(w *world) error {
	th, _, err := jobThreads(w.comm, f.threads, nil) // layout warnings are train's
	if err != nil {
		return err
	}
	f.threads = setThreadBudget(th)
	return nil
}

func (f *partitionFlags) validate() error {
	d := &f.d
	switch {
	case (d.data == "") == (d.synthetic == ""):
		return usageError("give exactly one of --data and --synthetic")
	case f.out == "":
		return usageError("--out: the partition directory is required")
	case f.parts < 1:
		return usageError(fmt.Sprintf("--parts: %d, want a positive number of parts", f.parts))
	case !(f.imbalance >= 0 && f.imbalance <= 10): // NaN too
		return usageError(fmt.Sprintf("--imbalance: %g outside [0, 10]", f.imbalance))
	}
	switch f.method {
	case "metis", "multilevel", "parmetis", "random", "ldg":
	default:
		return usageError(fmt.Sprintf("--method: %q is not auto, metis, multilevel, parmetis, ldg or random", f.method))
	}
	if f.ldgRounds < 1 || f.ldgRounds > 1<<20 {
		return usageError(fmt.Sprintf("--ldg-rounds: %d, want an integer in [1, 2^20]", f.ldgRounds))
	}
	if f.ldgPasses < 1 || f.ldgPasses > 100 {
		return usageError(fmt.Sprintf("--ldg-passes: %d, want an integer in [1, 100]", f.ldgPasses))
	}
	if (f.method == "ldg" || f.method == "multilevel") && d.data == "" {
		return usageError(fmt.Sprintf("--method %s: reads --data (for --synthetic, use metis or random)", f.method))
	}
	if err := checkFormatFlag(d.format); err != nil {
		return err
	}
	switch f.weights {
	case metis.WeightsNone, metis.WeightsDegree, metis.WeightsDegreeTrain:
	default:
		return usageError(fmt.Sprintf("--weights: %q is not none, degree or degree+train", f.weights))
	}
	d.featNorm = "none" // features are stored raw; train normalises on load
	if f.method == "ldg" || f.method == "multilevel" {
		if err := d.checkDistributed(); err != nil {
			return err
		}
	}
	if n := launcherSize(); n > 1 && !f.distributed() && f.method != "parmetis" {
		why := "runs in one process"
		if f.method == "random" {
			why = "runs distributed only on --data with the default cleaning (no --synthetic-features, --undirected=false, --dedup=false)"
		}
		return usageError(fmt.Sprintf("--method %s %s, but a launcher started %d ranks: run it without mpirun, or use --method multilevel (or parmetis, ldg)", f.method, why, n))
	}
	if f.distributed() {
		if n := max(1, launcherSize()); dist.CheckParts(f.parts, n) != nil {
			return usageError(fmt.Sprintf("--parts: %d parts on %d ranks: the parts must be a multiple of the ranks, or the ranks a multiple of the parts", f.parts, n))
		}
	}
	if err := distinctOutputs(f.d.inputPaths(), []container.NamedPath{{Name: "--out", Path: f.out}}); err != nil {
		return err
	}
	if err := partition.CheckOutput(f.out); err != nil {
		return usageError(fmt.Sprintf("--out: %v", strings.TrimPrefix(err.Error(), "partition: ")))
	}
	return nil
}

// resolveMethod replaces --method auto by multilevel for --data under a
// launcher of several ranks, else by metis.
func (f *partitionFlags) resolveMethod() {
	if f.method != "auto" {
		return
	}
	f.method = "metis"
	if f.d.data != "" && launcherSize() > 1 && f.d.checkDistributed() == nil {
		f.method = "multilevel"
	}
}

// partitioning is the dataset.Partitioning of the flags.
func (f *partitionFlags) partitioning() *dataset.Partitioning {
	src := f.d.source()
	src.PartMethod, src.PartWeights = f.method, f.weights
	return &dataset.Partitioning{Source: *src, Parts: f.parts, Imbalance: f.imbalance, LDGRounds: f.ldgRounds, LDGPasses: f.ldgPasses, Out: f.out}
}

// run loads, partitions and (on rank 0, or alone) writes, then prints the
// partition's summary; dist: read, partitioned and written distributed.
// w is nil outside MPI.
func (f *partitionFlags) run(w *world, log io.Writer, distributed bool) error {
	c, from, write := comm.Single(), "", f.partitioning().Write
	if w != nil {
		c = w.comm
	}
	if distributed {
		from, write = fmt.Sprintf(" from %d ranks", c.Size()), f.partitioning().WriteDist
	}
	t, err := write(c, w.parmetisMPI(), flagtab.Writer(log))
	if err != nil || t.IsZero() {
		return err
	}
	if f.commit != nil {
		f.commit()
	}
	return printWritten(log, f.out, from, t)
}

// printWritten reads back the partition written to out (started at t0) and
// prints its summary and a "wrote" line; from follows the part-file count.
func printWritten(log io.Writer, out, from string, t0 time.Time) error {
	m, err := partition.ReadMeta(out)
	if err != nil {
		return err
	}
	printPartitionSummary(log, m)
	var bytes int64
	for _, p := range m.Stats.Parts {
		bytes += p.Bytes
	}
	fmt.Fprintf(log, "wrote %s: %d part files%s, %.1f MB (%.2fs)\n", out, m.Parts, from, float64(bytes)/1e6, time.Since(t0).Seconds())
	return nil
}

// printPartitionSummary prints the edge cut, the imbalances and, for up to
// 16 parts, one line per part.
func printPartitionSummary(w io.Writer, m *partition.Meta) {
	fmt.Fprintf(w, "edge cut: %d of %d arcs (%.2f%%), halo rows %d\n", m.EdgeCut, m.NumEdges, 100*m.CutFraction, m.TotalHaloRows)
	fmt.Fprintf(w, "imbalance (max/avg): nodes %.3f, edges %.3f, halo rows %.3f\n", m.NodeImbalance, m.EdgeImbalance, m.HaloImbalance)
	if m.Parts > 16 {
		return
	}
	fmt.Fprintf(w, "%5s %10s %10s %10s %10s %10s %10s %8s\n", "part", "nodes", "local", "cut", "inner", "boundary", "halo", "train")
	for _, p := range m.Stats.Parts {
		fmt.Fprintf(w, "%5d %10d %10d %10d %10d %10d %10d %8d\n", p.Part, p.Nodes, p.LocalEdges, p.CutEdges,
			p.InnerNodes, p.BoundaryNodes, p.HaloRows, p.TrainNodes)
	}
}

// distributed reports whether the partition runs on the distributed path
// (partition/dist): --data, with the default cleaning (see checkDistributed),
// under a launcher (even of one rank) with parmetis or random, or ldg and
// multilevel anywhere. Every rank then reads only its share of the input.
func (f *partitionFlags) distributed() bool {
	if f.d.data == "" || f.d.checkDistributed() != nil {
		return false // parmetis then has every rank load the whole graph
	}
	return f.method == "ldg" || f.method == "multilevel" || (launchedByMPI() && (f.method == "parmetis" || f.method == "random"))
}
