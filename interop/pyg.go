package interop

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/nn"
)

// FormatVersion is the version of the export layout (names, shapes and
// metadata keys), recorded as metadata "format_version".
const FormatVersion = 1

// Model is what Export needs of a saved model: its configuration, the
// input preprocessing it was trained with and its parameters by name
// (supergcn's layout: weight matrices In×Out, row-major).
type Model struct {
	Config    nn.Config
	FeatNorm  string  // "", "none" or "row"
	LabelProp float64 // > 0: trained with label propagation (not exportable)
	Params    map[string][]float32
}

// TorchShape is the shape parameter p has in the matching PyTorch module:
// a linear weight Out×In (p's transpose), GATConv's att_src and att_dst
// and GATv2Conv's att 1×Heads×Width, a vector (bias, LayerNorm, GIN's eps) one-dimensional.
func TorchShape(p nn.ParamShape) []int {
	switch {
	case p.Weight:
		return []int{p.Cols, p.Rows}
	case strings.HasSuffix(p.Name, ".att_src") || strings.HasSuffix(p.Name, ".att_dst") || strings.HasSuffix(p.Name, ".att"):
		return []int{1, p.Rows, p.Cols}
	case p.Rows == 1:
		return []int{p.Cols}
	}
	return []int{p.Rows, p.Cols}
}

// transpose returns the rows×cols row-major w transposed (cols×rows).
func transpose(w []float32, rows, cols int) []float32 {
	t := make([]float32, len(w))
	for i := range rows {
		for j := range cols {
			t[j*rows+i] = w[i*cols+j]
		}
	}
	return t
}

// Export returns m's parameters under their PyG names (supergcn's
// names are PyG's) in PyTorch's layouts (TorchShape), in the model's
// parameter order, and the metadata that rebuilds the model (Metadata).
func Export(m Model) ([]Tensor, map[string]string, error) {
	if m.LabelProp > 0 {
		return nil, nil, fmt.Errorf("the model was trained with label propagation (%g), whose label embedding and inputs have no PyG counterpart: it cannot be exported", m.LabelProp)
	}
	shapes, err := m.Config.ParamShapes()
	if err != nil {
		return nil, nil, err
	}
	ts := make([]Tensor, 0, len(shapes))
	for _, p := range shapes {
		w, ok := m.Params[p.Name]
		if !ok {
			return nil, nil, fmt.Errorf("parameter %s of the %s model is missing", p.Name, m.Config.Model)
		}
		if len(w) != p.Rows*p.Cols {
			return nil, nil, fmt.Errorf("parameter %s has %d values, the model's is %d×%d", p.Name, len(w), p.Rows, p.Cols)
		}
		if p.Weight {
			w = transpose(w, p.Rows, p.Cols)
		} else {
			w = slices.Clone(w)
		}
		ts = append(ts, Tensor{Name: p.Name, Shape: TorchShape(p), Data: w})
	}
	if len(m.Params) != len(shapes) {
		for name := range m.Params {
			if !slices.ContainsFunc(shapes, func(p nn.ParamShape) bool { return p.Name == name }) {
				return nil, nil, fmt.Errorf("parameter %s is not one of the %s model's", name, m.Config.Model)
			}
		}
	}
	meta, err := Metadata(m.Config, m.FeatNorm)
	if err != nil {
		return nil, nil, err
	}
	return ts, meta, nil
}

// Metadata is the string map that describes the model of c (the
// hyperparameters a reader needs to rebuild it; docs/MODELS.md).
func Metadata(c nn.Config, featNorm string) (map[string]string, error) {
	js, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	orNone := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	itoa := strconv.Itoa
	ftoa := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	meta := map[string]string{
		"format":         "supergcn-export",
		"format_version": itoa(FormatVersion),
		"model":          c.Model,
		"pyg_class":      pygClass[c.Model],
		"layers":         itoa(c.Layers),
		"in_dim":         itoa(c.In),
		"hidden":         itoa(c.Hidden),
		"classes":        itoa(c.Out),
		"norm":           orNone(c.Norm),
		"layer_norm_eps": ftoa(nn.LayerNormEps),
		"feat_norm":      orNone(featNorm),
		"activation":     "relu",
		"dropout":        ftoa(c.Dropout),
		"config":         string(js),
	}
	op, err := nn.ModelOp(c.Model)
	if err != nil {
		return nil, err
	}
	meta["aggregation"] = op.String()
	if k := c.Steps(); k > 0 {
		meta["k"] = itoa(k)
	}
	if a := c.Teleport(); a > 0 {
		meta["alpha"] = ftoa(a)
	}
	if c.Model == "gin" {
		meta["train_eps"] = strconv.FormatBool(c.TrainEps())
	}
	for name, v := range c.HyperValues() { // the other declared ones (gcnii: theta, conv_decay)
		if key := strings.ReplaceAll(name, "-", "_"); meta[key] == "" {
			meta[key] = ftoa(v)
		}
	}
	meta["jk"] = orNone(c.JK)
	meta["residual"] = strconv.FormatBool(c.Residual)
	if op.Attends() {
		meta["heads"] = itoa(max(c.Heads, 1))
		if c.Layers > 1 { // --hidden: GATConv's out_channels of the hidden layers
			meta["hidden_per_head"] = itoa(c.Hidden / max(c.Heads, 1))
		}
		meta["out_heads"] = itoa(max(c.OutHeads, 1))
		meta["attn_dropout"] = ftoa(c.AttnDropout)
		meta["negative_slope"] = ftoa(nn.GATSlope)
	}
	if c.Model == "gatv2" {
		v, _ := c.HyperValue("share-weights")
		meta["share_weights"] = strconv.FormatBool(v == 1)
	}
	return meta, nil
}

// pygClass names the PyG module of each model's layers.
var pygClass = map[string]string{
	"gcn":       "GCNConv",
	"sage":      "SAGEConv",
	"sage-max":  "SAGEConv",
	"sage-pool": "SAGEConv",
	"gin":       "GINConv",
	"sgc":       "SGConv",
	"appnp":     "Linear+APPNP",
	"gat":       "GATConv",
	"gatv2":     "GATv2Conv",
	"gcnii":     "Linear+GCN2Conv+Linear",
}

// aliases are other names a tensor of the model may carry in a file:
// GATConv of PyG before 2.3 named its shared linear layer lin_src.
var aliases = map[string]string{".lin_src.weight": ".lin.weight"}

// Import maps tensors in PyTorch's layouts under PyG's names (Export's,
// or a user's) onto the model of c: each parameter's values in supergcn's
// layout, by name. Every parameter must be there with its TorchShape (a
// vector may also come as 1×n, GIN's eps as a scalar) and no other
// tensor may be; errors name the tensor.
func Import(c nn.Config, ts []Tensor) (map[string][]float32, error) {
	shapes, err := c.ParamShapes()
	if err != nil {
		return nil, err
	}
	byName := map[string]nn.ParamShape{}
	for _, p := range shapes {
		byName[p.Name] = p
	}
	out := map[string][]float32{}
	for _, t := range ts {
		name := t.Name
		for from, to := range aliases {
			if base, ok := strings.CutSuffix(name, from); ok {
				name = base + to
			}
		}
		p, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("tensor %s is not a parameter of the %s model of %d layers (%s)", t.Name, c.Model, c.Layers, names(shapes))
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("tensor %s: parameter %s given twice", t.Name, name)
		}
		want := TorchShape(p)
		if !shapeMatches(t.Shape, want) {
			return nil, fmt.Errorf("tensor %s has shape %v, the model's needs %v", t.Name, t.Shape, want)
		}
		for _, v := range t.Data {
			if v-v != 0 {
				return nil, fmt.Errorf("tensor %s holds a non-finite value", t.Name)
			}
		}
		w := slices.Clone(t.Data)
		if p.Weight {
			w = transpose(t.Data, p.Cols, p.Rows)
		}
		out[name] = w
	}
	for _, p := range shapes {
		if _, ok := out[p.Name]; !ok {
			return nil, fmt.Errorf("tensor %s (shape %v) is missing", p.Name, TorchShape(p))
		}
	}
	return out, nil
}

// shapeMatches reports whether have is want, or the same values in a
// shape that differs only by dimensions of 1 (a bias as 1×n, a scalar ε).
func shapeMatches(have, want []int) bool {
	if slices.Equal(have, want) {
		return true
	}
	squeeze := func(s []int) []int {
		return slices.DeleteFunc(slices.Clone(s), func(d int) bool { return d == 1 })
	}
	return len(want) <= 1 && slices.Equal(squeeze(have), squeeze(want))
}

// names lists the parameter names of shapes.
func names(shapes []nn.ParamShape) string {
	n := make([]string, len(shapes))
	for i, p := range shapes {
		n[i] = p.Name
	}
	return strings.Join(n, ", ")
}
