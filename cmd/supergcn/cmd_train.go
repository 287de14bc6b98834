package main

import (
	"flag"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/cpuprofile"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/cmd/internal/trainargs"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/interop"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
	"github.com/supergcn/supergcn/task"
	"github.com/supergcn/supergcn/train"
)

func init() {
	register("train", "train a graph neural network (--model) full-batch (one process, or every rank under mpirun)", cmdTrain)
}

func cmdTrain(args []string) error {
	st := newStopper(launchedByMPI())
	defer st.release()
	a, err := parseTrain(args)
	if err != nil {
		return err
	}
	st.after(a.stopAfter)
	a.cfg.Stop = st.requested
	a.cfg.Header = &train.RunHeader{Version: version, Commit: buildCommit(), Command: os.Args, Dataset: a.d.describe()}
	w, err := startWorld(a.mpiMode)
	if err != nil {
		return err
	}
	stop, err := cpuprofile.Start(a.cpuProfile, w.comm)
	if err != nil {
		return w.finish(err)
	}
	err = runTrain(w, a)
	if perr := stop(); err == nil {
		err = perr
	}
	return w.finish(err)
}

// trainArgs is a checked train command line.
type trainArgs struct {
	d                  dataFlags
	cfg                train.Config
	mpiMode            string
	bits               trainargs.Bits
	kernel, cpuProfile string
	targets            string // --targets
	negRatio           int    // --neg-ratio
	linkMetric         string // --link-metric
	decoder            string // --decoder
	stopAfter          time.Duration
	// predictions and embeddings are the files of the per-node outputs
	// (cfg.Outputs), written by rank 0 after training.
	predictions, embeddings string
}

// parseTrain parses and checks the train flags (reading the --resume
// checkpoint, probing output paths), before any data is read.
func parseTrain(args []string) (*trainArgs, error) {
	fs := newFlagSet("train", "[--data PATH | --synthetic SPEC | --partitions PDIR] [flags]")
	a := &trainArgs{bits: trainargs.Bits{Params: quant.ParamsBlock}}
	d, cfg, bits := &a.d, &a.cfg, &a.bits
	d.register(fs, "train on")
	modelFlags(fs, &cfg.Model)
	fs.Float64Var(&cfg.Model.Dropout, "dropout", 0.5, "dropout rate (input and hidden)")
	fs.StringVar(&cfg.Model.Norm, "norm", "none", "normalisation between layers: none|layer|batch (batch: over every rank's nodes, running statistics in evaluation)")
	attentionFlags(fs, &cfg.Model)
	fs.StringVar(&cfg.Model.Precision, "precision", "fp32", "operands of the dense products: fp32, or bf16 (rounded to bfloat16, float32 sums; on the AMX tile unit where the CPU has it, emulated and slower elsewhere)")
	fs.Float64Var(&cfg.LR, "lr", 0.01, "Adam learning rate")
	fs.Float64Var(&cfg.WeightDecay, "weight-decay", 5e-4, "weight decay (L2 added to the gradient, as torch.optim.Adam; first layer only unless --decay-all)")
	fs.BoolVar(&cfg.DecayAll, "decay-all", false, "apply weight decay to every weight matrix")
	fs.BoolVar(&cfg.Decoupled, "adamw", false, "decoupled weight decay (AdamW)")
	fs.IntVar(&cfg.Epochs, "epochs", 200, "epochs")
	loopFlags(fs, cfg)
	fs.Uint64Var(&d.seed, "seed", 1, "random seed (weights, dropout, synthetic data, partitioning)")
	threadsVar(fs, &cfg.Threads)
	fs.StringVar(&cfg.Kernel, "kernel", "", kernelHelp)
	fs.StringVar(&cfg.NodeOrder, "node-order", partition.DefaultOrder, "order of each rank's nodes in memory, for cache reuse in the aggregation: "+strings.Join(partition.NodeOrders(), "|")+" (given: ascending global id, as stored; degree: most-gathered first; rcm: reverse Cuthill-McKee; cluster: label-propagation clusters, hubs first within each); results are the same up to float summation order")
	fs.StringVar(&cfg.AggrMode, "aggr-mode", "hybrid", "boundary aggregation: post|pre|hybrid (minimum vertex cover)")
	fs.StringVar(&bits.Intra, "intra-bits", "32", "bits per value of the rows between ranks of one node (shared memory), both exchanges: "+quant.WidthList("|"))
	fs.StringVar(&cfg.Exchange, "exchange", "auto", "boundary exchange: flat (every rank pair; rows inside a node at --intra-bits)|two-level (once per node pair, then inside nodes)|two-level-paired (two-level, each rank talking to one rank per node)|auto (two-level when several nodes run several ranks each)")
	fs.StringVar(&bits.Fwd, "bits", "auto", "bits per boundary value sent forward (between nodes): "+quant.WidthList("|")+" (auto: 2 with several ranks, else 32)")
	fs.StringVar(&bits.Bwd, "bits-backward", "", "bits per gradient value sent back (default: as --bits)")
	fs.StringVar(&bits.Eval, "eval-bits", "", "bits per boundary value in the evaluation pass (default: as --bits; 32 for an fp32 evaluation)")
	fs.IntVar(&cfg.EvalEvery, "eval-every", 1, "evaluate every N epochs (and always after the last)")
	fs.StringVar(&cfg.EvalCache, "eval-cache", train.EvalCacheAuto, "keep the first layer's aggregate of the features for the evaluation passes (rows × features floats per rank; computed once, exact fp32 exchange; same results): auto (when the memory estimate with it fits)|on|off")
	fs.Func("quant-params", "quantised rows' (zero point, scale): block (bf16 zero + one-byte scale, ~3 bytes a row; default)|bf16 (4 bytes)|fp32 (8 bytes)", quantParamsFlag(&bits.Params))
	fs.Float64Var(&cfg.LabelProp, "label-prop", 0, "label propagation: fraction of training nodes whose label embedding is added to the input each epoch (0 = off)")
	fs.StringVar(&cfg.Task, "task", task.Default, "training objective: "+taskHelp())
	fs.StringVar(&d.edgeSplit, "edge-split", "", "--task link: random:TRAIN,VALID[,TEST][:SEED] fractions of the undirected edges; the validation and test edges are removed from the graph")
	fs.StringVar(&d.edgeSplitFiles, "edge-split-files", "", "--task link: directory of the fixed split's train, valid and test files (OGB's get_edge_split() keys in .npz, or .npy/.csv[.gz] pairs with NAME_neg negatives; docs/TASKS.md); the validation and test edges are removed from the graph")
	fs.StringVar(&a.linkMetric, "link-metric", "auto", "--task link: the metric that picks the best epoch: "+task.LinkMetrics+"; hitsK is OGB's Hits@K (50: ogbl-collab's), mrr needs per-source negatives (ogbl-citation2's)")
	fs.StringVar(&a.decoder, "decoder", "dot", "--task link: the pair scorer: dot (the endpoints' embeddings' dot product)|mlp (their Hadamard product through Linear(H,H), ReLU, Linear(H,1), trained with the model)")
	fs.IntVar(&a.negRatio, "neg-ratio", 1, "--task link: negatives drawn per training edge each epoch (uniform endpoints)")
	fs.StringVar(&a.targets, "targets", "", "the target table of --task multilabel or regression: "+task.TargetFormats+"; row g is node g")
	fs.StringVar(&cfg.MetricsPath, "metrics", "", "write per-epoch metrics as JSON lines to FILE")
	fs.StringVar(&cfg.SavePath, "save", "", "save the trained model (with the optimizer state, for --resume) to FILE")
	fs.StringVar(&cfg.SaveBest, "save-best", "", "also save the model of the best validation epoch so far to FILE (for eval; written when validation accuracy improves)")
	fs.IntVar(&cfg.SaveEvery, "save-every", 0, "also save to the --save FILE every N epochs, for --resume after a walltime kill (0: only at the end)")
	fs.StringVar(&a.predictions, "predictions", "", "after training, write the class scores (logits) of every node to FILE.npy (N × classes, float32, row = global node id; as eval --predictions) of the best-validation model (that of --save-best) when the split has validation nodes, else of the last epoch's")
	fs.StringVar(&a.embeddings, "embeddings", "", "after training, write the last hidden layer of every node to FILE.npy (N × its width, float32, row = global node id; as eval --embeddings), of the model --predictions takes")
	fs.StringVar(&cfg.ResumePath, "resume", "", "continue the training saved in checkpoint FILE up to --epochs (model and training settings come from it); --metrics is appended to")
	fs.StringVar(&cfg.InitPath, "init-from", "", "start from the weights in FILE.safetensors or FILE.npz (written by supergcn export, or PyG's names and PyTorch's layouts: docs/MODELS.md) instead of the seeded initialisation; shapes must match the model of the flags; the weights are evaluated before epoch 1 (epoch 0)")
	fs.StringVar(&a.mpiMode, "mpi", "auto", "MPI: auto (when launched by mpirun/srun)|on|off")
	quiet := fs.Bool("quiet", false, "quiet: only the final summary line, a resume notice and errors (no data, plan, progress or per-epoch lines)")
	fs.DurationVar(&a.stopAfter, "stop-after", 0, "stop cleanly after this long (e.g. 55m in a 1-hour job): finish the epoch, save to --save, exit with status 75; SIGTERM and SIGUSR1 do the same at once")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile to FILE (FILE.rankN under MPI with several ranks)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := modelDefaults(fs, &cfg.Model); err != nil {
		return nil, err
	}
	if err := gatFlags(fs, &cfg.Model, cfg.ResumePath != ""); err != nil {
		return nil, err
	}
	if err := d.validate(fs); err != nil {
		return nil, err
	}
	if cfg.InitPath != "" {
		if cfg.ResumePath != "" {
			return nil, usageError("--init-from: a resumed run continues the weights of --resume; give one of the two")
		}
		if _, err := interop.FormatOf(cfg.InitPath); err != nil {
			return nil, usageError(fmt.Sprintf("--init-from: %q: the name must end in .safetensors or .npz", cfg.InitPath))
		}
		if err := container.CheckInput(cfg.InitPath); err != nil {
			return nil, usageError(fmt.Sprintf("--init-from: %v", err))
		}
	}
	// A resumed run's model comes from the checkpoint: its flags are
	// checked against it, then validated with it.
	if cfg.ResumePath != "" {
		if err := trainargs.Resume(cfg, &d.seed, &d.featNorm, func(f string) bool { return flagSet(fs, f) }); err != nil {
			return nil, err
		}
	}
	if err := headWidths(&cfg.Model); err != nil {
		return nil, err
	}
	if err := validateTrain(cfg, a.mpiMode, *bits); err != nil {
		return nil, err
	}
	if err := a.outputFlags(); err != nil {
		return nil, err
	}
	if err := trainargs.CheckTargets(cfg.Task, a.targets, d.edgeSplit, d.edgeSplitFiles); err != nil {
		return nil, err
	}
	if a.negRatio < 1 || (a.negRatio != 1 && cfg.Task != "link") {
		return nil, usageError(fmt.Sprintf("--neg-ratio: %d, need ≥ 1, and only with --task link", a.negRatio))
	}
	if k, _ := task.Lookup(cfg.Task); a.predictions != "" && k.Predictions == "" {
		return nil, usageError(fmt.Sprintf("--predictions: task %s scores pairs, not nodes (--embeddings writes the nodes' hidden layer)", k.Name))
	}
	if err := task.CheckDecoder(a.decoder); err != nil || (a.decoder != "dot" && cfg.Task != "link") {
		return nil, usageError(fmt.Sprintf("--decoder: %q: one of %s, with --task link", a.decoder, strings.Join(task.Decoders, ", ")))
	}
	if err := task.CheckLinkMetric(a.linkMetric); err != nil || (a.linkMetric != "auto" && cfg.Task != "link") {
		return nil, usageError(fmt.Sprintf("--link-metric: %q: one of %s, with --task link", a.linkMetric, task.LinkMetrics))
	}
	if k, _ := task.Lookup(cfg.Task); k.Table || k.Pairs {
		d.noLabels = true // the targets replace the class labels (an OGB node-label table may have many columns)
	}
	if a.stopAfter < 0 {
		return nil, usageError(fmt.Sprintf("--stop-after: %v, need a positive duration", a.stopAfter))
	}
	var err error
	if a.kernel, err = checkKernel(cfg.Kernel); err != nil {
		return nil, err
	}
	cfg.Seed = d.seed
	cfg.FeatNorm = d.featNorm
	cfg.Quiet = *quiet
	d.prog = progress.ForStderr(*quiet)
	cfg.Model.Seed = d.seed
	a.cpuProfile = *cpuProfile
	// --save may name the --resume checkpoint (the job continues it); no
	// other output may name an input or another output.
	outputs := []container.NamedPath{{Name: "--save", Path: cfg.SavePath}, {Name: "--save-best", Path: cfg.SaveBest},
		{Name: "--metrics", Path: cfg.MetricsPath}, {Name: "--cpuprofile", Path: a.cpuProfile},
		{Name: "--predictions", Path: a.predictions}, {Name: "--embeddings", Path: a.embeddings}}
	if err := distinctOutputs(append(d.inputPaths(), container.NamedPath{Name: "--init-from", Path: cfg.InitPath}), outputs); err != nil {
		return nil, err
	}
	if err := distinctOutputs([]container.NamedPath{{Name: "--resume", Path: cfg.ResumePath}}, outputs[1:]); err != nil {
		return nil, err
	}
	return a, nil
}

// outputFlags checks --predictions and --embeddings (writable; a hidden
// layer to write) and asks cfg for the outputs they name.
func (a *trainArgs) outputFlags() error {
	for _, f := range [][2]string{{"predictions", a.predictions}, {"embeddings", a.embeddings}} {
		if err := container.CheckWritable(f[1]); err != nil {
			return usageError(fmt.Sprintf("--%s: %v", f[0], err))
		}
	}
	if a.embeddings != "" && a.cfg.Model.Layers < 2 {
		return usageError(fmt.Sprintf("--embeddings: the model has %d layer, so no hidden layer to write", a.cfg.Model.Layers))
	}
	a.cfg.Outputs = train.EvalOutputs{Predictions: a.predictions != "", Embeddings: a.embeddings != ""}
	return nil
}

// validateTrain checks the model and optimiser flags before any data is
// read, naming the flag, so a bad value never costs a load or a partition.
func validateTrain(cfg *train.Config, mpiMode string, bits trainargs.Bits) error {
	bad := func(flag, format string, args ...any) error {
		return usageError(fmt.Sprintf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	// Checked whatever the schedule, where the library leaves unused
	// settings at any value in their range.
	if !(cfg.LRGamma > 0 && cfg.LRGamma <= 1) {
		return bad("lr-gamma", "%g is not in (0, 1]", cfg.LRGamma)
	}
	if cfg.LRStepSize < 1 {
		return bad("lr-step-size", "%d, need ≥ 1 epoch", cfg.LRStepSize)
	}
	if err := cfg.Validate(); err != nil {
		return usageError(err.Error()) // the library's field names, mapped to flags by flagtab.UserMessage
	}
	if _, err := bits.Wires(2); err != nil {
		return err
	}
	if mpiMode == "off" && launchedByMPI() {
		return bad("mpi", "off, but a launcher started this process as an MPI rank: every rank would train alone and write the same files")
	}
	for _, f := range [][2]string{{"save", cfg.SavePath}, {"save-best", cfg.SaveBest}, {"metrics", cfg.MetricsPath}} {
		if err := container.CheckWritable(f[1]); err != nil {
			return bad(f[0], "%v", err)
		}
	}
	return nil
}

// loopFlags registers the learning-rate schedule and early-stopping flags.
func loopFlags(fs *flag.FlagSet, cfg *train.Config) {
	fs.StringVar(&cfg.LRSchedule, "lr-schedule", train.ScheduleNone, "learning rate per epoch: none (--lr throughout)|step (--lr × --lr-gamma^⌊(epoch-1)/--lr-step-size⌋, as torch StepLR)|cosine (from --lr down to --lr-min over --epochs, as torch CosineAnnealingLR with T_max = --epochs)|plateau (× --lr-gamma after more than --lr-plateau-patience evaluations without a lower validation loss, not below --lr-min, as torch ReduceLROnPlateau)")
	fs.IntVar(&cfg.LRStepSize, "lr-step-size", 50, "with --lr-schedule step: epochs between reductions of the learning rate")
	fs.Float64Var(&cfg.LRGamma, "lr-gamma", 0.1, "with --lr-schedule step or plateau: the factor, in (0, 1], of each reduction of the learning rate")
	fs.Float64Var(&cfg.LRMin, "lr-min", 0, "with --lr-schedule cosine: the learning rate it anneals to; plateau: the lowest learning rate")
	fs.IntVar(&cfg.LRPlateauPatience, "lr-plateau-patience", 10, "with --lr-schedule plateau: evaluations without a lower validation loss tolerated; one more reduces the learning rate")
	fs.IntVar(&cfg.Patience, "patience", 0, "early stopping: stop after N evaluated epochs without a better validation value (--stop-on) than the best so far, and report the epoch (0: train all --epochs)")
	fs.StringVar(&cfg.StopOn, "stop-on", train.StopValAcc, "the validation value that chooses the best epoch (--save-best, the test accuracy reported) and that --patience watches: val-acc (the task's metric)|val-loss (the lowest validation loss, as Chen et al.'s GCNII)")
}

func runTrain(w *world, a *trainArgs) error {
	c, d, cfg, kernel := w.comm, &a.d, a.cfg, a.kernel
	bits := a.bits
	targets, negRatio := a.targets, a.negRatio
	var log io.Writer
	if c.Rank() == 0 {
		log = os.Stdout
	}
	var err error
	// Rows inside a node default to fp32: exact, and over shared memory
	// copying them costs less CPU than encoding and decoding them.
	if cfg.Wire, err = bits.Wires(c.Size()); err != nil {
		return err
	}
	auto := cfg.Threads == 0
	th, why, err := jobThreads(c, cfg.Threads, rank0Stderr(c))
	if err != nil {
		return err
	}
	cfg.Threads = setThreadBudget(th)
	if err := checkBLASAddressSpace(cfg.Threads); err != nil {
		return err
	}
	if c.Size() > 1 {
		// One more processor than the budget for the exchange's driver: it
		// encodes, posts, polls MPI every 50 µs and decodes while the local
		// product runs; sharing the budget's processors, its polls would wait
		// for the compute goroutines' time slices and the rows would stall.
		runtime.GOMAXPROCS(cfg.Threads + 1)
	}
	dataLog := log
	if cfg.Quiet {
		dataLog = nil
	}
	s, err := d.loadShard(c, w, dataLog)
	if err != nil {
		return err
	}
	if dataLog != nil {
		fmt.Fprintf(log, "train: %s, %d layers, hidden %s, %d rank(s) × %d threads%s, kernel %s, blas %s, aggr-mode %s, wire %s/%s (eval %s, intra %s), label-prop %g\n",
			cfg.Model.Model, cfg.Model.Layers, hiddenDesc(cfg.Model), c.Size(), cfg.Threads, autoNote(auto, why), kernel, dense.Backend(),
			cfg.AggrMode, cfg.Wire[quant.Forward].Name(), cfg.Wire[quant.Backward].Name(), cfg.Wire[quant.Eval].Name(), cfg.Wire[quant.Intra].Name(), cfg.LabelProp)
		if cfg.Model.Precision == "bf16" {
			fmt.Fprintf(log, "train: dense products in bf16: %s\n", dense.BF16Kernel())
		}
	}
	cfg.Log = flagtab.Writer(log) // log lines name fields as flags, as errors do
	if cfg.Targets, err = trainargs.ReadTargets(cfg.Task, targets); err != nil {
		return err
	}
	if d.edges != nil {
		cfg.Targets = &task.Table{Path: edgeSplitName(d), Rows: int(s.NumGlobalNodes), Edges: d.edges, Seed: cfg.Seed, NegRatio: negRatio, LinkMetric: a.linkMetric, Decoder: a.decoder}
	}
	res, err := train.Run(cfg, s, c)
	if err != nil || res.Outputs == nil {
		return err
	}
	return writeOutputs(c, "train", dataLog, res.Outputs, a.predictions, a.embeddings)
}

// edgeSplitName names the edge split flag given, for messages.
func edgeSplitName(d *dataFlags) string {
	if d.edgeSplitFiles != "" {
		return "--edge-split-files"
	}
	return "--edge-split"
}

// quantParamsFlag parses --quant-params into *p.
func quantParamsFlag(p *quant.Params) func(string) error {
	return func(s string) error {
		v, err := quant.ParseParams(s)
		if err != nil {
			return fmt.Errorf("%q is not block, bf16 or fp32", s)
		}
		*p = v
		return nil
	}
}
