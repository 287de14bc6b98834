package main

import (
	"flag"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/spell"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/nn"
)

func TestEnumCanonical(t *testing.T) {
	for _, c := range []struct {
		e        flagtab.Enum
		in, want string
	}{
		{flagtab.ModelEnum, "GCN", "gcn"},
		{flagtab.ModelEnum, "graphsage", "sage"},
		{flagtab.ModelEnum, "GraphSAGE", "sage"},
		{flagtab.ModelEnum, "Sage", "sage"},
		{flagtab.ModelEnum, "mlp", "mlp"}, // unknown: passed on as typed
		{flagtab.ModelEnum, "GAT", "gat"},
		{flagtab.ModelEnum, "MLP", "MLP"}, // unknown: passed on as typed
		{flagtab.AggrModeEnum, "Hybrid", "hybrid"},
		{flagtab.AggrModeEnum, "POST,Pre", "post,pre"},
		{flagtab.ExchangeEnum, "Two_Level", "two-level"},
		{flagtab.PrecisionEnum, "BFloat16", "bf16"},
		{flagtab.OrderEnum, "RCM", "rcm"},
		{flagtab.Flags["--lr-schedule"], "ReduceLROnPlateau", "plateau"},
		{flagtab.Flags["--lr-schedule"], "Cosine", "cosine"},
		{flagtab.Flags["bench gemm --ops"], "nn,Tn", "NN,TN"},
		{flagtab.Flags["bench quant --kernel"], "ALL", "all"},
	} {
		if got := c.e.Canonical(c.in); got != c.want {
			t.Errorf("canonical(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEnumFlagsWhileParsing(t *testing.T) {
	fs := newFlagSet("train", "")
	model := fs.String("model", "gcn", "")
	mode := fs.String("aggr-mode", "hybrid", "")
	if err := parseFlags(fs, []string{"--model", "GraphSAGE", "--aggr-mode=Pre"}); err != nil {
		t.Fatal(err)
	}
	if *model != "sage" || *mode != "pre" {
		t.Errorf("--model %q --aggr-mode %q, want sage pre", *model, *mode)
	}
	if _, wrapped := fs.Lookup("model").Value.(flagtab.EnumValue); wrapped {
		t.Error("the flag's Value is still wrapped after parsing")
	}
	// eval's --model is a file: its value is not touched.
	ev := newFlagSet("eval", "")
	file := ev.String("model", "", "")
	if err := parseFlags(ev, []string{"--model", "GCN"}); err != nil || *file != "GCN" {
		t.Errorf("eval --model GCN: %q, %v", *file, err)
	}
}

func TestSuggestFlag(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	for _, n := range []string{"hidden", "layers", "lr", "weight-decay", "data", "epochs", "dropout", "save", "save-best",
		"heads", "out-heads", "aggr-mode"} {
		fs.String(n, "", "")
	}
	for in, want := range map[string]string{
		"hidden-channels": "hidden", "hidden_channels": "hidden", "num-layers": "layers", "num_layers": "layers",
		"weight_decay": "weight-decay", "dataset": "data", "learning_rate": "lr", "LR": "lr", "num-epochs": "epochs",
		"epcohs": "epochs", "dropuot": "dropout", "hid": "hidden", "Save_Best": "save-best",
		"sav": "save", "zzzz": "", "x": "",
		"num_heads": "heads", "num-heads": "heads", "n-heads": "heads", "nheads": "heads", // not out-heads
	} {
		if got := spell.SuggestFlag(fs, in, flagtab.Habits); got != want {
			t.Errorf("SuggestFlag(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFlagUnsupported: the unsupported names are keys as spell.Key makes
// them, none of them a habit or a model flag.
func TestFlagUnsupported(t *testing.T) {
	fs := newFlagSet("train", "")
	modelFlags(fs, new(nn.Config))
	attentionFlags(fs, new(nn.Config))
	for k := range flagtab.Unsupported {
		if _, habit := flagtab.Habits[k]; habit || spell.Key(k) != k || fs.Lookup(k) != nil {
			t.Errorf("flagtab.Unsupported[%q]: not a Key, a habit too, or a flag", k)
		}
	}
}

// TestCLIFlagHabits runs the binary: an unknown flag is one line naming
// the flag as typed and the one meant, exit 2, for every command; enum
// values in another case or by an alias train.
func TestCLIFlagHabits(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--hidden-channels", "16"}, "supergcn train: flag provided but not defined: --hidden-channels (did you mean --hidden?)"},
		{[]string{"train", "--num_layers", "3"}, "(did you mean --layers?)"},
		{[]string{"eval", "--dataset", "x"}, "(did you mean --data?)"},
		{[]string{"partition", "--num-parts", "4"}, "(did you mean --parts?)"},
		{[]string{"stats", "--bitz", "4", "dir"}, "(did you mean --bits?)"},
		{[]string{"bench", "gemm", "--rowz", "4"}, "(did you mean --rows?)"},
		{[]string{"predict", "--aggr_mode", "pre"}, "(did you mean --aggr-mode?)"},
		{[]string{"gen", "--qqqq"}, "flag provided but not defined: --qqqq (see supergcn gen --help)"},
		{[]string{"train", "--num_heads", "4"}, "flag provided but not defined: --num_heads (did you mean --heads?)"},
		{[]string{"predict", "--n-heads", "4"}, "(did you mean --heads?)"},
		{[]string{"eval", "--num-heads", "4"}, "--num-heads (see supergcn eval --help)"}, // eval has no --heads
		// Names with no equivalent: what they would mean, not the nearest spelling.
		{[]string{"train", "--aggr", "max"}, "flag provided but not defined: --aggr: not a flag here: the neighbour aggregation is the model's (--model sage: mean, sage-max: max"},
		{[]string{"train", "--jumping_knowledge", "cat"}, "--jumping_knowledge (did you mean --jk?)"},
		{[]string{"predict", "--skip_connections"}, "--skip_connections (did you mean --residual?)"},
		{[]string{"train", "--batch-norm"}, "--batch-norm: not a flag here: batch normalisation is --norm batch"},
		{[]string{"trian"}, `supergcn: unknown command "trian" (did you mean train?)`},
		{[]string{"bench", "qaunt"}, `unknown benchmark kind "qaunt" (did you mean quant?)`},
	} {
		r := run(t, time.Minute, nil, c.args...)
		stderr := strings.TrimSpace(r.stderr)
		if r.code != 2 || strings.Contains(stderr, "\n") || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, r.code, stderr, c.want)
		}
	}
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	for i, args := range [][]string{
		{"--model", "GCN"},
		{"--model", "graphsage", "--aggr-mode", "Hybrid", "--norm", "Layer"},
		{"--model", "GraphSAGE", "--precision", "FP32", "--node-order", "RCM", "--exchange", "Flat"},
	} {
		ckpt := filepath.Join(dir, fmt.Sprintf("m%d.ckpt", i))
		r := run(t, time.Minute, nil, append([]string{"train", "--data", cora, "--epochs", "1", "--mpi", "off", "--quiet", "--save", ckpt}, args...)...)
		if r.code != 0 {
			t.Errorf("train %v: exit %d\n%s", args, r.code, r.stderr)
			continue
		}
		want := map[string]string{"GCN": "gcn", "graphsage": "sage", "GraphSAGE": "sage"}[args[1]]
		b, err := os.ReadFile(ckpt)
		if err != nil || !strings.Contains(string(b), `"Model":"`+want+`"`) {
			t.Errorf("train %v: the checkpoint does not hold model %q (%v)", args, want, err)
		}
	}
}

// TestCLITopLevelHelp: the usage goes to stdout with exit 0 and names
// every command and every bench kind.
func TestCLITopLevelHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {}} {
		r := run(t, time.Minute, nil, args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("supergcn %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		for n := range subcommands {
			if !strings.Contains(r.stdout, "\n  "+n+" ") {
				t.Errorf("supergcn %v does not list command %s:\n%s", args, n, r.stdout)
			}
		}
		for _, n := range benchKindNames() {
			if !strings.Contains(r.stdout, "\n  "+n+" ") {
				t.Errorf("supergcn %v does not list bench kind %s:\n%s", args, n, r.stdout)
			}
		}
	}
}
