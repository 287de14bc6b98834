package exchange

import (
	"fmt"
	"maps"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// Message is the rows one rank sends another in one exchange (one layer,
// one direction; the backward pass sends the same rows the other way).
type Message struct {
	From int   `json:"from"`
	To   int   `json:"to"`
	Rows int64 `json:"rows"`
}

// ExchangeVolume is what one exchange moves under one plan, by stage. Flat:
// every ordered rank pair with cut edges is one message of its hybrid rows,
// in Inter when the ranks are on different nodes, in Gather when on the
// same node; Scatter is empty. Two-level: Gather holds the intra-node
// messages before the inter-node stage (the same-node pairs' hybrid rows
// plus the partial sums sent to the rank that reduces them), Inter the
// inter-node stage (one row per cover vertex of each node pair), Scatter
// the intra-node forwarding of post rows after it. Messages are sorted by
// (From, To); no message has zero rows.
type ExchangeVolume struct {
	Inter   []Message `json:"inter"`
	Gather  []Message `json:"gather"`
	Scatter []Message `json:"scatter"`
}

// InterRows sums the rows that cross between nodes.
func (v *ExchangeVolume) InterRows() int64 { return sumRows(v.Inter) }

// IntraRows sums the rows moved between ranks of the same node.
func (v *ExchangeVolume) IntraRows() int64 { return sumRows(v.Gather) + sumRows(v.Scatter) }

func sumRows(ms []Message) int64 {
	var t int64
	for _, m := range ms {
		t += m.Rows
	}
	return t
}

// NodeVolumes compares the exchange patterns of one partition on one node
// layout. Its JSON holds each pattern's ExchangeVolume under the
// pattern's key (PatternInfo.Key).
type NodeVolumes struct {
	Ranks int   `json:"ranks"`
	Node  []int `json:"node"` // node index of every rank
	Nodes int   `json:"nodes"`
	// Exchange is each pattern's volume, by name (Exchanges).
	Exchange map[string]*ExchangeVolume `json:"-"`
}

type plainNodeVolumes NodeVolumes

// MarshalJSON writes the patterns' volumes under their keys.
func (nv *NodeVolumes) MarshalJSON() ([]byte, error) {
	return marshalByPattern((*plainNodeVolumes)(nv), nv.Exchange)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (nv *NodeVolumes) UnmarshalJSON(b []byte) (err error) {
	nv.Exchange, err = unmarshalByPattern[*ExchangeVolume](b, (*plainNodeVolumes)(nv))
	return err
}

// nodeCuts are a partition's cut edges on a node layout, as the patterns'
// volumes read them: flat[(q, r)] the hybrid rows rank q sends rank r,
// gather those of the pairs inside one node, pairs[B][A] the cut edges
// from node A into node B in (destination rank, shard edge) order.
type nodeCuts struct {
	flat, gather map[[2]int]int64
	pairs        [][][]CutEdge
}

// NodeVolumesOf plans every pattern (flat: SplitShard, hybrid; staged:
// PlanNodePair per ordered node pair) of the shards of ranks ranks laid
// out on nodes, loading each shard once through load. Only the cut edges
// are kept in memory.
func NodeVolumesOf(ranks int, nodes *comm.Nodes, load func(rank int) (*partition.Shard, error)) (*NodeVolumes, error) {
	if len(nodes.Node) != ranks {
		return nil, fmt.Errorf("exchange: node layout has %d ranks, want %d", len(nodes.Node), ranks)
	}
	nv := &NodeVolumes{Ranks: ranks, Node: slices.Clone(nodes.Node), Nodes: nodes.NumNodes(), Exchange: map[string]*ExchangeVolume{}}
	cuts, err := nodeCutsOf(ranks, nodes, load)
	if err != nil {
		return nil, err
	}
	for _, p := range patterns {
		v := p.volumes(cuts, nodes)
		nv.Exchange[p.name] = &v
	}
	return nv, nil
}

// nodeCutsOf collects the cut edges of the ranks' shards on nodes.
func nodeCutsOf(ranks int, nodes *comm.Nodes, load func(rank int) (*partition.Shard, error)) (*nodeCuts, error) {
	nc := &nodeCuts{flat: map[[2]int]int64{}, gather: map[[2]int]int64{}, pairs: make([][][]CutEdge, nodes.NumNodes())}
	for b := range nc.pairs {
		nc.pairs[b] = make([][]CutEdge, nodes.NumNodes())
	}
	for r := 0; r < ranks; r++ {
		s, err := load(r)
		if err != nil {
			return nil, err
		}
		if s.Rank != r || s.Ranks != ranks {
			return nil, fmt.Errorf("exchange: shard of rank %d says rank %d of %d", r, s.Rank, s.Ranks)
		}
		cuts, err := GroupCuts(s)
		if err != nil {
			return nil, err
		}
		nb := nodes.Node[r]
		for q := range cuts.Src {
			if len(cuts.Src[q]) == 0 {
				continue
			}
			sp := SplitCut(cuts.Src[q], cuts.Dst[q], ModeHybrid)
			nc.flat[[2]int{q, r}] += sp.Counts.Hybrid
			na := nodes.Node[q]
			if na == nb {
				nc.gather[[2]int{q, r}] += sp.Counts.Hybrid
				continue
			}
			for k, u := range cuts.Src[q] {
				nc.pairs[nb][na] = append(nc.pairs[nb][na], CutEdge{Src: u, Dst: s.Global[cuts.Dst[q][k]], SrcRank: int32(q), DstRank: int32(r)})
			}
		}
	}
	return nc, nil
}

// flatVolumes is the flat exchange's volume: every rank pair's hybrid
// rows, in Inter between nodes, in Gather inside one.
func flatVolumes(cuts *nodeCuts, nodes *comm.Nodes) ExchangeVolume {
	var v ExchangeVolume
	for key, rows := range cuts.flat {
		m := Message{From: key[0], To: key[1], Rows: rows}
		if nodes.Node[key[0]] == nodes.Node[key[1]] {
			v.Gather = append(v.Gather, m)
		} else {
			v.Inter = append(v.Inter, m)
		}
	}
	sortMessages(v.Inter)
	sortMessages(v.Gather)
	return v
}

// twoLevelVolumes is the two-level exchange's volume (paired:
// NodePairOptions.Paired), planned per ordered node pair.
func twoLevelVolumes(paired bool) func(cuts *nodeCuts, nodes *comm.Nodes) ExchangeVolume {
	return func(cuts *nodeCuts, nodes *comm.Nodes) ExchangeVolume {
		inter := map[[2]int]int64{}
		scatter := map[[2]int]int64{}
		gat := maps.Clone(cuts.gather)
		for nb := range cuts.pairs {
			for _, edges := range cuts.pairs[nb] {
				if len(edges) == 0 {
					continue
				}
				pl := PlanNodePairWith(edges, nodes, NodePairOptions{Paired: paired})
				for i := range pl.Post {
					inter[[2]int{int(pl.PostFrom[i]), int(pl.PostTo[i])}]++
					for _, f := range pl.PostNeed[i] {
						scatter[[2]int{int(pl.PostTo[i]), int(f)}]++
					}
				}
				for i := range pl.Pre {
					inter[[2]int{int(pl.PreFrom[i]), int(pl.PreTo[i])}]++
					for _, c := range pl.PreContr[i] {
						if c.Rank != pl.PreFrom[i] {
							gat[[2]int{int(c.Rank), int(pl.PreFrom[i])}]++
						}
					}
				}
			}
		}
		return ExchangeVolume{Inter: messages(inter), Gather: messages(gat), Scatter: messages(scatter)}
	}
}

func messages(m map[[2]int]int64) []Message {
	ms := make([]Message, 0, len(m))
	for k, rows := range m {
		ms = append(ms, Message{From: k[0], To: k[1], Rows: rows})
	}
	sortMessages(ms)
	return ms
}

func sortMessages(ms []Message) {
	slices.SortFunc(ms, func(a, b Message) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return a.To - b.To
	})
}
