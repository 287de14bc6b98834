package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/partition"
)

const spec = "nodes=400,degree=6,classes=4,feat=8,seed=3"

// edgeList writes a ring of n nodes, each edge given once (and once more
// as a duplicate), with weights when weighted.
func edgeList(t *testing.T, n int, weighted bool) string {
	var b strings.Builder
	for v := range n {
		for range 2 {
			if weighted {
				fmt.Fprintf(&b, "%d %d 0.5\n", v, (v+1)%n)
			} else {
				fmt.Fprintf(&b, "%d %d\n", v, (v+1)%n)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "ring.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadCleans(t *testing.T) {
	s := Source{Data: edgeList(t, 10, false), Undirected: true, Dedup: true, SynthFeat: 4, SynthClasses: 2, Seed: 1}
	var log bytes.Buffer
	ds, err := s.Load(&log)
	if err != nil {
		t.Fatal(err)
	}
	// 10 directed edges, each twice: deduplicated and symmetrised, 20 arcs.
	if ds.NumNodes() != 10 || ds.Graph.NNZ() != 20 || ds.FeatDim != 4 || ds.NumClasses != 2 {
		t.Errorf("%d nodes, %d arcs, %d features, %d classes; want 10, 20, 4, 2", ds.NumNodes(), ds.Graph.NNZ(), ds.FeatDim, ds.NumClasses)
	}
	if !strings.Contains(log.String(), "10 nodes, 20 edges, 4 features, 2 classes") {
		t.Errorf("log %q", log.String())
	}
	s.Undirected, s.Dedup, s.SynthFeat = false, false, 0
	if ds, err = s.Load(nil); err != nil || ds.Graph.NNZ() != 20 || ds.FeatDim != 0 {
		t.Errorf("uncleaned: %v, %d arcs (want the 20 given)", err, ds.Graph.NNZ())
	}
}

// Refusals another setting fixes are ErrSettings and name the inputs as
// Source spells them.
func TestRefusals(t *testing.T) {
	weighted := edgeList(t, 6, true)
	s := Source{Data: weighted, Undirected: true, Dedup: true}
	var log bytes.Buffer
	if ds, err := s.Load(&log); err != nil || ds.Graph.Val == nil || !strings.Contains(log.String(), "weighted edges") {
		t.Errorf("weights: %v, %q", err, log.String())
	}
	s.IgnoreWeights = true
	log.Reset()
	if ds, err := s.Load(&log); err != nil || ds.Graph.Val != nil || !strings.Contains(log.String(), "edge weights ignored") {
		t.Errorf("ignored weights: %v, %q", err, log.String())
	}
	g := Source{Synthetic: spec, SynthFeat: 4, SynthClasses: 2}
	_, err := g.Load(nil)
	var fe *field.Error
	if !errors.Is(err, ErrSettings) || !errors.As(err, &fe) || fe.Field != "dataset.Source.SynthFeat" {
		t.Errorf("features on a featured graph: %v", err)
	}
	if _, err := (&Source{Synthetic: "nodes=x"}).Load(nil); !errors.As(err, &fe) || fe.Field != "dataset.Source.Synthetic" || errors.Is(err, ErrSettings) {
		t.Errorf("bad spec: %v", err)
	}
	for _, c := range []Source{{Dedup: true}, {Undirected: true}, {Undirected: true, Dedup: true, SynthFeat: 1}} {
		if err := c.CheckDistributed(); !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "distributed reader") {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if err := (&Source{Undirected: true, Dedup: true}).CheckDistributed(); err != nil {
		t.Errorf("default cleaning: %v", err)
	}
}

// shards runs Shard on p goroutine ranks and returns their shards.
func shards(t *testing.T, s Source, p int) []*partition.Shard {
	t.Helper()
	out := make([]*partition.Shard, p)
	var mu sync.Mutex
	err := comm.RunGroup(p, func(c comm.Comm) error {
		sh, err := s.Shard(c, nil, nil)
		mu.Lock()
		out[c.Rank()] = sh
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// owned returns how many nodes the shards own, checking none twice.
func owned(t *testing.T, ss []*partition.Shard) int {
	seen := map[int64]bool{}
	for _, s := range ss {
		for _, g := range s.Global {
			if seen[int64(g)] {
				t.Fatalf("node %d owned twice", g)
			}
			seen[int64(g)] = true
		}
	}
	return len(seen)
}

// Every path to a shard (in memory, distributed, a partition directory)
// gives every node to exactly one rank.
func TestShard(t *testing.T) {
	gen := Source{Synthetic: spec, PartMethod: "random", Seed: 2}
	if n := owned(t, shards(t, gen, 3)); n != 400 {
		t.Errorf("in memory: %d nodes owned, want 400", n)
	}
	ring := Source{Data: edgeList(t, 50, false), Undirected: true, Dedup: true, PartMethod: "random", Seed: 2}
	if ring.Distributed(comm.Single()) || !ring.Distributed(comm.NewGroup(2)[0]) {
		t.Error("Distributed: want only with several ranks")
	}
	if n := owned(t, shards(t, ring, 2)); n != 50 {
		t.Errorf("distributed: %d nodes owned, want 50", n)
	}
	ds, err := gen.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "parts")
	owner := make([]int32, ds.NumNodes())
	for v := range owner {
		owner[v] = int32(v % 2)
	}
	if err := partition.Write(dir, ds, owner, 2, partition.MetaInfo{Method: "test"}); err != nil {
		t.Fatal(err)
	}
	if n := owned(t, shards(t, Source{Partitions: dir}, 2)); n != 400 {
		t.Errorf("partition directory: %d nodes owned, want 400", n)
	}
	pm := Source{Synthetic: spec, PartMethod: "parmetis"}
	if err := comm.RunGroup(2, func(c comm.Comm) error { _, err := pm.Shard(c, nil, nil); return err }); !errors.Is(err, ErrSettings) {
		t.Errorf("parmetis without MPI: %v", err)
	}
}

// Write and WriteDist write a partition directory with every node in one
// part; more parts than nodes are refused as dataset.Partitioning.Parts.
func TestPartitioning(t *testing.T) {
	ring := edgeList(t, 60, false)
	for _, distributed := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "parts")
		p := Partitioning{Source: Source{Data: ring, Undirected: true, Dedup: true, PartMethod: "random", PartWeights: "degree", Seed: 1},
			Parts: 4, LDGRounds: 4, LDGPasses: 1, Out: out}
		ranks := 1
		write := p.Write
		if distributed {
			ranks, write = 2, p.WriteDist
		}
		started := make([]bool, ranks)
		err := comm.RunGroup(ranks, func(c comm.Comm) error {
			t0, err := write(c, nil, nil)
			started[c.Rank()] = !t0.IsZero()
			return err
		})
		if err != nil {
			t.Fatalf("distributed %v: %v", distributed, err)
		}
		if !started[0] || (ranks > 1 && started[1]) {
			t.Errorf("distributed %v: write start times %v, want rank 0's only", distributed, started)
		}
		m, err := partition.ReadMeta(out)
		if err != nil || m.Parts != 4 || m.NumNodes != 60 || m.Source != ring || m.Weights != "none" {
			t.Fatalf("distributed %v: %v, %+v", distributed, err, m)
		}
		shs := shards(t, Source{Partitions: out}, 2)
		if n := owned(t, shs); n != 60 {
			t.Errorf("distributed %v: %d nodes owned, want 60", distributed, n)
		}
		p.Parts, p.Out = 61, filepath.Join(t.TempDir(), "too-many")
		_, err = write(comm.Single(), nil, nil)
		var fe *field.Error
		if !errors.Is(err, ErrSettings) || !errors.As(err, &fe) || fe.Field != "dataset.Partitioning.Parts" {
			t.Errorf("distributed %v: 61 parts of 60 nodes: %v", distributed, err)
		}
	}
}

// Validate refuses each bad setting as ErrSettings naming its field.
func TestValidate(t *testing.T) {
	ok := Source{PartWeights: "degree", SynthClasses: 8, FeatNorm: "none"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(s *Source){
		"dataset.Source.PartWeights":  func(s *Source) { s.PartWeights = "edges" },
		"dataset.Source.SynthClasses": func(s *Source) { s.SynthClasses = 0 },
		"dataset.Source.Partitions":   func(s *Source) { s.Data, s.Partitions = "a", "b" },
		"dataset.Source.Synthetic:":   func(s *Source) { s.Synthetic = "nodes=-1" },
		"dataset.Source.FeatNorm":     func(s *Source) { s.FeatNorm = "l2" },
	} {
		s := ok
		spoil(&s)
		if err := s.Validate(); !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Conversion cleans in its order and writes the binary format or .npz,
// which load back as written.
func TestConversion(t *testing.T) {
	ring := edgeList(t, 12, false)
	for _, out := range []string{"ring.sgb", "ring.npz"} {
		c := Conversion{Data: ring, Dedup: true, Symmetrize: true, SynthFeat: 3, Classes: 2, Seed: 1, Out: filepath.Join(t.TempDir(), out)}
		ds, _, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		nnz := ds.Graph.NNZ()
		ds.Release()
		back, err := graph.Load(c.Out, graph.LoadOptions{})
		if err != nil || nnz != 24 || back.Graph.NNZ() != 24 || back.FeatDim != 3 || back.NumClasses != 2 {
			t.Errorf("%s: %v, %d arcs written, read back %+v", out, err, nnz, back)
		}
	}
	bad := Conversion{Data: ring, SynthFeat: 3, Classes: 0, Out: filepath.Join(t.TempDir(), "x.sgb")}
	var fe *field.Error
	if _, _, err := bad.Run(); !errors.As(err, &fe) || fe.Field != "dataset.Conversion.SynthFeat" {
		t.Errorf("0 classes: %v", err)
	}
}
