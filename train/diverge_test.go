package train

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// A learning rate of 1e20 makes the model non-finite within a few epochs:
// training stops at that epoch with an error naming epoch, layer and rank,
// the metrics file holds only complete lines of finite epochs, and the
// checkpoint of the epoch before is kept (for one rank with fp32, and for
// several ranks with fp32 and int2 exchange).
func TestDivergenceStopsTraining(t *testing.T) {
	ds := cora(t)
	for _, tc := range []struct {
		name string
		p    int
		bits int
	}{{"1rank-fp32", 1, 32}, {"2ranks-fp32", 2, 32}, {"2ranks-int2", 2, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := kipfConfig("gcn", 1, 30, 0.5)
			cfg.LR = 1e20
			cfg.Wire[quant.Forward], cfg.Wire[quant.Backward] = quant.Wire{Bits: tc.bits}, quant.Wire{Bits: tc.bits}
			cfg.SavePath, cfg.SaveEvery = filepath.Join(dir, "m.ckpt"), 1
			cfg.MetricsPath = filepath.Join(dir, "m.jsonl")
			owner := partition.Random(ds.NumNodes(), tc.p, 7)
			errs := make([]error, tc.p)
			err := comm.RunGroupNodes(tc.p, 1, func(c comm.Comm) error {
				_, errs[c.Rank()] = Run(cfg, partition.Split(ds, owner, c.Rank(), tc.p), c)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var de *DivergedError
			if !errors.As(errs[0], &de) {
				t.Fatalf("lr 1e20: err = %v, want a DivergedError", errs[0])
			}
			// Every rank stops at the same epoch (with a quantised exchange,
			// each sending rank may report its own rows).
			for r, e := range errs {
				var re *DivergedError
				if !errors.As(e, &re) || re.Epoch != de.Epoch {
					t.Fatalf("rank %d: err = %v; rank 0: %v", r, e, errs[0])
				}
			}
			msg := errs[0].Error()
			t.Log(msg)
			if de.Layer < 1 || de.Layer > cfg.Model.Layers || de.Rank < 0 || de.Rank >= tc.p || de.Epoch < 1 ||
				!strings.Contains(msg, "layer") || !strings.Contains(msg, "rank") || !strings.HasPrefix(msg, "epoch ") {
				t.Fatalf("error %q (%+v) must name epoch, layer and rank", msg, *de)
			}
			lines := readLines(t, cfg.MetricsPath)
			if len(lines) != de.Epoch-1 {
				t.Fatalf("metrics has %d lines, want the %d epochs before the divergence", len(lines), de.Epoch-1)
			}
			for _, l := range lines {
				var m EpochMetrics
				if err := json.Unmarshal([]byte(l), &m); err != nil || math.IsNaN(m.Loss) {
					t.Fatalf("metrics line %q: %v", l, err)
				}
			}
			if de.Epoch == 1 {
				return
			}
			ck, err := LoadCheckpoint(cfg.SavePath)
			if err != nil {
				t.Fatal(err)
			}
			if ck.Train.Epoch != de.Epoch-1 {
				t.Fatalf("checkpoint at epoch %d, want the last good epoch %d", ck.Train.Epoch, de.Epoch-1)
			}
			for _, p := range ck.Params {
				if !nn.AllFinite(p.W) {
					t.Fatalf("checkpoint parameter %s is not finite", p.Name)
				}
			}
			if _, err := os.Stat(cfg.SavePath + ".tmp"); err == nil {
				t.Fatal("a .tmp file was left")
			}
		})
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func TestLossWatchWarnsOnce(t *testing.T) {
	var w lossWatch
	warnings := 0
	for e, l := range []float64{2, 1, 0.9, 0.8} {
		if w.observe(e+1, l) != "" {
			t.Fatalf("warning at falling loss epoch %d", e+1)
		}
	}
	for e := 5; e < 5+3*risingEpochs; e++ {
		if msg := w.observe(e, 2); msg != "" {
			warnings++
			if e != 4+risingEpochs || !strings.Contains(msg, "0.8") {
				t.Fatalf("epoch %d: %q", e, msg)
			}
		}
	}
	if warnings != 1 {
		t.Fatalf("%d warnings, want 1", warnings)
	}
}

// A converged loss wandering between small values (0.033 at its lowest,
// 0.071 later: twice the minimum, but a rise of 2% of the loss of an
// untrained model) is no divergence; a loss climbing back a good part of
// the way to its start is, after resuming too (a low first loss: the scale
// is ln(classes)).
func TestLossWatchScale(t *testing.T) {
	for _, c := range []struct {
		name    string
		classes int
		start   []float64
		plateau float64
		warn    bool
	}{
		{"converged noise", 7, []float64{1.95, 0.8, 0.2, 0.033}, 0.071, false},
		{"climbing back", 7, []float64{1.95, 0.8, 0.2, 0.033}, 0.9, true},
		{"resumed, noise", 40, []float64{0.05, 0.04, 0.03}, 0.2, false},
		{"resumed, climbing back", 40, []float64{0.05, 0.04, 0.03}, 1.5, true},
		{"tiny loss, no classes", 0, []float64{0.004, 0.002}, 0.02, false},
	} {
		w := newLossWatch(c.classes)
		warned := false
		for e, l := range c.start {
			warned = warned || w.observe(e+1, l) != ""
		}
		for e := len(c.start) + 1; e <= len(c.start)+2*risingEpochs; e++ {
			warned = warned || w.observe(e, c.plateau) != ""
		}
		if warned != c.warn {
			t.Errorf("%s: warned %v, want %v", c.name, warned, c.warn)
		}
	}
}

// NaN and infinite floats are written as null: a metrics line never fails.
func TestMetricsLineNonFinite(t *testing.T) {
	b, err := marshalLine(EpochMetrics{Epoch: 3, Loss: math.NaN(), EpochS: math.Inf(1), TrainAcc: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || b[len(b)-1] != '\n' {
		t.Fatalf("%q: %v", b, err)
	}
	if m["loss"] != nil || m["epoch_s"] != nil || m["train_acc"] != 0.5 || m["epoch"] != 3.0 {
		t.Fatalf("decoded %v", m)
	}
}

// A resumed run appending to a metrics file cut in the middle of a line
// (a full disk, a kill) first drops the partial line.
func TestMetricsAppendDropsPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(path, []byte("{\"epoch\":1}\n{\"epoch\":2}\n{\"epo"), 0o644)
	w, err := newMetricsWriter(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.write(EpochMetrics{Epoch: 3}); err != nil {
		t.Fatal(err)
	}
	w.close()
	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	for i, l := range lines {
		var m EpochMetrics
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Epoch != i+1 {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
	}
}

// On a full disk a metrics line is written whole or not at all: the file
// keeps only complete lines, and the error says why.
func TestMetricsFullDiskKeepsCompleteLines(t *testing.T) {
	dir := testdataset.SmallDisk(t, 8192)
	path := filepath.Join(dir, "m.jsonl")
	w, err := newMetricsWriter(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	written := 0
	for ; written < 10000; written++ {
		if err = w.write(EpochMetrics{Epoch: written + 1, Loss: 1.25, CommBytes: 123456789}); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("8 KiB tmpfs never filled up")
	}
	t.Logf("%d lines, then %v", written, err)
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("file ends in a partial line: %q", b[max(0, len(b)-40):])
	}
	if lines := readLines(t, path); len(lines) != written {
		t.Fatalf("%d lines in the file, %d written", len(lines), written)
	}
}

// TestDivergedMomentsNotSaved: a weight decay of 1e25 leaves the weights
// finite but overflows Adam's second moment: training stops with a
// DivergedError naming it, and no checkpoint that could not be read back
// is written.
func TestDivergedMomentsNotSaved(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	cfg := kipfConfig("gcn", 1, 5, 0.5)
	cfg.WeightDecay = 1e25
	cfg.SavePath = filepath.Join(dir, "m.ckpt")
	_, err := Run(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	var de *DivergedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "Adam moment") {
		t.Fatalf("weight decay 1e25: %v, want a DivergedError naming an Adam moment", err)
	}
	if _, err := os.Stat(cfg.SavePath); err == nil {
		if _, err := LoadCheckpoint(cfg.SavePath); err != nil {
			t.Fatalf("a checkpoint that cannot be read was saved: %v", err)
		}
	}
}

// TestMetricsSharedFileRefused: a second writer of a metrics file that a
// run is writing is refused (flock), instead of interleaving torn lines.
func TestMetricsSharedFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := newMetricsWriter(path, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, appendTo := range []bool{false, true} {
		if w2, err := newMetricsWriter(path, appendTo); err == nil || !strings.Contains(err.Error(), "another process is writing it") {
			t.Fatalf("second writer (append %v): %v", appendTo, err)
			w2.f.Close()
		}
	}
	w.f.Close()
	w3, err := newMetricsWriter(path, true)
	if err != nil {
		t.Fatalf("a writer after the first closed: %v", err)
	}
	w3.f.Close()
}

// Input features of 3e38 make training non-finite whatever the learning
// rate: the error names the features' magnitude (over all ranks, also on
// a rank whose own rows are small) instead of blaming train.Config.LR.
// Ordinary features that diverge keep the learning-rate message.
func TestDivergenceBlamesHugeFeatures(t *testing.T) {
	base := cora(t)
	huge := *base
	huge.Features = graph.DenseX(slices.Clone(graph.DenseData(base.Features)), base.NumNodes(), base.FeatDim)
	for v := range 20 { // whole rows: their products overflow in any order of summation
		for j := range huge.FeatDim {
			graph.DenseData(huge.Features)[v*huge.FeatDim+j] = 3e38
		}
	}
	for _, tc := range []struct {
		name string
		ds   *graph.Dataset
		p    int
		lr   float64
		want string
	}{
		{"1rank-huge", &huge, 1, 0.01, "the input features reach 3.0e+38 in magnitude, beyond what float32 products hold; scale them (train.Config.FeatNorm row)"},
		{"2ranks-huge", &huge, 2, 0.01, "the input features reach 3.0e+38 in magnitude"},
		{"1rank-lr", base, 1, 1e20, "training diverged (lower train.Config.LR?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kipfConfig("gcn", 1, 30, 0.5)
			cfg.LR = tc.lr
			owner := make([]int32, tc.ds.NumNodes()) // rank 0 holds all the huge rows
			for v := range owner {
				owner[v] = int32(v % tc.p)
				if v < 20 {
					owner[v] = 0
				}
			}
			errs := make([]error, tc.p)
			if err := comm.RunGroupNodes(tc.p, 1, func(c comm.Comm) error {
				_, errs[c.Rank()] = Run(cfg, partition.Split(tc.ds, owner, c.Rank(), tc.p), c)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for r, err := range errs {
				var de *DivergedError
				if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("rank %d: %v, want a DivergedError saying %q", r, err, tc.want)
				}
			}
			t.Log(errs[0])
		})
	}
}
