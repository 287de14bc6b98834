package comm

import (
	"fmt"
	"slices"
	"testing"
)

func TestNodeLayoutGroup(t *testing.T) {
	for _, tc := range []struct{ p, perNode int }{{5, 2}, {4, 4}, {4, 1}, {6, 3}} {
		err := RunGroupNodes(tc.p, tc.perNode, func(c Comm) error {
			nl, err := NodeLayout(c)
			if err != nil {
				return err
			}
			want := BlockNodes(tc.p, tc.perNode)
			if !slices.Equal(nl.Node, want.Node) {
				return fmt.Errorf("nodes %v, want %v", nl.Node, want.Node)
			}
			me := nl.Node[c.Rank()]
			if nl.Local.Size() != len(nl.Ranks[me]) || nl.Local.Rank() != nl.LocalIndex(c.Rank()) {
				return fmt.Errorf("node comm rank %d of %d, want %d of %v", nl.Local.Rank(), nl.Local.Size(), nl.LocalIndex(c.Rank()), nl.Ranks[me])
			}
			// A collective on the node communicator sums over the node only.
			buf := []int64{int64(c.Rank())}
			if err := nl.Local.AllreduceSumI64(buf); err != nil {
				return err
			}
			sum := 0
			for _, r := range nl.Ranks[me] {
				sum += r
			}
			if buf[0] != int64(sum) {
				return fmt.Errorf("node sum %d, want %d", buf[0], sum)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("p=%d perNode=%d: %v", tc.p, tc.perNode, err)
		}
	}
}

func TestNodeLayoutRoundRobin(t *testing.T) {
	err := RunGroupLayout([]int{5, 7, 5, 7, 9}, func(c Comm) error {
		nl, err := NodeLayout(c)
		if err != nil {
			return err
		}
		if !slices.Equal(nl.Node, []int{0, 1, 0, 1, 2}) || !slices.Equal(nl.Ranks[1], []int{1, 3}) || nl.LocalIndex(3) != 1 {
			return fmt.Errorf("layout %v %v", nl.Node, nl.Ranks)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSplitGroup(t *testing.T) {
	err := RunGroup(5, func(c Comm) error {
		color := c.Rank() % 2
		if c.Rank() == 4 {
			color = -1
		}
		sub, err := c.Split(color, -c.Rank()) // reversed order
		if err != nil {
			return err
		}
		if c.Rank() == 4 {
			if sub != nil {
				return fmt.Errorf("negative color got a communicator")
			}
			return nil
		}
		// ranks {0,2} and {1,3}, ordered by descending parent rank
		if sub.Size() != 2 || sub.Rank() != 1-c.Rank()/2 {
			return fmt.Errorf("rank %d: sub rank %d of %d", c.Rank(), sub.Rank(), sub.Size())
		}
		send := []int64{int64(10 * c.Rank()), int64(10*c.Rank() + 1)}
		recv := make([]int64, 2)
		one, idx := []int{1, 1}, []int{0, 1}
		if err := sub.AlltoallvI64(send, one, idx, recv, one, idx); err != nil {
			return err
		}
		other := c.Rank() ^ 2
		if recv[1-sub.Rank()] != int64(10*other+sub.Rank()) {
			return fmt.Errorf("rank %d got %v", c.Rank(), recv)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNodeLayoutSingle(t *testing.T) {
	nl, err := NodeLayout(Single())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nl.Node, []int{0}) || nl.Local.Size() != 1 {
		t.Fatalf("layout %+v", nl)
	}
}
