package plots

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const layoutsCSV = `ranks_per_node,model,config,link,ranks,nodes,threads,epoch_s,last_test_acc
2,gcn,hyb32,shm,4,1,1,3.1,0.9
2,gcn,hyb2,shm,4,1,1,3.3,0.9
1,gcn,hyb32,shm,2,1,2,2.5,0.9
2,gcn,hyb2,2.5gbit,4,2,1,4.4,0.9
2,gcn,hyb2tl,2.5gbit,4,2,1,4.0,0.9
1,gcn,hyb2,2.5gbit,2,2,2,2.9,0.9
`

// layouts.csv reads back, draws one decodable PNG per model and link, and
// bad lines are errors naming file:line.
func TestLayoutsRendersAndRejects(t *testing.T) {
	rows, err := readLayouts(strings.NewReader(layoutsCSV), "l.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 || rows[5] != (LayoutRow{"gcn", "hyb2", "2.5gbit", 1, 2, 2.9}) {
		t.Fatalf("rows %+v", rows)
	}
	files, err := Layouts(t.TempDir(), rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "layouts-gcn-shm.png" || filepath.Base(files[1]) != "layouts-gcn-2.5gbit.png" {
		t.Fatalf("wrote %v", files)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, c := range []struct{ csv, want string }{
		{strings.Replace(layoutsCSV, "\n1,gcn,hyb32,shm,2,1,2,2.5", "\n1,gcn,hyb32,shm,2,1,0,2.5", 1), "l.csv:4: threads \"0\""},
		{strings.Replace(layoutsCSV, "4.4", "x", 1), "l.csv:5: epoch_s \"x\""},
		{"model,config,link,ranks,threads,epoch_s\ngcn,hyb2,shm,2,1,1\n", `no "ranks_per_node" column`},
	} {
		if _, err := readLayouts(strings.NewReader(c.csv), "l.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
