package measure

import (
	"errors"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// TestAlltoall: every rank of a group returns the same positive link; one
// rank is ErrAlltoallRanks.
func TestAlltoall(t *testing.T) {
	if _, err := Alltoall(comm.Single(), 10, 4, 1); !errors.Is(err, ErrAlltoallRanks) {
		t.Errorf("one rank: %v", err)
	}
	cs := comm.NewGroup(3)
	res := make([]AlltoallResult, len(cs))
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); res[i], errs[i] = Alltoall(c, 200, 8, 2) }()
	}
	wg.Wait()
	for i := range cs {
		if errs[i] != nil || res[i] != res[0] || !(res[i].Link.GBs > 0) || res[i].Ranks != 3 {
			t.Errorf("rank %d: %+v, %v; rank 0 %+v", i, res[i], errs[i], res[0])
		}
	}
}

// TestOrders: every order at every width, the given order's gain 1.
func TestOrders(t *testing.T) {
	spec, err := graph.ParseGenSpec("nodes=2000,degree=8,classes=3,feat=0")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graph.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1)
	eng, err := aggr.New(1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	orders := partition.NodeOrders()
	rs, err := Orders(s, orders, []int{4, 9}, eng, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2*len(orders) {
		t.Fatalf("%d results, want %d", len(rs), 2*len(orders))
	}
	for i, r := range rs {
		if r.Order != orders[i%len(orders)] || r.Width != []int{4, 9}[i/len(orders)] || r.Edges != s.Local.NNZ() || !(r.FwdMS > 0) {
			t.Errorf("result %d: %+v", i, r)
		}
		if r.Order == partition.OrderGiven && (r.FwdGain != 1 || r.BwdGain != 1) {
			t.Errorf("given order's gain %v, %v", r.FwdGain, r.BwdGain)
		}
	}
}

func TestSynthEdges(t *testing.T) {
	n := 1000
	for _, kind := range []string{"random", "powerlaw"} {
		src, dst, err := SynthEdges(kind, n, 50000, 3)
		if err != nil {
			t.Fatal(err)
		}
		deg := make([]int, n)
		for e := range src {
			if src[e] < 0 || int(src[e]) >= n || dst[e] < 0 || int(dst[e]) >= n {
				t.Fatalf("%s: edge %d: %d→%d out of range", kind, e, src[e], dst[e])
			}
			deg[dst[e]]++
		}
		maxd := 0
		for _, d := range deg {
			maxd = max(maxd, d)
		}
		// mean in-degree 50: uniform stays near it, power-law has a hub of ≈ 50000/n^(1/3) = 5000
		if kind == "random" && maxd > 150 || kind == "powerlaw" && maxd < 1000 {
			t.Fatalf("%s: max in-degree %d", kind, maxd)
		}
	}
}
