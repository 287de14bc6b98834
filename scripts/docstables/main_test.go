package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tables in the repository's docs equal what their data files generate.
func TestDocsTablesMatchData(t *testing.T) {
	stale, err := run("../..", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stale {
		t.Errorf("%s: the table differs from its data (go run ./scripts/docstables)", s)
	}
}

// A table edited by hand is found and rewritten from its data; a marker
// without its end, or naming a missing file, is an error naming the line.
func TestRegenerate(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	csv := "method,ranks,parts,seconds,partition_seconds,max_rss_mb,edge_cut_fraction,node_imbalance,edge_imbalance\n" +
		"ldg,2,16,68.1,11.5,5990,0.2757,1.055,1.046\nmetis-serial,1,16,82.2,71.8,11289,0.1959,1.024,1.034\n"
	if err := os.WriteFile(filepath.Join(root, "d", "p.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "intro\n<!-- table: partition d/p.csv -->\n| old |\n<!-- end table -->\nafter\n"
	out, diffs, err := regenerate(root, "x.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0] != "x.md:2" {
		t.Fatalf("diffs %v, want [x.md:2]", diffs)
	}
	want := []string{"| metis-serial | 1 | 82.20 | 71.80 | 11289 | 19.59 % | 1.024 / 1.034 |",
		"| ldg | 2 | 68.10 | 11.50 | 5990 | 27.57 % | 1.055 / 1.046 |", "Data: `d/p.csv`.", "after"}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Index(out, "metis-serial") > strings.Index(out, "| ldg") {
		t.Errorf("serial row not first:\n%s", out)
	}
	if _, diffs, err := regenerate(root, "x.md", out); err != nil || len(diffs) != 0 {
		t.Errorf("regenerated text: diffs %v, err %v; want none", diffs, err)
	}
	for _, bad := range []string{"<!-- table: partition d/p.csv -->\n| x |\n", "<!-- table: partition d/none.csv -->\n<!-- end table -->\n",
		"<!-- table: nosuch d/p.csv -->\n<!-- end table -->\n"} {
		if _, _, err := regenerate(root, "x.md", "a\n"+bad); err == nil || !strings.Contains(err.Error(), "x.md:2") {
			t.Errorf("%q: error %v, want one naming x.md:2", bad, err)
		}
	}
}
