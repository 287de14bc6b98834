package plots

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Scaling draws, side by side, the median epoch time and the boundary
// bytes sent per epoch (all ranks) against the rank count of the runs,
// one line per model (Run.Config), into the PNG file path.
func Scaling(runs []*Run, path string) error {
	left, right, err := scalingPlots(runs)
	if err != nil {
		return err
	}
	return savePair(path, 2*width, height, left, right)
}

// scalePoint is one run in the scaling figure.
type scalePoint struct{ ranks, t, bytes float64 }

// scaleSeries is one model's runs (Run.Config), by rank count.
type scaleSeries struct {
	config string
	pts    []scalePoint
}

// scalingSeries groups the runs by model, in the order of their first
// run, each by rank count: the median epoch time and the mean bytes per
// epoch of every run.
func scalingSeries(runs []*Run) []scaleSeries {
	var out []scaleSeries
	idx := map[string]int{}
	for _, r := range runs {
		ts := make([]float64, len(r.Epochs))
		var bytes float64
		for i, e := range r.Epochs {
			ts[i] = e.EpochS
			bytes += e.CommBytes
		}
		sort.Float64s(ts)
		i, seen := idx[r.Config]
		if !seen {
			i, idx[r.Config] = len(out), len(out)
			out = append(out, scaleSeries{config: r.Config})
		}
		out[i].pts = append(out[i].pts, scalePoint{float64(r.Ranks), ts[len(ts)/2], bytes / float64(len(r.Epochs))})
	}
	for _, s := range out {
		sort.SliceStable(s.pts, func(a, b int) bool { return s.pts[a].ranks < s.pts[b].ranks })
	}
	return out
}

// scalingPlots are Scaling's two plots: a line per series, the rank
// counts as integer ticks (a log axis when they span 8× or more).
func scalingPlots(runs []*Run) (*plot.Plot, *plot.Plot, error) {
	pt1 := newPlot("Epoch time (median)", "ranks", "seconds")
	pt2 := newPlot("Boundary exchange per epoch", "ranks", "MB (all ranks)")
	ranks := map[int]bool{}
	for i, s := range scalingSeries(runs) {
		tx, bx := make(plotter.XYs, len(s.pts)), make(plotter.XYs, len(s.pts))
		for j, q := range s.pts {
			tx[j].X, tx[j].Y = q.ranks, q.t
			bx[j].X, bx[j].Y = q.ranks, q.bytes/1e6
			ranks[int(q.ranks)] = true
		}
		for _, c := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{pt1, tx}, {pt2, bx}} {
			l, sc, err := plotter.NewLinePoints(c.xys)
			if err != nil {
				return nil, nil, fmt.Errorf("scaling, %s: %w", s.config, err)
			}
			l.Color, sc.Color = seriesColor(i), seriesColor(i)
			c.p.Add(l, sc)
			c.p.Legend.Add(s.config, l, sc)
		}
	}
	rs := make([]int, 0, len(ranks))
	for r := range ranks {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	for _, p := range []*plot.Plot{pt1, pt2} {
		p.Y.Min = 0
		p.X.Tick.Marker = rankTicks(rs)
		lo, hi := float64(rs[0]), float64(rs[len(rs)-1])
		if hi >= 8*lo {
			p.X.Scale = plot.LogScale{}
			p.X.Min, p.X.Max = lo/1.1, hi*1.1
		} else {
			pad := 0.05*(hi-lo) + 0.5
			p.X.Min, p.X.Max = math.Max(0, lo-pad), hi+pad
		}
	}
	return pt1, pt2, nil
}

// rankTicks labels the rank counts of the runs, each an integer (at most
// about a dozen labels: every k-th count past that, the last always).
func rankTicks(ranks []int) plot.ConstantTicks {
	step := (len(ranks) + 11) / 12
	var ticks plot.ConstantTicks
	for i, r := range ranks {
		t := plot.Tick{Value: float64(r)}
		if i%step == 0 || i == len(ranks)-1 {
			t.Label = strconv.Itoa(r)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// configOf names the model of a metrics header record: "gcn 2×16" (with
// its heads for attention models) from its model, else from its command's
// --model, --layers and --hidden (older builds), else "".
func configOf(header map[string]any) string {
	if m, ok := header["model"].(map[string]any); ok {
		name, _ := m["Model"].(string)
		layers, _ := m["Layers"].(float64)
		hidden, _ := m["Hidden"].(float64)
		s := fmt.Sprintf("%s %d×%d", name, int(layers), int(hidden))
		if h, _ := m["Heads"].(float64); h > 1 {
			s += fmt.Sprintf(" (%d heads)", int(h))
		}
		return s
	}
	cmd, _ := header["command"].([]any)
	flags := map[string]string{"model": "gcn", "layers": "", "hidden": "16"}
	for i := 0; i+1 < len(cmd); i++ {
		a, _ := cmd[i].(string)
		for f := range flags {
			if v, _ := cmd[i+1].(string); a == "--"+f || a == "-"+f {
				flags[f] = v
			}
		}
	}
	if len(cmd) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s×%s", flags["model"], orDefault(flags["layers"], "?"), flags["hidden"])
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// legendGap is the space between a plot and its legend column.
const legendGap = 2 * vg.Millimeter

// drawPlot draws p into c with its legend in a column right of the plot,
// outside the data area, so that no entry covers a curve.
func drawPlot(p *plot.Plot, c draw.Canvas) {
	leg := p.Legend
	w := leg.Rectangle(c).Size().X
	if w <= 0 {
		p.Draw(c)
		return
	}
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = leg }()
	p.Draw(draw.Crop(c, 0, -(w + legendGap), 0, 0))
	leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
	leg.Draw(draw.Crop(c, c.Size().X-w, 0, 0, 0))
}

// savePair draws left and right side by side into one w×h PNG at path,
// each with its legend outside its data area.
func savePair(path string, w, h vg.Length, left, right *plot.Plot) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	half := w / 2
	drawPlot(left, draw.Crop(dc, 0, -half, 0, 0))
	drawPlot(right, draw.Crop(dc, half+vg.Centimeter/2, 0, 0, 0))
	return writePNG(path, vgimg.PngCanvas{Canvas: img})
}
