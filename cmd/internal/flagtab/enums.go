package flagtab

import (
	"flag"
	"strings"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/spell"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/task"
	"github.com/supergcn/supergcn/train"
)

// Enum is what an enum-valued flag accepts: the canonical names (spelled
// as the libraries spell them) and aliases, both matched ignoring case and
// with '_' read as '-'. A comma-separated value is canonicalised element
// by element; an element that matches nothing is passed on unchanged, so
// the library's own error names it as typed.
type Enum struct {
	Names   func() []string
	Aliases map[string]string // alias → canonical name
}

func fixed(names ...string) func() []string { return func() []string { return names } }

var (
	ModelEnum     = Enum{nn.Models, modelAliases()}
	normEnum      = Enum{fixed("none", "layer", "batch"), map[string]string{"layernorm": "layer", "layer-norm": "layer", "ln": "layer", "batchnorm": "batch", "batch-norm": "batch", "bn": "batch"}}
	PrecisionEnum = Enum{dense.Precisions, map[string]string{
		"float32": "fp32", "f32": "fp32", "float": "fp32", "bfloat16": "bf16"}}
	AggrModeEnum = Enum{fixed("post", "pre", "hybrid"), nil}
	ExchangeEnum = Enum{func() []string { return append([]string{"auto"}, exchange.Exchanges()...) }, exchange.ExchangeAliases()}
	methodEnum   = Enum{fixed("auto", "metis", "multilevel", "parmetis", "ldg", "random"), map[string]string{
		"multi-level": "multilevel", "par-metis": "parmetis"}}
	OrderEnum   = Enum{partition.NodeOrders, map[string]string{"none": "given", "natural": "given", "reverse-cuthill-mckee": "rcm"}}
	weightsEnum = Enum{fixed("none", "degree", "degree+train"), nil}
	onOffEnum   = Enum{fixed("auto", "on", "off"), nil}
	paramsEnum  = Enum{fixed("block", "bf16", "fp32"), map[string]string{"bfloat16": "bf16", "float32": "fp32"}}
)

// Flags maps flag names to the values they accept. A key "--NAME"
// holds for every command; "COMMAND --NAME" (COMMAND as in fs.Name without
// "supergcn ") overrides it for one command, an entry without names
// marking a flag that is not an enum there.
var Flags = map[string]Enum{
	"--model":             ModelEnum,
	"eval --model":        {}, // a model file
	"--norm":              normEnum,
	"--precision":         PrecisionEnum,
	"--aggr-mode":         AggrModeEnum,
	"--exchange":          ExchangeEnum,
	"--partition-method":  methodEnum,
	"--method":            methodEnum,
	"--node-order":        OrderEnum,
	"--orders":            OrderEnum,
	"--feat-norm":         {fixed("none", "row"), map[string]string{"l1": "row"}},
	"--weights":           weightsEnum,
	"--partition-weights": weightsEnum,
	"--mpi":               onOffEnum,
	"train --eval-cache":  {train.EvalCaches, map[string]string{"true": train.EvalCacheOn, "false": train.EvalCacheOff}}, // as predict's boolean
	"--lr-schedule": {train.Schedules, map[string]string{"steplr": "step", "cosineannealing": "cosine", "cosineannealinglr": "cosine",
		"cosine-annealing": "cosine", "reducelronplateau": "plateau", "reduce-on-plateau": "plateau", "constant": "none"}},
	"--task": {task.Names, map[string]string{"multi-label": "multilabel", "classification": "node", "node-classification": "node",
		"regress": "regression"}},
	"--quant-params":   paramsEnum,
	"--format":         {graph.Formats, map[string]string{"edge-list": "edgelist", "binary": "bin", "supergcn": "bin"}},
	"--network":        {perfmodel.Presets, nil},
	"--published":      {perfmodel.PublishedNames, nil},
	"bench gemm --ops": {fixed("NN", "NT", "TN"), nil},
	// Kernel names are matched by their dispatcher, in any case.
	"bench quant --kernel": {fixed("all"), nil},
}

// enumOf returns the enum of flag name in the command of fs.
func enumOf(fs *flag.FlagSet, name string) (Enum, bool) {
	cmd := strings.TrimPrefix(fs.Name(), "supergcn ")
	if e, ok := Flags[cmd+" --"+name]; ok {
		return e, e.Names != nil
	}
	e, ok := Flags["--"+name]
	return e, ok
}

// Canonical rewrites each comma-separated element of v that names one of
// e's values or aliases to its canonical name.
func (e Enum) Canonical(v string) string { return spell.Canonical(v, e.Names(), e.Aliases) }

// EnumValue canonicalises a value before the flag's own Set sees it.
type EnumValue struct {
	flag.Value
	e Enum
}

func (v EnumValue) Set(s string) error { return v.Value.Set(v.e.Canonical(s)) }

// CanonicaliseEnums makes every enum-valued flag of fs accept its values
// in any case and by their aliases while fs parses: the libraries see
// canonical names. The returned func restores the flags' own Values.
func CanonicaliseEnums(fs *flag.FlagSet) (restore func()) {
	wrapped := map[*flag.Flag]flag.Value{}
	fs.VisitAll(func(f *flag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return // a wrapper would hide IsBoolFlag
		}
		if e, ok := enumOf(fs, f.Name); ok {
			wrapped[f] = f.Value
			f.Value = EnumValue{f.Value, e}
		}
	})
	return func() {
		for f, v := range wrapped {
			f.Value = v
		}
	}
}

// Habits maps the names other GNN tools (PyG and DGL examples,
// argparse scripts) give to the flags supergcn calls otherwise.
var Habits = map[string]string{
	"hidden-channels": "hidden", "hidden-dim": "hidden", "hidden-size": "hidden", "num-hidden": "hidden", "n-hidden": "hidden",
	"num-layers": "layers", "n-layers": "layers", "nlayers": "layers",
	"dataset": "data", "data-dir": "data", "root": "data",
	"learning-rate": "lr", "learningrate": "lr",
	"num-epochs": "epochs", "n-epochs": "epochs", "max-epochs": "epochs", "epoch": "epochs",
	"wd": "weight-decay", "weightdecay": "weight-decay",
	"early-stopping": "patience", "early-stop": "patience", "early-stopping-patience": "patience",
	"scheduler": "lr-schedule", "lr-scheduler": "lr-schedule", "schedule": "lr-schedule",
	"min-lr": "lr-min", "eta-min": "lr-min", "step-size": "lr-step-size", "gamma": "lr-gamma",
	"num-parts": "parts", "nparts": "parts", "num-partitions": "parts", "jk-mode": "jk", "jumping-knowledge": "jk",
	"res": "residual", "skip": "residual", "skip-connection": "residual", "skip-connections": "residual", "use-residual": "residual",
	"num-heads": "heads", "n-heads": "heads", "nheads": "heads",
	"output": "out", "o": "out",
}

// Sentences for Unsupported: other tools' flags with no equivalent
// here, whose nearest spelling would name a flag of another meaning.
const (
	noAggr = "not a flag here: the neighbour aggregation is the model's (--model sage: mean, sage-max: max, " +
		"sage-pool: max over ReLU(W_p·x + b_p), gin: sum), " +
		"and --aggr-mode chooses how boundary rows are combined across ranks (pre|post|hybrid)"
	noBatchNorm = "not a flag here: batch normalisation is --norm batch"
)

// Unsupported maps other tools' names (by spell.Key) for which
// supergcn has no flag to what they would mean here.
var Unsupported = map[string]string{
	"aggr": noAggr, "aggregator": noAggr, "aggregation": noAggr, "aggr-type": noAggr, "aggregator-type": noAggr,
	"batch-norm": noBatchNorm, "batchnorm": noBatchNorm, "bn": noBatchNorm, "use-bn": noBatchNorm,
}

// modelAliases is the --model aliases of the model table.
func modelAliases() map[string]string {
	a := map[string]string{}
	for _, mi := range nn.ModelInfos() {
		for _, s := range mi.Aliases {
			a[s] = mi.Name
		}
	}
	return a
}
