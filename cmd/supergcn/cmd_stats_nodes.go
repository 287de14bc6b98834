package main

import (
	"fmt"
	"io"

	"github.com/supergcn/supergcn/exchange"
)

// printNodeStats prints `supergcn stats --ranks-per-node K`: the flat and
// the two-level exchanges compared.
func printNodeStats(w io.Writer, r *exchange.NodeReport) {
	f, intra := r.Wires()
	fmt.Fprintf(w, "%s: %d parts on %d ranks, %d nodes of %d ranks; one layer, one direction; inter-node bytes at %s, intra-node at %s, width %d; planned in %.2fs\n\n",
		r.Dir, r.Parts, r.Ranks, r.Nodes, r.RanksPerNode, f, intra, r.Width, r.Seconds)
	fmt.Fprintf(w, "%-16s %12s %12s %9s %12s %9s %12s   %-24s %s\n", "exchange", "inter rows", "inter bytes", "inter msg",
		"intra rows", "intra msg", "msg/epoch", "node sent rows min/avg/max", "node recv rows min/avg/max")
	for _, l := range []struct {
		name string
		r    exchange.NodeLevel
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
