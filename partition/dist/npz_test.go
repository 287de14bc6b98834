package dist

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// TestNpzDistMatchesSerial: the OGB npz layout and a PyG-style file, each
// stored and deflated, read on 1 and 3 ranks partition exactly as the
// serial loader's dataset.
func TestNpzDistMatchesSerial(t *testing.T) {
	ds := genDataset(t, 400)
	tmp := t.TempDir()
	info := partition.MetaInfo{Method: "random"}
	for _, c := range []struct {
		name          string
		ogb, compress bool
	}{{"ogb", true, false}, {"ogbz", true, true}, {"pyg.npz", false, false}, {"pygz.npz", false, true}} {
		p := filepath.Join(tmp, c.name)
		if err := graph.WriteNpzDataset(p, ds, c.ogb, c.compress); err != nil {
			t.Fatal(err)
		}
		ser := filepath.Join(tmp, c.name+"-serial")
		serialDir(t, p, ser, func(n int) []int32 { return partition.Random(n, 3, 5) }, 3, info)
		for _, ranks := range []int{1, 3} {
			out := filepath.Join(tmp, c.name+"-dist"+strconv.Itoa(ranks))
			if err := distDir(p, out, ranks, 3, 5, info, 0); err != nil {
				t.Fatalf("%s on %d ranks: %v", c.name, ranks, err)
			}
			sameDirs(t, ser, out)
		}
	}
}

// distSplit reads src on p ranks and returns the split bits of every node.
func distSplit(t *testing.T, p int, src Source) []uint8 {
	t.Helper()
	var mu sync.Mutex
	var all []uint8
	err := comm.RunGroup(p, func(c comm.Comm) error {
		g, err := Read(c, src)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if all == nil {
			all = make([]uint8, g.NumNodes)
		}
		copy(all[g.Lo:g.Hi], g.Split)
		return nil
	})
	if err != nil {
		t.Fatalf("%d ranks: %v", p, err)
	}
	return all
}

// TestRandomSplitSameOnEveryRankCount: --split random gives the serial
// loader's split on 1, 2 and 5 ranks, for an edge list with .npy labels;
// split files likewise.
func TestRandomSplitSameOnEveryRankCount(t *testing.T) {
	ds := genDataset(t, 500)
	tmp := t.TempDir()
	el := filepath.Join(tmp, "g.txt")
	writeEdgeList(t, el, ds.Graph)
	labels := filepath.Join(tmp, "y.npz")
	y := make([]int64, ds.NumNodes())
	for v, l := range ds.Labels {
		y[v] = int64(l)
		if v%9 == 4 {
			y[v] = -1
		}
	}
	// The labels as a .npy: the single member of an uncompressed npz is a
	// .npy file at an offset, so write the npz and cut the member out.
	if err := graph.WriteNpz(labels, []graph.NpyData{{Name: "y", Shape: []int{len(y)}, Data: y}}, false); err != nil {
		t.Fatal(err)
	}
	ynpy := filepath.Join(tmp, "y.npy")
	writeNpyOf(t, labels, ynpy)
	for _, spec := range []string{"random:0.6,0.2", "random:0.3,0.3,0.1:11"} {
		o := graph.LoadOptions{Split: spec, Labels: ynpy}
		ser, err := graph.Load(el, o)
		if err != nil {
			t.Fatal(err)
		}
		want := ser.SplitMask()
		for _, p := range []int{1, 2, 5} {
			got := distSplit(t, p, Source{Path: el, Split: spec, Labels: ynpy})
			if !slices.Equal(got, want[:len(got)]) || len(got) != len(want) {
				t.Fatalf("%s on %d ranks: split differs from the serial one", spec, p)
			}
		}
	}
	// Split files: the serial split written as masks and id lists.
	ser, err := graph.Load(el, graph.LoadOptions{Split: "random:0.5,0.25", Labels: ynpy})
	if err != nil {
		t.Fatal(err)
	}
	sd := filepath.Join(tmp, "split")
	os.MkdirAll(sd, 0o755)
	mask := make([]bool, ser.NumNodes())
	for _, v := range ser.Train {
		mask[v] = true
	}
	ids := func(s []int32) []int64 {
		out := make([]int64, len(s))
		for i, v := range s {
			out[len(s)-1-i] = int64(v) // any order
		}
		return out
	}
	tz := filepath.Join(tmp, "t.npz")
	graph.WriteNpz(tz, []graph.NpyData{{Name: "m", Shape: []int{len(mask)}, Data: mask}}, false)
	writeNpyOf(t, tz, filepath.Join(sd, "train.npy"))
	graph.WriteNpz(tz, []graph.NpyData{{Name: "v", Shape: []int{len(ser.Valid)}, Data: ids(ser.Valid)}}, false)
	writeNpyOf(t, tz, filepath.Join(sd, "val.npy"))
	lines := make([]string, len(ser.Test))
	for i, v := range ser.Test {
		lines[i] = strconv.Itoa(int(v))
	}
	os.WriteFile(filepath.Join(sd, "test.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	want := ser.SplitMask()
	for _, p := range []int{1, 3} {
		if got := distSplit(t, p, Source{Path: el, SplitFiles: sd, Labels: ynpy}); !slices.Equal(got, want) {
			t.Fatalf("split files on %d ranks differ from the serial split", p)
		}
	}
	if _, err := graph.Load(el, graph.LoadOptions{SplitFiles: sd, Labels: ynpy}); err != nil {
		t.Fatal(err)
	}
}

// writeNpyOf copies the single member of the archive npz to the .npy file out.
func writeNpyOf(t *testing.T, npz, out string) {
	t.Helper()
	zr, err := zip.OpenReader(npz)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	r, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
