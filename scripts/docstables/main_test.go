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

// The seeds table takes each "mean of" line under its "# LABEL:" line.
func TestSeeds(t *testing.T) {
	root := t.TempDir()
	text := "# GCN, one process: scripts/seeds.sh 10 -- --model gcn\nseed  1: test at best val 0.8230, last epoch 0.8200\n" +
		"mean of 10 seeds: last epoch 81.48 ± 0.69 %, at best val 81.88 ± 0.55 %\n# SAGE: same\n" +
		"mean of 10 seeds: last epoch 80.90 ± 0.50 %, at best val 81.00 ± 0.70 %\n"
	if err := os.WriteFile(filepath.Join(root, "acc.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := seeds(root, []string{"acc.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"| GCN, one process | **81.48 ± 0.69 %** | 81.88 ± 0.55 % |", "| SAGE | **80.90 ± 0.50 %** | 81.00 ± 0.70 % |"}
	if len(lines) < 4 || lines[2] != want[0] || lines[3] != want[1] {
		t.Fatalf("got %q, want rows %q", lines, want)
	}
	if err := os.WriteFile(filepath.Join(root, "bad.txt"), []byte("mean of 3 seeds: nonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := seeds(root, []string{"bad.txt"}); err == nil || !strings.Contains(err.Error(), "bad.txt:1") {
		t.Errorf("bad file: error %v, want one naming bad.txt:1", err)
	}
}
