package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultSpec is the built-in dataset (`supergcn train` without a dataset),
// a model=sbm graph: 32768 nodes in 8 classes, mean degree 12 with
// power-law (γ=2.5) skew, edge homophily 0.8 (Cora's is 0.81), 64 noisy
// features, a 10/10/80 split. Features alone separate the classes poorly (a
// nearest-centroid classifier on X: ~25% test accuracy, chance 12.5%); two
// rounds of GCN aggregation lift that to ~84% (nearest centroid on Â²X), and
// a 2-layer GCN (hidden 64, dropout 0.5, Adam lr 0.01, 100 epochs) reaches
// ~85% test accuracy: well above chance, not 100%.
//
// DefaultSpec is a value to copy, never to modify: the package itself
// never reads it (ParseGenSpec starts from a fresh copy).
var DefaultSpec = defaultSpec()

// defaultSpec returns the literal behind DefaultSpec. The Hier fields are
// the defaults of model=hier keys; model=sbm ignores them.
func defaultSpec() GenSpec {
	return GenSpec{
		Model: "sbm", Nodes: 32768, Degree: 12, Classes: 8, Feat: 64, Homophily: 0.8, PowerLaw: 2.5,
		Noise: 12, Train: 0.1, Valid: 0.1, Test: 0.8, Seed: 1,
		Hier: Hier{Levels: 4, CommSize: 256, Top: 8, Branch: 4, Mixing: 0.05, Spread: 0.6, Inherit: 0.8,
			LabelNoise: 0.2, Nuisance: 1, Order: "shuffled"},
	}
}

// genPresets are the bare words ParseGenSpec accepts, in help order: each
// is a spec text that later keys override. The hier presets imitate a
// real dataset's size, degrees, classes, features and split, and keep their
// structure at any nodes= (community sizes and counts follow nodes).
var genPresets = []struct{ name, help, text string }{
	{"default", "the built-in dataset (model=sbm)", ""},
	{"products", "ogbn-products-like: 2449029 nodes, ~123.7M arcs after merging duplicates, 47 classes, 100 features, 8/1.6/90.4 split",
		"model=hier,name=products-like,nodes=2449029,degree=54,classes=47,feat=100,powerlaw=2.5,noise=4," +
			"levels=4,commsize=256,top=8,branch=4,mixing=0.03,spread=0.5,inherit=0.8,labelnoise=0.25,nuisance=1,classskew=1," +
			"train=0.08,valid=0.016,test=0.904"},
	{"papers", "ogbn-papers100M-like: 111059956 nodes, degree 29.1, 172 classes, 128 features, 1.4% labelled in the split",
		"model=hier,name=papers-like,nodes=111059956,degree=29.1,classes=172,feat=128,powerlaw=2.3,noise=4.5," +
			"levels=4,commsize=256,top=8,branch=4,mixing=0.08,spread=0.6,inherit=0.7,labelnoise=0.3,nuisance=1,classskew=1," +
			"train=0.0109,valid=0.00113,test=0.00193"},
	{"reddit", "Reddit-like: 232965 nodes, degree 492, 41 classes, 602 features, 66/10/24 split",
		"model=hier,name=reddit-like,nodes=232965,degree=492,classes=41,feat=602,powerlaw=2.3,noise=16," +
			"levels=3,commsize=2048,top=4,branch=4,mixing=0.1,spread=0.8,inherit=0.9,labelnoise=0.05,nuisance=1,classskew=1," +
			"train=0.6586,valid=0.1023,test=0.2391"},
	{"sbm-products", "the model=sbm graph of ogbn-products' size (the products preset before model=hier)",
		"model=sbm,name=synthetic-products,nodes=2449029,degree=50.5,classes=47,feat=100,train=0.08,valid=0.016,test=0.904"},
}

// genKey is one key of the text form: the model it belongs to ("" = both),
// its help, and the field it sets (a *int, *float64, *string or *uint64).
type genKey struct {
	name, model, help string
	field             func(*GenSpec) any
}

// get returns the key's value in s as text.
func (k genKey) get(s *GenSpec) string {
	switch p := k.field(s).(type) {
	case *int:
		return strconv.Itoa(*p)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *uint64:
		return strconv.FormatUint(*p, 10)
	default:
		return *p.(*string)
	}
}

// set parses v into the key's field of s.
func (k genKey) set(s *GenSpec, v string) (err error) {
	switch p := k.field(s).(type) {
	case *int:
		*p, err = strconv.Atoi(v)
	case *float64:
		*p, err = strconv.ParseFloat(v, 64)
	case *uint64:
		*p, err = strconv.ParseUint(v, 10, 64)
	default:
		*p.(*string) = v
	}
	return err
}

// genKeys lists every key in String's order (threads last: String leaves it out).
var genKeys = []genKey{
	{"name", "", "dataset name (default derived from the spec)", func(s *GenSpec) any { return &s.Name }},
	{"model", "", "sbm (stochastic block model) or hier (nested communities)", func(s *GenSpec) any { return &s.Model }},
	{"nodes", "", "number of nodes", func(s *GenSpec) any { return &s.Nodes }},
	{"degree", "", "target mean degree, directed entries per node before merging duplicates", func(s *GenSpec) any { return &s.Degree }},
	{"classes", "", "number of classes", func(s *GenSpec) any { return &s.Classes }},
	{"communities", "sbm", "blocks, a multiple of classes; block b has class b mod classes; 0 = classes", func(s *GenSpec) any { return &s.Communities }},
	{"feat", "", "feature dimension", func(s *GenSpec) any { return &s.Feat }},
	{"words", "", "bag-of-words features of this density in (0,1] (sparse: word counts, a word from the node's class vocabulary with probability 1/(1+noise)); 0 = dense Gaussian features", func(s *GenSpec) any { return &s.Words }},
	{"homophily", "sbm", "fraction of edges joining same-class nodes", func(s *GenSpec) any { return &s.Homophily }},
	{"powerlaw", "", "exponent > 2 of the power law of expected degrees, 0 = no skew", func(s *GenSpec) any { return &s.PowerLaw }},
	{"maxdeg", "", "cap on a node's expected degree, 0 = min(nodes-1, degree·√nodes/4)", func(s *GenSpec) any { return &s.MaxDegree }},
	{"noise", "", "feature noise σ: x = class mean [+ nuisance·community offset] + σ·N(0,1), scaled to unit variance", func(s *GenSpec) any { return &s.Noise }},
	{"levels", "hier", "nesting depth of the communities, 1..8", func(s *GenSpec) any { return &s.Levels }},
	{"commsize", "hier", "mean size of the smallest communities", func(s *GenSpec) any { return &s.CommSize }},
	{"top", "hier", "communities at the top level", func(s *GenSpec) any { return &s.Top }},
	{"branch", "hier", "communities of level l ≥ 1 in one of level l+1 (their sizes follow nodes; level 0 has commsize)", func(s *GenSpec) any { return &s.Branch }},
	{"mixing", "hier", "fraction of edge ends drawn from the whole graph", func(s *GenSpec) any { return &s.Mixing }},
	{"spread", "hier", "level l (0 = smallest) gets a share ∝ spread^l of the other edges", func(s *GenSpec) any { return &s.Spread }},
	{"inherit", "hier", "probability a community keeps its parent's class", func(s *GenSpec) any { return &s.Inherit }},
	{"labelnoise", "hier", "probability a node's label is redrawn from the class prior", func(s *GenSpec) any { return &s.LabelNoise }},
	{"nuisance", "hier", "weight of a random per-community feature offset", func(s *GenSpec) any { return &s.Nuisance }},
	{"classskew", "hier", "class prior ∝ 1/(k+1)^classskew", func(s *GenSpec) any { return &s.ClassSkew }},
	{"order", "hier", "node ids: shuffled (no locality) or local (communities are id ranges)", func(s *GenSpec) any { return &s.Order }},
	{"train", "", "fraction of nodes for training", func(s *GenSpec) any { return &s.Train }},
	{"valid", "", "fraction of nodes for validation", func(s *GenSpec) any { return &s.Valid }},
	{"test", "", "fraction of nodes for testing", func(s *GenSpec) any { return &s.Test }},
	{"seed", "", "random seed", func(s *GenSpec) any { return &s.Seed }},
	{"threads", "", "goroutines, 0 = all CPUs; never changes the output", func(s *GenSpec) any { return &s.Threads }},
}

// genFindKey returns the key named name.
func genFindKey(name string) (genKey, bool) {
	for _, k := range genKeys {
		if k.name == name {
			return k, true
		}
	}
	return genKey{}, false
}

// genPreset returns the text of the preset named name.
func genPreset(name string) (string, bool) {
	for _, p := range genPresets {
		if p.name == name {
			return p.text, true
		}
	}
	return "", false
}

// genNames returns the names of genKeys or genPresets, space-separated.
func genNames(presets bool) string {
	var names []string
	if presets {
		for _, p := range genPresets {
			names = append(names, p.name)
		}
	} else {
		for _, k := range genKeys {
			names = append(names, k.name)
		}
	}
	return strings.Join(names, " ")
}

// ParseGenSpec parses a comma-separated list of key=value pairs into a
// GenSpec, starting from DefaultSpec. Keys are those named in GenSpec's
// field comments; a bare word selects a preset (genPresets: default,
// products, papers, reddit, sbm-products) that later keys can override,
// e.g. "products,nodes=100000,seed=7". Unknown keys, malformed values, keys
// of the other model and inconsistent specs are errors naming the key.
func ParseGenSpec(s string) (GenSpec, error) {
	spec := defaultSpec()
	given := map[string]bool{} // keys set by the text, presets included
	if err := spec.parse(s, given, 0); err != nil {
		return spec, err
	}
	for _, k := range genKeys {
		if given[k.name] && k.model != "" && k.model != spec.Model && (spec.Model == "sbm" || spec.Model == "hier") {
			return spec, fmt.Errorf("spec: %s: applies to model=%s only (this spec is model=%s)", k.name, k.model, spec.Model)
		}
	}
	return spec, spec.Validate()
}

// parse applies the text s to spec, recording the keys it sets in given.
func (spec *GenSpec) parse(s string, given map[string]bool, depth int) error {
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		key, val, ok := strings.Cut(tok, "=")
		if !ok {
			preset, found := genPreset(tok)
			if !found || depth > 0 {
				return fmt.Errorf("spec: %q is neither key=value nor a preset (%s)", tok, genNames(true))
			}
			if tok == "default" {
				*spec = defaultSpec()
				clear(given)
			}
			if err := spec.parse(preset, given, depth+1); err != nil {
				return err
			}
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		k, found := genFindKey(key)
		if !found {
			return fmt.Errorf("spec: unknown key %q (keys: %s)", key, genNames(false))
		}
		if err := k.set(spec, val); err != nil {
			return fmt.Errorf("spec: %s: bad value %q", key, val)
		}
		given[key] = true
	}
	return nil
}

// GenSpecHelp describes every key of the text form with its default and
// every preset, one per line, for command-line help.
func GenSpecHelp() string {
	d := defaultSpec()
	var b strings.Builder
	for _, k := range genKeys {
		model := ""
		if k.model != "" {
			model = k.model + ": "
		}
		def := ""
		if v := k.get(&d); v != "" {
			def = " (default " + v + ")"
		}
		fmt.Fprintf(&b, "  %-12s %s%s%s\n", k.name, model, k.help, def)
	}
	for _, p := range genPresets {
		fmt.Fprintf(&b, "  %-12s preset: %s\n", p.name, p.help)
	}
	b.WriteString("  (a preset is a bare word; later keys override it, e.g. products,nodes=100000)\n")
	return b.String()
}

// Validate reports the first inconsistent field as "spec: KEY: problem".
func (s GenSpec) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("spec: %s: %s", key, fmt.Sprintf(format, args...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case s.Model != "sbm" && s.Model != "hier":
		return bad("model", "%q is not sbm or hier", s.Model)
	case s.Nodes < 1 || s.Nodes >= math.MaxInt32:
		return bad("nodes", "%d outside [1, 2^31-1)", s.Nodes)
	case !finite(s.Degree) || s.Degree < 0 || s.Degree > float64(s.Nodes-1):
		return bad("degree", "%g outside [0, nodes-1]", s.Degree)
	case s.Degree*float64(s.Nodes) > 1<<40:
		return bad("degree", "%g·%d edges is too many", s.Degree, s.Nodes)
	case s.Classes < 1 || s.Classes > s.Nodes || s.Classes > MaxClasses:
		return bad("classes", "%d outside [1, min(nodes, %d)]", s.Classes, MaxClasses)
	case s.Communities < 0 || s.Communities > s.Nodes || (s.Communities > 0 && s.Communities%s.Classes != 0):
		return bad("communities", "%d is not a multiple of classes (%d) in [0, nodes]", s.Communities, s.Classes)
	case s.Feat < 0 || s.Feat > 1<<20 || int64(s.Feat)*int64(s.Nodes) > 1<<40:
		return bad("feat", "%d out of range", s.Feat)
	case !finite(s.Homophily) || s.Homophily < 0 || s.Homophily > 1:
		return bad("homophily", "%g outside [0,1]", s.Homophily)
	case !finite(s.PowerLaw) || (s.PowerLaw != 0 && s.PowerLaw <= 2):
		return bad("powerlaw", "%g: want 0 (no skew) or an exponent > 2", s.PowerLaw)
	case s.MaxDegree < 0:
		return bad("maxdeg", "%d is negative", s.MaxDegree)
	case !finite(s.Words) || s.Words < 0 || s.Words > 1 || (s.Words > 0 && s.Feat < 1):
		return bad("words", "%g: want a density in (0,1] with feat ≥ 1, or 0", s.Words)
	case !finite(s.Noise) || s.Noise < 0:
		return bad("noise", "%g is negative", s.Noise)
	case s.Threads < 0:
		return bad("threads", "%d is negative", s.Threads)
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"train", s.Train}, {"valid", s.Valid}, {"test", s.Test}} {
		if !finite(f.v) || f.v < 0 || f.v > 1 {
			return bad(f.key, "%g outside [0,1]", f.v)
		}
	}
	if s.Train+s.Valid+s.Test > 1+1e-9 {
		return bad("test", "train+valid+test = %g > 1", s.Train+s.Valid+s.Test)
	}
	if s.Model == "hier" {
		return s.Hier.validate(bad)
	}
	return nil
}

// validate checks the model=hier keys.
func (h Hier) validate(bad func(key, format string, args ...any) error) error {
	unit := func(x float64) bool { return x >= 0 && x <= 1 } // false for NaN
	switch {
	case h.Levels < 1 || h.Levels > 8:
		return bad("levels", "%d outside [1,8]", h.Levels)
	case h.CommSize < 2 || h.CommSize >= math.MaxInt32:
		return bad("commsize", "%d: want ≥ 2", h.CommSize)
	case h.Top < 1 || h.Top >= math.MaxInt32:
		return bad("top", "%d: want ≥ 1", h.Top)
	case h.Branch < 1 || h.Branch > 1<<16:
		return bad("branch", "%d outside [1, 65536]", h.Branch)
	case !unit(h.Mixing):
		return bad("mixing", "%g outside [0,1]", h.Mixing)
	case !(h.Spread > 0 && h.Spread <= 16):
		return bad("spread", "%g outside (0,16]", h.Spread)
	case !unit(h.Inherit):
		return bad("inherit", "%g outside [0,1]", h.Inherit)
	case !unit(h.LabelNoise):
		return bad("labelnoise", "%g outside [0,1]", h.LabelNoise)
	case !(h.Nuisance >= 0 && h.Nuisance <= 1e6):
		return bad("nuisance", "%g outside [0,1e6]", h.Nuisance)
	case !(h.ClassSkew >= 0 && h.ClassSkew <= 4):
		return bad("classskew", "%g outside [0,4]", h.ClassSkew)
	case h.Order != "shuffled" && h.Order != "local":
		return bad("order", "%q is not shuffled or local", h.Order)
	}
	return nil
}

// String returns the spec in ParseGenSpec's text form: every key of its
// model except threads.
func (s GenSpec) String() string {
	var parts []string
	for _, k := range genKeys {
		if k.name == "threads" || (k.model != "" && k.model != s.Model) {
			continue
		}
		parts = append(parts, k.name+"="+k.get(&s))
	}
	return strings.Join(parts, ",")
}
