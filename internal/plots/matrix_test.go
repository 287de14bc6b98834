package plots

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const matrixCSV = `model,config,link,ranks,nodes,threads,epoch_s,aggr_s,last_test_acc
gcn,post32,shm,16,1,1,6.29,1.8,0.9
gcn,hyb2,shm,16,1,1,6.82,1.2,0.89
gcn,post32,2.5gbit,16,4,1,17.5,0.9,0.9
gcn,hyb2,2.5gbit,16,4,1,6.93,0.8,0.89
sage,hyb2,shm,16,1,1,28.1,3.1,0.02
`

// The matrix CSV of bench-cluster reads back, draws one decodable PNG per
// model with bars of both configurations' colours, and bad lines are
// errors naming file:line.
func TestMatrixRendersAndRejects(t *testing.T) {
	dir := t.TempDir()
	rows, err := readMatrix(strings.NewReader(matrixCSV), "r.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[2] != (MatrixRow{"gcn", "post32", "2.5gbit", 16, 17.5}) {
		t.Fatalf("rows %+v", rows)
	}
	files, err := Matrix(filepath.Join(dir, "png"), rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "matrix-gcn-np16.png" || filepath.Base(files[1]) != "matrix-sage-np16.png" {
		t.Fatalf("wrote %v", files)
	}
	fh, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	colours := map[[3]uint32]int{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	// Two bar colours cover many pixels each (besides white, black, grid grey).
	big := 0
	for c, n := range colours {
		if n > 500 && !(c[0] == c[1] && c[1] == c[2]) {
			big++
		}
	}
	if big < 2 {
		t.Fatalf("%s: %d coloured areas, want the bars of 2 configurations", files[0], big)
	}
	for _, c := range []struct{ csv, want string }{
		{"model,config\ngcn,hyb2\n", `r.csv:1: no "link" column`},
		{strings.Replace(matrixCSV, "17.5", "x", 1), "r.csv:4: epoch_s"},
		{strings.Replace(matrixCSV, ",16,4,1,6.93", ",0,4,1,6.93", 1), "r.csv:5: ranks"},
		{strings.Replace(matrixCSV, "gcn,hyb2,shm,16,1,1,6.82,1.2,0.89", "gcn,hyb2", 1), "r.csv:3: 2 fields"},
		{"model,config,link,ranks,epoch_s\n", "r.csv: no result lines"},
	} {
		if _, err := readMatrix(strings.NewReader(c.csv), "r.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.csv, err, c.want)
		}
	}
}
