package main

import (
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"reflect"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dataset"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition/dist"
	"github.com/supergcn/supergcn/partition/metis"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/perfmodel/measure"
	"github.com/supergcn/supergcn/task"
	"github.com/supergcn/supergcn/train"
)

// TestUserMessage: library input names become flags, remedies are added,
// and every mapped name is a real field of the struct it names.
func TestUserMessage(t *testing.T) {
	err := fmt.Errorf("rank 0: %w", field.Errorf("train.Config.SaveEvery", "%d needs train.Config.SavePath and must be ≥ 1", 3))
	if got := flagtab.UserMessage(err); got != "rank 0: --save-every: 3 needs --save and must be ≥ 1" {
		t.Errorf("UserMessage = %q", got)
	}
	if got := flagtab.UserMessage(fmt.Errorf("epoch 3: %w", train.ErrStructureOnly)); !strings.HasSuffix(got, "use --synthetic-features DIM") {
		t.Errorf("structure-only hint missing: %q", got)
	}
	// METIS's hint on a multi-constraint failure names the option it suggests
	hint := fmt.Errorf("partition: METIS_PartGraphKway(…): METIS_ERROR (… metis.Options.Weights %q balances one)", metis.WeightsDegree)
	if got := flagtab.UserMessage(hint); !strings.Contains(got, `--weights "degree"`) {
		t.Errorf("METIS hint not renamed: %q", got)
	}
	// nn's own errors name the fields that the rows of flagtab.Names map
	if got := flagtab.UserMessage(nn.Config{Model: "gcn", Layers: 2, In: 1, Hidden: 0, Out: 1}.Validate()); !strings.HasPrefix(got, "--hidden: 0") {
		t.Errorf("nn.Config.Validate renamed: %q", got)
	}
	types := map[string]reflect.Type{
		"train.Config":           reflect.TypeOf(train.Config{}),
		"nn.Config":              reflect.TypeOf(nn.Config{}),
		"graph.LoadOptions":      reflect.TypeOf(graph.LoadOptions{}),
		"dist.Source":            reflect.TypeOf(dist.Source{}),
		"perfmodel.Model":        reflect.TypeOf(perfmodel.Model{}),
		"perfmodel.Config":       reflect.TypeOf(perfmodel.Config{}),
		"perfmodel.Sweep":        reflect.TypeOf(perfmodel.Sweep{}),
		"perfmodel.LayoutPlan":   reflect.TypeOf(perfmodel.LayoutPlan{}),
		"perfmodel.VolumeSource": reflect.TypeOf(perfmodel.VolumeSource{}),
		"measure.AggrBench":      reflect.TypeOf(measure.AggrBench{}),
		"measure.Options":        reflect.TypeOf(measure.Options{}),
		"measure.Sizes":          reflect.TypeOf(measure.Sizes{}),
		"metis.Options":          reflect.TypeOf(metis.Options{}),
		"dataset.Source":         reflect.TypeOf(dataset.Source{}),
		"dataset.Partitioning":   reflect.TypeOf(dataset.Partitioning{}),
		"dataset.Conversion":     reflect.TypeOf(dataset.Conversion{}),
		"task.Table":             reflect.TypeOf(task.Table{}),
	}
	for name, flag := range flagtab.Names {
		name, _, _ := strings.Cut(name, "[") // an array field's element: Wire[forward]
		i := strings.LastIndex(name, ".")
		typ, ok := types[name[:i]]
		if !ok {
			t.Errorf("%s: unknown type", name)
			continue
		}
		f, _, _ := strings.Cut(name[i+1:], "[") // Wire[forward]: an element of the field
		if _, ok := typ.FieldByName(f); !ok {
			t.Errorf("%s (for %s) is not a field of %s", name, flag, typ)
		}
	}
}
