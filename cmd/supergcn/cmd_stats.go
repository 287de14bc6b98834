package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/supergcn/supergcn/cmd/internal/predictargs"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
	"github.com/supergcn/supergcn/task"
)

func init() {
	register("stats", "rows and bytes each rank would exchange per layer under pre, post and hybrid aggregation",
		func(args []string) error { return cmdStats(args, os.Stdout) })
}

const statsSynopsis = "PDIR [--ranks N] [--ranks-per-node K [--layers L] [--intra-bits B]] [--width F] [--bits B] [--quant-params block|bf16|fp32] [--heads H [--model gat|gatv2]] [--edge-split SPEC [--neg-ratio K] [--seed S]] [--json]"

func cmdStats(args []string, stdout io.Writer) error {
	fs := newFlagSet("stats", statsSynopsis)
	ranks := fs.Int("ranks", 0, "ranks the parts are shared among (must divide the part count; default: one part per rank)")
	width := fs.Int("width", 0, "feature width of a row (default: the dataset's feature dimension, or 128 when structure-only or the features are sparse: their rows never cross)")
	bits := fs.String("bits", "32", "bits per value on the wire: "+quant.WidthList(", ")+" (32: fp32; the others quantised, plus per-row parameters)")
	params := quant.ParamsBlock
	fs.Func("quant-params", "quantised rows' parameters: block (default, ~3 bytes a row)|bf16 (4)|fp32 (8)", quantParamsFlag(&params))
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	heads := fs.Int("heads", 0, "also count an attention layer (--model) of this many heads: --width is its row width (heads × width per head), its float32 scalars added")
	model := fs.String("model", "gat", "with --heads: the attention model whose layer is counted: gat or gatv2 (its own hybrid plan: a pre row moves two rows each way)")
	perNode := fs.Int("ranks-per-node", 0, "compare the exchange patterns ("+strings.Join(exchange.Exchanges(), ", ")+") with K consecutive ranks to a node (inter-node rows, bytes, messages)")
	layers := fs.Int("layers", 2, "with --ranks-per-node: layers of the model, for messages per epoch")
	intraBits := fs.String("intra-bits", "32", "with --ranks-per-node: bits per value of the rows between ranks of one node, as train's: "+quant.WidthList(", "))
	var pairs predictargs.Pairs
	pairs.Register(fs)
	dir, err := parseStatsArgs(fs, args)
	if err != nil {
		return err
	}
	meta, err := partition.ReadMeta(dir)
	if err != nil {
		return err
	}
	if *ranks == 0 {
		*ranks = meta.Parts
	}
	if *ranks < 1 {
		return usageError(fmt.Sprintf("--ranks: %d, want >= 1", *ranks))
	}
	if *width == 0 {
		*width = meta.FeatDim
		if *width == 0 || meta.SparseFeatures {
			*width = 128
		}
	}
	if *width < 0 {
		return usageError(fmt.Sprintf("--width: %d, want >= 1", *width))
	}
	wire, err := quant.ParseWire(*bits, params)
	if err != nil {
		return usageError(fmt.Sprintf("--bits: %q, want %s", *bits, quant.WidthList(", ")))
	}
	if *perNode < 0 || (*perNode > 0 && *ranks%*perNode != 0) {
		// as predict: a layout whose last node is short is not the even
		// K-to-a-node layout the report describes
		return usageError(fmt.Sprintf("--ranks-per-node: %d, want >= 1 and a divisor of the %d ranks", *perNode, *ranks))
	}
	if *layers < 1 {
		return usageError(fmt.Sprintf("--layers: %d, want >= 1", *layers))
	}
	intra, err := quant.ParseWire(*intraBits, params)
	if err != nil {
		return usageError(fmt.Sprintf("--intra-bits: %q, want %s", *intraBits, quant.WidthList(", ")))
	}
	if *perNode > 0 && pairs.EdgeSplit != "" {
		return usageError("--edge-split: not with --ranks-per-node (the pair rows travel in one flat all-to-all)")
	}
	if *perNode > 0 {
		rep, err := exchange.ReportNodes(dir, meta.Parts, *ranks, *perNode, *layers, *width, wire, intra)
		return writeStats(stdout, *asJSON, rep, err, printNodeStats)
	}
	if *heads < 0 || *heads > *width {
		return usageError(fmt.Sprintf("--heads: %d, want 0 (none) to --width %d", *heads, *width))
	}
	att, err := nn.ModelOp(*model)
	if err != nil || !att.Attends() {
		return usageError(fmt.Sprintf("--model: %q, want an attention model: gat or gatv2", *model))
	}
	if *heads == 0 && flagSet(fs, "model") {
		return usageError("--model: counts an attention layer: give its --heads")
	}
	pv, err := pairs.Volume(dir, *ranks)
	if err != nil {
		return err
	}
	rep, err := exchange.ReportRows(dir, meta.Parts, *ranks, *width, *heads, att, wire)
	out := rowStats{RowReport: rep}
	if pv != nil {
		out.Link = pv.Report(*width, wire)
	}
	if err := writeStats(stdout, *asJSON, out, err, printRowStats); err != nil {
		return err
	}
	if !*asJSON {
		fmt.Fprintln(stdout, featureMemory(meta, *ranks))
	}
	return nil
}

// featureMemory is a line on the features of a partition directory and the
// most memory they take on one of ranks ranks (partition.FeatureBytes).
func featureMemory(m *partition.Meta, ranks int) string {
	most := int64(0)
	for r := range ranks {
		most = max(most, partition.FeatureBytes(m, r, ranks))
	}
	kind := "dense"
	if m.SparseFeatures {
		var nnz int64
		for _, ps := range m.Stats.Parts {
			nnz += ps.FeatNNZ
		}
		kind = fmt.Sprintf("sparse, %d non-zeros", nnz)
	}
	return fmt.Sprintf("features: %d nodes × %d (%s): at most %s on a rank", m.NumNodes, m.FeatDim, kind, humanBytes(most))
}

// writeStats writes rep (unless err, which it returns) to w as indented
// JSON or through print.
func writeStats[R any](w io.Writer, asJSON bool, rep R, err error, print func(io.Writer, R)) error {
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	print(w, rep)
	return nil
}

// parseStatsArgs accepts the partition directory before or after the flags.
func parseStatsArgs(fs *flag.FlagSet, args []string) (string, error) {
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := parseFlagSet(fs, args); err != nil {
		return "", err
	}
	rest := fs.Args()
	if dir == "" && len(rest) > 0 {
		dir, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", usageError(fmt.Sprintf("unexpected argument %q", rest[0]))
	}
	if dir == "" {
		return "", usageError("missing partition directory (usage: supergcn stats " + statsSynopsis + ")")
	}
	return dir, nil
}

// rowStats is the row report and, with --edge-split, the link task's
// pair exchange (under "link" in the JSON).
type rowStats struct {
	*exchange.RowReport
	Link *task.PairReport `json:"link,omitempty"`
}

func printRowStats(w io.Writer, r rowStats) {
	printStats(w, r.RowReport)
	if l := r.Link; l != nil {
		fmt.Fprintf(w, "\nlink pairs (one epoch: a training step with its negatives, one evaluation), rows of %d values at %s; per rank min/avg/max:\n",
			l.Width, r.Wire())
		for _, row := range []struct {
			name string
			v    []int64
		}{{"training pairs scored", l.TrainPairs}, {"training rows fetched", l.TrainRows}, {"training bytes sent", l.TrainBytes},
			{"evaluation pairs scored", l.EvalPairs}, {"evaluation rows fetched", l.EvalRows}, {"evaluation bytes sent", l.EvalBytes},
			{"evaluation score bytes", l.ScoreBytes}} {
			fmt.Fprintf(w, "  %-24s %s\n", row.name, minAvgMax(row.v))
		}
		fmt.Fprintf(w, "  all ranks: training %s, evaluation %s\n", humanBytes(l.TrainBytesTotal), humanBytes(l.EvalBytesTotal))
	}
}

// minAvgMax formats per-rank counts as min/avg/max.
func minAvgMax(v []int64) string {
	lo, hi, sum := v[0], v[0], int64(0)
	for _, x := range v {
		lo, hi, sum = min(lo, x), max(hi, x), sum+x
	}
	return fmt.Sprintf("%d/%.0f/%d", lo, float64(sum)/float64(len(v)), hi)
}

func printStats(w io.Writer, r *exchange.RowReport) {
	fmt.Fprintf(w, "%s: %d parts on %d ranks, %d ordered rank pairs with cut edges\n", r.Dir, r.Parts, r.Ranks, r.Pairs)
	f := r.Wire()
	d, p := f.RowBytes(r.Width)
	perRow := fmt.Sprintf("%g bytes/row", r.BytesPerRow)
	if p > 0 {
		perRow = fmt.Sprintf("%g bytes/row: %g data + %g params", r.BytesPerRow, d, p)
	}
	fmt.Fprintf(w, "rows per layer, one direction; bytes at %s, width %d (%s); planned in %.2fs\n\n",
		f, r.Width, perRow, r.Seconds)
	fmt.Fprintf(w, "%-7s %14s %12s   %-34s %s\n", "mode", "rows", "bytes", "sent per rank min/avg/max", "received per rank min/avg/max")
	sent, recv := r.PerRank["sent"], r.PerRank["recv"]
	for _, m := range []exchange.Mode{exchange.ModePre, exchange.ModePost, exchange.ModeHybrid} {
		fmt.Fprintf(w, "%-7s %14d %12s   %-34s %s\n", m, r.Rows.Of(m), humanBytes(r.Bytes.Of(m)),
			formatSpread(sent.Of(m), r.BytesPerRow), formatSpread(recv.Of(m), r.BytesPerRow))
	}
	if r.Rows.Pre > 0 && r.Rows.Post > 0 {
		fmt.Fprintf(w, "\nhybrid moves %.1f%% of pre's rows and %.1f%% of post's\n",
			100*float64(r.Rows.Hybrid)/float64(r.Rows.Pre), 100*float64(r.Rows.Hybrid)/float64(r.Rows.Post))
	}
	if !f.Exact() && r.Bytes.Hybrid > 0 {
		fmt.Fprintf(w, "hybrid at %s: %d data + %d param = %d bytes per layer (%s), fp32 %d bytes (%s): %.2fx fewer\n",
			f, r.DataBytes, r.ParamBytes, r.Bytes.Hybrid, humanBytes(r.Bytes.Hybrid), r.FP32Bytes, humanBytes(r.FP32Bytes),
			float64(r.FP32Bytes)/float64(r.Bytes.Hybrid))
	}
	if a := r.Attention; a != nil {
		scalars := "source terms, destination terms, softmax max and sum"
		if a.Model == "gatv2" {
			scalars = "softmax max and sum, ⟨g, o⟩; a pre row also moves the target's row and its gradient"
		}
		fmt.Fprintf(w, "\nattention layer, %s, %d heads (rows, plus float32 scalars: %s):\n", a.Model, a.Heads, scalars)
		fmt.Fprintf(w, "%-7s %14s %14s %14s\n", "mode", "forward", "backward", "of which scalars")
		for _, m := range []exchange.Mode{exchange.ModePre, exchange.ModePost, exchange.ModeHybrid} {
			fmt.Fprintf(w, "%-7s %14s %14s %14s\n", m, humanBytes(a.Forward.Of(m)), humanBytes(a.Backward.Of(m)), humanBytes(a.Scalars.Of(m)))
		}
	}
}

// formatSpread prints rows min/avg/max and the max in bytes.
func formatSpread(s exchange.Spread, bytesPerRow float64) string {
	return fmt.Sprintf("%d/%.0f/%d (max %s)", s.Min, s.Avg, s.Max, humanBytes(int64(float64(s.Max)*bytesPerRow)))
}

func humanBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	f, i := float64(b), -1
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTP"[i])
}
