package comm

import (
	"fmt"
	"slices"
)

// Nodes is the node layout of a communicator: which ranks share a node.
// Every rank computes the same layout.
type Nodes struct {
	Node  []int   // node index of every rank
	Ranks [][]int // the ranks of every node, ascending; nodes ordered by their lowest rank
	Local Comm    // this rank's node communicator (SplitShared), ranked as here
}

// NumNodes returns the number of nodes.
func (n *Nodes) NumNodes() int { return len(n.Ranks) }

// LocalIndex returns rank r's position among the ranks of its node.
func (n *Nodes) LocalIndex(r int) int {
	i, _ := slices.BinarySearch(n.Ranks[n.Node[r]], r)
	return i
}

// NodeLayout splits c by node (SplitShared) and tells every rank the node
// of every rank. Collective.
func NodeLayout(c Comm) (*Nodes, error) {
	local, err := c.SplitShared()
	if err != nil {
		return nil, fmt.Errorf("comm: node layout: %w", err)
	}
	// The lowest rank of each node names it: gather the node's ranks on the
	// node communicator, then every rank's leader on c.
	members := make([]int64, local.Size())
	members[local.Rank()] = int64(c.Rank())
	if err := local.AllreduceSumI64(members); err != nil {
		return nil, fmt.Errorf("comm: node layout: %w", err)
	}
	leader := make([]int64, c.Size())
	leader[c.Rank()] = slices.Min(members) + 1
	if err := c.AllreduceSumI64(leader); err != nil {
		return nil, fmt.Errorf("comm: node layout: %w", err)
	}
	return nodesFromLeaders(leader, local)
}

// nodesFromLeaders numbers the nodes by their leaders (lowest rank, +1).
func nodesFromLeaders(leader []int64, local Comm) (*Nodes, error) {
	n := &Nodes{Node: make([]int, len(leader)), Local: local}
	index := map[int64]int{}
	for r, l := range leader {
		if l < 1 || l > int64(r)+1 || leader[l-1] != l {
			return nil, fmt.Errorf("comm: node layout: rank %d reports node leader %d", r, l-1)
		}
		i, ok := index[l]
		if !ok {
			i = len(n.Ranks)
			index[l] = i
			n.Ranks = append(n.Ranks, nil)
		}
		n.Node[r] = i
		n.Ranks[i] = append(n.Ranks[i], r)
	}
	return n, nil
}

// BlockNodes returns the layout of ranks ranks placed perNode to a node in
// rank order (mpirun's default by-slot mapping), without a communicator:
// for planning and statistics. perNode < 1 means one node.
func BlockNodes(ranks, perNode int) *Nodes {
	if perNode < 1 {
		perNode = max(ranks, 1)
	}
	leader := make([]int64, ranks)
	for r := range leader {
		leader[r] = int64(r/perNode*perNode) + 1
	}
	n, _ := nodesFromLeaders(leader, nil)
	return n
}
