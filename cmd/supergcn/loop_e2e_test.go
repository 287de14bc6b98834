package main

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// train --patience with --lr-schedule cosine: it stops early with exit 0,
// the summary line and the final record name the epoch, and every epoch
// record has the cosine formula's lr (T_max = --epochs) and, evaluated,
// val_loss and test_loss.
func TestCLIPatienceCosine(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	metrics := filepath.Join(t.TempDir(), "m.jsonl")
	r := run(t, 3*time.Minute, nil, "train", "--data", cora, "--feat-norm", "row", "--epochs", "200", "--patience", "5",
		"--lr-schedule", "CosineAnnealingLR", "--lr", "0.02", "--lr-min", "0.001", "--threads", "1", "--quiet", "--metrics", metrics)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	m := regexp.MustCompile(`stopped early at epoch (\d+) \(patience 5\), (\d+) epochs`).FindStringSubmatch(r.stdout)
	if m == nil || m[1] != m[2] {
		t.Fatalf("summary without the early stop: %q", r.stdout)
	}
	var stop int
	fmt.Sscan(m[1], &stop)
	recs, final := testdataset.MetricsRecords(t, metrics)
	if stop >= 200 || len(recs) != stop || final["stopped_early"] != float64(stop) || final["patience"] != float64(5) {
		t.Fatalf("stopped at %d: %d epoch records, final %v", stop, len(recs), final)
	}
	for _, rec := range recs {
		e := rec["epoch"].(float64)
		want := 0.001 + (0.02-0.001)*(1+math.Cos(math.Pi*(e-1)/200))/2
		lr, _ := rec["lr"].(float64)
		vl, okV := rec["val_loss"].(float64)
		tl, okT := rec["test_loss"].(float64)
		if math.Abs(lr-want) > 1e-12*want || !okV || !okT || !(vl > 0 && tl > 0) {
			t.Fatalf("epoch %v: lr %v (want %v), val_loss %v, test_loss %v", e, rec["lr"], want, rec["val_loss"], rec["test_loss"])
		}
	}
}

// A step schedule resumed from a checkpoint continues as the uninterrupted
// run (the same losses and lr); a cosine run is resumed over its own
// --epochs, and another --epochs, --lr-schedule or --patience is refused.
func TestCLIResumeSchedule(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"--data", cora, "--feat-norm", "row", "--seed", "5", "--threads", "1", "--quiet", "--patience", "50"}
	step := append([]string{"--lr-schedule", "step", "--lr-step-size", "3", "--lr-gamma", "0.5"}, common...)
	train := func(args ...string) result {
		t.Helper()
		r := run(t, 2*time.Minute, nil, append([]string{"train"}, args...)...)
		if r.code != 0 {
			t.Fatalf("train %v: exit %d\n%s", args, r.code, r.stderr)
		}
		return r
	}
	ref, job, ckpt := filepath.Join(dir, "ref.jsonl"), filepath.Join(dir, "job.jsonl"), filepath.Join(dir, "job.ckpt")
	train(append([]string{"--epochs", "8", "--metrics", ref}, step...)...)
	train(append([]string{"--epochs", "4", "--metrics", job, "--save", ckpt}, step...)...)
	train("--data", cora, "--feat-norm", "row", "--epochs", "8", "--resume", ckpt, "--metrics", job, "--threads", "1", "--quiet")
	a, _ := testdataset.MetricsRecords(t, ref)
	b, _ := testdataset.MetricsRecords(t, job)
	if len(a) != 8 || len(b) != 8 {
		t.Fatalf("%d and %d epoch records, want 8", len(a), len(b))
	}
	for i := range a {
		if a[i]["loss"] != b[i]["loss"] || a[i]["lr"] != b[i]["lr"] || a[i]["val_loss"] != b[i]["val_loss"] {
			t.Fatalf("epoch %d: resumed loss %v lr %v val_loss %v; uninterrupted %v %v %v",
				i+1, b[i]["loss"], b[i]["lr"], b[i]["val_loss"], a[i]["loss"], a[i]["lr"], a[i]["val_loss"])
		}
	}

	cos := filepath.Join(dir, "cos.ckpt")
	train(append([]string{"--epochs", "3", "--lr-schedule", "cosine", "--save", cos}, common...)...)
	if r := train("--data", cora, "--feat-norm", "row", "--resume", cos, "--threads", "1", "--quiet"); !strings.Contains(r.stdout, ", 3 epochs in") {
		t.Fatalf("resuming the cosine run without --epochs: %q", r.stdout)
	}
	for _, c := range []struct{ args, want string }{
		{"--epochs 5", "--epochs 5 contradicts --resume " + cos + ", which was trained with --epochs 3"},
		{"--lr-schedule plateau", "--lr-schedule plateau contradicts"},
		{"--patience 7", "--patience 7 contradicts"},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", cora, "--feat-norm", "row", "--resume", cos}, strings.Fields(c.args)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("resume with %s: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// Bad schedule and early-stopping values are one line naming the flag,
// exit 2, before any data is read.
func TestCLIBadLoopFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct{ args, want string }{
		{"--patience -1", "--patience: -1"},
		{"--lr-schedule exponential", `--lr-schedule: "exponential" is not one of none, step, cosine, plateau`},
		{"--lr-gamma 0", "--lr-gamma: 0 is not in (0, 1]"},
		{"--lr-gamma 1.5", "--lr-gamma: 1.5 is not in (0, 1]"},
		{"--lr-step-size 0", "--lr-step-size: 0"},
		{"--lr-schedule cosine --lr-min -0.1", "--lr-min: -0.1"},
		{"--lr-schedule cosine --lr-min 0.5", "--lr-min: 0.5 is above the initial learning rate --lr 0.01"},
		{"--lr-plateau-patience -3", "--lr-plateau-patience: -3"},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", missing}, strings.Fields(c.args)...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %s: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
