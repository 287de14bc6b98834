package plots

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// writeModelRun writes a metrics file of a run of ranks ranks whose
// header is header (model or command), 3 epochs with val_loss when
// valLoss.
func writeModelRun(t *testing.T, path string, header map[string]any, ranks int, valLoss bool) *Run {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	header["header"], header["ranks"] = true, ranks
	enc.Encode(header)
	for e := 1; e <= 3; e++ {
		rec := map[string]any{"epoch": e, "loss": 1.0 / float64(e), "val_acc": 0.5, "test_acc": 0.5, "train_acc": 0.5,
			"epoch_s": 1.0 / float64(ranks), "ranks": ranks, "comm_bytes": 100 * ranks}
		if valLoss {
			rec["val_loss"] = 1.5 / float64(e)
		}
		enc.Encode(rec)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// scalingRuns: gcn 2×16 on 4, 1 and 2 ranks, sage 3×64 on 1 and 8, and
// an older file naming its model only on its command line.
func scalingRuns(t *testing.T) []*Run {
	dir := t.TempDir()
	var runs []*Run
	model := func(name string, layers, hidden int) map[string]any {
		return map[string]any{"model": map[string]any{"Model": name, "Layers": layers, "Hidden": hidden, "In": 10, "Out": 3}}
	}
	for i, c := range []struct {
		h     map[string]any
		ranks int
	}{{model("gcn", 2, 16), 4}, {model("sage", 3, 64), 1}, {model("gcn", 2, 16), 1}, {model("sage", 3, 64), 8}, {model("gcn", 2, 16), 2},
		{map[string]any{"command": []string{"supergcn", "train", "--model", "gin", "--layers", "2", "--hidden", "32"}}, 2}} {
		runs = append(runs, writeModelRun(t, filepath.Join(dir, "r"+strconv.Itoa(i)+".jsonl"), c.h, c.ranks, false))
	}
	return runs
}

// The scaling figure draws one line per model, its runs by rank count,
// never joining runs of two models.
func TestScalingSeriesPerModel(t *testing.T) {
	series := scalingSeries(scalingRuns(t))
	want := map[string]string{"gcn 2×16": "1 2 4", "sage 3×64": "1 8", "gin 2×32": "2"}
	if len(series) != len(want) {
		t.Fatalf("%d series, want %d: %+v", len(series), len(want), series)
	}
	for _, s := range series {
		var rs []string
		for _, p := range s.pts {
			rs = append(rs, strconv.Itoa(int(p.ranks)))
		}
		if got := strings.Join(rs, " "); got != want[s.config] {
			t.Errorf("series %q: ranks %s, want %q", s.config, got, want[s.config])
		}
	}
}

// The rank axis is labelled at the rank counts, integers only.
func TestScalingRankTicks(t *testing.T) {
	for _, runs := range [][]*Run{scalingRuns(t), scalingRuns(t)[:3]} { // 1…8 (log axis), 1…4
		left, _, err := scalingPlots(runs)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, tk := range left.X.Tick.Marker.Ticks(left.X.Min, left.X.Max) {
			if tk.Label == "" {
				continue
			}
			if n, err := strconv.Atoi(tk.Label); err != nil || float64(n) != tk.Value {
				t.Errorf("tick %q at %v: not an integer rank count", tk.Label, tk.Value)
			}
			labels = append(labels, tk.Label)
		}
		if len(labels) < 2 {
			t.Errorf("rank ticks %v", labels)
		}
	}
}

var svgText = regexp.MustCompile(`<text x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*>([^<]*)</text>`)

// svgTexts draws p as drawPlot does into an SVG and returns the x of
// each text drawn, by its text.
func svgTexts(t *testing.T, p *plot.Plot) map[string]float64 {
	t.Helper()
	c := vgsvg.New(width, height)
	drawPlot(p, draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	xs := map[string]float64{}
	for _, m := range svgText.FindAllStringSubmatch(b.String(), -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		xs[m[3]] = x
	}
	return xs
}

// Every legend lies right of its plot's data area (its entries start
// beyond the last x tick label); the loss figure has each run's
// validation loss when the metrics carry it.
func TestLegendsOutsideData(t *testing.T) {
	runs := scalingRuns(t)
	withVal := writeModelRun(t, filepath.Join(t.TempDir(), "v.jsonl"), map[string]any{}, 1, true)
	loss, err := Loss([]*Run{runs[0], withVal})
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := Accuracy(runs[:2])
	left, right, _ := scalingPlots(runs)
	for name, c := range map[string]struct {
		p      *plot.Plot
		legend []string
	}{
		"loss":    {loss, []string{"r0 train", "v train", "v val"}},
		"acc":     {acc, []string{"r0 val", "r1 test"}},
		"scaling": {left, []string{"gcn 2×16", "sage 3×64", "gin 2×32"}},
		"bytes":   {right, []string{"gcn 2×16"}},
	} {
		xs := svgTexts(t, c.p)
		ticks := c.p.X.Tick.Marker.Ticks(c.p.X.Min, c.p.X.Max)
		axisEnd := 0.0
		for _, tk := range ticks {
			if x, ok := xs[tk.Label]; ok && tk.Label != "" {
				axisEnd = max(axisEnd, x)
			}
		}
		for _, l := range c.legend {
			x, ok := xs[l]
			if !ok || axisEnd == 0 || x <= axisEnd {
				t.Errorf("%s: legend entry %q at x %v (drawn %v), the last x tick label at %v", name, l, x, ok, axisEnd)
			}
		}
	}
	if _, ok := svgTexts(t, loss)["r0 val"]; ok {
		t.Error("loss: a validation loss drawn for a run without val_loss")
	}
}
