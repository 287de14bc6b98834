package exchange

import (
	"fmt"
	"slices"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// RowReport is what a partition's exchange moves: one layer, one
// direction (the backward pass moves the same rows the other way), every
// ordered rank pair planned as the exchange plans it (SplitShard).
//
// Bytes are those of the wire format: Bits 32 sends 4·Width bytes a row;
// Bits 2, 4 or 8 sends quant.Format{Bits, Params}.Size: ⌈Width·Bits/8⌉
// data bytes a row plus the parameters: 8 (fp32), 4 (bf16) or 3 bytes a row
// and 4 a block of 64 rows (block).
type RowReport struct {
	Dir         string             `json:"dir"`
	Parts       int                `json:"parts"`
	Ranks       int                `json:"ranks"`
	Width       int                `json:"width"`
	Bits        int                `json:"bits"`                   // 32 = fp32 rows
	QuantParams string             `json:"quant_params,omitempty"` // fp32|bf16|block (quantised rows)
	BytesPerRow float64            `json:"bytes_per_row"`          // data + params of a row (averaged over a block)
	Pairs       int                `json:"pairs"`                  // ordered rank pairs with cut edges
	Rows        RowCounts          `json:"rows"`                   // totals over all ordered pairs
	Bytes       RowCounts          `json:"bytes"`                  // data + params, per mode
	DataBytes   int64              `json:"data_bytes"`             // hybrid: encoded values
	ParamBytes  int64              `json:"param_bytes"`            // hybrid: per-row (zero, scale) pairs
	FP32Bytes   int64              `json:"fp32_bytes"`             // hybrid rows at fp32, for comparison
	PerRank     map[string]PerRank `json:"per_rank"`               // "sent", "recv"
	Attention   *AttnBytes         `json:"attention,omitempty"`    // an attention layer's bytes (heads > 0)
	Seconds     float64            `json:"seconds"`
}

// wireOf is the wire format a report names (bits, quant params).
func wireOf(bits int, params string) quant.Wire {
	w := quant.Wire{Bits: bits}
	if params != "" {
		w.Params, _ = quant.ParseParams(params)
	}
	return w
}

// Wire is the wire format the report counts bytes at.
func (r *RowReport) Wire() quant.Wire { return wireOf(r.Bits, r.QuantParams) }

// PerRank are min/avg/max over ranks of rows, per mode.
type PerRank struct {
	Pre    Spread `json:"pre"`
	Post   Spread `json:"post"`
	Hybrid Spread `json:"hybrid"`
}

// Of is the spread of mode m.
func (p PerRank) Of(m Mode) Spread {
	switch m {
	case ModePre:
		return p.Pre
	case ModePost:
		return p.Post
	}
	return p.Hybrid
}

// Spread is the minimum, mean and maximum of a count over ranks or nodes.
type Spread struct {
	Min int64   `json:"min"`
	Avg float64 `json:"avg"`
	Max int64   `json:"max"`
}

// SpreadOf is the spread of a (not empty).
func SpreadOf(a []int64) Spread {
	s := Spread{Min: a[0], Max: a[0]}
	var sum int64
	for _, v := range a {
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
		sum += v
	}
	s.Avg = float64(sum) / float64(len(a))
	return s
}

// ReportRows loads each rank's shard of the partition directory dir (parts
// parts shared among ranks ranks) in turn and plans every pair that sends
// to it, counting rows and bytes at wire format f and row width width;
// with heads > 0 also the bytes of an attention layer of kind att
// (nn.OpAttention or nn.OpAttentionV2) of that many heads.
func ReportRows(dir string, parts, ranks, width, heads int, att nn.OpKind, f quant.Wire) (*RowReport, error) {
	if heads > 0 && !att.Attends() {
		return nil, fmt.Errorf("exchange: attention bytes of a %s operator, want an attention kind", att)
	}
	t0 := time.Now()
	sent := make([]RowCounts, ranks)
	recv := make([]RowCounts, ranks)
	d, p := f.RowBytes(width)
	rep := &RowReport{Dir: dir, Parts: parts, Ranks: ranks, Width: width, Bits: f.Bits, BytesPerRow: d + p}
	if !f.Exact() {
		rep.QuantParams = f.Params.String()
	}
	// Bytes are summed per ordered pair: each pair's rows are one message
	// (ParamsBlock's per-block bases count per message).
	total := func(rows int64) int64 { return f.Bytes(rows, width) }
	if heads > 0 {
		rep.Attention = newAttnBytes(att, heads)
	}
	for r := 0; r < ranks; r++ {
		sh, err := partition.Load(dir, r, ranks)
		if err != nil {
			return nil, err
		}
		splits, err := SplitShard(sh, ModeHybrid)
		if err != nil {
			return nil, err
		}
		attSplits := splits
		if rep.Attention != nil && att == nn.OpAttentionV2 {
			var codec rowSizer // nil: float32 rows, as preWeight takes them
			if !f.Exact() {
				codec = f
			}
			if attSplits, err = splitShardV2(sh, ModeHybrid, preWeight(codec)); err != nil {
				return nil, err
			}
		}
		for q, sp := range splits {
			if sp.Counts == (RowCounts{}) {
				continue
			}
			rep.Pairs++
			sent[q] = sent[q].Add(sp.Counts)
			recv[r] = recv[r].Add(sp.Counts)
			rep.Rows = rep.Rows.Add(sp.Counts)
			rep.Bytes = rep.Bytes.Add(RowCounts{Pre: total(sp.Counts.Pre), Post: total(sp.Counts.Post), Hybrid: total(sp.Counts.Hybrid)})
			d, p := f.Size(int(sp.Counts.Hybrid), width)
			rep.DataBytes += int64(d)
			rep.ParamBytes += int64(p)
			if rep.Attention != nil {
				rep.Attention.add(&attSplits[q], width, f)
			}
		}
	}
	rep.FP32Bytes = quant.Wire{Bits: quant.ExactBits}.Bytes(rep.Rows.Hybrid, width)
	rep.PerRank = map[string]PerRank{"sent": spreads(sent), "recv": spreads(recv)}
	rep.Seconds = time.Since(t0).Seconds()
	return rep, nil
}

// spreads returns min/avg/max over ranks for each mode.
func spreads(c []RowCounts) PerRank {
	of := func(m Mode) Spread {
		a := make([]int64, len(c))
		for i, x := range c {
			a[i] = x.Of(m)
		}
		return SpreadOf(a)
	}
	return PerRank{Pre: of(ModePre), Post: of(ModePost), Hybrid: of(ModeHybrid)}
}

// NodeReport compares the exchange patterns of one layer, one direction,
// with RanksPerNode consecutive ranks to a node: on the network
// (inter-node rows, bytes at the wire format, messages) and inside nodes.
// Its JSON holds each pattern's NodeLevel under the pattern's key
// (PatternInfo.Key).
type NodeReport struct {
	Dir          string  `json:"dir"`
	Parts        int     `json:"parts"`
	Ranks        int     `json:"ranks"`
	RanksPerNode int     `json:"ranks_per_node"`
	Nodes        int     `json:"nodes"`
	Layers       int     `json:"layers"`
	Width        int     `json:"width"`
	Bits         int     `json:"bits"`
	QuantParams  string  `json:"quant_params,omitempty"`
	IntraBits    int     `json:"intra_bits"` // rows between ranks of one node, every pattern
	Seconds      float64 `json:"seconds"`
	// Exchange is each pattern's volume, by name (Exchanges).
	Exchange map[string]NodeLevel `json:"-"`
}

type plainNodeReport NodeReport

// MarshalJSON writes the patterns' levels under their keys.
func (r *NodeReport) MarshalJSON() ([]byte, error) {
	return marshalByPattern((*plainNodeReport)(r), r.Exchange)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *NodeReport) UnmarshalJSON(b []byte) (err error) {
	r.Exchange, err = unmarshalByPattern[NodeLevel](b, (*plainNodeReport)(r))
	return err
}

// Wires are the wire formats of the rows between nodes and inside them.
func (r *NodeReport) Wires() (inter, intra quant.Wire) {
	return wireOf(r.Bits, r.QuantParams), wireOf(r.IntraBits, r.QuantParams)
}

// NodeLevel is one plan's volume. Inter-node bytes are at the wire format,
// intra-node bytes at the intra-node one (one message per rank pair), as
// train sends them in either exchange.
type NodeLevel struct {
	InterRows        int64  `json:"inter_rows"`
	InterBytes       int64  `json:"inter_bytes"`
	InterMessages    int    `json:"inter_messages"`
	IntraRows        int64  `json:"intra_rows"`
	IntraBytes       int64  `json:"intra_bytes"`
	IntraMessages    int    `json:"intra_messages"`
	MessagesPerEpoch int    `json:"messages_per_epoch"` // (inter + intra) × 2 directions × layers
	NodeSentRows     Spread `json:"node_sent_rows"`     // inter-node rows sent per node
	NodeRecvRows     Spread `json:"node_recv_rows"`     // inter-node rows received per node
}

// ReportNodes plans the partition directory dir on ranks ranks, perNode to
// a node, every pattern, counting a model of layers layers at row
// width width: inter-node rows at wire format f, intra-node ones at intra.
func ReportNodes(dir string, parts, ranks, perNode, layers, width int, f, intra quant.Wire) (*NodeReport, error) {
	t0 := time.Now()
	nodes := comm.BlockNodes(ranks, perNode)
	nv, err := NodeVolumesOf(ranks, nodes, func(r int) (*partition.Shard, error) { return partition.Load(dir, r, ranks) })
	if err != nil {
		return nil, err
	}
	rep := &NodeReport{Dir: dir, Parts: parts, Ranks: ranks, RanksPerNode: perNode, Nodes: nv.Nodes, Layers: layers,
		Width: width, Bits: f.Bits, IntraBits: intra.Bits}
	if !f.Exact() || !intra.Exact() {
		rep.QuantParams = f.Params.String()
	}
	level := func(v *ExchangeVolume) NodeLevel {
		r := NodeLevel{InterRows: v.InterRows(), IntraRows: v.IntraRows(),
			InterMessages: len(v.Inter), IntraMessages: len(v.Gather) + len(v.Scatter)}
		sent, recv := make([]int64, nv.Nodes), make([]int64, nv.Nodes)
		for _, m := range v.Inter {
			r.InterBytes += f.Bytes(m.Rows, width)
			sent[nv.Node[m.From]] += m.Rows
			recv[nv.Node[m.To]] += m.Rows
		}
		for _, m := range append(slices.Clone(v.Gather), v.Scatter...) {
			r.IntraBytes += intra.Bytes(m.Rows, width)
		}
		r.MessagesPerEpoch = (r.InterMessages + r.IntraMessages) * 2 * layers
		r.NodeSentRows, r.NodeRecvRows = SpreadOf(sent), SpreadOf(recv)
		return r
	}
	rep.Exchange = map[string]NodeLevel{}
	for name, v := range nv.Exchange {
		rep.Exchange[name] = level(v)
	}
	rep.Seconds = time.Since(t0).Seconds()
	return rep, nil
}
