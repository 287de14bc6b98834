package nn

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/internal/field"
)

// Hyper declares one hyperparameter of a model in its table row: its name
// (the key of Config.Hyper, and the command line's flag), its default, the
// closed range of the values it takes and a one-line help text. Everything
// else derives from the declaration: the command line's flags and help,
// Validate's range check, the checkpoint (Config is saved whole), resume's
// comparison with the checkpoint, predict's flags and the PyTorch
// baseline's arguments (supergcn info --hypers). The layers read the value
// from LayerShape.Hyper. Several models may declare one name (k: sgc and
// appnp, alpha: appnp and gcnii), each with its default.
type Hyper struct {
	Name     string
	Default  float64
	Min, Max float64
	MinOpen  bool // Min itself is outside the range: (Min, Max]
	Int      bool // whole numbers only (a count)
	Bool     bool // a switch: 0 or 1 (a flag without a value)
	Help     string
}

// rangeText is h's range as errors and help texts write it.
func (h Hyper) rangeText() string {
	if h.Bool {
		return "{0, 1}"
	}
	if h.MinOpen {
		return fmt.Sprintf("(%g, %g]", h.Min, h.Max)
	}
	return fmt.Sprintf("[%g, %g]", h.Min, h.Max)
}

// admits reports whether v is a value of h.
func (h Hyper) admits(v float64) bool {
	switch {
	case h.Bool:
		return v == 0 || v == 1
	case h.Int && v != math.Trunc(v):
		return false
	case h.MinOpen:
		return v > h.Min && v <= h.Max
	}
	return v >= h.Min && v <= h.Max
}

// Hypers returns the hyperparameters of every model of the table, each
// name once (in table order; a name declared by several models keeps the
// first declaration's help and range), with the models that take it and
// their defaults.
func Hypers() []HyperInfo {
	var out []HyperInfo
	for _, m := range models {
		for _, h := range m.hypers {
			i := slices.IndexFunc(out, func(o HyperInfo) bool { return o.Name == h.Name })
			if i < 0 {
				out = append(out, HyperInfo{Hyper: h})
				i = len(out) - 1
			}
			out[i].Models = append(out[i].Models, m.name)
			out[i].Defaults = append(out[i].Defaults, h.Default)
		}
	}
	return out
}

// HyperInfo is a Hyper with the models that declare it and each one's
// default (Defaults[i] is Models[i]'s).
type HyperInfo struct {
	Hyper
	Models   []string
	Defaults []float64
}

// Usage is h's help text for a command line: the help, the defaults of the
// models that take it and its range ("propagation steps K (default sgc 2,
// appnp 10; range [1, 1024])").
func (h HyperInfo) Usage() string {
	var d []string
	for i, m := range h.Models {
		if h.Bool {
			d = append(d, m)
			continue
		}
		d = append(d, fmt.Sprintf("%s %g", m, h.Defaults[i]))
	}
	if h.Bool {
		return fmt.Sprintf("%s (%s)", h.Help, strings.Join(d, ", "))
	}
	return fmt.Sprintf("%s (default %s; range %s)", h.Help, strings.Join(d, ", "), h.rangeText())
}

// HyperField is the input name Validate's errors give hyperparameter name
// (for a command line's map of input names to flags).
func HyperField(name string) string { return "nn.Config.Hyper[" + name + "]" }

// validateHypers checks c.Hyper against model m's declarations: every key
// declared, every value in its range.
func (c Config) validateHypers(m modelKind) error {
	for _, name := range slices.Sorted(maps.Keys(c.Hyper)) {
		v := c.Hyper[name]
		i := slices.IndexFunc(m.hypers, func(h Hyper) bool { return h.Name == name })
		if i < 0 {
			return field.Errorf(HyperField(name), "%g, but %s takes no %s (%s do)", v, m.name, name, strings.Join(modelsTaking(name), ", "))
		}
		if h := m.hypers[i]; !h.admits(v) {
			if h.Int && v == math.Trunc(v) || !h.Int {
				return field.Errorf(HyperField(name), "%g is not in %s", v, h.rangeText())
			}
			return field.Errorf(HyperField(name), "%g is not a whole number", v)
		}
	}
	return nil
}

// modelsTaking is the models that declare hyperparameter name.
func modelsTaking(name string) []string {
	for _, h := range Hypers() {
		if h.Name == name {
			return h.Models
		}
	}
	return nil
}

// hyperValues is every hyperparameter of model m: c.Hyper's value or the
// declared default.
func (c Config) hyperValues(m modelKind) map[string]float64 {
	if len(m.hypers) == 0 {
		return nil
	}
	v := make(map[string]float64, len(m.hypers))
	for _, h := range m.hypers {
		v[h.Name] = h.Default
		if x, ok := c.Hyper[h.Name]; ok {
			v[h.Name] = x
		}
	}
	return v
}

// HyperValues is every hyperparameter of the model of c, its value in
// c.Hyper or its declared default (nil for an unknown model or one
// without hyperparameters): what a resumed run compares.
func (c Config) HyperValues() map[string]float64 {
	m, _ := lookupModel(c.Model)
	return c.hyperValues(m)
}

// HyperValue is hyperparameter name of the model of c: its value in
// c.Hyper or its declared default; an error when the model does not
// declare it.
func (c Config) HyperValue(name string) (float64, error) {
	m, ok := lookupModel(c.Model)
	if !ok {
		_, err := ModelOp(c.Model)
		return 0, err
	}
	v, ok := c.hyperValues(m)[name]
	if !ok {
		return 0, fmt.Errorf("nn: model %s takes no %s", m.name, name)
	}
	return v, nil
}

// Equal reports whether c and o describe the same model: every field equal,
// the hyperparameters compared with their defaults filled in (a Config holds
// a map, so == does not compile).
// Empty strings are their fields' defaults (Norm and JK "none", Precision
// "fp32"), as in a Config written before those fields existed.
func (c Config) Equal(o Config) bool {
	if m, ok := lookupModel(c.Model); ok {
		c.Hyper, o.Hyper = c.hyperValues(m), o.hyperValues(m)
	}
	for _, p := range []*Config{&c, &o} {
		p.Norm, p.JK, p.Precision = cmp.Or(p.Norm, "none"), cmp.Or(p.JK, "none"), cmp.Or(p.Precision, "fp32")
	}
	return reflect.DeepEqual(c, o)
}

// UnmarshalJSON decodes a Config, moving the fields of files of older
// builds into Hyper: K, Alpha (0: the model's default) and TrainEps became
// hyperparameters k, alpha and train-eps.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config // without this method
	var v struct {
		plain
		K        int     `json:",omitempty"`
		Alpha    float64 `json:",omitempty"`
		TrainEps bool    `json:",omitempty"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Config(v.plain)
	for name, x := range map[string]float64{"k": float64(v.K), "alpha": v.Alpha, "train-eps": map[bool]float64{true: 1}[v.TrainEps]} {
		if _, set := c.Hyper[name]; x != 0 && !set {
			if c.Hyper == nil {
				c.Hyper = map[string]float64{}
			}
			c.Hyper[name] = x
		}
	}
	return nil
}
