package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOGBEdgeFeat writes a 4-node OGB directory: edges 0-1, 1-2, 0-2 (node
// 3 isolated), edge features (1, 10), (2, 20), (4, -40), a 3-column
// node-label.csv and a split.
func writeOGBEdgeFeat(t *testing.T, feat string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"raw/edge.csv":          "0,1\n1,2\n0,2\n",
		"raw/edge-feat.csv":     feat,
		"raw/node-label.csv":    "1,0,1\n0,0,1\n1,1,0\n0,1,1\n",
		"raw/num-node-list.csv": "4\n",
		"split/s/train.csv":     "0\n1\n",
		"split/s/valid.csv":     "2\n",
		"split/s/test.csv":      "3\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Edge features fold into node features by mean, sum or max over the
// edges at each node (an edge counts for both endpoints); the multi-column
// node-label.csv is skipped with NoLabels.
func TestNodeFeatFromEdges(t *testing.T) {
	dir := writeOGBEdgeFeat(t, "1,10\n2,20\n4,-40\n")
	for _, tc := range []struct {
		reduce string
		want   []float32
	}{
		{"sum", []float32{5, -30, 3, 30, 6, -20, 0, 0}},
		{"mean", []float32{2.5, -15, 1.5, 15, 3, -10, 0, 0}},
		{"max", []float32{4, 10, 2, 20, 4, 20, 0, 0}},
	} {
		ds, err := Load(dir, LoadOptions{NodeFeatFromEdges: tc.reduce, NoLabels: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.reduce, err)
		}
		if ds.FeatDim != 2 || ds.Labels != nil || len(ds.Train) != 2 {
			t.Fatalf("%s: %d features, labels %v, train %v", tc.reduce, ds.FeatDim, ds.Labels, ds.Train)
		}
		for i, w := range tc.want {
			if xd(ds)[i] != w {
				t.Fatalf("%s: features %v, want %v", tc.reduce, xd(ds), tc.want)
			}
		}
	}
	for _, tc := range []struct {
		feat string
		o    LoadOptions
		want string
	}{
		{"1,10\n2,20\n", LoadOptions{NodeFeatFromEdges: "mean", NoLabels: true}, "has 2 rows of edge features for 3 edges"},
		{"1,10\n2,x\n4,1\n", LoadOptions{NodeFeatFromEdges: "mean", NoLabels: true}, "edge-feat.csv:2"},
		{"1,10\n2,20\n4,-40\n", LoadOptions{NodeFeatFromEdges: "median"}, `"median" is not mean, sum, max`},
	} {
		_, err := Load(writeOGBEdgeFeat(t, tc.feat), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("edge features %q: error %v, want %q", tc.feat, err, tc.want)
		}
	}
}
