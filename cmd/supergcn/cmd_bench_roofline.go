package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/perfmodel/measure"
	"github.com/supergcn/supergcn/train"
)

func init() {
	registerBench("roofline", "how far a training run (train --metrics FILE) is from the machine's bound, per stage and epoch", benchRoofline)
}

func benchRoofline(args []string) error {
	fs := newFlagSet("bench roofline", "--metrics FILE [flags]")
	metrics := fs.String("metrics", "", "metrics file of a one-process training run (train --metrics): its command gives the model and data, its epochs the times measured")
	profile := fs.String("profile", "", "take the GEMM and STREAM rates from this profile (bench profile --out) at the run's threads instead of measuring them")
	var mach perfmodel.Machine
	fs.Float64Var(&mach.GemmGFLOPS, "gemm-gflops", 0, "fp32 GEMM rate, GFLOP/s (with --stream-gbs: neither measured nor read)")
	fs.Float64Var(&mach.StreamGBs, "stream-gbs", 0, "STREAM triad rate, GB/s")
	asJSON := fs.Bool("json", false, "print one JSON object per stage, one a line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *metrics == "" {
		return usageError("--metrics: the metrics file of a training run is required")
	}
	given := mach.GemmGFLOPS != 0 || mach.StreamGBs != 0
	if given && (*profile != "" || mach.Validate() != nil) {
		return usageError("--gemm-gflops, --stream-gbs: give both, positive, and no --profile")
	}
	rt, err := perfmodel.ReadRunTimes(*metrics)
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	i := slices.Index(rt.Command, "train")
	if rt.Ranks != 1 || i < 0 {
		return fmt.Errorf("--metrics: %s: a roofline is of one process's training run (train, 1 rank), not %q on %d ranks", *metrics, rt.Command, rt.Ranks)
	}
	a, err := parseTrain(withoutOutputs(rt.Command[i+1:]))
	if err != nil {
		return fmt.Errorf("--metrics: %s: its train command: %w", *metrics, err)
	}
	ds, err := a.d.loadDataset(nil)
	if err != nil {
		return err
	}
	a.cfg.Model.In, a.cfg.Model.Out = ds.FeatDim, ds.NumClasses
	m, err := perfmodel.ModelOf(a.cfg.Model)
	if err != nil {
		return err
	}
	evalCache := a.cfg.LabelProp == 0 && a.cfg.EvalCache != train.EvalCacheOff // as the command asks; the header says what ran
	if rt.EvalCache != nil {
		evalCache = *rt.EvalCache
	}
	work, err := perfmodel.Roofline(m, perfmodel.Graph{Nodes: int64(ds.NumNodes()), Edges: ds.Graph.NNZ(), TrainNodes: int64(len(ds.Train))}, evalCache)
	if err != nil {
		return err
	}
	threads, src := rt.Threads, "given"
	switch {
	case *profile != "":
		p, err := perfmodel.LoadProfile(*profile)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		if mach, err = p.Machine(threads); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		src = "profile " + p.Name
	case !given:
		if err := setAloneThreads(&threads); err != nil {
			return err
		}
		if mach, err = measure.Machine(threads); err != nil {
			return kernelError(err)
		}
		src = "measured now"
	}
	rows := perfmodel.RoofReport(work, mach, rt.Measured)
	if *asJSON {
		for _, r := range rows {
			b, _ := json.Marshal(r)
			fmt.Println(string(b))
		}
		return nil
	}
	fmt.Printf("roofline: %s %d×%d on %s (%d nodes, %d edges), %d thread(s); GEMM %.1f GFLOP/s, STREAM triad %.1f GB/s (%s); measured: median of %d epoch(s) of %s\n",
		m.Kind, m.Layers, m.Hidden, a.d.describe(), ds.NumNodes(), ds.Graph.NNZ(), threads, mach.GemmGFLOPS, mach.StreamGBs, src, rt.Epochs, *metrics)
	fmt.Printf("%-12s %10s %10s %10s %6s %11s %9s\n", "stage", "GFLOP", "GB", "bound ms", "binds", "measured ms", "fraction")
	for _, r := range rows {
		fmt.Printf("%-12s %10.2f %10.2f %10.2f %6s %11.2f %8.2f%%\n", r.Stage, r.Flops/1e9, r.Bytes/1e9, 1e3*r.BoundS, r.Binds, 1e3*r.MeasuredS, 100*r.Fraction)
	}
	fmt.Println("bound = max(GFLOP / GEMM rate, GB / STREAM rate), the compulsory bytes (each operand read once, each result written once); fraction = bound / measured")
	return nil
}

// withoutOutputs drops the output flags (and their values) of a train
// command: a run's files need not exist where its metrics are read.
func withoutOutputs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		switch {
		case !strings.HasPrefix(args[i], "-"):
		case slices.Contains([]string{"metrics", "save", "save-best", "save-every", "predictions", "embeddings", "cpuprofile"}, name):
			if !inline {
				i++ // its value
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}
