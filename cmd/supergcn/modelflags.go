package main

import (
	"flag"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/trainargs"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/nn"
)

// modelFlags registers the flags that choose the model and its shape
// (train and predict), their choices and help texts from nn's model table.
func modelFlags(fs *flag.FlagSet, m *nn.Config) {
	var docs, layers []string
	for _, mi := range nn.ModelInfos() {
		docs = append(docs, fmt.Sprintf("%s (%s)", mi.Name, mi.Doc))
		layers = append(layers, fmt.Sprintf("%s %d", mi.Name, mi.Layers))
	}
	fs.StringVar(&m.Model, "model", "gcn", "model: "+strings.Join(docs, " | "))
	fs.IntVar(&m.Layers, "layers", 0, "graph layers (default: the model's: "+strings.Join(layers, ", ")+")")
	fs.IntVar(&m.Hidden, "hidden", 16, "hidden width (gat, gatv2: per head, PyG GATConv's out_channels; a hidden layer is --hidden × --heads wide)")
	fs.StringVar(&m.JK, "jk", "none", "jumping knowledge: none|cat|max|last (every layer's output, combined, then a linear layer; not gat, gcnii)")
	fs.BoolVar(&m.Residual, "residual", false, "residual connections: every hidden layer adds its input to its activation (a learned projection where the widths differ; not gat, gcnii)")
	for _, h := range nn.Hypers() { // the models' hyperparameters, from their declarations
		fs.Var(hyperFlag{m, h}, h.Name, h.Usage())
	}
}

// hyperFlag is a declared hyperparameter as a flag: its value goes to
// m.Hyper (a switch takes no value, as a bool flag).
type hyperFlag struct {
	m *nn.Config
	h nn.HyperInfo
}

func (f hyperFlag) String() string   { return "" }
func (f hyperFlag) IsBoolFlag() bool { return f.h.Bool }

func (f hyperFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if f.h.Bool {
		var b bool
		b, err = strconv.ParseBool(s)
		v = map[bool]float64{true: 1}[b]
	}
	if err != nil {
		return err
	}
	if f.m.Hyper == nil {
		f.m.Hyper = map[string]float64{}
	}
	f.m.Hyper[f.h.Name] = v
	return nil
}

// attentionFlags registers the flags of the attention models' shape
// (train and predict; gatFlags refuses them with other models).
func attentionFlags(fs *flag.FlagSet, m *nn.Config) {
	fs.IntVar(&m.Heads, "heads", 8, "gat, gatv2: attention heads of the hidden layers (concatenated, --hidden wide each)")
	fs.IntVar(&m.OutHeads, "out-heads", 1, "gat, gatv2: attention heads of the output layer (averaged)")
	fs.Float64Var(&m.AttnDropout, "attn-dropout", 0.6, "gat, gatv2: dropout on the attention coefficients")
}

// modelDefaults gives m the model's default layer count when --layers was
// not given. 0 stands for "the model's default" inside nn.Config, so a 0
// given on the command line for --heads or --out-heads is refused here
// rather than silently replaced (the declared hyperparameters' ranges are
// nn.Config.Validate's).
func modelDefaults(fs *flag.FlagSet, m *nn.Config) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"heads", m.Heads}, {"out-heads", m.OutHeads}} {
		if flagSet(fs, f.name) && f.v < 1 {
			return usageError(fmt.Sprintf("--%s: %d, need ≥ 1", f.name, f.v))
		}
	}
	if flagSet(fs, "layers") {
		return nil
	}
	for _, mi := range nn.ModelInfos() {
		if mi.Name == m.Model {
			m.Layers = mi.Layers
		}
	}
	return nil
}

// gatFlags leaves --heads, --out-heads and --attn-dropout in the model
// configuration of an attention model (gat, gatv2) only: given with another
// model they are refused (unless resuming, where the checkpoint names the
// model).
func gatFlags(fs *flag.FlagSet, m *nn.Config, resume bool) error {
	if op, err := nn.ModelOp(m.Model); err == nil && op.Attends() {
		return nil
	}
	for _, name := range []string{"heads", "out-heads", "attn-dropout"} {
		if flagSet(fs, name) && !resume {
			return usageError(fmt.Sprintf("--%s: only with --model gat or gatv2", name))
		}
	}
	m.Heads, m.OutHeads, m.AttnDropout = 0, 0, 0
	return nil
}

// headWidths turns the --hidden of an attention model, the width of one
// head (PyG GATConv's out_channels), into nn.Config's hidden width, that
// of the heads concatenated. Call it once, after the flags and a --resume
// checkpoint (perHead) have set m.
func headWidths(m *nn.Config) error {
	if op, err := nn.ModelOp(m.Model); err != nil || !op.Attends() || m.Layers < 2 || m.Hidden < 1 {
		return nil // nn.Config.Validate names what is wrong
	}
	h := max(m.Heads, 1)
	if m.Hidden > nn.MaxWidth/h {
		return usageError(fmt.Sprintf("--hidden: %d per head × %d heads is wider than %d", m.Hidden, h, nn.MaxWidth))
	}
	m.Hidden *= h
	return nil
}

// hiddenDesc is the hidden width of m as --hidden gave it: "8 × 8 heads"
// for an attention model.
func hiddenDesc(m nn.Config) string {
	if p := trainargs.PerHead(m); p != m.Hidden {
		return fmt.Sprintf("%d × %d heads", p, m.Heads)
	}
	return fmt.Sprint(m.Hidden)
}
