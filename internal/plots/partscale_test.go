package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPartScaleRendersAndRejects(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "results.csv")
	body := "method,ranks,seconds,max_rss_mb,edge_cut\nparmetis,1,10,900,0.2\nparmetis,2,6,500,0.2\nldg,1,3,400,0.3\nldg,2,2,220,0.3\n"
	if err := os.WriteFile(csvPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadPartScale(csvPath)
	if err != nil || len(rows) != 4 || rows[1].Ranks != 2 || rows[3].MaxRSSMB != 220 {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	files, err := PartScale(filepath.Join(dir, "png"), rows)
	if err != nil || len(files) != 2 {
		t.Fatalf("files %v, err %v", files, err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, bad := range []string{"method,ranks\nx,1\n", "method,ranks,seconds,max_rss_mb\nx,0,1,1\n", "method,ranks,seconds,max_rss_mb\nx,1,-1,1\n"} {
		_, err := readPartScale(strings.NewReader(bad), "r.csv")
		if err == nil || !strings.HasPrefix(err.Error(), "r.csv:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
