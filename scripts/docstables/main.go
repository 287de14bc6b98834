// Command docstables regenerates the tables of the Markdown docs from the
// measurement files in docs/data, so that text and data cannot drift. A
// generated table sits between two markers:
//
//	<!-- table: KIND docs/data/FILE... -->
//	| … |
//	<!-- end table -->
//
// KIND is one of single-node, cluster, validate, projection, partition,
// models … (see generators). Paths are relative to the repository root.
//
//	go run ./scripts/docstables          # rewrite the tables in place
//	go run ./scripts/docstables -check   # exit 1, naming each table that differs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Docs are the files whose tables are generated.
var Docs = []string{"README.md", "docs/CLI.md", "docs/RESULTS.md", "docs/SCALING.md", "docs/LAYOUT.md", "docs/PARTITIONING.md", "docs/MODELS.md"}

const (
	beginMark = "<!-- table: "
	endMark   = "<!-- end table -->"
)

func main() {
	check := flag.Bool("check", false, "do not write: exit 1 if a table differs from its data")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	stale, err := run(*root, *check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docstables:", err)
		os.Exit(1)
	}
	for _, s := range stale {
		fmt.Fprintln(os.Stderr, "docstables: differs from its data:", s)
	}
	if *check && len(stale) > 0 {
		fmt.Fprintln(os.Stderr, "docstables: run `go run ./scripts/docstables` to regenerate")
		os.Exit(1)
	}
}

// run regenerates every doc's tables; it returns "FILE:LINE" of each table
// whose text differed, and writes the files unless check.
func run(root string, check bool) ([]string, error) {
	var stale []string
	for _, doc := range Docs {
		path := filepath.Join(root, doc)
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out, diffs, err := regenerate(root, doc, string(b))
		if err != nil {
			return nil, err
		}
		stale = append(stale, diffs...)
		if !check && len(diffs) > 0 {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return stale, nil
}

// regenerate replaces the body of every marked table of text (the doc
// named name) and returns the new text and where bodies changed.
func regenerate(root, name, text string) (string, []string, error) {
	lines := strings.Split(text, "\n")
	var out, diffs []string
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		spec, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), beginMark)
		if !ok {
			continue
		}
		spec, ok = strings.CutSuffix(spec, "-->")
		if !ok {
			return "", nil, fmt.Errorf("%s:%d: table marker without -->", name, i+1)
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != endMark {
			end++
		}
		if end == len(lines) {
			return "", nil, fmt.Errorf("%s:%d: no %q after the table marker", name, i+1, endMark)
		}
		body, err := generate(root, strings.Fields(spec))
		if err != nil {
			return "", nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		if strings.Join(lines[i+1:end], "\n") != strings.Join(body, "\n") {
			diffs = append(diffs, fmt.Sprintf("%s:%d", name, i+1))
		}
		out = append(out, body...)
		out = append(out, lines[end])
		i = end
	}
	return strings.Join(out, "\n"), diffs, nil
}
