package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// nodeStatsReport is `supergcn stats --ranks-per-node K`: the flat and the
// two-level exchange of one layer, one direction, compared on the network
// (inter-node rows, bytes at the wire format, messages) and inside nodes.
type nodeStatsReport struct {
	Dir          string          `json:"dir"`
	Parts        int             `json:"parts"`
	Ranks        int             `json:"ranks"`
	RanksPerNode int             `json:"ranks_per_node"`
	Nodes        int             `json:"nodes"`
	Layers       int             `json:"layers"`
	Width        int             `json:"width"`
	Bits         int             `json:"bits"`
	QuantParams  string          `json:"quant_params,omitempty"`
	IntraBits    int             `json:"intra_bits"` // rows between ranks of one node, both exchanges
	Flat         nodeLevelReport `json:"flat"`
	TwoLevel     nodeLevelReport `json:"two_level"`
	Paired       nodeLevelReport `json:"two_level_paired"`
	Seconds      float64         `json:"seconds"`
}

// nodeLevelReport is one plan's volume. Inter-node bytes are at the wire
// format (--bits), intra-node bytes at --intra-bits (one message per rank
// pair), as train sends them in either exchange.
type nodeLevelReport struct {
	InterRows        int64  `json:"inter_rows"`
	InterBytes       int64  `json:"inter_bytes"`
	InterMessages    int    `json:"inter_messages"`
	IntraRows        int64  `json:"intra_rows"`
	IntraBytes       int64  `json:"intra_bytes"`
	IntraMessages    int    `json:"intra_messages"`
	MessagesPerEpoch int    `json:"messages_per_epoch"` // (inter + intra) × 2 directions × layers
	NodeSentRows     spread `json:"node_sent_rows"`     // inter-node rows sent per node
	NodeRecvRows     spread `json:"node_recv_rows"`     // inter-node rows received per node
}

func nodeStats(dir string, parts, ranks, perNode, layers, width int, f, intra quant.Wire) (*nodeStatsReport, error) {
	t0 := time.Now()
	nodes := comm.BlockNodes(ranks, perNode)
	nv, err := exchange.NodeVolumesOf(ranks, nodes, func(r int) (*partition.Shard, error) { return partition.Load(dir, r, ranks) })
	if err != nil {
		return nil, err
	}
	rep := &nodeStatsReport{Dir: dir, Parts: parts, Ranks: ranks, RanksPerNode: perNode, Nodes: nv.Nodes, Layers: layers,
		Width: width, Bits: f.Bits, IntraBits: intra.Bits}
	if !f.Exact() || !intra.Exact() {
		rep.QuantParams = f.Params.String()
	}
	level := func(v *exchange.ExchangeVolume) nodeLevelReport {
		r := nodeLevelReport{InterRows: v.InterRows(), IntraRows: v.IntraRows(),
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
		r.NodeSentRows, r.NodeRecvRows = spreadOf(sent), spreadOf(recv)
		return r
	}
	rep.Flat, rep.TwoLevel, rep.Paired = level(&nv.Flat), level(&nv.TwoLevel), level(&nv.Paired)
	rep.Seconds = time.Since(t0).Seconds()
	return rep, nil
}

func spreadOf(a []int64) spread {
	s := spread{Min: a[0], Max: a[0]}
	var sum int64
	for _, v := range a {
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
		sum += v
	}
	s.Avg = float64(sum) / float64(len(a))
	return s
}

func printNodeStats(w io.Writer, r *nodeStatsReport) {
	f := wireOf(r.Bits, r.QuantParams)
	fmt.Fprintf(w, "%s: %d parts on %d ranks, %d nodes of %d ranks; one layer, one direction; inter-node bytes at %s, intra-node at %s, width %d; planned in %.2fs\n\n",
		r.Dir, r.Parts, r.Ranks, r.Nodes, r.RanksPerNode, f, wireOf(r.IntraBits, r.QuantParams), r.Width, r.Seconds)
	fmt.Fprintf(w, "%-16s %12s %12s %9s %12s %9s %12s   %-24s %s\n", "exchange", "inter rows", "inter bytes", "inter msg",
		"intra rows", "intra msg", "msg/epoch", "node sent rows min/avg/max", "node recv rows min/avg/max")
	for _, l := range []struct {
		name string
		r    nodeLevelReport
	}{{"flat", r.Flat}, {"two-level", r.TwoLevel}, {"two-level-paired", r.Paired}} {
		fmt.Fprintf(w, "%-16s %12d %12s %9d %12d %9d %12d   %-26s %s\n", l.name, l.r.InterRows, humanBytes(l.r.InterBytes),
			l.r.InterMessages, l.r.IntraRows, l.r.IntraMessages, l.r.MessagesPerEpoch,
			fmt.Sprintf("%d/%.0f/%d", l.r.NodeSentRows.Min, l.r.NodeSentRows.Avg, l.r.NodeSentRows.Max),
			fmt.Sprintf("%d/%.0f/%d", l.r.NodeRecvRows.Min, l.r.NodeRecvRows.Avg, l.r.NodeRecvRows.Max))
	}
	if r.TwoLevel.InterRows > 0 {
		fmt.Fprintf(w, "\ntwo-level sends %.1f%% of flat's inter-node rows (%.2fx fewer), %.1f%% of its inter-node bytes\n",
			100*float64(r.TwoLevel.InterRows)/float64(r.Flat.InterRows), float64(r.Flat.InterRows)/float64(r.TwoLevel.InterRows),
			100*float64(r.TwoLevel.InterBytes)/float64(r.Flat.InterBytes))
	}
}
