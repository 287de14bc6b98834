package dist

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/partition"
)

// genDataset is a small generated dataset with features, labels and splits.
func genDataset(t *testing.T, nodes int) *graph.Dataset {
	t.Helper()
	s := graph.DefaultSpec
	s.Nodes, s.Degree, s.Feat, s.Seed = nodes, 8, 5, 7
	ds, err := graph.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// writeEdgeList writes g's entries as "src dst" lines with a leading
// comment, a duplicate and a self loop (which reading must drop).
func writeEdgeList(t *testing.T, path string, g *graph.CSR) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# test graph\n")
	for v := 0; v < g.NumRows; v++ {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			if u < int32(v) { // one direction only: reading symmetrises
				fmt.Fprintf(&b, "%d %d\n", u, v)
			}
		}
	}
	fmt.Fprintf(&b, "3 3\n1 2\n2 1\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serialDir writes the partition the serial path makes for the file at
// path (loaded and cleaned as `supergcn partition` does) and owner.
func serialDir(t *testing.T, path, dir string, owner func(n int) []int32, parts int, info partition.MetaInfo) *graph.Dataset {
	t.Helper()
	ds, err := graph.Load(path, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds.Graph = graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(ds.Graph)))
	if err := partition.Write(dir, ds, owner(ds.NumNodes()), parts, info); err != nil {
		t.Fatal(err)
	}
	return ds
}

// distDir reads path on p ranks and writes the partition with the random
// owner of seed; it returns the joined rank errors.
func distDir(path, dir string, p, parts int, seed uint64, info partition.MetaInfo, roundBytes int) error {
	return comm.RunGroup(p, func(c comm.Comm) error {
		g, err := Read(c, Source{Path: path, RoundBytes: roundBytes})
		if err != nil {
			return err
		}
		return Write(c, dir, g, RandomOwners(g, parts, seed), parts, WriteOptions{Info: info, RoundBytes: roundBytes})
	})
}

// sameDirs compares two partition directories: part files byte for byte,
// meta.json field for field (the partitioning time aside).
func sameDirs(t *testing.T, a, b string) {
	t.Helper()
	ma, err := partition.ReadMeta(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := partition.ReadMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	ma.PartitionSeconds, mb.PartitionSeconds = 0, 0
	if fmt.Sprintf("%+v", *ma) != fmt.Sprintf("%+v", *mb) {
		t.Fatalf("meta differs:\nserial %+v\ndist   %+v", *ma, *mb)
	}
	for p := 0; p < ma.Parts; p++ {
		x, err := os.ReadFile(filepath.Join(a, partition.PartFile(p)))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, partition.PartFile(p)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("part %d differs (%d vs %d bytes)", p, len(x), len(y))
		}
	}
}

func TestDistMatchesSerial(t *testing.T) {
	ds := genDataset(t, 600)
	tmp := t.TempDir()
	sgb := filepath.Join(tmp, "g.sgb")
	if err := graph.WriteBinary(sgb, ds); err != nil {
		t.Fatal(err)
	}
	el := filepath.Join(tmp, "g.txt")
	writeEdgeList(t, el, ds.Graph)
	info := partition.MetaInfo{Method: "random", Weights: "none", Seed: 3, Source: "test"}
	for _, path := range []string{sgb, el} {
		for _, c := range []struct{ p, parts, round int }{{1, 3, 0}, {2, 4, 0}, {3, 3, 0}, {4, 8, 0}, {4, 2, 0}, {4, 4, 4096}} {
			name := fmt.Sprintf("%s/P%d/parts%d/round%d", filepath.Base(path), c.p, c.parts, c.round)
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				ser := filepath.Join(dir, "serial")
				serialDir(t, path, ser, func(n int) []int32 { return partition.Random(n, c.parts, 3) }, c.parts, info)
				out := filepath.Join(dir, "dist")
				if err := distDir(path, out, c.p, c.parts, 3, info, c.round); err != nil {
					t.Fatal(err)
				}
				sameDirs(t, ser, out)
				ents, _ := os.ReadDir(dir)
				if len(ents) != 2 {
					t.Fatalf("%d entries in the output's parent, want 2 (no temporary left)", len(ents))
				}
			})
		}
	}
}

// TestBadLineOneError: a bad line in the last rank's byte range is one
// error naming the file and its global line; no output is left.
func TestBadLineOneError(t *testing.T) {
	tmp := t.TempDir()
	path := filepath.Join(tmp, "bad.txt")
	var b strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "%d %d\n", i, (i+1)%400)
	}
	b.WriteString("7 x\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "%d %d\n", i, i+2)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	errs := make([]error, 4)
	comm.RunGroup(4, func(c comm.Comm) error {
		g, err := Read(c, Source{Path: path})
		if err == nil {
			err = Write(c, out, g, RandomOwners(g, 4, 1), 4, WriteOptions{})
		}
		errs[c.Rank()] = err
		return nil
	})
	for r, err := range errs {
		var pe *PeerError
		switch {
		case r == 3:
			if err == nil || !strings.Contains(err.Error(), path+":401:") || errors.As(err, &pe) {
				t.Fatalf("rank 3: %v, want %s:401: ...", err, path)
			}
		case !errors.As(err, &pe) || pe.Rank != 3:
			t.Fatalf("rank %d: %v, want a PeerError from rank 3", r, err)
		}
	}
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 1 {
		t.Fatalf("%d entries beside the input, want none written", len(ents)-1)
	}
}

// TestCompressedReadByRank0: a gzip edge list is read whole by rank 0 and
// scattered; the partition equals the serial one.
func TestCompressedReadByRank0(t *testing.T) {
	ds := genDataset(t, 300)
	tmp := t.TempDir()
	el := filepath.Join(tmp, "g.txt")
	writeEdgeList(t, el, ds.Graph)
	b, err := os.ReadFile(el)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	gz := el + ".gz"
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	info := partition.MetaInfo{Method: "random"}
	ser := filepath.Join(tmp, "serial")
	serialDir(t, gz, ser, func(n int) []int32 { return partition.Random(n, 4, 2) }, 4, info)
	out := filepath.Join(tmp, "dist")
	if err := distDir(gz, out, 4, 4, 2, info, 0); err != nil {
		t.Fatal(err)
	}
	sameDirs(t, ser, out)
}

// writeMetis writes the symmetric graph g as a METIS file, with a comment,
// a blank-line vertex when g has an isolated node, and trailing blank lines.
func writeMetis(t *testing.T, path string, g *graph.CSR, edit func(v int, line string) string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%% test graph\n%d %d\n", g.NumRows, g.NNZ()/2)
	for v := 0; v < g.NumRows; v++ {
		var f []string
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			f = append(f, fmt.Sprint(u+1))
		}
		line := strings.Join(f, " ")
		if edit != nil {
			line = edit(v, line)
		}
		b.WriteString(line + "\n")
		if v == g.NumRows/2 {
			b.WriteString("% a comment between vertex lines\n")
		}
	}
	b.WriteString("\n\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMetisByRanges(t *testing.T) {
	ds := genDataset(t, 500)
	tmp := t.TempDir()
	path := filepath.Join(tmp, "g.graph")
	writeMetis(t, path, ds.Graph, nil)
	info := partition.MetaInfo{Method: "random"}
	for _, p := range []int{1, 2, 4} {
		dir := t.TempDir()
		ser := filepath.Join(dir, "serial")
		serialDir(t, path, ser, func(n int) []int32 { return partition.Random(n, 4, 9) }, 4, info)
		out := filepath.Join(dir, "dist")
		if err := distDir(path, out, p, 4, 9, info, 0); err != nil {
			t.Fatal(err)
		}
		sameDirs(t, ser, out)
	}
	// The errors of LoadMetis, found by the rank holding the line.
	for name, c := range map[string]struct {
		edit func(v int, line string) string
		want string
	}{
		"asymmetric": {func(v int, line string) string {
			if v == 400 { // replace the first neighbour by vertex 3 (not a neighbour): same count
				f := strings.Fields(line)
				f[0] = "3"
				return strings.Join(f, " ")
			}
			return line
		}, "a METIS graph must be symmetric"},
		"bad neighbour": {func(v int, line string) string {
			if v == 450 {
				return line + " 9999"
			}
			return line
		}, ":454: field"},
	} {
		bad := filepath.Join(tmp, name+".graph")
		writeMetis(t, bad, ds.Graph, c.edit)
		err := comm.RunGroup(4, func(cm comm.Comm) error {
			_, err := Read(cm, Source{Path: bad})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
		if _, serr := graph.Load(bad, graph.LoadOptions{}); serr == nil {
			t.Errorf("%s: the serial loader accepts it", name)
		}
	}
}

// TestBinaryChecksumsAcrossRanks: one flipped feature bit of a binary
// dataset fails the distributed read on every rank (each rank checksums
// only its share; the shares' CRCs are combined).
func TestBinaryChecksumsAcrossRanks(t *testing.T) {
	ds := genDataset(t, 300)
	path := filepath.Join(t.TempDir(), "d.sgb")
	if err := graph.WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 3} {
		if err := comm.RunGroup(p, func(c comm.Comm) error { _, err := Read(c, Source{Path: path}); return err }); err != nil {
			t.Fatalf("intact file at %d ranks: %v", p, err)
		}
	}
	row := container.AsBytes(graph.DenseData(ds.Features)[150*ds.FeatDim : 151*ds.FeatDim])
	at := bytes.Index(b, row)
	if at < 0 || bytes.Index(b[at+1:], row) >= 0 {
		t.Fatal("feature row 150 not found once in the file")
	}
	b[at+1] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 3} {
		errs := make([]error, p)
		comm.RunGroup(p, func(c comm.Comm) error {
			_, errs[c.Rank()] = Read(c, Source{Path: path})
			return nil
		})
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), path+": section x: checksum mismatch") {
				t.Errorf("%d ranks, rank %d: %v, want a checksum mismatch in section x", p, r, err)
			}
		}
	}
}

// TestDistWeightedMatchesSerial: a weighted graph read distributed (edge
// list with duplicate and reverse edges of other weights, a self-loop;
// METIS with edge weights; .sgb; npz edge_weight) and written is the
// serial partition directory byte for byte: duplicates and the two
// directions merge into their largest weight on both paths.
func TestDistWeightedMatchesSerial(t *testing.T) {
	ds := genDataset(t, 300)
	tmp := t.TempDir()
	el := filepath.Join(tmp, "w.txt")
	var b bytes.Buffer
	g := ds.Graph
	for v := 0; v < g.NumRows; v++ {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			w := float32(1+(int(u)*7+v)%13) / 4
			fmt.Fprintf(&b, "%d %d %g\n", u, v, w) // both directions, with different weights
		}
	}
	fmt.Fprintf(&b, "3 3 9\n1 2 100\n2 1 0.5\n")
	if err := os.WriteFile(el, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	wds, err := graph.Load(el, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wds.Graph = graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(wds.Graph)))
	wds.FeatDim, wds.Features = ds.FeatDim, ds.Features
	sgb := filepath.Join(tmp, "w.sgb")
	if err := graph.WriteBinary(sgb, wds); err != nil {
		t.Fatal(err)
	}
	npz := filepath.Join(tmp, "w.npz")
	if err := graph.WriteNpzDataset(npz, wds, false, false); err != nil {
		t.Fatal(err)
	}
	metisPath := filepath.Join(tmp, "w.graph")
	var m bytes.Buffer
	wg := wds.Graph
	fmt.Fprintf(&m, "%d %d 1\n", wg.NumRows, wg.NNZ()/2)
	for v := 0; v < wg.NumRows; v++ {
		for k := wg.Ptr[v]; k < wg.Ptr[v+1]; k++ {
			fmt.Fprintf(&m, " %d %d", wg.Idx[k]+1, int(wg.Val[k]*4)) // integral weights
		}
		m.WriteString("\n")
	}
	if err := os.WriteFile(metisPath, m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ogb := writeWeightedOGB(t, filepath.Join(tmp, "ogb"), b.String(), ds, false)
	ogbGz := writeWeightedOGB(t, filepath.Join(tmp, "ogb-gz"), b.String(), ds, true)
	info := partition.MetaInfo{Method: "random", Weights: "none", Seed: 3, Source: "test"}
	for _, path := range []string{el, metisPath, sgb, npz, ogb, ogbGz} {
		for _, c := range []struct{ p, parts int }{{1, 2}, {3, 3}, {4, 2}, {2, 4}} {
			t.Run(fmt.Sprintf("%s/P%d/parts%d", filepath.Base(path), c.p, c.parts), func(t *testing.T) {
				dir := t.TempDir()
				ser := filepath.Join(dir, "serial")
				serialDir(t, path, ser, func(n int) []int32 { return partition.Random(n, c.parts, 3) }, c.parts, info)
				if m, err := partition.ReadMeta(ser); err != nil || !m.Weighted {
					t.Fatalf("serial directory not weighted: %v", err)
				}
				out := filepath.Join(dir, "dist")
				if err := distDir(path, out, c.p, c.parts, 3, info, 0); err != nil {
					t.Fatal(err)
				}
				sameDirs(t, ser, out)
			})
		}
	}
}

// writeWeightedOGB writes the "src dst weight" lines of edges as an OGB
// directory: raw/edge.csv, raw/edge_weight.csv (gzipped when gz), the node
// count and ds's features.
func writeWeightedOGB(t *testing.T, dir, edges string, ds *graph.Dataset, gz bool) string {
	t.Helper()
	var e, w, x bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(edges), "\n") {
		f := strings.Fields(line)
		fmt.Fprintf(&e, "%s,%s\n", f[0], f[1])
		fmt.Fprintf(&w, "%s\n", f[2])
	}
	for v := range ds.NumNodes() {
		for j, a := range graph.DenseData(ds.Features)[v*ds.FeatDim : (v+1)*ds.FeatDim] {
			if j > 0 {
				x.WriteByte(',')
			}
			fmt.Fprintf(&x, "%g", a)
		}
		x.WriteByte('\n')
	}
	weightName, weights := "edge_weight.csv", w.Bytes()
	if gz {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		if _, err := zw.Write(weights); err != nil || zw.Close() != nil {
			t.Fatal("gzip", err)
		}
		weightName, weights = "edge_weight.csv.gz", z.Bytes()
	}
	files := map[string][]byte{"edge.csv": e.Bytes(), weightName: weights, "node-feat.csv": x.Bytes(),
		"num-node-list.csv": fmt.Appendf(nil, "%d\n", ds.NumNodes())}
	writeRaw(t, dir, files)
	return dir
}

// writeRaw writes files into dir/raw.
func writeRaw(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	raw := filepath.Join(dir, "raw")
	if err := os.MkdirAll(raw, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(raw, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadOGBWeightErrors: a bad weight in another rank's byte range is
// one error naming the file and its line, a weight count other than the
// edge count one naming the file (the serial reader's errors), on every
// rank (the others a PeerError); IgnoreWeights drops the weights.
func TestReadOGBWeightErrors(t *testing.T) {
	edges := "0,1\n1,2\n2,3\n3,0\n0,2\n1,3\n"
	for _, c := range []struct{ weights, want string }{
		{"1\n2\n3\n4\n5\n-6\n", `edge_weight.csv:6: edge weight "-6": weights must be non-negative`},
		{"1\n2\n3\n4\n5\n", "edge_weight.csv: 5 weights for 6 edges"},
		{"1\n2\n3\n4\n5\n6\n7\n", "edge_weight.csv: 7 weights for 6 edges"},
	} {
		dir := t.TempDir()
		writeRaw(t, dir, map[string][]byte{"edge.csv": []byte(edges), "edge_weight.csv": []byte(c.weights), "num-node-list.csv": []byte("4\n")})
		_, serr := graph.Load(dir, graph.LoadOptions{})
		if serr == nil || !strings.Contains(serr.Error(), c.want) {
			t.Fatalf("serial: %v, want %q", serr, c.want)
		}
		for _, ignore := range []bool{false, true} {
			err := comm.RunGroup(3, func(cm comm.Comm) error {
				g, err := Read(cm, Source{Path: dir, IgnoreWeights: ignore})
				var pe *PeerError
				switch {
				case ignore && err != nil:
					return err
				case ignore && (g.NumArcs != 12 || g.Weighted):
					return fmt.Errorf("%d arcs, weighted %v", g.NumArcs, g.Weighted)
				case !ignore && (err == nil || !strings.Contains(err.Error(), c.want)):
					return fmt.Errorf("%v, want %q", err, c.want)
				case !ignore && errors.As(err, &pe) && pe.Rank == cm.Rank():
					return fmt.Errorf("%v: a PeerError naming this rank", err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("weights %q, ignore %v: %v", c.weights, ignore, err)
			}
		}
	}
}
