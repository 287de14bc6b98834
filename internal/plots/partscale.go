package plots

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// PartScaleRow is one line of scripts/bench-partition-scaling.sh's
// results.csv: one partitioning method at one rank count, its wall time
// and the largest peak RSS of its ranks.
type PartScaleRow struct {
	Method   string
	Ranks    int
	Seconds  float64
	MaxRSSMB float64
}

// ReadPartScale reads a bench-partition-scaling results.csv (header line
// first; columns method, ranks, seconds and max_rss_mb). Bad lines are
// errors naming file:line.
func ReadPartScale(path string) ([]PartScaleRow, error) {
	return readResultsFile(path, readPartScale)
}

func readPartScale(r io.Reader, path string) ([]PartScaleRow, error) {
	want := []string{"method", "ranks", "seconds", "max_rss_mb"}
	return readResultsCSV(r, path, "bench-partition-scaling", want, func(line int, rec []string, col map[string]int, ranks int) (PartScaleRow, error) {
		var v [2]float64
		for i, name := range []string{"seconds", "max_rss_mb"} {
			var err error
			if v[i], err = strconv.ParseFloat(rec[col[name]], 64); err != nil || !(v[i] >= 0) || math.IsInf(v[i], 1) {
				return PartScaleRow{}, fmt.Errorf("%s:%d: %s %q is not a finite non-negative number", path, line, name, rec[col[name]])
			}
		}
		if rec[col["method"]] == "" {
			return PartScaleRow{}, fmt.Errorf("%s:%d: empty method", path, line)
		}
		return PartScaleRow{Method: rec[col["method"]], Ranks: ranks, Seconds: v[0], MaxRSSMB: v[1]}, nil
	})
}

// PartScale draws the wall time and the largest per-rank peak RSS of each
// method against the rank count, and returns the files written
// into dir (partition-scaling-time.png, partition-scaling-rss.png).
func PartScale(dir string, rows []PartScaleRow) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var methods []string
	pts := map[string]plotter.XYs{}
	rss := map[string]plotter.XYs{}
	for _, r := range rows {
		if _, ok := pts[r.Method]; !ok {
			methods = append(methods, r.Method)
		}
		pts[r.Method] = append(pts[r.Method], plotter.XY{X: float64(r.Ranks), Y: r.Seconds})
		rss[r.Method] = append(rss[r.Method], plotter.XY{X: float64(r.Ranks), Y: r.MaxRSSMB})
	}
	var files []string
	for _, fig := range []struct {
		name, title, y string
		data           map[string]plotter.XYs
	}{
		{"partition-scaling-time.png", "Distributed partitioning: wall time", "seconds", pts},
		{"partition-scaling-rss.png", "Distributed partitioning: max per-rank peak RSS", "MB", rss},
	} {
		p := newPlot(fig.title, "ranks (P)", fig.y)
		for i, m := range methods {
			if err := addLine(p, m, fig.data[m], seriesColor(i), false); err != nil {
				return files, err
			}
			s, err := plotter.NewScatter(fig.data[m])
			if err != nil {
				return files, err
			}
			s.Color = seriesColor(i)
			p.Add(s)
		}
		path := filepath.Join(dir, fig.name)
		if err := savePNG(p, 7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}
