// Package plots reads supergcn metrics files (JSON lines written by
// train --metrics) and draws them as PNG figures with gonum/plot: loss and
// accuracy curves, the per-epoch time breakdown (stacked), and, for
// several runs, epoch time and exchanged bytes against ranks (scaling).
package plots

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Epoch is one epoch record: the curves, the breakdown times (every key
// ending in _s besides epoch_s, so breakdown keys added later are drawn
// too) and the exchanged bytes.
type Epoch struct {
	Epoch                     int
	Loss                      float64
	TrainAcc, ValAcc, TestAcc float64
	Evaluated                 bool // the accuracies were measured (--eval-every skips epochs)
	ValLoss                   float64
	HasValLoss                bool // evaluated, by a build that records val_loss
	EpochS                    float64
	CommBytes                 float64
	Breakdown                 map[string]float64
	Ranks                     int
}

// Run is one metrics file: its epochs in order (a resumed run's file holds
// several segments; a repeated epoch keeps its last record).
type Run struct {
	Name   string // the file's base name without .jsonl
	Ranks  int
	Epochs []Epoch
	// Config names the model trained ("gcn 2×16"), from the header's
	// model, else its command's --model, --layers and --hidden: the
	// scaling figure draws one line per Config.
	Config string
}

// notBreakdown are the _s keys of epoch records that are not parts of the
// epoch time.
var notBreakdown = map[string]bool{"epoch_s": true, "total_s": true, "plan_s": true}

// Read reads a metrics file. Bad lines are errors naming file:line.
func Read(path string) (*Run, error) {
	f, _, err := container.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

func read(r io.Reader, path string) (*Run, error) {
	run := &Run{Name: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	byEpoch := map[int]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON record: %v", path, ln, err)
		}
		num := func(k string) float64 { v, _ := rec[k].(float64); return v }
		if rec["header"] == true {
			if r, ok := rec["ranks"].(float64); ok && (r < 1 || r > maxCount || r != math.Trunc(r)) {
				return nil, fmt.Errorf("%s:%d: field ranks: value %v, want a positive integer", path, ln, r)
			}
			if n := int(num("ranks")); n > 0 {
				run.Ranks = n
			}
			run.Config = configOf(rec)
			continue
		}
		if rec["final"] == true {
			continue
		}
		ep, ok := rec["epoch"].(float64)
		if !ok {
			return nil, fmt.Errorf("%s:%d: not a header, epoch or final record of a supergcn metrics file", path, ln)
		}
		if err := checkNumbers(rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, ln, err)
		}
		if err := checkRanges(rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, ln, err)
		}
		_, hasVal := rec["val_acc"]
		_, hasValLoss := rec["val_loss"]
		e := Epoch{Epoch: int(ep), Loss: num("loss"), TrainAcc: num("train_acc"), ValAcc: num("val_acc"), TestAcc: num("test_acc"),
			Evaluated: hasVal && rec["evaluated"] != false, ValLoss: num("val_loss"),
			HasValLoss: hasVal && hasValLoss && rec["evaluated"] != false,
			EpochS:     num("epoch_s"), CommBytes: num("comm_bytes"), Ranks: int(num("ranks")), Breakdown: map[string]float64{}}
		for k, v := range rec {
			if f, isNum := v.(float64); isNum && strings.HasSuffix(k, "_s") && !notBreakdown[k] {
				e.Breakdown[k] = f
			}
		}
		if e.Ranks > 0 {
			run.Ranks = e.Ranks
		}
		if i, seen := byEpoch[e.Epoch]; seen {
			run.Epochs[i] = e
		} else {
			byEpoch[e.Epoch] = len(run.Epochs)
			run.Epochs = append(run.Epochs, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(run.Epochs) == 0 {
		return nil, fmt.Errorf("%s: no epoch records", path)
	}
	sort.Slice(run.Epochs, func(i, j int) bool { return run.Epochs[i].Epoch < run.Epochs[j].Epoch })
	if run.Ranks == 0 {
		run.Ranks = 1
	}
	return run, nil
}

// epochNumbers are the epoch record's values that the figures draw, besides
// the times (every key ending in _s).
var epochNumbers = []string{"loss", "train_acc", "val_acc", "test_acc", "val_loss", "comm_bytes", "ranks"}

// checkNumbers returns an error when an epoch record has no loss or one of
// epochNumbers, or a time, that is not a number: a figure would draw it as
// zero.
func checkNumbers(rec map[string]any) error {
	if _, ok := rec["loss"]; !ok {
		return fmt.Errorf("epoch record without a loss")
	}
	for k, v := range rec {
		if _, isNum := v.(float64); isNum || !(slices.Contains(epochNumbers, k) || strings.HasSuffix(k, "_s")) {
			continue
		}
		return fmt.Errorf("%s is %v, not a number", k, v)
	}
	return nil
}

// maxCount bounds the epoch numbers and rank counts a metrics file may
// hold: far beyond any run, far below where a float64 stops holding
// integers exactly or an axis of epochs stops being readable.
const maxCount = 1e9

// checkRanges returns an error naming the first field (in key order) of an
// epoch record whose value no run writes: an epoch that is not an integer
// in [1, maxCount], an accuracy outside [0, 1], a negative or non-finite
// loss, time, byte count or rank count, a learning rate that is not
// positive. A figure would draw it as if it were a measurement.
func checkRanges(rec map[string]any) error {
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, isNum := rec[k].(float64)
		if !isNum {
			continue
		}
		bad := func(want string) error { return fmt.Errorf("field %s: value %v, want %s", k, v, want) }
		finite := !math.IsNaN(v) && !math.IsInf(v, 0)
		switch {
		case k == "epoch":
			if !finite || v < 1 || v > maxCount || v != math.Trunc(v) {
				return bad("an integer in [1, 1e9]")
			}
		case k == "ranks":
			if !finite || v < 1 || v > maxCount || v != math.Trunc(v) {
				return bad("a positive integer")
			}
		case strings.HasSuffix(k, "_acc"):
			if !finite || v < 0 || v > 1 {
				return bad("an accuracy in [0, 1]")
			}
		case k == "loss" || strings.HasSuffix(k, "_loss"):
			if !finite || v < 0 {
				return bad("a finite loss ≥ 0")
			}
		case k == "lr" || strings.HasSuffix(k, "_lr"):
			if !finite || v <= 0 {
				return bad("a finite learning rate > 0")
			}
		case strings.HasSuffix(k, "_s"):
			if !finite || v < 0 {
				return bad("a finite time ≥ 0 (seconds)")
			}
		case strings.HasSuffix(k, "_bytes"):
			if !finite || v < 0 {
				return bad("a finite byte count ≥ 0")
			}
		}
	}
	return nil
}

const (
	width  = 16 * vg.Centimeter
	height = 10 * vg.Centimeter
)

// Write draws the figures of runs into dir and returns the files written:
// loss.png, accuracy.png, breakdown-NAME.png per run whose epochs carry
// breakdown times and, for runs on several rank counts, scaling.png.
func Write(dir string, runs []*Run) ([]string, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs to plot")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	save := func(name string, p *plot.Plot) error {
		path := filepath.Join(dir, name)
		if err := savePNG(p, width, height, path); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
		return nil
	}
	loss, err := Loss(runs)
	if err != nil {
		return nil, err
	}
	if err := save("loss.png", loss); err != nil {
		return nil, err
	}
	acc, err := Accuracy(runs)
	if err != nil {
		return nil, err
	}
	if err := save("accuracy.png", acc); err != nil {
		return nil, err
	}
	for _, r := range runs {
		if !hasBreakdown(r) {
			continue
		}
		b, err := Breakdown(r)
		if err != nil {
			return nil, err
		}
		if err := save("breakdown-"+r.Name+".png", b); err != nil {
			return nil, err
		}
	}
	ranks := map[int]bool{}
	for _, r := range runs {
		ranks[r.Ranks] = true
	}
	if len(ranks) > 1 {
		path := filepath.Join(dir, "scaling.png")
		if err := Scaling(runs, path); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = labelledTicks{integer: x == "epoch"}, labelledTicks{}
	p.Legend.Top = true
	return p
}

func addLine(p *plot.Plot, label string, xys plotter.XYs, c color.Color, dashed bool) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	l.Color = c
	l.Width = vg.Points(1.2)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

func curve(r *Run, f func(Epoch) float64) plotter.XYs {
	xys := make(plotter.XYs, len(r.Epochs))
	for i, e := range r.Epochs {
		xys[i].X, xys[i].Y = float64(e.Epoch), f(e)
	}
	return xys
}

// evalCurve is curve over the evaluated epochs only.
func evalCurve(r *Run, f func(Epoch) float64) plotter.XYs {
	var xys plotter.XYs
	for _, e := range r.Epochs {
		if e.Evaluated {
			xys = append(xys, plotter.XY{X: float64(e.Epoch), Y: f(e)})
		}
	}
	return xys
}

// Loss plots the training loss of every run against the epoch, and
// (dashed) the validation loss at the epochs that measured it.
func Loss(runs []*Run) (*plot.Plot, error) {
	p := newPlot("Loss", "epoch", "loss")
	for i, r := range runs {
		if err := addLine(p, r.Name+" train", curve(r, func(e Epoch) float64 { return e.Loss }), seriesColor(i), false); err != nil {
			return nil, err
		}
		var val plotter.XYs
		for _, e := range r.Epochs {
			if e.HasValLoss {
				val = append(val, plotter.XY{X: float64(e.Epoch), Y: e.ValLoss})
			}
		}
		if len(val) == 0 {
			continue
		}
		if err := addLine(p, r.Name+" val", val, seriesColor(i), true); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Accuracy plots train (one run only), validation and test accuracy
// against the epoch.
func Accuracy(runs []*Run) (*plot.Plot, error) {
	p := newPlot("Accuracy", "epoch", "accuracy")
	p.Legend.Top, p.Legend.Left = false, false
	for i, r := range runs {
		series := []struct {
			name string
			f    func(Epoch) float64
		}{{"val", func(e Epoch) float64 { return e.ValAcc }}, {"test", func(e Epoch) float64 { return e.TestAcc }}}
		if len(runs) == 1 {
			series = append([]struct {
				name string
				f    func(Epoch) float64
			}{{"train", func(e Epoch) float64 { return e.TrainAcc }}}, series...)
		}
		for j, s := range series {
			label, c, dashed := r.Name+" "+s.name, seriesColor(i), s.name == "test"
			if len(runs) == 1 {
				label, c, dashed = s.name, seriesColor(j), false
			}
			xys := evalCurve(r, s.f)
			if len(xys) == 0 {
				continue
			}
			if err := addLine(p, label, xys, c, dashed); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// Breakdown stacks the per-epoch times of run r (each breakdown key, in
// name order) as filled areas: the top edge is their sum.
func Breakdown(r *Run) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("Epoch time: %s, %d rank(s), max over ranks", r.Name, r.Ranks), "epoch", "seconds")
	keySet := map[string]bool{}
	for _, e := range r.Epochs {
		for k := range e.Breakdown {
			keySet[k] = true
		}
	}
	keys := make([]string, 0, len(keySet))
	for k := range keySet {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: the epoch records have no breakdown times", r.Name)
	}
	// cum[k][i]: sum of keys[0..k] at epoch i.
	cum := make([]plotter.XYs, len(keys))
	for k, key := range keys {
		cum[k] = curve(r, func(e Epoch) float64 { return e.Breakdown[key] })
		if k > 0 {
			for i := range cum[k] {
				cum[k][i].Y += cum[k-1][i].Y
			}
		}
	}
	lines, err := stackedLines(r.Name, keys, cum)
	if err != nil {
		return nil, err
	}
	// Draw the largest sum first; each smaller one paints over it.
	for k := len(keys) - 1; k >= 0; k-- {
		p.Add(lines[k])
	}
	for k, key := range keys {
		p.Legend.Add(strings.TrimSuffix(key, "_s"), lines[k])
	}
	p.Y.Min = 0
	// One slow epoch (a busy machine, a page-cache miss) would flatten the
	// rest: clip the axis at twice the 95th percentile and say so.
	tops := make([]float64, len(cum[len(keys)-1]))
	for i, xy := range cum[len(keys)-1] {
		tops[i] = xy.Y
	}
	sort.Float64s(tops)
	if clip := 2 * tops[len(tops)*95/100]; clip > 0 && tops[len(tops)-1] > clip {
		p.Y.Max = clip
		p.Title.Text += fmt.Sprintf(" (clipped: max %.3gs)", tops[len(tops)-1])
	}
	return p, nil
}

// stackedLines returns the filled line of each cumulative sum cum[k] of
// keys[k], each in its own colour.
func stackedLines(name string, keys []string, cum []plotter.XYs) ([]*plotter.Line, error) {
	lines := make([]*plotter.Line, len(keys))
	for k := range keys {
		l, err := plotter.NewLine(cum[k])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", name, keys[k], err)
		}
		l.FillColor, l.Color = seriesColor(k), seriesColor(k)
		l.Width = vg.Points(0.5)
		lines[k] = l
	}
	return lines, nil
}

// savePNG draws p as a w×h PNG at path (writePNG), its legend outside
// the data area (drawPlot).
func savePNG(p *plot.Plot, w, h vg.Length, path string) error {
	img := vgimg.New(w, h)
	drawPlot(p, draw.New(img))
	return writePNG(path, vgimg.PngCanvas{Canvas: img})
}

// writePNG writes an image atomically (container.WriteFile): a failed
// write, a full disk or a signal leaves the old file or none, never a
// truncated PNG.
func writePNG(path string, img io.WriterTo) error {
	return container.WriteFile(path, 0o644, func(f *os.File) error {
		_, err := img.WriteTo(f)
		return err
	})
}

// hasBreakdown reports whether any epoch of r carries breakdown times.
func hasBreakdown(r *Run) bool {
	for _, e := range r.Epochs {
		if len(e.Breakdown) > 0 {
			return true
		}
	}
	return false
}
