package plots

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readPartScale(f, path)
}

func readPartScale(r io.Reader, path string) ([]PartScaleRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: no header line: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, want := range []string{"method", "ranks", "seconds", "max_rss_mb"} {
		if _, ok := col[want]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column (not a bench-partition-scaling results.csv?)", path, want)
		}
	}
	var rows []PartScaleRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", path, line, len(rec), len(head))
		}
		ranks, err := strconv.Atoi(rec[col["ranks"]])
		if err != nil || ranks < 1 {
			return nil, fmt.Errorf("%s:%d: ranks %q is not a positive count", path, line, rec[col["ranks"]])
		}
		var v [2]float64
		for i, name := range []string{"seconds", "max_rss_mb"} {
			if v[i], err = strconv.ParseFloat(rec[col[name]], 64); err != nil || !(v[i] >= 0) {
				return nil, fmt.Errorf("%s:%d: %s %q is not a non-negative number", path, line, name, rec[col[name]])
			}
		}
		rows = append(rows, PartScaleRow{Method: rec[col["method"]], Ranks: ranks, Seconds: v[0], MaxRSSMB: v[1]})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no result lines", path)
	}
	return rows, nil
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
			if err := addLine(p, m, fig.data[m], plotutil.Color(i), false); err != nil {
				return files, err
			}
			s, err := plotter.NewScatter(fig.data[m])
			if err != nil {
				return files, err
			}
			s.Color = plotutil.Color(i)
			p.Add(s)
		}
		path := filepath.Join(dir, fig.name)
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}
