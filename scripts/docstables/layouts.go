package main

import (
	"math"
	"strings"
)

// layouts: scripts/bench-layouts.sh's CSV as one table, a row per ranks ×
// threads layout per node and a column per (model, exchange, link); the
// fastest layout of each column in bold.
func layouts(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	var rowKeys, colKeys []string
	cell := map[string]float64{}
	for _, r := range recs {
		rk := r.s("ranks_per_node") + " × " + r.s("threads")
		ck := modelName(r.s("model")) + ", " + configName(r.s("config")) + ", " + shortLink(r.s("link"))
		if !contains(rowKeys, rk) {
			rowKeys = append(rowKeys, rk)
		}
		if !contains(colKeys, ck) {
			colKeys = append(colKeys, ck)
		}
		cell[rk+"\x00"+ck] = r.f("epoch_s")
	}
	best := map[string]float64{}
	for _, c := range colKeys {
		best[c] = math.Inf(1)
		for _, rk := range rowKeys {
			if v, ok := cell[rk+"\x00"+c]; ok && v < best[c] {
				best[c] = v
			}
		}
	}
	head := append([]string{"epoch s (model, exchange, link) by ranks × threads per node"}, rowKeys...)
	out := []string{row(head...), sep(len(head))}
	for _, c := range colKeys {
		cells := []string{c}
		for _, rk := range rowKeys {
			v, ok := cell[rk+"\x00"+c]
			switch {
			case !ok:
				cells = append(cells, "–")
			case v == best[c]:
				cells = append(cells, "**"+f2(v)+"**")
			default:
				cells = append(cells, f2(v))
			}
		}
		out = append(out, row(cells...))
	}
	return append(out, "", "Data: "+codeList(files)+"."), nil
}

func shortLink(l string) string {
	if l == "shm" {
		return "shared memory"
	}
	return strings.NewReplacer("gbit", " Gbit/s", "mbit", " Mbit/s").Replace(l)
}

// layoutModel: scripts/validate-layouts.sh's CSV as one table shaped like
// layouts', each cell the predicted epoch over the measured one.
func layoutModel(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	var rowKeys, colKeys []string
	cell := map[string]string{}
	for _, r := range recs {
		rk := r.s("ranks_per_node") + " × " + r.s("threads")
		ck := modelName(r.s("model")) + ", " + configName(r.s("config")) + ", " + shortLink(r.s("link"))
		if !contains(rowKeys, rk) {
			rowKeys = append(rowKeys, rk)
		}
		if !contains(colKeys, ck) {
			colKeys = append(colKeys, ck)
		}
		cell[rk+"\x00"+ck] = f2(r.f("predicted_s")) + " / " + f2(r.f("measured_s")) + " = " + f2(r.f("ratio"))
	}
	head := append([]string{"predicted / measured epoch s (model, exchange, link) by ranks × threads per node"}, rowKeys...)
	out := []string{row(head...), sep(len(head))}
	for _, c := range colKeys {
		cells := []string{c}
		for _, rk := range rowKeys {
			v, ok := cell[rk+"\x00"+c]
			if !ok {
				v = "–"
			}
			cells = append(cells, v)
		}
		out = append(out, row(cells...))
	}
	return append(out, "", "Data: "+codeList(files)+"."), nil
}
