package main

import "strings"

// layoutGrid is the CSV rows of files as a table: a row per (model,
// exchange, link), a column per ranks × threads layout per node, each cell
// cell(record) or "–"; head names the first column.
func layoutGrid(root string, files []string, head string, cell func(r record, col string) string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	var rowKeys, colKeys []string
	byKey := map[string]record{}
	for _, r := range recs {
		rk := r.s("ranks_per_node") + " × " + r.s("threads")
		ck := modelName(r.s("model")) + ", " + configName(r.s("config")) + ", " + shortLink(r.s("link"))
		if !contains(rowKeys, rk) {
			rowKeys = append(rowKeys, rk)
		}
		if !contains(colKeys, ck) {
			colKeys = append(colKeys, ck)
		}
		byKey[rk+"\x00"+ck] = r
	}
	hd := append([]string{head}, rowKeys...)
	out := []string{row(hd...), sep(len(hd))}
	for _, c := range colKeys {
		cells := []string{c}
		for _, rk := range rowKeys {
			r, ok := byKey[rk+"\x00"+c]
			if !ok {
				cells = append(cells, "–")
				continue
			}
			cells = append(cells, cell(r, c))
		}
		out = append(out, row(cells...))
	}
	return append(out, "", "Data: "+codeList(files)+"."), nil
}

// layouts: scripts/bench-layouts.sh's CSV as one table, a row per (model,
// exchange, link) and a column per ranks × threads layout per node; the
// fastest layout of each row in bold.
func layouts(root string, files []string) ([]string, error) {
	recs, err := readCSV(root, files)
	if err != nil {
		return nil, err
	}
	best := map[string]float64{}
	for _, r := range recs {
		ck := modelName(r.s("model")) + ", " + configName(r.s("config")) + ", " + shortLink(r.s("link"))
		if v, ok := best[ck]; !ok || r.f("epoch_s") < v {
			best[ck] = r.f("epoch_s")
		}
	}
	return layoutGrid(root, files, "epoch s (model, exchange, link) by ranks × threads per node", func(r record, col string) string {
		if v := r.f("epoch_s"); v == best[col] {
			return "**" + f2(v) + "**"
		}
		return f2(r.f("epoch_s"))
	})
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
	return layoutGrid(root, files, "predicted / measured epoch s (model, exchange, link) by ranks × threads per node", func(r record, _ string) string {
		return f2(r.f("predicted_s")) + " / " + f2(r.f("measured_s")) + " = " + f2(r.f("ratio"))
	})
}
