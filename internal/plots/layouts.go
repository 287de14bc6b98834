package plots

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// LayoutRow is one line of scripts/bench-layouts.sh's layouts.csv: one
// model, exchange configuration, link and layout (ranks × threads per
// node), with its median epoch time.
type LayoutRow struct {
	Model, Config, Link   string
	RanksPerNode, Threads int
	EpochS                float64
}

// ReadLayouts reads a bench-layouts layouts.csv (header line first; the
// columns model, config, link, ranks, ranks_per_node, threads and epoch_s
// are used). Bad lines are errors naming file:line.
func ReadLayouts(path string) ([]LayoutRow, error) {
	return readResultsFile(path, readLayouts)
}

func readLayouts(r io.Reader, path string) ([]LayoutRow, error) {
	want := []string{"model", "config", "link", "ranks", "ranks_per_node", "threads", "epoch_s"}
	return readResultsCSV(r, path, "bench-layouts", want, func(line int, rec []string, col map[string]int, _ int) (LayoutRow, error) {
		var n [2]int
		for i, c := range []string{"ranks_per_node", "threads"} {
			v, err := strconv.Atoi(rec[col[c]])
			if err != nil || v < 1 {
				return LayoutRow{}, fmt.Errorf("%s:%d: %s %q is not a positive count", path, line, c, rec[col[c]])
			}
			n[i] = v
		}
		t, err := strconv.ParseFloat(rec[col["epoch_s"]], 64)
		if err != nil || !(t >= 0) {
			return LayoutRow{}, fmt.Errorf("%s:%d: epoch_s %q is not a time in seconds", path, line, rec[col["epoch_s"]])
		}
		return LayoutRow{Model: rec[col["model"]], Config: rec[col["config"]], Link: rec[col["link"]],
			RanksPerNode: n[0], Threads: n[1], EpochS: t}, nil
	})
}

// Layouts draws one grouped bar chart per model and link: the epoch time per
// layout (a group of bars, "R×T": ranks × threads per node, most ranks
// first as read) and configuration (a bar), and returns the files written
// into dir (layouts-MODEL-LINK.png). A later line for the same model, link,
// layout and config replaces an earlier one.
func Layouts(dir string, rows []LayoutRow) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	type key struct{ model, link string }
	var keys []key
	layouts, configs := map[key][]string{}, map[key][]string{}
	t := map[key]map[[2]string]float64{}
	add := func(list []string, s string) []string {
		for _, x := range list {
			if x == s {
				return list
			}
		}
		return append(list, s)
	}
	for _, r := range rows {
		k := key{r.Model, r.Link}
		if t[k] == nil {
			t[k] = map[[2]string]float64{}
			keys = append(keys, k)
		}
		lay := fmt.Sprintf("%d×%d", r.RanksPerNode, r.Threads)
		layouts[k] = add(layouts[k], lay)
		configs[k] = add(configs[k], r.Config)
		t[k][[2]string{r.Config, lay}] = r.EpochS
	}
	var files []string
	for _, k := range keys {
		path := filepath.Join(dir, fmt.Sprintf("layouts-%s-%s.png", k.model, k.link))
		title := fmt.Sprintf("%s, %s: epoch time by ranks × threads per node", k.model, k.link)
		if err := groupedBars(path, title, layouts[k], configs[k], func(c, l string) float64 { return t[k][[2]string{c, l}] }); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}
