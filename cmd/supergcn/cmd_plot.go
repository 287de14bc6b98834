package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/supergcn/supergcn/internal/plots"
)

func init() {
	register("plot", "draw metrics files (train --metrics) as PNGs: loss, accuracy, time breakdown, scaling; or a bench-cluster matrix", cmdPlot)
}

func cmdPlot(args []string) error {
	fs := newFlagSet("plot", "(FILE.jsonl... | --bench RESULTS.csv | --layouts LAYOUTS.csv | --partition-scaling RESULTS.csv) --out DIR")
	out := fs.String("out", "", "directory for the PNG files (created if missing)")
	bench := fs.String("bench", "", "draw scripts/bench-cluster.sh's results.csv: epoch time per link and exchange, one PNG per model")
	partScale := fs.String("partition-scaling", "", "draw scripts/bench-partition-scaling.sh's results.csv: time and max per-rank peak RSS against the ranks")
	layouts := fs.String("layouts", "", "draw scripts/bench-layouts.sh's layouts.csv: epoch time per ranks × threads layout and exchange, one PNG per model and link")
	files, err := parseWithFiles(fs, args)
	if err != nil {
		return err
	}
	if *layouts != "" {
		if *out == "" || *bench != "" || *partScale != "" || len(files) > 0 {
			return usageError("--layouts: give only the layouts.csv and --out DIR")
		}
		return drawResults(*layouts, *out, plots.ReadLayouts, plots.Layouts)
	}
	if *partScale != "" {
		if *out == "" || *bench != "" || len(files) > 0 {
			return usageError("--partition-scaling: give only the results.csv and --out DIR")
		}
		return drawResults(*partScale, *out, plots.ReadPartScale, plots.PartScale)
	}
	if *bench != "" && len(files) > 0 {
		return usageError("--bench: give either a results.csv or metrics files, not both")
	}
	if *bench == "" && len(files) == 0 {
		return usageError("give one or more metrics files (train --metrics FILE), or --bench RESULTS.csv")
	}
	if *out == "" {
		return usageError("--out: the directory for the PNG files is required")
	}
	if *bench != "" {
		return drawResults(*bench, *out, plots.ReadMatrix, plots.Matrix)
	}
	runs := make([]*plots.Run, 0, len(files))
	for _, f := range files {
		r, err := plots.Read(f)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	written, err := plots.Write(*out, runs)
	if err != nil {
		return err
	}
	for _, w := range written {
		fmt.Fprintln(os.Stdout, w)
	}
	return nil
}

// drawResults reads the results CSV path, draws it into the directory out
// (created if missing) and prints the files written.
func drawResults[T any](path, out string, read func(string) ([]T, error), draw func(string, []T) ([]string, error)) error {
	rows, err := read(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	written, err := draw(out, rows)
	for _, w := range written {
		fmt.Fprintln(os.Stdout, w)
	}
	return err
}

// parseWithFiles parses flags given before, between or after positional
// arguments, and returns the positional ones.
func parseWithFiles(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := parseFlagSet(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if rest[0] == "--" {
			return append(files, rest[1:]...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}
