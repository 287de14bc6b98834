package plots

import (
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// writeMetrics writes a metrics file as train does: a header, epoch
// records (with the breakdown and per-rank spread), a final record.
func writeMetrics(t *testing.T, path string, ranks, epochs int) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.Encode(map[string]any{"header": true, "version": "test", "ranks": ranks})
	for e := 1; e <= epochs; e++ {
		x := float64(e)
		enc.Encode(map[string]any{"epoch": e, "loss": 2 / x, "train_acc": 1 - 0.5/x, "val_acc": 0.9 - 0.5/x, "test_acc": 0.85 - 0.5/x,
			"epoch_s": 0.1 / float64(ranks), "ranks": ranks, "aggr_s": 0.05 / float64(ranks), "comm_s": 0.01 * float64(ranks),
			"dense_s": 0.03, "sync_s": 0.001, "other_s": 0.002, "quant_s": 0.004, "comm_bytes": 1000 * ranks,
			"rank_min": map[string]float64{"aggr_s": 0.01}, "rank_max": map[string]float64{"aggr_s": 0.05}})
	}
	enc.Encode(map[string]any{"final": true, "best_val_acc": 0.8, "epochs": epochs})
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every plot kind renders to a PNG that decodes, at its size, with more
// than one colour in it.
func TestWriteRendersEveryPlot(t *testing.T) {
	dir := t.TempDir()
	var runs []*Run
	for _, p := range []int{1, 2, 4} {
		path := filepath.Join(dir, fmt.Sprintf("run-np%d.jsonl", p))
		writeMetrics(t, path, p, 30)
		r, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ranks != p || len(r.Epochs) != 30 || len(r.Epochs[0].Breakdown) != 6 {
			t.Fatalf("%s read as %d ranks, %d epochs, breakdown %v", path, r.Ranks, len(r.Epochs), r.Epochs[0].Breakdown)
		}
		runs = append(runs, r)
	}
	out := filepath.Join(dir, "png")
	files, err := Write(out, runs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	want := "accuracy.png breakdown-run-np1.png breakdown-run-np2.png breakdown-run-np4.png loss.png scaling.png"
	if strings.Join(names, " ") != want {
		t.Fatalf("wrote %v, want %s", names, want)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		bd := img.Bounds()
		if bd.Dx() < 400 || bd.Dy() < 200 {
			t.Fatalf("%s: %v", f, bd)
		}
		colours := map[[4]uint32]bool{}
		for y := bd.Min.Y; y < bd.Max.Y; y += 3 {
			for x := bd.Min.X; x < bd.Max.X; x += 3 {
				r, g, b, a := img.At(x, y).RGBA()
				colours[[4]uint32{r, g, b, a}] = true
			}
		}
		if len(colours) < 3 {
			t.Fatalf("%s has %d colours: nothing drawn", f, len(colours))
		}
	}

	// One run (one rank count): no scaling figure.
	files, err = Write(filepath.Join(dir, "one"), runs[:1])
	if err != nil || len(files) != 3 {
		t.Fatalf("one run: %v, %v", files, err)
	}

	// A run without breakdown times (metrics rebuilt from a CSV, say) gets
	// its loss and accuracy curves and no breakdown figure.
	bare := filepath.Join(dir, "bare.jsonl")
	if err := os.WriteFile(bare, []byte(`{"epoch":1,"loss":2,"val_acc":0.5,"test_acc":0.4,"evaluated":true}`+"\n"+
		`{"epoch":2,"loss":1,"val_acc":0.6,"test_acc":0.5,"evaluated":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(bare)
	if err != nil {
		t.Fatal(err)
	}
	files, err = Write(filepath.Join(dir, "bare"), []*Run{runs[0], r})
	if err != nil || len(files) != 3 || filepath.Base(files[2]) != "breakdown-run-np1.png" {
		t.Fatalf("run without breakdown: %v, %v", files, err)
	}
}

// A resumed run's file (two segments, a repeated epoch) reads as one run;
// a line that is not a metrics record is an error naming file:line.
func TestReadSegmentsAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	body := `{"header":true,"ranks":2}
{"epoch":1,"loss":1,"epoch_s":0.1,"aggr_s":0.05}
{"epoch":2,"loss":0.9,"epoch_s":0.1,"aggr_s":0.05}
{"header":true,"ranks":2,"resumed_from":"x","resumed_epoch":1}
{"epoch":2,"loss":0.8,"epoch_s":0.1,"aggr_s":0.05}
{"final":true}
`
	os.WriteFile(path, []byte(body), 0o644)
	r, err := Read(path)
	if err != nil || len(r.Epochs) != 2 || r.Epochs[1].Loss != 0.8 || r.Ranks != 2 {
		t.Fatalf("segments: %+v, %v", r, err)
	}
	os.WriteFile(path, []byte(body+"{\"foo\":1}\n"), 0o644)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "m.jsonl:7:") {
		t.Fatalf("bad record: %v", err)
	}
	for _, rec := range []string{`{"epoch":3,"loss":"x"}`, `{"epoch":3}`, `{"epoch":3,"loss":1,"val_acc":null}`, `{"epoch":3,"loss":1,"aggr_s":"1"}`} {
		os.WriteFile(path, []byte(body+rec+"\n"), 0o644)
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "m.jsonl:7:") {
			t.Fatalf("%s: %v", rec, err)
		}
	}
	os.WriteFile(path, []byte("not json\n"), 0o644)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "m.jsonl:1:") {
		t.Fatalf("bad line: %v", err)
	}
}

// Accuracy curves take only the evaluated epochs: with --eval-every the
// records between evaluations carry no accuracies (they are not zero).
func TestAccuracyCurveSkipsUnevaluatedEpochs(t *testing.T) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.Encode(map[string]any{"header": true, "version": "test", "ranks": 2})
	for e := 1; e <= 10; e++ {
		rec := map[string]any{"epoch": e, "loss": 1.0, "epoch_s": 0.1, "evaluated": e%5 == 0}
		if e%5 == 0 {
			rec["train_acc"], rec["val_acc"], rec["test_acc"] = 0.7, 0.6, 0.5
		}
		enc.Encode(rec)
	}
	// A record saying evaluated: false with accuracies is not evaluated either.
	enc.Encode(map[string]any{"epoch": 11, "loss": 1.0, "val_acc": 0.0, "test_acc": 0.0, "evaluated": false})
	r, err := read(strings.NewReader(b.String()), "m.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	xys := evalCurve(r, func(e Epoch) float64 { return e.ValAcc })
	if len(xys) != 2 || xys[0].X != 5 || xys[1].X != 10 || xys[0].Y != 0.6 {
		t.Fatalf("validation curve %v, want epochs 5 and 10 at 0.6", xys)
	}
	if len(curve(r, func(e Epoch) float64 { return e.Loss })) != 11 {
		t.Fatal("the loss curve must keep every epoch")
	}
	if _, err := Accuracy([]*Run{r}); err != nil {
		t.Fatal(err)
	}
}

// A record no run writes (an epoch of 1e15, an accuracy of 7, a negative
// time) is an error naming file:line, the field, its value and the range
// wanted: a figure would draw it as a measurement.
func TestReadOutOfRange(t *testing.T) {
	for rec, want := range map[string]string{
		`{"epoch":1e15,"loss":1}`:                   "m.jsonl:2: field epoch: value 1e+15, want an integer in [1, 1e9]",
		`{"epoch":0,"loss":1}`:                      "m.jsonl:2: field epoch: value 0, want an integer in [1, 1e9]",
		`{"epoch":-3,"loss":1}`:                     "m.jsonl:2: field epoch: value -3, want an integer in [1, 1e9]",
		`{"epoch":2.5,"loss":1}`:                    "m.jsonl:2: field epoch: value 2.5, want an integer in [1, 1e9]",
		`{"epoch":2,"loss":1,"val_acc":7.0}`:        "m.jsonl:2: field val_acc: value 7, want an accuracy in [0, 1]",
		`{"epoch":2,"loss":1,"train_acc":-0.1}`:     "m.jsonl:2: field train_acc: value -0.1, want an accuracy in [0, 1]",
		`{"epoch":2,"loss":-1}`:                     "m.jsonl:2: field loss: value -1, want a finite loss ≥ 0",
		`{"epoch":2,"loss":1,"epoch_s":-4}`:         "m.jsonl:2: field epoch_s: value -4, want a finite time ≥ 0 (seconds)",
		`{"epoch":2,"loss":1,"aggr_s":-1e-3}`:       "m.jsonl:2: field aggr_s: value -0.001, want a finite time ≥ 0 (seconds)",
		`{"epoch":2,"loss":1,"lr":0}`:               "m.jsonl:2: field lr: value 0, want a finite learning rate > 0",
		`{"epoch":2,"loss":1,"comm_bytes":-5}`:      "m.jsonl:2: field comm_bytes: value -5, want a finite byte count ≥ 0",
		`{"epoch":2,"loss":1,"ranks":0}`:            "m.jsonl:2: field ranks: value 0, want a positive integer",
		`{"header":true,"ranks":1e15}`:              "m.jsonl:2: field ranks: value 1e+15, want a positive integer",
		`{"epoch":2,"loss":1,"val_acc":2,"x_s":-1}`: "m.jsonl:2: field val_acc: value 2, want",
	} {
		_, err := read(strings.NewReader(`{"epoch":1,"loss":1,"val_acc":0.5,"epoch_s":0.1}`+"\n"+rec+"\n"), "m.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", rec, err, want)
		}
	}
	ok := `{"epoch":1,"loss":0,"train_acc":1,"val_acc":0,"test_acc":0.5,"epoch_s":0,"lr":0.01,"comm_bytes":0,"ranks":1}`
	if _, err := read(strings.NewReader(ok+"\n"), "m.jsonl"); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
}
