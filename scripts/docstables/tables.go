package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// generators make a table's lines from the data files named in its marker.
var generators = map[string]func(root string, files []string) ([]string, error){
	"single-node":  singleNode,
	"cluster":      cluster,
	"validate":     validate,
	"projection":   projection,
	"partition":    partitionScaling,
	"seeds":        seeds,
	"layouts":      layouts,
	"layout-model": layoutModel,
	"models":       modelsValidate,
}

func generate(root string, spec []string) ([]string, error) {
	if len(spec) < 2 {
		return nil, fmt.Errorf("table marker %q: want KIND FILE...", strings.Join(spec, " "))
	}
	g, ok := generators[spec[0]]
	if !ok {
		return nil, fmt.Errorf("unknown table kind %q", spec[0])
	}
	return g(root, spec[1:])
}

// record is one CSV row by column name; file is the data file's name.
type record struct {
	file string
	col  map[string]string
}

func (r record) s(k string) string { return r.col[k] }

func (r record) f(k string) float64 {
	v, err := strconv.ParseFloat(r.col[k], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// readCSV reads the CSV files (with a header line) in order.
func readCSV(root string, files []string) ([]record, error) {
	var recs []record
	for _, name := range files {
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(rows) < 2 {
			return nil, fmt.Errorf("%s: no data rows", name)
		}
		for _, row := range rows[1:] {
			m := map[string]string{}
			for j, k := range rows[0] {
				if j < len(row) {
					m[k] = row[j]
				}
			}
			recs = append(recs, record{file: filepath.Base(name), col: m})
		}
	}
	return recs, nil
}

// row formats a Markdown table row.
func row(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |" }

func sep(n int) string { return "|" + strings.Repeat("---|", n) }

func f2(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func code(s string) string { return "`" + s + "`" }

// configName spells bench-cluster.sh's configurations out.
func configName(c string) string {
	names := map[string]string{"post32": "post fp32", "hyb32": "hybrid fp32", "hyb2": "hybrid int2",
		"hyb4": "hybrid int4", "hyb8": "hybrid int8", "hyb2tl": "hybrid int2, two-level",
		"hyb32tl": "hybrid fp32, two-level", "hyb2tlp": "hybrid int2, two-level-paired"}
	if n, ok := names[c]; ok {
		return n
	}
	return c
}

func modelName(m string) string {
	switch m {
	case "gcn":
		return "GCN 2×128"
	case "sage":
		return "SAGE 3×256 LN"
	case "gat":
		return "GAT 8 heads × 8"
	}
	return m
}

// singleNode: one process, one row per (implementation, model) of
// scripts/bench-single-node.sh's CSVs.
func singleNode(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	out := []string{row("model", "implementation", "median epoch s", "aggr / dense / eval s", "peak RSS GB", "data"), sep(6)}
	for _, r := range recs {
		parts := ""
		if r.s("aggr_s") != "" {
			parts = f2(r.f("aggr_s")) + " / " + f2(r.f("dense_s")) + " / " + f2(r.f("eval_s"))
		}
		epoch, peak := r.s("note"), "" // a run that did not fit: its note, no times
		if epoch == "" {
			epoch, peak = f2(r.f("median_epoch_s")), f2(r.f("peak_rss_gb"))
		}
		out = append(out, row(modelName(r.s("model")), implName(r.s("impl")), epoch, parts, peak, code(r.file)))
	}
	return out, nil
}

func implName(i string) string {
	names := map[string]string{"supergcn": "supergcn fp32", "supergcn-bf16": "supergcn `--precision bf16`",
		"pytorch": "PyTorch CSR fp32", "pytorch-bf16-autocast": "PyTorch CSR bf16 autocast",
		"pytorch-cuda": "PyTorch CSR fp32, the box's H200 GPU", "pyg-cuda": "PyG 2.8 fp32, the box's H200 GPU"}
	if n, ok := names[i]; ok {
		return n
	}
	return i
}

// cluster: epoch seconds of scripts/bench-cluster.sh's rows, one row per
// model and configuration, one column per link in order of appearance.
func cluster(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	var keys, links []string
	cell := map[string]string{}
	bytes := map[string]float64{}
	for _, r := range recs {
		k := modelName(r.s("model")) + ", " + configName(r.s("config"))
		l := linkName(r.s("link"), r.s("nodes"))
		if _, ok := bytes[k]; !ok {
			keys = append(keys, k)
		}
		if !contains(links, l) {
			links = append(links, l)
		}
		cell[k+"\x00"+l] = f2(r.f("epoch_s"))
		bytes[k] = r.f("comm_bytes")
	}
	head := append(append([]string{"epoch s"}, links...), "training bytes/epoch")
	out := []string{row(head...), sep(len(head))}
	for _, k := range keys {
		cells := []string{k}
		for _, l := range links {
			cells = append(cells, cell[k+"\x00"+l])
		}
		out = append(out, row(append(cells, fmt.Sprintf("%.3g GB", bytes[k]/1e9))...))
	}
	return append(out, "", "Data: "+codeList(files)+"."), nil
}

func linkName(link, nodes string) string {
	if link == "shm" {
		return "shared memory"
	}
	rate := strings.NewReplacer("gbit", " Gbit/s", "mbit", " Mbit/s").Replace(link)
	return rate + ", " + nodes + " nodes"
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func codeList(files []string) string {
	var cs []string
	for _, f := range files {
		cs = append(cs, code(f))
	}
	return strings.Join(cs, ", ")
}

// validate: scripts/validate-model.sh's predicted against measured epochs,
// and how many are within ±25 %.
func validate(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	out := []string{row("model", "exchange", "link", "measured s", "predicted s", "ratio"), sep(6)}
	within, lo, hi := 0, math.Inf(1), math.Inf(-1)
	for _, r := range recs {
		ratio := r.f("ratio")
		mark := ""
		if math.Abs(ratio-1) <= 0.25 {
			within++
		} else {
			mark = " ✗"
		}
		lo, hi = math.Min(lo, ratio), math.Max(hi, ratio)
		out = append(out, row(modelName(r.s("model")), configName(r.s("config")), linkName(r.s("link"), r.s("nodes")),
			f2(r.f("measured_s")), f2(r.f("predicted_s")), f2(ratio)+mark))
	}
	return append(out, "", fmt.Sprintf("**%d of %d within ±25 %%, ratios %s–%s** (%s).", within, len(recs), f2(lo), f2(hi),
		codeList(files))), nil
}

// modelsValidate: scripts/validate-models.sh's training steps, predicted
// against measured per model and layout, with the aggregation and dense
// parts, and how many are within ±25 %.
func modelsValidate(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	out := []string{row("ranks × threads", "model", "measured s", "predicted s", "predicted / measured",
		"aggregation s, measured / predicted", "dense s, measured / predicted"), sep(7)}
	within := 0
	for _, r := range recs {
		ratio, mark := r.f("ratio"), ""
		if math.Abs(ratio-1) <= 0.25 {
			within++
		} else {
			mark = " ✗"
		}
		out = append(out, row(r.s("ranks")+" × "+r.s("threads"), r.s("model"), f3(r.f("measured_s")), f3(r.f("predicted_s")),
			f2(ratio)+mark, f3(r.f("measured_aggr_s"))+" / "+f3(r.f("predicted_aggr_s")),
			f3(r.f("measured_dense_s"))+" / "+f3(r.f("predicted_dense_s"))))
	}
	return append(out, "", fmt.Sprintf("**%d of %d within ±25 %%** (%s).", within, len(recs), codeList(files))), nil
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// partitionScaling: scripts/bench-partition-scaling.sh's CSV, serial first,
// then by ranks.
func partitionScaling(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(recs, func(i, j int) bool {
		si, sj := strings.HasSuffix(recs[i].s("method"), "-serial"), strings.HasSuffix(recs[j].s("method"), "-serial")
		if si != sj {
			return si
		}
		return recs[i].f("ranks") < recs[j].f("ranks")
	})
	out := []string{row("method", "ranks", "wall s", "partitioner s", "max peak RSS per rank MB", "edge cut", "node / edge imbalance"), sep(7)}
	for _, r := range recs {
		out = append(out, row(r.s("method"), r.s("ranks"), f2(r.f("seconds")), f2(r.f("partition_seconds")),
			strconv.FormatFloat(r.f("max_rss_mb"), 'f', 0, 64), fmt.Sprintf("%.2f %%", 100*r.f("edge_cut_fraction")),
			r.s("node_imbalance")+" / "+r.s("edge_imbalance")))
	}
	return append(out, "", "Data: "+codeList(files)+"."), nil
}

// projection: `supergcn predict --json` lines of scripts/projection.sh,
// seconds per training epoch (parallel efficiency) by machine, exchange
// and rank count; of repeated points the last line counts.
func projection(root string, files []string) ([]string, error) {
	type point struct {
		Prof  string  `json:"profile"`
		Net   string  `json:"network"`
		Mode  string  `json:"aggr_mode"`
		Bits  int     `json:"bits"`
		Ranks int     `json:"ranks"`
		Epoch float64 `json:"epoch_s"`
		Eff   float64 `json:"efficiency"`
	}
	var keys []string
	var ranks []int
	cell := map[string]string{}
	for _, name := range files {
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			var p point
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			k := machineName(p.Prof, p.Net) + ", " + p.Mode + " " + bitsName(p.Bits)
			if !contains(keys, k) {
				keys = append(keys, k)
			}
			if !containsInt(ranks, p.Ranks) {
				ranks = append(ranks, p.Ranks)
			}
			cell[fmt.Sprint(k, "\x00", p.Ranks)] = fmt.Sprintf("%s (%.0f%%)", seconds(p.Epoch), 100*p.Eff)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	sort.Strings(keys)
	sort.Ints(ranks)
	head := []string{"machine, exchange"}
	for _, r := range ranks {
		head = append(head, strconv.Itoa(r))
	}
	out := []string{row(head...), sep(len(head))}
	for _, k := range keys {
		cells := []string{k}
		for _, r := range ranks {
			cells = append(cells, cell[fmt.Sprint(k, "\x00", r)])
		}
		out = append(out, row(cells...))
	}
	return append(out, "", "Predicted seconds per training epoch (parallel efficiency); data: "+codeList(files)+"."), nil
}

// seconds: three decimals under a second, two above.
func seconds(v float64) string {
	if v < 1 {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return f2(v)
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func machineName(profile, network string) string {
	names := map[string]string{"a64fx": "A64FX", "xeon-gold-6148": "Xeon Gold 6148", "tofu-d": "Tofu-D",
		"ib-edr": "IB EDR", "ib-hdr": "IB HDR", "xeon64": "64-core Xeon (measured)"}
	n := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		return s
	}
	return n(profile) + ", " + n(network)
}

func bitsName(b int) string {
	if b == 32 {
		return "fp32"
	}
	return "int" + strconv.Itoa(b)
}

// seeds: the mean lines of scripts/seeds.sh runs collected in a text file,
// each run introduced by a line "# LABEL: command".
func seeds(root string, files []string) ([]string, error) {
	out := []string{row("run", "last epoch", "at best validation"), sep(3)}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		label := ""
		for n, line := range strings.Split(string(b), "\n") {
			if l, ok := strings.CutPrefix(line, "# "); ok {
				label, _, _ = strings.Cut(l, ":")
				continue
			}
			rest, ok := strings.CutPrefix(line, "mean of ")
			if !ok {
				continue
			}
			_, rest, _ = strings.Cut(rest, "last epoch ")
			last, best, ok := strings.Cut(rest, ", at best val ")
			if !ok || label == "" {
				return nil, fmt.Errorf("%s:%d: want \"mean of N seeds: last epoch …, at best val …\" after a \"# LABEL: …\" line", name, n+1)
			}
			out = append(out, row(label, "**"+last+"**", best))
		}
	}
	return append(out, "", "Data: "+codeList(files)+"."), nil
}
