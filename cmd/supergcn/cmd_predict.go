package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/plots"
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
	Label      string  `json:"label,omitempty"`
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
	volIn := fs.String("volumes", "", "read the partition's volumes from FILE (written by --save-volumes) instead of planning --partitions")
	volOut := fs.String("save-volumes", "", "also write the planned volumes to FILE, for later --volumes")
	profiles := fs.String("profile", "", "machine profile JSON (supergcn bench profile --out), or a comma-separated list")
	networks := fs.String("network", "", "inter-node network: "+strings.Join(perfmodel.Presets(), "|")+", or an emulated tc tbf rate such as 2.5gbit; comma-separated for several")
	ranks := fs.Int("ranks", 0, "ranks the parts are shared among (default: one part per rank)")
	rpn := fs.Int("ranks-per-node", 1, "ranks per node (consecutive ranks share a node)")
	cores := fs.Int("cores-per-node", 0, "cores of a node (default: the profile's); the exchange overlaps the local product when (threads+1)·ranks-per-node fit")
	hostRanks := fs.Int("ranks-per-host", 0, "ranks busy on the machine whose memory a rank shares: picks the profile's measurement with that many copies (default: --ranks-per-node; an emulated cluster on one box: all its ranks)")
	threads := fs.Int("threads", 0, "threads per rank (default: cores per node / ranks per node)")
	model := fs.String("model", "gcn", "model: gcn|sage")
	layers := fs.Int("layers", 2, "graph layers")
	hidden := fs.Int("hidden", 16, "hidden width")
	dropout := fs.Float64("dropout", 0.5, "dropout rate (only whether it is 0 matters)")
	norm := fs.String("norm", "none", "normalisation between layers: none|layer")
	inWidth := fs.Int("in-width", 0, "input feature width (default: the partition's, or 128 when structure-only)")
	classes := fs.Int("classes", 0, "output classes (default: the partition's, or 47 when it has none)")
	aggrMode := fs.String("aggr-mode", "hybrid", "boundary aggregation: post|pre|hybrid, or a comma-separated list")
	bitsArg := fs.String("bits", "32", "bits per boundary value forward: "+quant.WidthList("|")+", or a comma-separated list")
	bitsBwd := fs.Int("bits-backward", 0, "bits of gradient rows (default: as --bits)")
	evalBits := fs.Int("eval-bits", 0, "bits in the evaluation pass (default: as --bits)")
	evalCache := fs.Bool("eval-cache", true, "the evaluation pass reuses the first layer's aggregate of the features (as train does without label propagation); false: aggregate them again, as a binary without that reuse does")
	evalEvery := fs.Int("eval-every", 1, "evaluation pass every N epochs (its time is averaged over N); 0: none")
	params := quant.ParamsBlock
	fs.Func("quant-params", "quantised rows' parameters: block (default)|bf16|fp32", quantParamsFlag(&params))
	exchArg := fs.String("exchange", "flat", "boundary exchange: flat | two-level | two-level-paired (as train --exchange; two-level plans the partition per node pair)")
	intraBits := fs.Int("intra-bits", 0, "bits of the two-level exchange's rows inside a node (default 32, as train's)")
	scale := fs.Float64("scale", 1, "multiply every per-rank volume (nodes, edges, rows) by this factor: a graph this much larger cut into as many parts (see docs/SCALING.md)")
	asJSON := fs.Bool("json", false, "print one JSON object per profile × network × bits, one a line")
	label := fs.String("label", "", "a name for the graph, kept in the JSON (--plot draws one PNG per label)")
	plotIn := fs.String("plot", "", "instead of predicting: draw the --json lines of FILE (comma-separated files) as epoch time and efficiency against ranks, one PNG per label into --out")
	plotOut := fs.String("out", "", "with --plot: output directory")
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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *plotIn != "" {
		if *plotOut == "" {
			return usageError{"--plot needs --out DIR"}
		}
		files := strings.Split(*plotIn, ",")
		if slices.Contains(files, "") {
			return usageError{fmt.Sprintf("--plot: %q has an empty file name", *plotIn)}
		}
		return plotPredictions(files, *plotOut, refs, stdout)
	}
	if !validPlotLabel(*label) {
		return usageError{fmt.Sprintf("--label: %q cannot name a PNG file (no / or \\)", *label)}
	}
	if (*pdir == "") == (*volIn == "") || *profiles == "" || *networks == "" {
		return usageError{"one of --partitions and --volumes, and --profile and --network are required (usage: supergcn predict " + predictSynopsis + ")"}
	}
	if err := checkWritable(*volOut); err != nil {
		return fmt.Errorf("--save-volumes: %w", err)
	}
	var modes []exchange.Mode
	for _, s := range strings.Split(*aggrMode, ",") {
		mode, err := exchange.ParseMode(strings.TrimSpace(s))
		if err != nil || strings.TrimSpace(s) == "" {
			return usageError{fmt.Sprintf("--aggr-mode: %q is not post, pre or hybrid", s)}
		}
		modes = append(modes, mode)
	}
	if *norm != "none" && *norm != "layer" {
		return usageError{fmt.Sprintf("--norm: %q is not none or layer", *norm)}
	}
	if !(*dropout >= 0 && *dropout < 1) { // NaN too
		return usageError{fmt.Sprintf("--dropout: %g is not in [0, 1)", *dropout)}
	}
	switch *exchArg {
	case "flat", "two-level", "two-level-paired":
	default:
		return usageError{fmt.Sprintf("--exchange: %q is not flat, two-level or two-level-paired", *exchArg)}
	}
	if *exchArg != "flat" && *scale != 1 {
		return usageError{"--scale applies to the flat exchange only"}
	}
	if !(*scale > 0) {
		return usageError{fmt.Sprintf("--scale: %g, need > 0", *scale)}
	}
	if *rpn < 1 {
		// checked here, not only by perfmodel.Config: the default
		// threads and the two-level plans divide by it first
		return usageError{fmt.Sprintf("--ranks-per-node: %d, want ≥ 1", *rpn)}
	}
	var bitsList []int
	for _, s := range strings.Split(*bitsArg, ",") {
		b, err := quant.ParseBits(s)
		if err != nil {
			return usageError{fmt.Sprintf("--bits: %q is not %s", s, quant.WidthList(", "))}
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
		if strings.TrimSpace(s) == "" {
			return usageError{fmt.Sprintf("--profile: %q has an empty file name", *profiles)}
		}
		p, err := perfmodel.LoadProfile(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		profs = append(profs, p)
	}
	vf, err := predictVolumes(*pdir, *volIn, *ranks)
	if err != nil {
		return err
	}
	if *volOut != "" && *exchArg != "flat" {
		// plan the node layouts now, so that the file holds them
		for _, n := range nets {
			per := *rpn
			if n.Single {
				per = len(vf.Volumes)
			}
			if _, err := vf.nodeVolumes(per); err != nil {
				return err
			}
		}
	}
	if *volOut != "" {
		b, err := json.Marshal(vf)
		if err != nil {
			return err
		}
		if err := container.WriteBytes(*volOut, 0o644, append(b, '\n')); err != nil {
			return fmt.Errorf("--save-volumes: %w", err)
		}
	}
	meta, vols := &vf.Meta, vf.Volumes
	*ranks = len(vols)
	*pdir = vf.Meta.Dir
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
	if *scale != 1 {
		if vols, err = perfmodel.ScaleVolumes(vols, *scale); err != nil {
			return fmt.Errorf("--scale: %w", err)
		}
	}
	m := perfmodel.Model{Kind: *model, Layers: *layers, Hidden: *hidden, In: in, Classes: cls,
		LayerNorm: *norm == "layer", Dropout: *dropout > 0}
	var rows []predictRow
	for _, prof := range profs {
		for _, net := range nets {
			for _, mb := range modeBits(modes, bitsList) {
				mode, b := mb.mode, mb.bits
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
				var wire quant.Wires
				for r, bits := range [quant.NumRoles]int{quant.Forward: b, quant.Backward: *bitsBwd, quant.Eval: *evalBits, quant.Intra: *intraBits} {
					if bits != 0 {
						wire[r] = quant.Wire{Bits: bits, Params: params}
					}
				}
				cfg := perfmodel.Config{Model: m, Mode: mode, Wire: wire,
					EvalEvery: *evalEvery, Threads: th, RanksPerNode: k, CoresPerNode: *cores,
					RanksPerHost: *hostRanks, EvalCache: *evalCache}
				if *exchArg != "flat" {
					per := k
					if net.Single {
						per = *ranks
					}
					nv, err := vf.nodeVolumes(per)
					if err != nil {
						return err
					}
					cfg.Staged = &nv.TwoLevel
					if *exchArg == "two-level-paired" {
						cfg.Staged = &nv.Paired
					}
				}
				pr, err := perfmodel.Predict(vols, prof, net, cfg)
				if err != nil {
					return err
				}
				pr.Exchange = *exchArg
				rows = append(rows, predictRow{Label: *label, Partitions: *pdir, Profile: prof.Name, Network: net.Name, Model: m.Kind,
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
		*pdir, meta.Parts, *ranks, m.Kind, m.Layers, m.Hidden, in, cls, *exchArg)
	fmt.Fprintf(stdout, "%-14s %-9s %-6s %4s %8s %7s %7s %7s %7s %7s %7s %7s %7s %5s %6s\n",
		"profile", "network", "mode", "bits", "epoch_s", "train", "eval", "aggr", "dense", "quant", "comm", "sync", "allred", "crit", "eff")
	for _, r := range rows {
		p := r.Prediction
		fmt.Fprintf(stdout, "%-14s %-9s %-6s %4d %8.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.4f %5d %5.1f%%\n",
			r.Profile, r.Network, r.AggrMode, r.Bits, p.EpochS, p.TrainS, p.EvalS, p.AggrS, p.DenseS, p.QuantS, p.CommS, p.SyncS,
			p.AllreduceS, p.CriticalRank, 100*p.Efficiency)
	}
	return nil
}

// volumesFile is what --save-volumes writes: the partition's shape and the
// per-rank volumes (exchange.Volumes).
type volumesFile struct {
	Meta struct {
		Dir        string `json:"dir"`
		Parts      int    `json:"parts"`
		Nodes      int64  `json:"num_nodes"`
		Edges      int64  `json:"num_edges"`
		FeatDim    int    `json:"feat_dim"`
		NumClasses int    `json:"num_classes"`
	} `json:"partition"`
	Volumes []exchange.RankVolume `json:"volumes"`
	// Node: the two-level volumes per node layout (ranks per node), as
	// planned by exchange.NodeVolumesOf.
	Node     map[int]*exchange.NodeVolumes `json:"node_volumes,omitempty"`
	fromFile bool
}

// nodeVolumes returns the two-level volumes of perNode ranks per node,
// planning them from the partition when the file does not hold them.
func (vf *volumesFile) nodeVolumes(perNode int) (*exchange.NodeVolumes, error) {
	ranks := len(vf.Volumes)
	if perNode < 1 || ranks%perNode != 0 {
		return nil, usageError{fmt.Sprintf("--ranks-per-node: %d, want ≥ 1 and a divisor of the %d ranks", perNode, ranks)}
	}
	if nv, ok := vf.Node[perNode]; ok {
		if nv.Ranks != ranks || len(nv.Node) != ranks {
			return nil, fmt.Errorf("volumes: node_volumes[%d] holds %d ranks, want %d", perNode, nv.Ranks, ranks)
		}
		return nv, nil
	}
	if vf.fromFile {
		return nil, fmt.Errorf("the volumes file holds no two-level volumes for %d ranks per node: plan them with --partitions %s", perNode, vf.Meta.Dir)
	}
	dir := vf.Meta.Dir
	nv, err := exchange.NodeVolumesOf(ranks, comm.BlockNodes(ranks, perNode), func(r int) (*partition.Shard, error) { return partition.Load(dir, r, ranks) })
	if err != nil {
		return nil, err
	}
	if vf.Node == nil {
		vf.Node = map[int]*exchange.NodeVolumes{}
	}
	vf.Node[perNode] = nv
	return nv, nil
}

// predictVolumes plans the partition in dir on ranks ranks (0: one part
// each), or reads a --save-volumes file.
func predictVolumes(dir, file string, ranks int) (*volumesFile, error) {
	var vf volumesFile
	if file != "" {
		b, err := container.ReadInput(file, 1<<30, "volumes file")
		if err != nil {
			return nil, fmt.Errorf("--volumes: %w", err)
		}
		if err := json.Unmarshal(b, &vf); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		vf.fromFile = true
		if len(vf.Volumes) == 0 || vf.Meta.Parts < 1 {
			return nil, fmt.Errorf("%s: no volumes (not written by --save-volumes?)", file)
		}
		if r := len(vf.Volumes); vf.Meta.Parts%r != 0 || vf.Meta.Nodes < 0 || vf.Meta.Edges < 0 || vf.Meta.FeatDim < 0 || vf.Meta.NumClasses < 0 {
			return nil, fmt.Errorf("%s: partition: %d parts, %d nodes, %d edges, %d features, %d classes for %d ranks: want a multiple of the ranks and counts ≥ 0",
				file, vf.Meta.Parts, vf.Meta.Nodes, vf.Meta.Edges, vf.Meta.FeatDim, vf.Meta.NumClasses, r)
		}
		for i, v := range vf.Volumes {
			if v.Rank != i || v.Nodes < 0 || v.LocalEdges < 0 || v.CutEdges < 0 || v.TrainNodes < 0 || v.TrainNodes > v.Nodes {
				return nil, fmt.Errorf("%s: volumes[%d]: rank %d, nodes %d (%d training), edges %d+%d: want rank %d, counts ≥ 0 and training nodes ≤ nodes",
					file, i, v.Rank, v.Nodes, v.TrainNodes, v.LocalEdges, v.CutEdges, i)
			}
			for j, p := range v.Recv {
				if p.From < 0 || p.From >= len(vf.Volumes) || p.From == i || (j > 0 && p.From <= v.Recv[j-1].From) {
					return nil, fmt.Errorf("%s: volumes[%d].recv[%d]: sender %d out of range or not ascending", file, i, j, p.From)
				}
				if c := p.Counts; c.Pre < 0 || c.Post < 0 || c.Hybrid < 0 || p.CutEdges < 0 {
					return nil, fmt.Errorf("%s: volumes[%d].recv[%d]: rows pre %d, post %d, hybrid %d, cut edges %d: want counts ≥ 0",
						file, i, j, c.Pre, c.Post, c.Hybrid, p.CutEdges)
				}
			}
		}
		if err := perfmodel.ValidateVolumes(vf.Volumes, vf.Meta.Nodes, vf.Meta.Edges); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for per, nv := range vf.Node {
			if nv == nil || nv.Ranks != len(vf.Volumes) || per < 1 {
				return nil, fmt.Errorf("%s: node_volumes[%d]: not for %d ranks", file, per, len(vf.Volumes))
			}
			for _, ev := range []*exchange.ExchangeVolume{&nv.Flat, &nv.TwoLevel, &nv.Paired} {
				for _, ms := range [][]exchange.Message{ev.Gather, ev.Inter, ev.Scatter} {
					for _, m := range ms {
						if m.From < 0 || m.From >= nv.Ranks || m.To < 0 || m.To >= nv.Ranks || m.Rows < 0 {
							return nil, fmt.Errorf("%s: node_volumes[%d]: message %d→%d of %d rows out of range", file, per, m.From, m.To, m.Rows)
						}
					}
				}
			}
		}
		if ranks != 0 && ranks != len(vf.Volumes) {
			return nil, usageError{fmt.Sprintf("--ranks: %d, but %s holds %d ranks", ranks, file, len(vf.Volumes))}
		}
		return &vf, nil
	}
	meta, err := partition.ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	if ranks == 0 {
		ranks = meta.Parts
	}
	if ranks < 1 {
		return nil, usageError{fmt.Sprintf("--ranks: %d, want ≥ 1", ranks)}
	}
	vf.Meta.Dir, vf.Meta.Parts, vf.Meta.Nodes, vf.Meta.Edges = dir, meta.Parts, meta.NumNodes, meta.NumEdges
	vf.Meta.FeatDim, vf.Meta.NumClasses = meta.FeatDim, meta.NumClasses
	vf.Volumes, err = exchange.Volumes(dir, ranks, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	return &vf, nil
}

// plotPredictions draws predict --json lines: per label one PNG, one
// series per profile × network × exchange (mode and bits), against ranks.
func plotPredictions(files []string, dir string, refs []plots.ProjectionRef, stdout io.Writer) error {
	type key struct{ label, series string }
	type pt struct{ ranks, t, eff float64 }
	series := map[key][]pt{}
	var order []key
	for _, f := range files {
		b, err := container.ReadInput(f, 1<<30, "predictions file")
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var r predictRow
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return fmt.Errorf("%s:%d: %w", f, i+1, err)
			}
			if r.Prediction == nil || r.Ranks < 1 || !(r.EpochS > 0) {
				return fmt.Errorf("%s:%d: not a supergcn predict --json line (no ranks or epoch_s)", f, i+1)
			}
			if !(r.Efficiency >= 0 && r.Efficiency <= 1e6) {
				return fmt.Errorf("%s:%d: efficiency %g, want a finite fraction ≥ 0", f, i+1, r.Efficiency)
			}
			if !validPlotLabel(r.Label) {
				return fmt.Errorf("%s:%d: label %q cannot name a PNG file (no / or \\)", f, i+1, r.Label)
			}
			name := fmt.Sprintf("%s, %s, %s", r.Profile, r.Network, exchangeName(r.AggrMode, r.Bits))
			k := key{r.Label, name}
			if _, ok := series[k]; !ok {
				order = append(order, k)
			}
			series[k] = append(series[k], pt{float64(r.Ranks), r.EpochS, r.Efficiency})
		}
	}
	if len(order) == 0 {
		return fmt.Errorf("%s: no predictions", strings.Join(files, ","))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	byLabel := map[string][]plots.ProjectionSeries{}
	var labels []string
	for _, k := range order {
		pts := series[k]
		sort.Slice(pts, func(i, j int) bool { return pts[i].ranks < pts[j].ranks })
		s := plots.ProjectionSeries{Name: k.series}
		for _, p := range pts {
			s.Ranks, s.EpochS, s.Efficiency = append(s.Ranks, p.ranks), append(s.EpochS, p.t), append(s.Efficiency, p.eff)
		}
		if _, ok := byLabel[k.label]; !ok {
			labels = append(labels, k.label)
		}
		byLabel[k.label] = append(byLabel[k.label], s)
	}
	for _, l := range labels {
		name := l
		if name == "" {
			name = "predicted"
		}
		path := filepath.Join(dir, "projection-"+name+".png")
		if err := plots.Projection(path, name, byLabel[l], refs); err != nil {
			return err
		}
		fmt.Fprintln(stdout, path)
	}
	return nil
}

// exchangeName is "hybrid int2", "post fp32", ...
func exchangeName(mode string, bits int) string {
	if bits == 32 {
		return mode + " fp32"
	}
	return fmt.Sprintf("%s int%d", mode, bits)
}

type modeAndBits struct {
	mode exchange.Mode
	bits int
}

// modeBits lists every mode with every bits.
func modeBits(modes []exchange.Mode, bits []int) []modeAndBits {
	var out []modeAndBits
	for _, m := range modes {
		for _, b := range bits {
			out = append(out, modeAndBits{m, b})
		}
	}
	return out
}

// validPlotLabel: the label becomes the file name projection-LABEL.png
// inside --out, so it may not leave that directory.
func validPlotLabel(l string) bool {
	return !strings.ContainsAny(l, "/\\\x00")
}
