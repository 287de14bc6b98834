package plots

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// MatrixRow is one line of scripts/bench-cluster.sh's results.csv: one
// model, exchange configuration and link, with its median epoch time.
type MatrixRow struct {
	Model, Config, Link string
	Ranks               int
	EpochS              float64
}

// ReadMatrix reads a bench-cluster results.csv (header line first; the
// columns model, config, link, ranks and epoch_s are used). Bad lines are
// errors naming file:line.
func ReadMatrix(path string) ([]MatrixRow, error) {
	return readResultsFile(path, readMatrix)
}

func readMatrix(r io.Reader, path string) ([]MatrixRow, error) {
	want := []string{"model", "config", "link", "ranks", "epoch_s"}
	return readResultsCSV(r, path, "bench-cluster", want, func(line int, rec []string, col map[string]int, ranks int) (MatrixRow, error) {
		t, err := strconv.ParseFloat(rec[col["epoch_s"]], 64)
		if err != nil || !(t >= 0) {
			return MatrixRow{}, fmt.Errorf("%s:%d: epoch_s %q is not a time in seconds", path, line, rec[col["epoch_s"]])
		}
		return MatrixRow{Model: rec[col["model"]], Config: rec[col["config"]], Link: rec[col["link"]], Ranks: ranks, EpochS: t}, nil
	})
}

// configLabels names bench-cluster's configurations in the legend.
var configLabels = map[string]string{
	"post32": "post fp32", "hyb32": "hybrid fp32", "hyb2": "hybrid int2", "hyb4": "hybrid int4", "hyb8": "hybrid int8",
	"hyb2tl": "two-level int2", "hyb32tl": "two-level fp32", "hyb2tlp": "two-level-paired int2",
}

// Matrix draws one grouped bar chart per model and rank count: the epoch
// time per link (a group of bars) and configuration (a bar), and returns
// the files written into dir (matrix-MODEL-npRANKS.png). A later line for
// the same model, ranks, config and link replaces an earlier one.
func Matrix(dir string, rows []MatrixRow) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	type key struct {
		model string
		ranks int
	}
	var keys []key
	links, configs := map[key][]string{}, map[key][]string{}
	t := map[key]map[[2]string]float64{}
	seen := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, r := range rows {
		k := key{r.Model, r.Ranks}
		if t[k] == nil {
			t[k] = map[[2]string]float64{}
			keys = append(keys, k)
		}
		if !seen(links[k], r.Link) {
			links[k] = append(links[k], r.Link)
		}
		if !seen(configs[k], r.Config) {
			configs[k] = append(configs[k], r.Config)
		}
		t[k][[2]string{r.Config, r.Link}] = r.EpochS
	}
	var files []string
	for _, k := range keys {
		path := filepath.Join(dir, fmt.Sprintf("matrix-%s-np%d.png", k.model, k.ranks))
		title := fmt.Sprintf("%s, %d ranks: epoch time by link and exchange", k.model, k.ranks)
		err := groupedBars(path, title, links[k], configs[k], func(c, l string) float64 { return t[k][[2]string{c, l}] })
		if err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}

// groupedBars draws a bar chart into path: one group of bars per group
// name, one bar (a colour, a legend entry) per series; value gives each
// bar's height in seconds per epoch (0 where a run is missing).
func groupedBars(path, title string, groups, series []string, value func(series, group string) float64) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "seconds per epoch"
	p.Add(plotter.NewGrid())
	p.Y.Tick.Marker = labelledTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	n := len(series)
	top := 0.0
	w := vg.Points(min(14, 60/float64(max(n, 1))))
	for i, c := range series {
		vals := make(plotter.Values, len(groups))
		for j, g := range groups {
			vals[j] = value(c, g)
			top = max(top, vals[j])
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, c, err)
		}
		b.Color = seriesColor(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(n-1)/2) * w
		p.Add(b)
		label := configLabels[c]
		if label == "" {
			label = c
		}
		p.Legend.Add(label, b)
	}
	p.NominalX(groups...)
	p.Y.Min, p.Y.Max = 0, 1.35*top // room for the legend above the bars
	if err := savePNG(p, width, height, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
