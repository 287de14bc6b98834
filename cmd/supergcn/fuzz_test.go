package main

import (
	"errors"
	"flag"
	"strings"
	"testing"
)

// FuzzTrainFlags parses train command lines (one argument per line): every
// outcome is a checked configuration or an error, never a panic, and an
// accepted configuration is one the trainer can take.
func FuzzTrainFlags(f *testing.F) {
	for _, s := range []string{
		"--lr\ninf", "--lr=1e20\n--epochs\n3", "--hidden\n100000000", "--hidden=-1", "--dropout\n1",
		"--weight-decay\nNaN", "--bits\n3", "--bits-backward\n2\n--half-params", "--synthetic\nnodes=100,classes=1000000",
		"--synthetic\nnodes=2000000000,degree=4", "--save-every\n5", "--resume\nnone.ckpt", "--layers\n2000",
		"--feat-norm\nzscore", "--label-prop\n0.5\n--model\nsage\n--norm\nlayer", "--partitions\np\n--features\nx.npy",
		"--mpi\noff", "--aggr-mode\npre", "--kernel\nsve", "-h", "--epochs=-1", "--threads\n-2", "extra",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "/\\") || strings.Contains(line, "..") {
			t.Skip() // only relative names here: --save and --metrics probe their directory
		}
		a, err := parseTrain(strings.Split(line, "\n"))
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return
			}
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		m := a.cfg.Model
		if m.Hidden < 1 || m.Layers < 1 || !(m.Dropout >= 0 && m.Dropout < 1) || !(a.cfg.LR > 0) || a.cfg.LR > 1e308 || a.cfg.Epochs < 0 {
			t.Fatalf("accepted an invalid configuration: %+v", a.cfg)
		}
	})
}
