// Package predictargs reads what the predict command line names: the
// sweep's comma-separated lists (profiles read), the partition's volumes,
// and the --plot files.
package predictargs

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/plots"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/quant"
)

// SweepLists parses predict's comma-separated lists into sw: aggregation
// modes, bits, networks and profiles (read).
func SweepLists(sw *perfmodel.Sweep, modes, bits, networks, profiles string) error {
	for _, s := range strings.Split(modes, ",") {
		mode, err := exchange.ParseMode(strings.TrimSpace(s))
		if err != nil || strings.TrimSpace(s) == "" {
			return flagtab.UsageError(fmt.Sprintf("--aggr-mode: %q is not post, pre or hybrid", s))
		}
		sw.Modes = append(sw.Modes, mode)
	}
	for _, s := range strings.Split(bits, ",") {
		b, err := quant.ParseBits(s)
		if strings.TrimSpace(s) == "auto" {
			b, err = perfmodel.AutoBits, nil
		}
		if err != nil {
			return flagtab.UsageError(fmt.Sprintf("--bits: %q is not %s or auto", s, quant.WidthList(", ")))
		}
		sw.Bits = append(sw.Bits, b)
	}
	for _, s := range strings.Split(networks, ",") {
		n, err := perfmodel.ParseNetwork(strings.TrimSpace(s))
		if err != nil {
			return flagtab.UsageError("--network: " + err.Error())
		}
		sw.Networks = append(sw.Networks, n)
	}
	for _, s := range strings.Split(profiles, ",") {
		if strings.TrimSpace(s) == "" {
			return flagtab.UsageError(fmt.Sprintf("--profile: %q has an empty file name", profiles))
		}
		p, err := perfmodel.LoadProfile(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		if err := p.CheckModel(sw.Config.Model); err != nil {
			return fmt.Errorf("--profile: %s: %w", strings.TrimSpace(s), err)
		}
		sw.Profiles = append(sw.Profiles, p)
	}
	return nil
}

// Volumes plans the partition in dir on ranks ranks (0: one part
// each), or reads a --save-volumes file.
func Volumes(dir, file string, ranks int) (*perfmodel.Volumes, error) {
	if ranks < 0 {
		return nil, flagtab.UsageError(fmt.Sprintf("--ranks: %d, want ≥ 1", ranks))
	}
	if file == "" {
		return perfmodel.PlanVolumes(dir, ranks, runtime.GOMAXPROCS(0))
	}
	v, err := perfmodel.ReadVolumes(file)
	if err != nil {
		return nil, fmt.Errorf("--volumes: %w", err)
	}
	if ranks != 0 && ranks != len(v.Ranks) {
		return nil, flagtab.UsageError(fmt.Sprintf("--ranks: %d, but %s holds %d ranks", ranks, file, len(v.Ranks)))
	}
	return v, nil
}

// Plot checks --plot's flags and draws.
func Plot(in, out string, refs []plots.ProjectionRef, stdout io.Writer) error {
	if out == "" {
		return flagtab.UsageError("--plot needs --out DIR")
	}
	files := strings.Split(in, ",")
	if slices.Contains(files, "") {
		return flagtab.UsageError(fmt.Sprintf("--plot: %q has an empty file name", in))
	}
	return plotPredictions(files, out, refs, stdout)
}

// plotPredictions draws predict --json lines: per label one PNG, one
// series per profile × network × exchange (mode and bits), against ranks.
func plotPredictions(files []string, dir string, refs []plots.ProjectionRef, stdout io.Writer) error {
	var rows []plots.Prediction
	for _, f := range files {
		b, err := container.ReadInput(f, 1<<30, "predictions file")
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		r, err := plots.ParsePredictions(f, b)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s: no predictions", strings.Join(files, ","))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	written, err := plots.Projections(dir, rows, refs)
	for _, w := range written {
		fmt.Fprintln(stdout, w)
	}
	return err
}
