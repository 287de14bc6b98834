package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/quant"
)

func init() {
	register("predict", "predicted epoch time on a machine profile and network, from a partition (performance model)",
		func(args []string) error { return cmdPredict(args, os.Stdout) })
}

const predictSynopsis = "--partitions PDIR --profile FILE[,FILE…] --network PRESET|RATE[,…] [--ranks-per-node K] [train's model and exchange flags] [--json]"

// predictRow is one line of `predict --json`: the setting and the prediction.
type predictRow struct {
	Partitions string  `json:"partitions"`
	Profile    string  `json:"profile"`
	Network    string  `json:"network"`
	Model      string  `json:"model"`
	Layers     int     `json:"layers"`
	Hidden     int     `json:"hidden"`
	AggrMode   string  `json:"aggr_mode"`
	Bits       int     `json:"bits"`
	Scale      float64 `json:"scale,omitempty"`
	*perfmodel.Prediction
}

func cmdPredict(args []string, stdout io.Writer) error {
	fs := newFlagSet("predict", predictSynopsis)
	pdir := fs.String("partitions", "", "partition directory (supergcn partition --out)")
	profiles := fs.String("profile", "", "machine profile JSON (supergcn bench profile --out), or a comma-separated list")
	networks := fs.String("network", "", "inter-node network: "+strings.Join(perfmodel.Presets(), "|")+", or an emulated tc tbf rate such as 2.5gbit; comma-separated for several")
	ranks := fs.Int("ranks", 0, "ranks the parts are shared among (default: one part per rank)")
	rpn := fs.Int("ranks-per-node", 1, "ranks per node (consecutive ranks share a node)")
	cores := fs.Int("cores-per-node", 0, "cores of a node (default: the profile's); the exchange overlaps the local product when (threads+1)·ranks-per-node fit")
	threads := fs.Int("threads", 0, "threads per rank (default: cores per node / ranks per node)")
	model := fs.String("model", "gcn", "model: gcn|sage")
	layers := fs.Int("layers", 2, "graph layers")
	hidden := fs.Int("hidden", 16, "hidden width")
	dropout := fs.Float64("dropout", 0.5, "dropout rate (only whether it is 0 matters)")
	norm := fs.String("norm", "none", "normalisation between layers: none|layer")
	inWidth := fs.Int("in-width", 0, "input feature width (default: the partition's, or 128 when structure-only)")
	classes := fs.Int("classes", 0, "output classes (default: the partition's, or 47 when it has none)")
	aggrMode := fs.String("aggr-mode", "hybrid", "boundary aggregation: post|pre|hybrid")
	bitsArg := fs.String("bits", "32", "bits per boundary value forward: 32|8|4|2, or a comma-separated list")
	bitsBwd := fs.Int("bits-backward", 0, "bits of gradient rows (default: as --bits)")
	evalBits := fs.Int("eval-bits", 0, "bits in the evaluation pass (default: as --bits)")
	evalEvery := fs.Int("eval-every", 1, "evaluation pass every N epochs (its time is averaged over N); 0: none")
	params := quant.ParamsBlock
	fs.Func("quant-params", "quantised rows' parameters: block (default)|bf16|fp32", quantParamsFlag(&params))
	scale := fs.Float64("scale", 1, "multiply every per-rank volume (nodes, edges, rows) by this factor: a graph this much larger cut into as many parts (see docs/SCALING.md)")
	asJSON := fs.Bool("json", false, "print one JSON object per profile × network × bits, one a line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *pdir == "" || *profiles == "" || *networks == "" {
		return usageError{"--partitions, --profile and --network are required (usage: supergcn predict " + predictSynopsis + ")"}
	}
	mode, err := exchange.ParseMode(*aggrMode)
	if err != nil {
		return usageError{fmt.Sprintf("--aggr-mode: %q is not post, pre or hybrid", *aggrMode)}
	}
	if *norm != "none" && *norm != "layer" {
		return usageError{fmt.Sprintf("--norm: %q is not none or layer", *norm)}
	}
	if *dropout < 0 || *dropout >= 1 {
		return usageError{fmt.Sprintf("--dropout: %g is not in [0, 1)", *dropout)}
	}
	if *evalEvery < 0 {
		return usageError{fmt.Sprintf("--eval-every: %d, need ≥ 0", *evalEvery)}
	}
	if !(*scale > 0) {
		return usageError{fmt.Sprintf("--scale: %g, need > 0", *scale)}
	}
	var bitsList []int
	for _, s := range strings.Split(*bitsArg, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || (b != 32 && b != 8 && b != 4 && b != 2) {
			return usageError{fmt.Sprintf("--bits: %q is not 32, 8, 4 or 2", s)}
		}
		bitsList = append(bitsList, b)
	}
	var nets []perfmodel.Network
	for _, s := range strings.Split(*networks, ",") {
		n, err := perfmodel.ParseNetwork(strings.TrimSpace(s))
		if err != nil {
			return usageError{"--network: " + err.Error()}
		}
		nets = append(nets, n)
	}
	var profs []*perfmodel.Profile
	for _, s := range strings.Split(*profiles, ",") {
		p, err := perfmodel.LoadProfile(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		profs = append(profs, p)
	}
	meta, err := partition.ReadMeta(*pdir)
	if err != nil {
		return err
	}
	if *ranks == 0 {
		*ranks = meta.Parts
	}
	if *ranks < 1 {
		return usageError{fmt.Sprintf("--ranks: %d, want ≥ 1", *ranks)}
	}
	in, cls := *inWidth, *classes
	if in == 0 {
		in = meta.FeatDim
		if in == 0 {
			in = 128
		}
	}
	if cls == 0 {
		cls = meta.NumClasses
		if cls == 0 {
			cls = 47
		}
	}
	vols, err := exchange.Volumes(*pdir, *ranks, runtime.GOMAXPROCS(0))
	if err != nil {
		return err
	}
	if *scale != 1 {
		vols = perfmodel.ScaleVolumes(vols, *scale)
	}
	m := perfmodel.Model{Kind: *model, Layers: *layers, Hidden: *hidden, In: in, Classes: cls,
		LayerNorm: *norm == "layer", Dropout: *dropout > 0}
	var rows []predictRow
	for _, prof := range profs {
		for _, net := range nets {
			for _, b := range bitsList {
				k := *rpn
				c := *cores
				if c == 0 {
					c = prof.CoresPerNode
				}
				th := *threads
				if th == 0 {
					per := k
					if net.Single {
						per = *ranks
					}
					th = max(1, c/per)
				}
				cfg := perfmodel.Config{Model: m, Mode: mode, Bits: b, BackwardBits: *bitsBwd, EvalBits: *evalBits,
					Params: params, Eval: *evalEvery > 0, Threads: th, RanksPerNode: k, CoresPerNode: *cores}
				pr, err := perfmodel.Predict(vols, prof, net, cfg)
				if err != nil {
					return err
				}
				if *evalEvery > 1 {
					pr.EvalS /= float64(*evalEvery)
					pr.EpochS = pr.TrainS + pr.EvalS
					pr.Efficiency = pr.IdealS / pr.EpochS
				}
				rows = append(rows, predictRow{Partitions: *pdir, Profile: prof.Name, Network: net.Name, Model: m.Kind,
					Layers: m.Layers, Hidden: m.Hidden, AggrMode: mode.String(), Bits: b, Scale: *scale, Prediction: pr})
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(stdout, "%s: %d parts on %d ranks, %s %d×%d (in %d, classes %d), %s exchange; seconds per epoch (critical rank's components)\n",
		*pdir, meta.Parts, *ranks, m.Kind, m.Layers, m.Hidden, in, cls, mode)
	fmt.Fprintf(stdout, "%-14s %-9s %4s %8s %7s %7s %7s %7s %7s %7s %7s %7s %5s %6s\n",
		"profile", "network", "bits", "epoch_s", "train", "eval", "aggr", "dense", "quant", "comm", "sync", "allred", "crit", "eff")
	for _, r := range rows {
		p := r.Prediction
		fmt.Fprintf(stdout, "%-14s %-9s %4d %8.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.4f %5d %5.1f%%\n",
			r.Profile, r.Network, r.Bits, p.EpochS, p.TrainS, p.EvalS, p.AggrS, p.DenseS, p.QuantS, p.CommS, p.SyncS,
			p.AllreduceS, p.CriticalRank, 100*p.Efficiency)
	}
	return nil
}
