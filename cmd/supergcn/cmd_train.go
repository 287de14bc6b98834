package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/train"
)

func init() {
	register("train", "train a GCN or GraphSAGE model full-batch (one process, or every rank under mpirun)", cmdTrain)
}

func cmdTrain(args []string) error {
	fs := newFlagSet("train", "[--data PATH | --synthetic SPEC | --partitions PDIR] [flags]")
	var d dataFlags
	d.register(fs)
	var cfg train.Config
	var mpiMode, bitsFlag, bitsBack string
	fs.StringVar(&cfg.Model.Model, "model", "gcn", "model: gcn|sage (GraphSAGE with mean aggregation)")
	fs.IntVar(&cfg.Model.Layers, "layers", 2, "graph layers")
	fs.IntVar(&cfg.Model.Hidden, "hidden", 16, "hidden width")
	fs.Float64Var(&cfg.Model.Dropout, "dropout", 0.5, "dropout rate (input and hidden)")
	fs.StringVar(&cfg.Model.Norm, "norm", "none", "normalisation between layers: none|layer")
	fs.Float64Var(&cfg.LR, "lr", 0.01, "Adam learning rate")
	fs.Float64Var(&cfg.WeightDecay, "weight-decay", 5e-4, "weight decay (L2 added to the gradient, as torch.optim.Adam; first layer only unless --decay-all)")
	fs.BoolVar(&cfg.DecayAll, "decay-all", false, "apply weight decay to every weight matrix")
	fs.BoolVar(&cfg.Decoupled, "adamw", false, "decoupled weight decay (AdamW)")
	fs.IntVar(&cfg.Epochs, "epochs", 200, "epochs")
	fs.Uint64Var(&d.seed, "seed", 1, "random seed (weights, dropout, synthetic data, partitioning)")
	fs.IntVar(&cfg.Threads, "threads", 0, "aggregation threads per rank (0: the cores of this rank)")
	fs.StringVar(&cfg.Kernel, "kernel", "", "aggregation kernel: generic|avx2|avx512|neon|sve (default: best; env SUPERGCN_KERNEL)")
	fs.StringVar(&cfg.AggrMode, "aggr-mode", "hybrid", "boundary aggregation: post|pre|hybrid (minimum vertex cover)")
	fs.StringVar(&bitsFlag, "bits", "auto", "bits per boundary value sent forward: 32|8|4|2 (auto: 2 with several ranks, else 32)")
	fs.StringVar(&bitsBack, "bits-backward", "", "bits per gradient value sent back (default: as --bits)")
	fs.BoolVar(&cfg.ParamsHalf, "half-params", false, "send per-row quantisation parameters as fp16 (halves their bytes)")
	fs.Float64Var(&cfg.LabelProp, "label-prop", 0, "label propagation: fraction of training nodes whose label embedding is added to the input each epoch (0 = off)")
	fs.StringVar(&cfg.MetricsPath, "metrics", "", "write per-epoch metrics as JSON lines to FILE")
	fs.StringVar(&cfg.SavePath, "save", "", "save the trained model to FILE")
	fs.StringVar(&mpiMode, "mpi", "auto", "MPI: auto (when launched by mpirun/srun)|on|off")
	quiet := fs.Bool("quiet", false, "only the summary, no per-epoch lines")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile to FILE (FILE.rankN under MPI with several ranks)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := d.validate(); err != nil {
		return err
	}
	kernel, err := checkKernel(cfg.Kernel)
	if err != nil {
		return err
	}
	cfg.Seed = d.seed
	cfg.FeatNorm = d.featNorm
	cfg.Quiet = *quiet
	cfg.Model.Seed = d.seed
	w, err := startWorld(mpiMode)
	if err != nil {
		return err
	}
	stop, err := startProfile(*cpuProfile, w.comm)
	if err != nil {
		return w.finish(err)
	}
	err = runTrain(w, &d, cfg, kernel, bitsFlag, bitsBack)
	stop()
	return w.finish(err)
}

func runTrain(w *world, d *dataFlags, cfg train.Config, kernel, bitsFlag, bitsBack string) error {
	c := w.comm
	var log io.Writer
	if c.Rank() == 0 {
		log = os.Stdout
	}
	var err error
	if cfg.Bits, err = parseBits("--bits", bitsFlag, c.Size()); err != nil {
		return err
	}
	cfg.BitsBackward = cfg.Bits
	if bitsBack != "" {
		if cfg.BitsBackward, err = parseBits("--bits-backward", bitsBack, c.Size()); err != nil {
			return err
		}
	}
	if cfg.Threads <= 0 {
		cfg.Threads = defaultThreads()
	}
	dense.SetThreads(cfg.Threads)
	s, err := d.loadShard(c, w, log)
	if err != nil {
		return err
	}
	if log != nil {
		fmt.Fprintf(log, "train: %s, %d layers, hidden %d, %d rank(s) × %d threads, kernel %s, blas %s, aggr-mode %s, bits %d/%d, label-prop %g\n",
			cfg.Model.Model, cfg.Model.Layers, cfg.Model.Hidden, c.Size(), cfg.Threads, kernel, dense.Backend(),
			cfg.AggrMode, cfg.Bits, cfg.BitsBackward, cfg.LabelProp)
	}
	cfg.Log = log
	_, err = train.Run(cfg, s, c)
	return err
}

// parseBits reads a --bits value; "auto" is 2 with several ranks, 32 alone.
func parseBits(flagName, v string, ranks int) (int, error) {
	switch v {
	case "auto":
		if ranks > 1 {
			return 2, nil
		}
		return 32, nil
	case "32":
		return 32, nil
	case "8":
		return 8, nil
	case "4":
		return 4, nil
	case "2":
		return 2, nil
	}
	return 0, usageError{fmt.Sprintf("%s: %q is not 32, 8, 4, 2 or auto", flagName, v)}
}

// startProfile starts a CPU profile when path is set; the returned func stops it.
func startProfile(path string, c comm.Comm) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	if c.Size() > 1 {
		path = fmt.Sprintf("%s.rank%d", path, c.Rank())
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
