package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/predictargs"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/plots"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/quant"
)

func init() {
	register("predict", "predicted epoch time on a machine profile and network, from a partition (performance model)",
		func(args []string) error { return cmdPredict(args, os.Stdout) })
}

const predictSynopsis = "--partitions PDIR --profile FILE[,FILE…] --network PRESET|RATE[,…] [--ranks-per-node K] [train's model and exchange flags] [--edge-split SPEC [--neg-ratio K] [--seed S]] [--json]"

func cmdPredict(args []string, stdout io.Writer) error {
	fs := newFlagSet("predict", predictSynopsis)
	pdir := fs.String("partitions", "", "partition directory (supergcn partition --out)")
	volIn := fs.String("volumes", "", "read the partition's volumes from FILE (written by --save-volumes) instead of planning --partitions")
	volOut := fs.String("save-volumes", "", "also write the planned volumes to FILE, for later --volumes")
	profiles := fs.String("profile", "", "machine profile JSON (supergcn bench profile --out), or a comma-separated list")
	networks := fs.String("network", "", "inter-node network: "+strings.Join(perfmodel.Presets(), "|")+", or an emulated tc tbf rate such as 2.5gbit; comma-separated for several")
	ranks := fs.Int("ranks", 0, "ranks the parts are shared among (default: one part per rank)")
	var sw perfmodel.Sweep
	cfg := &sw.Config
	fs.IntVar(&cfg.RanksPerNode, "ranks-per-node", 1, "ranks per node (consecutive ranks share a node)")
	fs.IntVar(&cfg.CoresPerNode, "cores-per-node", 0, "cores of a node (default: the profile's); the exchange overlaps the local product when (threads+1)·ranks-per-node fit")
	fs.IntVar(&cfg.RanksPerHost, "ranks-per-host", 0, "ranks busy on the machine whose memory a rank shares: picks the profile's measurement with that many copies (default: --ranks-per-node; an emulated cluster on one box: all its ranks)")
	fs.IntVar(&cfg.Threads, "threads", 0, "threads per rank (default: cores per node / ranks per node)")
	var m nn.Config
	modelFlags(fs, &m)
	fs.Float64Var(&m.Dropout, "dropout", 0.5, "dropout rate (only whether it is 0 matters)")
	fs.StringVar(&m.Norm, "norm", "none", "normalisation between layers: none|layer|batch (batch: over every rank's nodes, running statistics in evaluation)")
	attentionFlags(fs, &m)
	fs.IntVar(&m.In, "in-width", 0, fmt.Sprintf("input feature width (default: the partition's, or %d when structure-only)", perfmodel.DefaultIn))
	fs.IntVar(&m.Out, "classes", 0, fmt.Sprintf("output classes (default: the partition's, or %d when it has none)", perfmodel.DefaultClasses))
	aggrMode := fs.String("aggr-mode", "hybrid", "boundary aggregation: post|pre|hybrid, or a comma-separated list")
	bitsArg := fs.String("bits", "auto", "bits per boundary value forward: "+quant.WidthList("|")+"|auto (as train: 2 with several ranks, else 32), or a comma-separated list")
	var roleBits [quant.NumRoles]int
	fs.IntVar(&roleBits[quant.Backward], "bits-backward", 0, "bits of gradient rows (default: as --bits)")
	fs.IntVar(&roleBits[quant.Eval], "eval-bits", 0, "bits in the evaluation pass (default: as --bits)")
	fs.BoolVar(&cfg.EvalCache, "eval-cache", true, "the evaluation pass reuses the first layer's aggregate of the features (as train --eval-cache auto|on does without label propagation; a metrics header's eval_cache says what a run did); false: aggregate them again (train --eval-cache off)")
	fs.IntVar(&cfg.EvalEvery, "eval-every", 1, "evaluation pass every N epochs (its time is averaged over N); 0: none")
	sw.Params = quant.ParamsBlock
	fs.Func("quant-params", "quantised rows' parameters: block (default)|bf16|fp32", quantParamsFlag(&sw.Params))
	exchArg := fs.String("exchange", "auto", "boundary exchange: flat | two-level | two-level-paired | auto (as train --exchange: two-level when several nodes run several ranks each; two-level plans the partition per node pair)")
	fs.IntVar(&roleBits[quant.Intra], "intra-bits", 0, "bits of the two-level exchange's rows inside a node (default 32, as train's)")
	fs.Float64Var(&sw.Scale, "scale", 1, "multiply every per-rank volume (nodes, edges, rows) by this factor: a graph this much larger cut into as many parts (see docs/SCALING.md)")
	asJSON := fs.Bool("json", false, "print one JSON object per profile × network × bits, one a line")
	fs.StringVar(&sw.Label, "label", "", "a name for the graph, kept in the JSON (--plot draws one PNG per label)")
	plotIn := fs.String("plot", "", "instead of predicting: draw the --json lines of FILE (comma-separated files) as epoch time and efficiency against ranks, one PNG per label into --out")
	plotOut := fs.String("out", "", "with --plot: output directory")
	refs := refFlag(fs)
	layouts := fs.Bool("layouts", false, "instead of one layout: predict every ranks × threads layout that fills a node of --cores-per-node cores on --nodes nodes (the partition shared among nodes·ranks ranks) and recommend the fastest (one --profile, --network and --aggr-mode; --bits may list several: every layout at each, and the fastest of all)")
	nodes := fs.Int("nodes", 1, "with --layouts: the nodes")
	nodesPerHost := fs.Int("nodes-per-host", 0, "with --layouts: nodes that share one machine, whose ranks all load it (an emulated cluster on one box: --nodes; default: each node its own machine)")
	var pairs predictargs.Pairs
	pairs.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := modelDefaults(fs, &m); err != nil {
		return err
	}
	if err := gatFlags(fs, &m, false); err != nil {
		return err
	}
	if err := headWidths(&m); err != nil {
		return err
	}
	if *plotIn != "" {
		return predictargs.Plot(*plotIn, *plotOut, *refs, stdout)
	}
	if !plots.ValidLabel(sw.Label) {
		return usageError(fmt.Sprintf("--label: %q cannot name a PNG file (no / or \\)", sw.Label))
	}
	if (*pdir == "") == (*volIn == "") || *profiles == "" || *networks == "" {
		return usageError("one of --partitions and --volumes, and --profile and --network are required (usage: supergcn predict " + predictSynopsis + ")")
	}
	if err := container.CheckWritable(*volOut); err != nil {
		return fmt.Errorf("--save-volumes: %w", err)
	}
	if pairs.EdgeSplit != "" {
		for _, f := range []string{"volumes", "layouts", "scale", "classes"} {
			if flagSet(fs, f) {
				return usageError(fmt.Sprintf("--%s: not with --edge-split (the pairs are counted on --partitions as given; the model outputs --hidden wide embeddings)", f))
			}
		}
		m.Out = m.Hidden
	}
	var err error
	if cfg.Model, err = perfmodel.ModelOf(m); err != nil {
		return usageError(err.Error()) // nn's field names, mapped to flags
	}
	if sw.Exchange = *exchArg; sw.Exchange == "auto" {
		sw.Exchange = ""
	} else if sw.Exchange == "" {
		return usageError(`--exchange: "" is not flat, two-level, two-level-paired or auto`)
	}
	if err := predictargs.SweepLists(&sw, *aggrMode, *bitsArg, *networks, *profiles); err != nil {
		return err
	}
	for r, b := range roleBits {
		if b != 0 {
			cfg.Wire[r] = quant.Wire{Bits: b, Params: sw.Params}
		}
	}
	if *layouts {
		for _, f := range []string{"ranks", "ranks-per-node", "ranks-per-host", "threads", "save-volumes", "scale"} {
			if flagSet(fs, f) {
				return usageError(fmt.Sprintf("--%s: not with --layouts (each layout sets its own)", f))
			}
		}
		return predictLayouts(perfmodel.LayoutPlan{Sweep: sw, Nodes: *nodes, NodesPerHost: *nodesPerHost}, *pdir, *volIn, *asJSON, stdout)
	}
	if flagSet(fs, "nodes-per-host") {
		return usageError("--nodes-per-host: only with --layouts")
	}
	v, err := predictargs.Volumes(*pdir, *volIn, *ranks)
	if err != nil {
		return err
	}
	if sw.Config.Pairs, err = pairs.Volume(*pdir, len(v.Ranks)); err != nil {
		return err
	}
	rows, err := sw.Run(v)
	if err != nil {
		return err
	}
	warnThreads(sw.Profiles, rows)
	rph := cfg.RanksPerHost
	if rph == 0 {
		rph = cfg.RanksPerNode
	}
	warnGraphSize(sw.Profiles, int64(float64(v.Meta.Nodes)*sw.Scale)*int64(min(rph, len(v.Ranks)))/int64(len(v.Ranks)))
	if *volOut != "" {
		if err := v.Write(*volOut); err != nil {
			return fmt.Errorf("--save-volumes: %w", err)
		}
	}
	if *asJSON {
		return printJSONLines(stdout, rows)
	}
	in, cls := v.Widths(cfg.Model)
	fmt.Fprintf(stdout, "%s: %d parts on %d ranks, %s %d×%d (in %d, classes %d), %s exchange; seconds per epoch (critical rank's components)\n",
		v.Meta.Dir, v.Meta.Parts, len(v.Ranks), m.Model, m.Layers, m.Hidden, in, cls, *exchArg)
	printPredictions(stdout, rows)
	return nil
}

// predictLayouts prints the layouts of --nodes nodes (--layouts) and the
// recommended one.
func predictLayouts(lp perfmodel.LayoutPlan, dir, files string, asJSON bool, stdout io.Writer) error {
	sw, nodes := lp.Sweep, lp.Nodes
	cores := sw.Config.CoresPerNode
	if cores == 0 && len(sw.Profiles) > 0 {
		cores = sw.Profiles[0].CoresPerNode
	}
	lp.CoresPerNode, lp.Widen = cores, true
	var err error
	if lp.Volumes, err = (perfmodel.VolumeSource{Dir: dir, Files: strings.Split(files, ","), Threads: runtime.GOMAXPROCS(0)}).ByRanks(); err != nil {
		return err
	}
	rows, best, err := lp.Run()
	if err != nil {
		return usageError(err.Error()) // no layout of these flags predictable
	}
	if v, err := lp.Volumes(rows[max(best, predictedRow(rows))].Prediction.Ranks); err == nil {
		nph := min(max(lp.NodesPerHost, 1), nodes)
		warnGraphSize(sw.Profiles, v.Meta.Nodes*int64(nph)/int64(nodes))
	}
	if asJSON {
		return printJSONLines(stdout, rows)
	}
	m := rows[max(best, predictedRow(rows))].Row
	fmt.Fprintf(stdout, "%d node(s) × %d cores, profile %s, network %s, %s %d×%d, %s aggregation: seconds per epoch by layout (ranks × threads per node)\n",
		nodes, cores, m.Profile, m.Network, m.Model, m.Layers, m.Hidden, m.AggrMode)
	fmt.Fprintf(stdout, "%-9s %6s %4s %-16s %8s %7s %7s %7s %7s %7s %7s %6s\n",
		"per_node", "ranks", "bits", "exchange", "epoch_s", "aggr", "dense", "quant", "comm", "sync", "allred", "eff")
	for _, r := range rows {
		l := fmt.Sprintf("%d×%d", r.RanksPerNode, r.Threads)
		if r.Row == nil {
			fmt.Fprintf(stdout, "%-9s %6d skipped: %s\n", l, nodes*r.RanksPerNode, r.Skipped)
			continue
		}
		p := r.Prediction
		fmt.Fprintf(stdout, "%-9s %6d %4d %-16s %8.4f %7.4f %7.4f %7.4f %7.4f %7.4f %7.4f %5.1f%%\n",
			l, p.Ranks, r.Bits, p.Exchange, p.EpochS, p.AggrS, p.DenseS, p.QuantS, p.CommS, p.SyncS, p.AllreduceS, 100*p.Efficiency)
	}
	if len(sw.Bits) > 1 {
		printFastestByBits(stdout, rows)
	}
	printAssumed(stdout, rows)
	if best < 0 {
		fmt.Fprintf(stdout, "no recommendation: only %d×%d per node could be predicted, with no other layout to compare it with (see the skipped rows)\n",
			m.RanksPerNode, m.Threads)
		return nil
	}
	b := rows[best]
	m = b.Row
	if b.Assumed != "" {
		fmt.Fprint(stdout, "on the assumed rates, ")
	}
	fmt.Fprintf(stdout, "recommended: %d rank(s) × %d threads per node, --bits %d (%d ranks; mpirun --map-by ppr:%d:node:pe=%d, srun --ntasks-per-node=%d --cpus-per-task=%d): %.4f s per epoch\n",
		b.RanksPerNode, b.Threads, m.Bits, m.Ranks, b.RanksPerNode, b.Threads, b.RanksPerNode, b.Threads, m.EpochS)
	return nil
}

// predictedRow is the index of the first predicted row of a layout plan.
func predictedRow(rows []perfmodel.LayoutRow) int {
	return slices.IndexFunc(rows, func(r perfmodel.LayoutRow) bool { return r.Row != nil })
}

// printAssumed prints, once each, the assumptions of widened rates
// behind a layout plan's rows.
func printAssumed(stdout io.Writer, rows []perfmodel.LayoutRow) {
	said := map[string]bool{}
	for _, r := range rows {
		if r.Assumed != "" && r.Row != nil && !said[r.Assumed] {
			said[r.Assumed] = true
			fmt.Fprintf(stdout, "assumed: %s\n", r.Assumed)
		}
	}
}

// printFastestByBits prints the fastest predicted layout of each bits of
// a layout plan's rows, in the rows' order.
func printFastestByBits(stdout io.Writer, rows []perfmodel.LayoutRow) {
	var order []int
	fastest := map[int]perfmodel.LayoutRow{}
	for _, r := range rows {
		if r.Row == nil {
			continue
		}
		f, seen := fastest[r.Bits]
		if !seen {
			order = append(order, r.Bits)
		}
		if !seen || r.EpochS < f.EpochS {
			fastest[r.Bits] = r
		}
	}
	for _, bits := range order {
		f := fastest[bits]
		fmt.Fprintf(stdout, "fastest with --bits %d: %d rank(s) × %d threads per node, %.4f s per epoch\n", bits, f.RanksPerNode, f.Threads, f.EpochS)
	}
}

// warnThreads writes on stderr, once per profile and thread count, that a
// prediction's ranks run more (or fewer) threads than its profile measured
// (Profile.ThreadsNote): the nearest measured count's rates stood in.
func warnThreads(profiles []*perfmodel.Profile, rows []perfmodel.Row) {
	said := map[string]bool{}
	for _, r := range rows {
		for _, p := range profiles {
			n := p.ThreadsNote(r.Threads)
			if n == "" || p.Name != r.Profile || said[n] {
				continue
			}
			said[n] = true
			fmt.Fprintf(os.Stderr, "supergcn: warning: %s: the nearest measured count's rates stand in (supergcn bench profile --threads %d --add PROFILE measures it)\n", n, r.Threads)
		}
	}
}

// warnGraphSize writes on stderr each profile's note on a working set
// unlike hostNodes, the graph nodes one machine holds (GraphSizeNote).
func warnGraphSize(profiles []*perfmodel.Profile, hostNodes int64) {
	for _, p := range profiles {
		if n := p.GraphSizeNote(hostNodes); n != "" {
			fmt.Fprintf(os.Stderr, "supergcn: warning: %s (supergcn bench profile --host-nodes %d measures at this one)\n", n, hostNodes)
		}
	}
}

// printJSONLines prints one JSON object a line.
func printJSONLines[T any](w io.Writer, rows []T) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// printPredictions prints the rows as a table, one a line.
func printPredictions(w io.Writer, rows []perfmodel.Row) {
	fmt.Fprintf(w, "%-14s %-9s %-6s %4s %8s %7s %7s %7s %7s %7s %7s %7s %7s %5s %6s\n",
		"profile", "network", "mode", "bits", "epoch_s", "train", "eval", "aggr", "dense", "quant", "comm", "sync", "allred", "crit", "eff")
	for _, r := range rows {
		p := r.Prediction
		fmt.Fprintf(w, "%-14s %-9s %-6s %4d %8.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.4f %5d %5.1f%%\n",
			r.Profile, r.Network, r.AggrMode, r.Bits, p.EpochS, p.TrainS, p.EvalS, p.AggrS, p.DenseS, p.QuantS, p.CommS, p.SyncS,
			p.AllreduceS, p.CriticalRank, 100*p.Efficiency)
	}
}

// refFlag registers --ref (repeatable) and returns its values.
func refFlag(fs *flag.FlagSet) *[]plots.ProjectionRef {
	var refs []plots.ProjectionRef
	fs.Func("ref", "with --plot: a reported figure NAME:RANKS:SECONDS drawn as a point (repeatable)", func(v string) error {
		f := strings.Split(v, ":")
		if len(f) != 3 {
			return fmt.Errorf("%q is not NAME:RANKS:SECONDS", v)
		}
		r, err1 := strconv.ParseFloat(f[1], 64)
		t, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || !(r > 0) || !(t > 0) {
			return fmt.Errorf("%q: RANKS and SECONDS must be positive numbers", v)
		}
		refs = append(refs, plots.ProjectionRef{Name: f[0], Ranks: r, EpochS: t})
		return nil
	})
	return &refs
}
