package perfmodel

import (
	"fmt"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/quant"
)

// Defaults of a prediction where the partition does not say: the input
// width of a structure-only graph and the classes of an unlabelled one
// (ogbn-products' 100 → 128 features rounded, 47 classes).
const (
	DefaultIn      = 128
	DefaultClasses = 47
)

// AutoBits in Sweep.Bits is train's default width (--bits auto): 2 bits
// with several ranks, fp32 with one.
const AutoBits = 0

// autoBits resolves AutoBits for ranks ranks.
func autoBits(bits, ranks int) int {
	if bits != AutoBits {
		return bits
	}
	return quant.AutoBits(ranks)
}

// ModelOf is the Model a prediction walks for nn configuration c, checked
// as nn checks it (its field errors); c.In and c.Out may be 0 (the
// partition's, DefaultIn and DefaultClasses when it has none).
func ModelOf(c nn.Config) (Model, error) {
	v := c
	v.In, v.Out = max(v.In, 1), max(v.Out, 1)
	if err := v.Validate(); err != nil {
		return Model{}, err
	}
	return Model{Kind: c.Model, Layers: c.Layers, Hidden: c.Hidden, In: c.In, Classes: c.Out,
		LayerNorm: c.Norm == "layer", BatchNorm: c.Norm == "batch", JK: c.JK, Residual: c.Residual, Dropout: c.Dropout > 0, Hyper: c.Hyper,
		Heads: c.Heads, OutHeads: c.OutHeads, AttnDropout: c.AttnDropout}, nil
}

// Sweep is a set of predictions on one partition's volumes: every profile
// × network × aggregation mode × bits, of one model, exchange and layout.
type Sweep struct {
	Profiles []*Profile
	Networks []Network
	Modes    []exchange.Mode
	Bits     []int        // forward bits of each prediction (AutoBits: train's default)
	Params   quant.Params // and the forward rows' parameter layout
	// Config holds the rest of each prediction's setting: its Mode and
	// forward Wire are those of the sweep (its other roles' wires, unset:
	// as quant.Wires.Resolve); Model.In and Model.Classes 0 take the
	// partition's (DefaultIn, DefaultClasses when it has none); Threads 0
	// takes the cores of a node (Config.CoresPerNode, else the profile's)
	// over the ranks on it.
	Config Config
	// Exchange is the boundary exchange: one of exchange.Exchanges, or ""
	// (train's automatic choice: two-level when several nodes run several
	// ranks each).
	Exchange string
	Scale    float64 // every per-rank volume multiplied by it (1: none; other than 1 the flat exchange only)
	Label    string  // a name for the graph, kept in the rows
}

// Row is one prediction of a sweep: its setting and the prediction (one
// line of predict --json).
type Row struct {
	Label      string  `json:"label,omitempty"`
	Partitions string  `json:"partitions"`
	Profile    string  `json:"profile"`
	Network    string  `json:"network"`
	Model      string  `json:"model"`
	Layers     int     `json:"layers"`
	Hidden     int     `json:"hidden"`
	AggrMode   string  `json:"aggr_mode"`
	Bits       int     `json:"bits"`
	Scale      float64 `json:"scale,omitempty"`
	*Prediction
}

// Widths returns the model's input width and classes: m's, or the
// partition's where m's are 0, or the defaults.
func (v *Volumes) Widths(m Model) (in, classes int) {
	in, classes = m.In, m.Classes
	if in == 0 {
		in = v.Meta.FeatDim
		if in == 0 {
			in = DefaultIn
		}
	}
	if classes == 0 {
		classes = v.Meta.NumClasses
		if classes == 0 {
			classes = DefaultClasses
		}
	}
	return in, classes
}

// Run predicts every setting of s on v, in the order profile, network,
// mode, bits.
func (s *Sweep) Run(v *Volumes) ([]Row, error) {
	if _, err := exchange.ParseExchange(s.Exchange); err != nil {
		return nil, field.Errorf("perfmodel.Sweep.Exchange", "%q is not %s", s.Exchange, strings.Join(exchange.Exchanges(), ", "))
	}
	if !(s.Scale > 0) {
		return nil, field.Errorf("perfmodel.Sweep.Scale", "%g, need > 0", s.Scale)
	}
	if s.Config.RanksPerNode < 1 {
		// the default threads and the two-level plans divide by it first
		return nil, field.Errorf("perfmodel.Config.RanksPerNode", "%d, want ≥ 1", s.Config.RanksPerNode)
	}
	vols := v.Ranks
	if s.Scale != 1 {
		var err error
		if vols, err = ScaleVolumes(vols, s.Scale); err != nil {
			return nil, field.Wrap("perfmodel.Sweep.Scale", err)
		}
	}
	m := s.Config.Model
	m.In, m.Classes = v.Widths(m)
	var rows []Row
	for _, prof := range s.Profiles {
		for _, net := range s.Networks {
			for _, mode := range s.Modes {
				for _, b := range s.Bits {
					cfg := s.Config
					cfg.Model, cfg.Mode = m, mode
					cfg.Wire[quant.Forward] = quant.Wire{Bits: autoBits(b, len(vols)), Params: s.Params}
					pr, err := s.predict(v, vols, prof, net, cfg)
					if err != nil {
						return nil, err
					}
					rows = append(rows, Row{Label: s.Label, Partitions: v.Meta.Dir, Profile: prof.Name, Network: net.Name, Model: m.Kind,
						Layers: m.Layers, Hidden: m.Hidden, AggrMode: mode.String(), Bits: cfg.Wire[quant.Forward].Bits, Scale: s.Scale, Prediction: pr})
				}
			}
		}
	}
	return rows, nil
}

// perNode is the ranks sharing a node on net: every rank on a single-node
// network.
func perNode(net Network, rpn, ranks int) int {
	if net.Single {
		return ranks
	}
	return rpn
}

// exchangeOf resolves the sweep's exchange for per ranks a node, as train
// resolves "" (exchange.ChooseExchange on consecutive ranks to a node; the
// max operator's models always the flat exchange).
func (s *Sweep) exchangeOf(per, ranks int) string {
	if op, _ := nn.ModelOp(s.Config.Model.Kind); op == nn.OpMax && s.Exchange == "" {
		return exchange.ExchangeFlat
	}
	return exchange.ChooseExchange(s.Exchange, comm.BlockNodes(ranks, per))
}

// predict is one prediction of the sweep: the layout's default threads,
// the pattern's node volumes when it is staged.
func (s *Sweep) predict(v *Volumes, vols []exchange.RankVolume, prof *Profile, net Network, cfg Config) (*Prediction, error) {
	per := perNode(net, cfg.RanksPerNode, len(vols))
	if cfg.Threads == 0 {
		c := cfg.CoresPerNode
		if c == 0 {
			c = prof.CoresPerNode
		}
		cfg.Threads = max(1, c/per)
	}
	exch := s.exchangeOf(per, len(vols))
	if exchange.Staged(exch) {
		if s.Scale != 1 {
			return nil, field.Errorf("perfmodel.Sweep.Scale", "%g applies to the flat exchange only (%s)", s.Scale, exch)
		}
		nv, err := v.NodeVolumes(per)
		if err != nil {
			return nil, err
		}
		if cfg.Staged = nv.Exchange[exch]; cfg.Staged == nil {
			return nil, fmt.Errorf("volumes: node_volumes[%d] holds no %s volumes", per, exch)
		}
	}
	pr, err := Predict(vols, prof, net, cfg)
	if err != nil {
		return nil, err
	}
	pr.Exchange = exch
	return pr, nil
}
