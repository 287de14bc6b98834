package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

func init() {
	register("stats", "rows and bytes each rank would exchange per layer under pre, post and hybrid aggregation",
		func(args []string) error { return cmdStats(args, os.Stdout) })
}

const statsSynopsis = "PDIR [--ranks N] [--ranks-per-node K [--layers L] [--intra-bits B]] [--width F] [--bits B] [--quant-params block|bf16|fp32] [--json]"

// statsReport is the result of `supergcn stats`: one layer, one direction
// (the backward pass moves the same rows the other way).
//
// Bytes are those of the wire format: Bits 32 sends 4·Width bytes a row;
// Bits 2, 4 or 8 sends quant.Format{Bits, Params}.Size: ⌈Width·Bits/8⌉
// data bytes a row plus the parameters: 8 (fp32), 4 (bf16) or 3 bytes a row
// and 4 a block of 64 rows (block).
type statsReport struct {
	Dir         string                   `json:"dir"`
	Parts       int                      `json:"parts"`
	Ranks       int                      `json:"ranks"`
	Width       int                      `json:"width"`
	Bits        int                      `json:"bits"`                   // 32 = fp32 rows
	QuantParams string                   `json:"quant_params,omitempty"` // fp32|bf16|block (quantised rows)
	BytesPerRow float64                  `json:"bytes_per_row"`          // data + params of a row (averaged over a block)
	Pairs       int                      `json:"pairs"`                  // ordered rank pairs with cut edges
	Rows        exchange.RowCounts       `json:"rows"`                   // totals over all ordered pairs
	Bytes       exchange.RowCounts       `json:"bytes"`                  // data + params, per mode
	DataBytes   int64                    `json:"data_bytes"`             // hybrid: encoded values
	ParamBytes  int64                    `json:"param_bytes"`            // hybrid: per-row (zero, scale) pairs
	FP32Bytes   int64                    `json:"fp32_bytes"`             // hybrid rows at fp32, for comparison
	PerRank     map[string]perRankCounts `json:"per_rank"`               // "sent", "recv"
	Seconds     float64                  `json:"seconds"`
}

// wireOf is the wire format a report names (Bits, QuantParams).
func wireOf(bits int, params string) quant.Wire {
	w := quant.Wire{Bits: bits}
	if params != "" {
		w.Params, _ = quant.ParseParams(params)
	}
	return w
}

// wireSize is w.Size in int64s.
func wireSize(w quant.Wire, rows int64, width int) (data, param int64) {
	d, p := w.Size(int(rows), width)
	return int64(d), int64(p)
}

// perRankCounts are min/avg/max over ranks of rows, per mode.
type perRankCounts struct {
	Pre    spread `json:"pre"`
	Post   spread `json:"post"`
	Hybrid spread `json:"hybrid"`
}

type spread struct {
	Min int64   `json:"min"`
	Avg float64 `json:"avg"`
	Max int64   `json:"max"`
}

func cmdStats(args []string, stdout io.Writer) error {
	fs := newFlagSet("stats", statsSynopsis)
	ranks := fs.Int("ranks", 0, "ranks the parts are shared among (must divide the part count; default: one part per rank)")
	width := fs.Int("width", 0, "feature width of a row (default: the dataset's feature dimension, or 128 when structure-only)")
	bits := fs.String("bits", "32", "bits per value on the wire: "+quant.WidthList(", ")+" (32: fp32; the others quantised, plus per-row parameters)")
	params := quant.ParamsBlock
	fs.Func("quant-params", "quantised rows' parameters: block (default, ~3 bytes a row)|bf16 (4)|fp32 (8)", quantParamsFlag(&params))
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	perNode := fs.Int("ranks-per-node", 0, "compare the flat and the two-level exchange with K consecutive ranks to a node (inter-node rows, bytes, messages)")
	layers := fs.Int("layers", 2, "with --ranks-per-node: layers of the model, for messages per epoch")
	intraBits := fs.String("intra-bits", "32", "with --ranks-per-node: bits per value of the rows between ranks of one node, as train's: "+quant.WidthList(", "))
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
		return usageError{fmt.Sprintf("--ranks: %d, want >= 1", *ranks)}
	}
	if *width == 0 {
		*width = meta.FeatDim
		if *width == 0 {
			*width = 128
		}
	}
	if *width < 0 {
		return usageError{fmt.Sprintf("--width: %d, want >= 1", *width)}
	}
	wire, err := quant.ParseWire(*bits, params)
	if err != nil {
		return usageError{fmt.Sprintf("--bits: %q, want %s", *bits, quant.WidthList(", "))}
	}
	if *perNode < 0 || (*perNode > 0 && *ranks%*perNode != 0) {
		// as predict: a layout whose last node is short is not the even
		// K-to-a-node layout the report describes
		return usageError{fmt.Sprintf("--ranks-per-node: %d, want >= 1 and a divisor of the %d ranks", *perNode, *ranks)}
	}
	if *layers < 1 {
		return usageError{fmt.Sprintf("--layers: %d, want >= 1", *layers)}
	}
	intra, err := quant.ParseWire(*intraBits, params)
	if err != nil {
		return usageError{fmt.Sprintf("--intra-bits: %q, want %s", *intraBits, quant.WidthList(", "))}
	}
	if *perNode > 0 {
		rep, err := nodeStats(dir, meta.Parts, *ranks, *perNode, *layers, *width, wire, intra)
		return writeStats(stdout, *asJSON, rep, err, printNodeStats)
	}
	rep, err := exchangeStats(dir, meta.Parts, *ranks, *width, wire)
	return writeStats(stdout, *asJSON, rep, err, printStats)
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
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return "", err
		}
		return "", usageError{err.Error()}
	}
	rest := fs.Args()
	if dir == "" && len(rest) > 0 {
		dir, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", usageError{fmt.Sprintf("unexpected argument %q", rest[0])}
	}
	if dir == "" {
		return "", usageError{"missing partition directory (usage: supergcn stats " + statsSynopsis + ")"}
	}
	return dir, nil
}

// exchangeStats loads each rank's shard in turn and plans every pair that
// sends to it with the exchange's own planner (exchange.SplitShard).
func exchangeStats(dir string, parts, ranks, width int, f quant.Wire) (*statsReport, error) {
	t0 := time.Now()
	sent := make([]exchange.RowCounts, ranks)
	recv := make([]exchange.RowCounts, ranks)
	d, p := f.RowBytes(width)
	rep := &statsReport{Dir: dir, Parts: parts, Ranks: ranks, Width: width, Bits: f.Bits, BytesPerRow: d + p}
	if !f.Exact() {
		rep.QuantParams = f.Params.String()
	}
	// Bytes are summed per ordered pair: each pair's rows are one message
	// (ParamsBlock's per-block bases count per message).
	total := func(rows int64) int64 { return f.Bytes(rows, width) }
	for r := 0; r < ranks; r++ {
		sh, err := partition.Load(dir, r, ranks)
		if err != nil {
			return nil, err
		}
		splits, err := exchange.SplitShard(sh, exchange.ModeHybrid)
		if err != nil {
			return nil, err
		}
		for q, sp := range splits {
			if sp.Counts == (exchange.RowCounts{}) {
				continue
			}
			rep.Pairs++
			sent[q] = sent[q].Add(sp.Counts)
			recv[r] = recv[r].Add(sp.Counts)
			rep.Rows = rep.Rows.Add(sp.Counts)
			rep.Bytes = rep.Bytes.Add(exchange.RowCounts{Pre: total(sp.Counts.Pre), Post: total(sp.Counts.Post), Hybrid: total(sp.Counts.Hybrid)})
			d, p := wireSize(f, sp.Counts.Hybrid, width)
			rep.DataBytes += d
			rep.ParamBytes += p
		}
	}
	rep.FP32Bytes = quant.Wire{Bits: quant.ExactBits}.Bytes(rep.Rows.Hybrid, width)
	rep.PerRank = map[string]perRankCounts{"sent": spreads(sent), "recv": spreads(recv)}
	rep.Seconds = time.Since(t0).Seconds()
	return rep, nil
}

// spreads returns min/avg/max over ranks for each mode.
func spreads(c []exchange.RowCounts) perRankCounts {
	of := func(m exchange.Mode) spread {
		s := spread{Min: c[0].Of(m), Max: c[0].Of(m)}
		sum := int64(0)
		for _, x := range c {
			v := x.Of(m)
			s.Min, s.Max = min(s.Min, v), max(s.Max, v)
			sum += v
		}
		s.Avg = float64(sum) / float64(len(c))
		return s
	}
	return perRankCounts{Pre: of(exchange.ModePre), Post: of(exchange.ModePost), Hybrid: of(exchange.ModeHybrid)}
}

func printStats(w io.Writer, r *statsReport) {
	fmt.Fprintf(w, "%s: %d parts on %d ranks, %d ordered rank pairs with cut edges\n", r.Dir, r.Parts, r.Ranks, r.Pairs)
	f := wireOf(r.Bits, r.QuantParams)
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
			sent.of(m).format(r.BytesPerRow), recv.of(m).format(r.BytesPerRow))
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
}

func (p perRankCounts) of(m exchange.Mode) spread {
	switch m {
	case exchange.ModePre:
		return p.Pre
	case exchange.ModePost:
		return p.Post
	}
	return p.Hybrid
}

// format prints rows min/avg/max and the max in bytes.
func (s spread) format(bytesPerRow float64) string {
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
