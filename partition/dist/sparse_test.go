package dist

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/partition"
)

// bowDataset generates a bag-of-words graph (sparse features).
func bowDataset(t *testing.T, nodes int) *graph.Dataset {
	t.Helper()
	spec, err := graph.ParseGenSpec(fmt.Sprintf("nodes=%d,degree=8,classes=4,feat=300,words=0.02,seed=3", nodes))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graph.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	if graph.SparseMatrix(ds.Features) == nil {
		t.Fatal("the generated features are not sparse")
	}
	return ds
}

// TestSparseDistMatchesSerial: sparse features read distributed — a .sgb
// (flag 8), a PyG-style .npz stored and deflated, and an edge list with
// scipy csr, csc and coo archives, stored and deflated, for --features —
// and written on 1, 2 and 3 ranks give the serial path's partition
// directory byte for byte (sparse part files).
func TestSparseDistMatchesSerial(t *testing.T) {
	ds := bowDataset(t, 400)
	tmp := t.TempDir()
	info := partition.MetaInfo{Method: "random"}
	el := filepath.Join(tmp, "g.txt")
	writeEdgeList(t, el, ds.Graph)
	type input struct{ name, path, features string }
	var inputs []input
	sgb := filepath.Join(tmp, "d.sgb")
	if err := graph.WriteBinary(sgb, ds); err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, input{"sgb", sgb, ""})
	for _, z := range []bool{false, true} {
		p := filepath.Join(tmp, fmt.Sprintf("pyg-%v.npz", z))
		if err := graph.WriteNpzDataset(p, ds, false, z); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{"pyg " + fmt.Sprint(z), p, ""})
		for _, f := range []string{"csr", "csc", "coo"} {
			x := filepath.Join(tmp, fmt.Sprintf("x-%s-%v.npz", f, z))
			if err := graph.WriteSparseNpzAs(x, graph.SparseMatrix(ds.Features), f, z); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, input{f + " " + fmt.Sprint(z), el, x})
		}
	}
	for _, in := range inputs {
		ser := filepath.Join(tmp, in.name+"-serial")
		sds, err := graph.Load(in.path, graph.LoadOptions{Features: in.features})
		if err != nil {
			t.Fatal(err)
		}
		if graph.SparseMatrix(sds.Features) == nil {
			t.Fatalf("%s: serial load is not sparse", in.name)
		}
		sds.Graph = graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(sds.Graph)))
		if err := partition.Write(ser, sds, partition.Random(sds.NumNodes(), 6, 5), 6, info); err != nil {
			t.Fatal(err)
		}
		for _, ranks := range []int{1, 2, 3} {
			out := filepath.Join(tmp, fmt.Sprintf("%s-dist%d", in.name, ranks))
			var log bytes.Buffer
			err := comm.RunGroup(ranks, func(c comm.Comm) error {
				src := Source{Path: in.path, Features: in.features, RoundBytes: 4096}
				if c.Rank() == 0 {
					src.Progress = &progress.Reporter{W: &log, Interval: time.Hour}
				}
				g, err := Read(c, src)
				if err != nil {
					return err
				}
				if graph.SparseMatrix(g.Features) == nil || graph.DenseData(g.Features) != nil || graph.SparseMatrix(g.Features).NumRows != g.Hi-g.Lo {
					return fmt.Errorf("rank %d: features not sparse rows of its block", c.Rank())
				}
				return Write(c, out, g, RandomOwners(g, 6, 5), 6, WriteOptions{Info: info, RoundBytes: 4096})
			})
			if err != nil {
				t.Fatalf("%s on %d ranks: %v", in.name, ranks, err)
			}
			sameDirs(t, ser, out)
			// A deflated, csc or coo archive is read through by every rank: one notice says so.
			through := strings.Contains(in.name, "true") || strings.HasPrefix(in.name, "csc") || strings.HasPrefix(in.name, "coo")
			if n := strings.Count(log.String(), "every rank reads the whole archive through"); (n == 1) != (through && ranks > 1) || n > 1 {
				t.Fatalf("%s on %d ranks: %d notices of a read-through archive:\n%s", in.name, ranks, n, log.String())
			}
		}
	}
}

// TestSparseDistRankHoldsItsRows: a rank of the distributed reader holds
// the non-zeros of its own rows only (those of the serial matrix's rows
// [Lo, Hi)), and after Shard those of the nodes it owns, for a .sgb and a
// stored csr archive.
func TestSparseDistRankHoldsItsRows(t *testing.T) {
	ds := bowDataset(t, 500)
	tmp := t.TempDir()
	sgb := filepath.Join(tmp, "d.sgb")
	if err := graph.WriteBinary(sgb, ds); err != nil {
		t.Fatal(err)
	}
	el := filepath.Join(tmp, "g.txt")
	writeEdgeList(t, el, ds.Graph)
	x := filepath.Join(tmp, "x.npz")
	if err := graph.WriteSparseNpz(x, graph.SparseMatrix(ds.Features), false); err != nil {
		t.Fatal(err)
	}
	for _, src := range []Source{{Path: sgb}, {Path: el, Features: x}} {
		const p = 4
		var mu sync.Mutex
		var read, owned int64
		err := comm.RunGroup(p, func(c comm.Comm) error {
			g, err := Read(c, src)
			if err != nil {
				return err
			}
			want := graph.SparseRows(graph.SparseMatrix(ds.Features), rangeIDs(g.Lo, g.Hi))
			if !slices.Equal(graph.SparseMatrix(g.Features).Ptr, want.Ptr) || !slices.Equal(graph.SparseMatrix(g.Features).Idx, want.Idx) || !slices.Equal(graph.SparseMatrix(g.Features).Val, want.Val) {
				return fmt.Errorf("rank %d: rows [%d,%d) differ from the matrix's", c.Rank(), g.Lo, g.Hi)
			}
			sh, err := Shard(c, g, RandomOwners(g, p, 9), 0)
			if err != nil {
				return err
			}
			ids := make([]int32, len(sh.Global))
			for i, v := range sh.Global {
				ids[i] = int32(v)
			}
			own := graph.SparseRows(graph.SparseMatrix(ds.Features), ids)
			if graph.DenseData(sh.Features) != nil || !slices.Equal(graph.SparseMatrix(sh.Features).Idx, own.Idx) || !slices.Equal(graph.SparseMatrix(sh.Features).Val, own.Val) {
				return fmt.Errorf("rank %d: the shard's features are not its nodes' sparse rows", c.Rank())
			}
			mu.Lock()
			read += graph.SparseMatrix(g.Features).NNZ()
			owned += graph.SparseMatrix(sh.Features).NNZ()
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", src.Path, err)
		}
		if read != graph.SparseMatrix(ds.Features).NNZ() || owned != graph.SparseMatrix(ds.Features).NNZ() {
			t.Fatalf("%s: ranks held %d non-zeros read and %d owned, the matrix has %d", src.Path, read, owned, graph.SparseMatrix(ds.Features).NNZ())
		}
	}
}

// rangeIDs is lo, lo+1, …, hi-1.
func rangeIDs(lo, hi int) []int32 {
	ids := make([]int32, hi-lo)
	for i := range ids {
		ids[i] = int32(lo + i)
	}
	return ids
}

// TestSparseDistErrors: a malformed sparse archive read distributed fails
// on every rank with one line naming the archive and member; a flipped
// value bit in a .sgb's sparse section fails its checksum.
func TestSparseDistErrors(t *testing.T) {
	ds := bowDataset(t, 300)
	tmp := t.TempDir()
	el := filepath.Join(tmp, "g.txt")
	writeEdgeList(t, el, ds.Graph)
	bad := *graph.SparseMatrix(ds.Features)
	bad.Idx = slices.Clone(graph.SparseMatrix(ds.Features).Idx)
	bad.Idx[len(bad.Idx)-1] = int32(ds.FeatDim) + 5 // outside the columns, in the last rank's rows
	x := filepath.Join(tmp, "bad.npz")
	if err := graph.WriteSparseNpz(x, &bad, false); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 3} {
		errs := make([]error, p)
		comm.RunGroup(p, func(c comm.Comm) error {
			_, errs[c.Rank()] = Read(c, Source{Path: el, Features: x})
			return nil
		})
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), x+":indices.npy") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%d ranks, rank %d: %v, want one line naming %s:indices.npy", p, r, err, x)
			}
		}
	}
	sgb := filepath.Join(tmp, "d.sgb")
	if err := graph.WriteBinary(sgb, ds); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sgb)
	if err != nil {
		t.Fatal(err)
	}
	// Four non-zero values: their bytes occur only among the section's values.
	row := container.AsBytes(graph.SparseMatrix(ds.Features).Val[len(graph.SparseMatrix(ds.Features).Val)/2 : len(graph.SparseMatrix(ds.Features).Val)/2+4])
	at := bytes.Index(b, row)
	if at < 0 {
		t.Fatal("values not found in the file")
	}
	b[at] ^= 0x01
	if err := os.WriteFile(sgb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 3} {
		errs := make([]error, p)
		comm.RunGroup(p, func(c comm.Comm) error {
			_, errs[c.Rank()] = Read(c, Source{Path: sgb})
			return nil
		})
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), sgb+": section x: checksum mismatch") {
				t.Errorf("%d ranks, rank %d: %v, want a checksum mismatch in section x", p, r, err)
			}
		}
	}
}
