package plots

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Prediction is what a projection reads of a `supergcn predict --json`
// line (perfmodel.Row): its label, series (profile, network, mode, bits)
// and point (ranks, epoch time, efficiency).
type Prediction struct {
	Label      string  `json:"label"`
	Profile    string  `json:"profile"`
	Network    string  `json:"network"`
	AggrMode   string  `json:"aggr_mode"`
	Bits       int     `json:"bits"`
	Ranks      int     `json:"ranks"`
	EpochS     float64 `json:"epoch_s"`
	Efficiency float64 `json:"efficiency"`
}

// ValidLabel reports whether a prediction's label can name its PNG file,
// projection-LABEL.png, inside the output directory (no / or \).
func ValidLabel(l string) bool {
	return !strings.ContainsAny(l, "/\\\x00")
}

// ParsePredictions reads the `supergcn predict --json` lines in b (from
// file name), refusing a line that is not one with FILE:LINE.
func ParsePredictions(name string, b []byte) ([]Prediction, error) {
	var rows []Prediction
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r Prediction
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		if r.Ranks < 1 || !(r.EpochS > 0) {
			return nil, fmt.Errorf("%s:%d: not a supergcn predict --json line (no ranks or epoch_s)", name, i+1)
		}
		if !(r.Efficiency >= 0 && r.Efficiency <= 1e6) {
			return nil, fmt.Errorf("%s:%d: efficiency %g, want a finite fraction ≥ 0", name, i+1, r.Efficiency)
		}
		if !ValidLabel(r.Label) {
			return nil, fmt.Errorf("%s:%d: label %q cannot name a PNG file (no / or \\)", name, i+1, r.Label)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// exchangeName is "hybrid int2", "post fp32", ...
func exchangeName(mode string, bits int) string {
	if bits == 32 { // quant.ExactBits: plots sits below the libraries and imports none
		return mode + " fp32"
	}
	return fmt.Sprintf("%s int%d", mode, bits)
}

// Projections draws predictions into the directory dir: per label one
// PNG (projection-LABEL.png, "predicted" for none), one series per
// profile × network × exchange (mode and bits) against ranks, with refs
// on every one. It returns the files written.
func Projections(dir string, rows []Prediction, refs []ProjectionRef) ([]string, error) {
	type key struct{ label, series string }
	type pt struct{ ranks, t, eff float64 }
	series := map[key][]pt{}
	var order []key
	for _, r := range rows {
		k := key{r.Label, fmt.Sprintf("%s, %s, %s", r.Profile, r.Network, exchangeName(r.AggrMode, r.Bits))}
		if _, ok := series[k]; !ok {
			order = append(order, k)
		}
		series[k] = append(series[k], pt{float64(r.Ranks), r.EpochS, r.Efficiency})
	}
	byLabel := map[string][]ProjectionSeries{}
	var labels []string
	for _, k := range order {
		pts := series[k]
		sort.Slice(pts, func(i, j int) bool { return pts[i].ranks < pts[j].ranks })
		s := ProjectionSeries{Name: k.series}
		for _, p := range pts {
			s.Ranks, s.EpochS, s.Efficiency = append(s.Ranks, p.ranks), append(s.EpochS, p.t), append(s.Efficiency, p.eff)
		}
		if _, ok := byLabel[k.label]; !ok {
			labels = append(labels, k.label)
		}
		byLabel[k.label] = append(byLabel[k.label], s)
	}
	var written []string
	for _, l := range labels {
		name := l
		if name == "" {
			name = "predicted"
		}
		path := filepath.Join(dir, "projection-"+name+".png")
		if err := Projection(path, name, byLabel[l], refs); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}
