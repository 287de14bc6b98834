package main

import (
	"fmt"
	"io"

	"github.com/supergcn/supergcn/exchange"
)

// printNodeStats prints `supergcn stats --ranks-per-node K`: the exchange
// patterns compared.
func printNodeStats(w io.Writer, r *exchange.NodeReport) {
	f, intra := r.Wires()
	fmt.Fprintf(w, "%s: %d parts on %d ranks, %d nodes of %d ranks; one layer, one direction; inter-node bytes at %s, intra-node at %s, width %d; planned in %.2fs\n\n",
		r.Dir, r.Parts, r.Ranks, r.Nodes, r.RanksPerNode, f, intra, r.Width, r.Seconds)
	fmt.Fprintf(w, "%-16s %12s %12s %9s %12s %9s %12s   %-24s %s\n", "exchange", "inter rows", "inter bytes", "inter msg",
		"intra rows", "intra msg", "msg/epoch", "node sent rows min/avg/max", "node recv rows min/avg/max")
	for _, name := range exchange.Exchanges() {
		l := r.Exchange[name]
		fmt.Fprintf(w, "%-16s %12d %12s %9d %12d %9d %12d   %-26s %s\n", name, l.InterRows, humanBytes(l.InterBytes),
			l.InterMessages, l.IntraRows, l.IntraMessages, l.MessagesPerEpoch,
			fmt.Sprintf("%d/%.0f/%d", l.NodeSentRows.Min, l.NodeSentRows.Avg, l.NodeSentRows.Max),
			fmt.Sprintf("%d/%.0f/%d", l.NodeRecvRows.Min, l.NodeRecvRows.Avg, l.NodeRecvRows.Max))
	}
	flat, tl := r.Exchange[exchange.ExchangeFlat], r.Exchange[exchange.ExchangeTwoLevel]
	if tl.InterRows > 0 {
		fmt.Fprintf(w, "\ntwo-level sends %.1f%% of flat's inter-node rows (%.2fx fewer), %.1f%% of its inter-node bytes\n",
			100*float64(tl.InterRows)/float64(flat.InterRows), float64(flat.InterRows)/float64(tl.InterRows),
			100*float64(tl.InterBytes)/float64(flat.InterBytes))
	}
}
