package graph

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// makeOGB writes files (relative path → content) under a fresh dataset
// directory and returns it.
func makeOGB(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "toy")
	for name, content := range files {
		writeFile(t, dir, name, content)
	}
	return dir
}

// toyOGB is a valid 3-node dataset; tests copy and modify it.
func toyOGB() map[string]string {
	return map[string]string{
		"raw/edge.csv":             "0,1\n1,2\n2,0\n",
		"raw/num-node-list.csv":    "3\n",
		"raw/num-edge-list.csv.gz": "3\n",
		"raw/node-feat.csv.gz":     "1,0.5\n-2,3e-1\n0,7\n",
		"raw/node-label.csv":       "1\nnan\n0\n",
		"split/public/train.csv":   "0\n",
		"split/public/valid.csv":   "",
		"split/public/test.csv.gz": "2\n",
	}
}

func TestLoadOGBToy(t *testing.T) {
	dir := makeOGB(t, toyOGB())
	ds, err := LoadOGB(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Name != "toy" || g.NumRows != 3 || !slices.Equal(g.Ptr, []int64{0, 1, 2, 3}) || !slices.Equal(g.Idx, []int32{2, 0, 1}) {
		t.Errorf("graph %+v", g)
	}
	if ds.FeatDim != 2 || !slices.Equal(xd(ds), []float32{1, 0.5, -2, 0.3, 0, 7}) {
		t.Errorf("features %d %v", ds.FeatDim, xd(ds))
	}
	if !slices.Equal(ds.Labels, []int32{1, -1, 0}) || ds.NumClasses != 2 {
		t.Errorf("labels %v classes %d", ds.Labels, ds.NumClasses)
	}
	if !slices.Equal(ds.Train, []int32{0}) || len(ds.Valid) != 0 || !slices.Equal(ds.Test, []int32{2}) {
		t.Errorf("split %v %v %v", ds.Train, ds.Valid, ds.Test)
	}
}

// TestLoadOGBInferAndNpy: no num-node-list (count from feature rows),
// features and labels from .npy, float labels with NaN, no split dir.
func TestLoadOGBInferAndNpy(t *testing.T) {
	files := toyOGB()
	for _, k := range []string{"raw/num-node-list.csv", "raw/num-edge-list.csv.gz", "raw/node-feat.csv.gz", "raw/node-label.csv",
		"split/public/train.csv", "split/public/valid.csv", "split/public/test.csv.gz"} {
		delete(files, k)
	}
	dir := makeOGB(t, files)
	writeNpy(t, filepath.Join(dir, "raw", "node-feat.npy"), "<f4", "(4, 1)", []float32{1, 2, 3, 4})
	writeNpy(t, filepath.Join(dir, "raw", "node-label.npy"), "<f8", "(4, 1)", []float64{3, math.NaN(), 0, 1})
	ds, err := LoadOGB(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if ds.NumNodes() != 4 || ds.FeatDim != 1 || !slices.Equal(xd(ds), []float32{1, 2, 3, 4}) {
		t.Errorf("n=%d X=%v", ds.NumNodes(), xd(ds))
	}
	if !slices.Equal(ds.Labels, []int32{3, -1, 0, 1}) || ds.NumClasses != 4 || ds.Train != nil {
		t.Errorf("labels %v classes %d train %v", ds.Labels, ds.NumClasses, ds.Train)
	}
}

func TestOGBSplitChoice(t *testing.T) {
	withSplits := func(names ...string) string {
		files := toyOGB()
		for k := range files {
			if strings.HasPrefix(k, "split/") {
				delete(files, k)
			}
		}
		for i, n := range names {
			id := []string{"0", "2"}[i] // labelled nodes
			files["split/"+n+"/train.csv"] = id + "\n"
			files["split/"+n+"/valid.csv"] = ""
			files["split/"+n+"/test.csv"] = ""
		}
		return makeOGB(t, files)
	}
	for _, c := range []struct {
		names []string
		want  string
		train int32
	}{
		{[]string{"other", "public"}, "", 2},
		{[]string{"time"}, "", 0},
		{[]string{"public", "sales_ranking"}, "sales_ranking", 2},
	} {
		ds, err := LoadOGB(withSplits(c.names...), c.want)
		if err != nil {
			t.Fatalf("%v: %v", c.names, err)
		}
		if !slices.Equal(ds.Train, []int32{c.train}) {
			t.Errorf("%v %q: train %v, want [%d]", c.names, c.want, ds.Train, c.train)
		}
	}
	_, err := LoadOGB(withSplits("a", "b"), "")
	if err == nil || !strings.Contains(err.Error(), "several splits (a, b): choose one with graph.LoadOptions.Split") {
		t.Errorf("got %v", err)
	}
	_, err = LoadOGB(withSplits("a"), "public")
	if err == nil || !strings.Contains(err.Error(), `graph.LoadOptions.Split: "public": no such split`) || !strings.Contains(err.Error(), "(available: a)") {
		t.Errorf("got %v", err)
	}
}

func TestOGBErrors(t *testing.T) {
	for _, c := range []struct {
		file, content string // replaced (or added) file
		line          int64
		msg           string
	}{
		{"raw/edge.csv", "0,1\n1,3\n", 2, "field 2: node id 3 outside [0,2]"},
		{"raw/edge.csv", "0,1\n1,2,0\n", 2, `expected 2 comma-separated fields "src,dst", found 3`},
		{"raw/edge.csv", "0,1\n\n", 2, "found 1"},
		{"raw/edge.csv", "0,1\n1, b\n", 2, `field 2: bad node id "b"`},
		{"raw/num-edge-list.csv.gz", "4\n", 1, "says 4 edges but"},
		{"raw/num-node-list.csv", "3\n1\n", 2, "expected one count"},
		{"raw/node-feat.csv.gz", "1,2\n3,4,5\n6,7\n", 2, "more than 2 fields (line 1 has 2)"},
		{"raw/node-feat.csv.gz", "1,2\n3\n6,7\n", 2, "1 fields but line 1 has 2"},
		{"raw/node-feat.csv.gz", "1,2\n3,4\n6,x7\n", 3, `field 2: bad number "x7"`},
		{"raw/node-feat.csv.gz", "1,2\n3,4\n", 0, "has 2 feature rows but the graph has 3 nodes"},
		{"raw/node-label.csv", "1\n1.5\n0\n", 2, `bad label "1.5"`},
		{"raw/node-label.csv", "1\n0,1\n0\n", 2, "multi-label datasets are not supported"},
		{"raw/node-label.csv", "1\n-2\n0\n", 2, "bad label"},
		{"raw/node-label.csv", "1\n0\n", 0, "has 2 labels but the graph has 3 nodes"},
		{"split/public/train.csv", "0\n3\n", 2, "node id 3 outside [0,3)"},
		{"split/public/train.csv", "0\n2\n0\n", 3, "node 0 listed twice"},
		{"split/public/train.csv", "0\n1\n", 2, "node 1 has no label"},
		{"split/public/train.csv", "0\n-\n", 2, `bad node id "-"`},
		{"split/public/test.csv.gz", "0\n", 1, "node 0 is also in the train split: the splits must be disjoint"},
		{"raw/node-label.csv", "1\n1000000000\n0\n", 2, "label 1000000000: at most 65536 classes"},
	} {
		files := toyOGB()
		files[c.file] = c.content
		dir := makeOGB(t, files)
		_, err := LoadOGB(dir, "")
		wantParseError(t, err, filepath.Join(dir, c.file), c.line, c.msg)
	}
}

func TestOGBStructuralErrors(t *testing.T) {
	files := toyOGB()
	delete(files, "raw/edge.csv")
	dir := makeOGB(t, files)
	_, err := LoadOGB(dir, "")
	wantParseError(t, err, dir, 0, "no raw/edge.csv[.gz]")

	files = toyOGB()
	delete(files, "split/public/valid.csv")
	dir = makeOGB(t, files)
	_, err = LoadOGB(dir, "")
	wantParseError(t, err, filepath.Join(dir, "split", "public"), 0, "no valid.csv[.gz]")

	// Truncated gzip inside an OGB directory names the file and line.
	dir = makeOGB(t, toyOGB())
	p := filepath.Join(dir, "raw", "node-feat.csv.gz")
	full := gzipBytes(t, []byte("1,0.5\n-2,3e-1\n0,7\n"))
	os.WriteFile(p, full[:len(full)-4], 0o644)
	_, err = LoadOGB(dir, "")
	wantParseError(t, err, p, 4, "gzip stream ends unexpectedly")

	// A valid node that is also a test node: reported on the later file.
	files = toyOGB()
	files["split/public/valid.csv"] = "2\n"
	dir = makeOGB(t, files)
	_, err = LoadOGB(dir, "")
	wantParseError(t, err, filepath.Join(dir, "split/public/test.csv.gz"), 1, "node 2 is also in the valid split")
}
