// Package flagtab holds the command line's tables: the flags that set
// each library input field (for errors and logs in flag terms), the values
// enum-valued flags accept, and other GNN tools' names for flags.
package flagtab

import (
	"errors"
	"io"

	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/train"
)

// Names maps the input names in library errors (internal/field) to
// the flags that set them: libraries name their API's fields, the command
// line names its flags.
var Names = withHyperFlags(map[string]string{
	"train.Config.Epochs":                 "--epochs",
	"train.Config.SaveEvery":              "--save-every",
	"train.Config.SavePath":               "--save",
	"train.Config.ResumePath":             "--resume",
	"train.Config.InitPath":               "--init-from",
	"train.Config.MetricsPath":            "--metrics",
	"train.Config.Wire[forward]":          "--bits",
	"train.Config.Wire[backward]":         "--bits-backward",
	"train.Config.Wire[eval]":             "--eval-bits",
	"train.Config.Wire[intra]":            "--intra-bits",
	"train.Config.EvalEvery":              "--eval-every",
	"train.Config.EvalCache":              "--eval-cache",
	"train.Config.LR":                     "--lr",
	"train.Config.LRSchedule":             "--lr-schedule",
	"train.Config.LRStepSize":             "--lr-step-size",
	"train.Config.LRGamma":                "--lr-gamma",
	"train.Config.LRMin":                  "--lr-min",
	"train.Config.LRPlateauPatience":      "--lr-plateau-patience",
	"train.Config.Patience":               "--patience",
	"train.Config.StopOn":                 "--stop-on",
	"train.Config.LabelProp":              "--label-prop",
	"train.Config.Task":                   "--task",
	"train.Config.Targets":                "--targets",
	"task.Table.NegRatio":                 "--neg-ratio",
	"task.Table.LinkMetric":               "--link-metric",
	"task.Table.Decoder":                  "--decoder",
	"train.Config.NodeOrder":              "--node-order",
	"nn.Config.Model":                     "--model",
	"nn.Config.Layers":                    "--layers",
	"nn.Config.Hidden":                    "--hidden",
	"nn.Config.Norm":                      "--norm",
	"nn.Config.JK":                        "--jk",
	"nn.Config.Residual":                  "--residual",
	"nn.Config.Precision":                 "--precision",
	"nn.Config.Dropout":                   "--dropout",
	"nn.Config.Heads":                     "--heads",
	"nn.Config.OutHeads":                  "--out-heads",
	"nn.Config.AttnDropout":               "--attn-dropout",
	"nn.Config.Seed":                      "--seed",
	"train.Config.FeatNorm":               "--feat-norm",
	"train.Config.WeightDecay":            "--weight-decay",
	"train.Config.AggrMode":               "--aggr-mode",
	"train.Config.Exchange":               "--exchange",
	"train.Config.SaveBest":               "--save-best",
	"train.Config.Outputs":                "--predictions/--embeddings",
	"train.Config.DecayAll":               "--decay-all",
	"train.Config.Decoupled":              "--adamw",
	"graph.LoadOptions.Split":             "--split",
	"graph.LoadOptions.SplitFiles":        "--split-files",
	"graph.LoadOptions.Format":            "--format",
	"graph.LoadOptions.Features":          "--features",
	"graph.LoadOptions.Labels":            "--labels",
	"graph.LoadOptions.NodeFeatFromEdges": "--node-feat-from-edges",
	"graph.LoadOptions.NoLabels":          "--task",
	"dataset.Source.EdgeSplit":            "--edge-split",
	"dataset.Source.EdgeSplitFiles":       "--edge-split-files",
	"dist.Source.IgnoreWeights":           "--ignore-weights",
	"metis.Options.Weights":               "--weights",
	"dataset.Source.Data":                 "--data",
	"dataset.Source.Features":             "--features",
	"dataset.Source.Synthetic":            "--synthetic",
	"dataset.Source.Partitions":           "--partitions",
	"dataset.Source.SynthFeat":            "--synthetic-features",
	"dataset.Source.Undirected":           "--undirected",
	"dataset.Source.Dedup":                "--dedup",
	"dataset.Source.IgnoreWeights":        "--ignore-weights",
	"dataset.Source.PartMethod":           "--partition-method",
	"dataset.Partitioning.Parts":          "--parts",
	"dataset.Source.PartWeights":          "--partition-weights",
	"dataset.Source.SynthClasses":         "--classes",
	"dataset.Source.FeatNorm":             "--feat-norm",
	"dataset.Conversion.SynthFeat":        "--synthetic-features",
	// supergcn bench aggr
	"measure.AggrBench.Width":  "--width",
	"measure.AggrBench.Reps":   "--reps",
	"measure.AggrBench.Ops":    "--ops",
	"measure.AggrBench.Nodes":  "--nodes",
	"measure.AggrBench.Edges":  "--edges",
	"measure.AggrBench.Kernel": "--kernel",
	"measure.AggrBench.Huge":   "--hugepages",
	// supergcn bench profile
	"measure.Options.Cores":      "--cores",
	"measure.Options.Threads":    "--threads",
	"measure.Options.Loads":      "--loads",
	"measure.Options.HostNodes":  "--host-nodes",
	"measure.Sizes.Shards":       "--shards",
	"measure.Sizes.Spec":         "--spec",
	"measure.Sizes.Nodes":        "--nodes",
	"measure.Sizes.Degree":       "--degree",
	"measure.Sizes.Rows":         "--rows",
	"measure.Sizes.Reps":         "--reps",
	"measure.Sizes.Peers":        "--peers",
	"measure.Sizes.HaloFan":      "--halo-fan",
	"measure.Sizes.ExchangeRows": "--exchange-rows",
	// supergcn predict
	"perfmodel.Model.Kind":              "--model",
	"perfmodel.Model.Layers":            "--layers",
	"perfmodel.Model.Hidden":            "--hidden",
	"perfmodel.Model.In":                "--in-width",
	"perfmodel.Model.Classes":           "--classes",
	"perfmodel.Config.Wire[forward]":    "--bits",
	"perfmodel.Config.Wire[backward]":   "--bits-backward",
	"perfmodel.Config.Wire[eval]":       "--eval-bits",
	"perfmodel.Config.Wire[intra]":      "--intra-bits",
	"perfmodel.Config.Threads":          "--threads",
	"perfmodel.Config.RanksPerNode":     "--ranks-per-node",
	"perfmodel.Config.CoresPerNode":     "--cores-per-node",
	"perfmodel.Config.EvalEvery":        "--eval-every",
	"perfmodel.Config.Staged":           "--exchange",
	"perfmodel.Config.RanksPerHost":     "--ranks-per-host",
	"perfmodel.Sweep.Exchange":          "--exchange",
	"perfmodel.Sweep.Scale":             "--scale",
	"perfmodel.LayoutPlan.Nodes":        "--nodes",
	"perfmodel.LayoutPlan.NodesPerHost": "--nodes-per-host",
	"perfmodel.LayoutPlan.CoresPerNode": "--cores-per-node",
	"perfmodel.Config.Exchange":         "--exchange",
	"perfmodel.VolumeSource.Files":      "--volumes",
})

// withHyperFlags adds the models' declared hyperparameters to names.
func withHyperFlags(names map[string]string) map[string]string {
	for _, h := range nn.Hypers() {
		names[nn.HyperField(h.Name)] = "--" + h.Name
	}
	return names
}

// hints complete library errors that have a command-line remedy.
var hints = []struct {
	err  error
	hint string
}{
	{train.ErrStructureOnly, ": use --synthetic-features DIM"},
	{train.ErrNoTrainNodes, "; choose a split with --split random:TRAIN,VALID or --split-files DIR; structure-only graphs need --synthetic-features"},
}

// UserMessage is the one line the command prints for err: library input names
// replaced by flags, and the command-line remedy where there is one.
func UserMessage(err error) string {
	msg, _ := field.Rename(err, Names)
	for _, h := range hints {
		if errors.Is(err, h.err) {
			msg += h.hint
		}
	}
	return msg
}

// Writer writes to w with library input names replaced by flags, as
// UserMessage does for errors (nil and io.Discard are returned as they are).
func Writer(w io.Writer) io.Writer {
	if w == nil || w == io.Discard {
		return w
	}
	return renamingWriter{w}
}

type renamingWriter struct{ w io.Writer }

func (r renamingWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(r.w, field.Replace(string(b), Names)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// UsageError marks bad flags or arguments: the command exits with status 2.
type UsageError string

func (u UsageError) Error() string { return string(u) }
