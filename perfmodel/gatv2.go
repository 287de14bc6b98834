package perfmodel

import "github.com/supergcn/supergcn/exchange"

// GATv2's attention (nn.CostStep.TargetRows) differs from GAT's in two
// ways the walk charges:
//
//   - its scores are a pass over every edge's Heads·Width values (GAT's
//     are one scalar a head), forward one more pass of the weighted
//     aggregation's size, backward two (the rows' pass adds the targets'
//     and the attention vector's gradients, the columns' pass recomputes
//     the slopes): attentionSeconds;
//   - a pre-aggregated row moves the target's row as well as the partial
//     state, each way: twice a post row (exchange/attention_v2_plan.go).
//     Post mode moves the pair's post rows, pre mode twice its pre rows,
//     hybrid min(post, 2 × Kőnig's cover), an estimate: the volumes hold
//     the pairs' three counts, not GATv2's refined cover, whose rows are
//     at most post's (and at most twice the cover with float32 rows). The
//     pre rows' float32 scalars are not charged.

// gatv2Stages is the flat exchange of a GATv2 attention (the attention
// plan is always flat).
func gatv2Stages(p *predictor) pattern {
	return flatStagesOf(p, func(c exchange.RowCounts) int64 { return gatv2Rows(c, p.cfg.Mode) })
}

// gatv2Rows is the rows a GATv2 attention moves each way for a pair of
// counts c in mode m (a pre row counting twice).
func gatv2Rows(c exchange.RowCounts, m exchange.Mode) int64 {
	switch m {
	case exchange.ModePost:
		return c.Post
	case exchange.ModePre:
		return 2 * c.Pre
	}
	return min(c.Post, 2*c.Hybrid)
}

// attentionSeconds is AttentionSeconds, with GATv2's score passes when
// target (see above).
func (r *Rates) attentionSeconds(target bool, edges int64, heads, width int, backward bool) (float64, bool) {
	s, ok := r.AttentionSeconds(edges, heads, width, backward)
	if !ok || !target || edges == 0 || width == 0 {
		return s, ok
	}
	passes := 1.0
	if backward {
		passes = 2
	}
	return s + passes*aggrSeconds(r.Attention.Aggr, edges*int64(heads), width/heads, backward), true
}

// gatv2Work is GAT's attention work wk turned into GATv2's: per edge and
// value the score's sum, LeakyReLU and product with the attention vector
// (3 flops forward; backward the targets' and the vector's gradients and
// the sources' recomputed term, 8), and the target rows read once (backward
// also their gradients written). The per-node scalar scores GAT reads are
// kept: a small overcount.
func gatv2Work(wk Work, g Graph, width int, backward bool) Work {
	ev, rows := values(g.Edges+g.Nodes, width), values(g.Nodes, width)
	if !backward {
		return Work{wk.Flops + 3*ev, wk.Bytes + 4*rows}
	}
	return Work{wk.Flops + 8*ev, wk.Bytes + 8*rows}
}
