package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ProjectionSeries is one predicted configuration against the rank count.
type ProjectionSeries struct {
	Name       string
	Ranks      []float64
	EpochS     []float64
	Efficiency []float64 // in [0, 1]
}

// ProjectionRef is a reported figure drawn as a labelled point.
type ProjectionRef struct {
	Name   string
	Ranks  float64
	EpochS float64
}

// Projection draws, side by side, the predicted epoch time (log–log) and
// the parallel efficiency (log ranks) of each series, with the reported
// reference points on the time panel, into the PNG file path.
func Projection(path, title string, series []ProjectionSeries, refs []ProjectionRef) error {
	if len(series) == 0 {
		return fmt.Errorf("projection %s: no series", path)
	}
	pt := newPlot(title+": epoch time", "ranks", "seconds per epoch")
	pe := newPlot(title+": parallel efficiency", "ranks", "efficiency (%)")
	pt.X.Scale, pt.Y.Scale, pe.X.Scale = plot.LogScale{}, plot.LogScale{}, plot.LogScale{}
	pt.X.Tick.Marker, pt.Y.Tick.Marker, pe.X.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	pe.Y.Min, pe.Y.Max = 0, 100
	pt.Legend.Top, pe.Legend.Top = true, true
	for i, s := range series {
		if len(s.Ranks) == 0 || len(s.Ranks) != len(s.EpochS) || len(s.Ranks) != len(s.Efficiency) {
			return fmt.Errorf("projection %s: series %q has %d ranks, %d times, %d efficiencies", path, s.Name, len(s.Ranks), len(s.EpochS), len(s.Efficiency))
		}
		tx, ex := make(plotter.XYs, len(s.Ranks)), make(plotter.XYs, len(s.Ranks))
		for j := range s.Ranks {
			if !(s.Ranks[j] > 0 && s.EpochS[j] > 0) {
				return fmt.Errorf("projection %s: series %q: ranks %g, epoch %g s: want both > 0", path, s.Name, s.Ranks[j], s.EpochS[j])
			}
			tx[j].X, tx[j].Y = s.Ranks[j], s.EpochS[j]
			ex[j].X, ex[j].Y = s.Ranks[j], 100*s.Efficiency[j]
		}
		for _, c := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{pt, tx}, {pe, ex}} {
			l, pts, err := plotter.NewLinePoints(c.xys)
			if err != nil {
				return fmt.Errorf("projection %s: %w", path, err)
			}
			l.Color, pts.Color = seriesColor(i), seriesColor(i)
			l.Dashes = plotutil.Dashes(i / len(palette))
			pts.Shape = plotutil.Shape(i)
			c.p.Add(l, pts)
			if c.p == pt {
				c.p.Legend.Add(s.Name, l, pts)
			}
		}
	}
	for i, r := range refs {
		s, err := plotter.NewScatter(plotter.XYs{{X: r.Ranks, Y: r.EpochS}})
		if err != nil {
			return fmt.Errorf("projection %s: %w", path, err)
		}
		s.Shape = draw.CrossGlyph{}
		s.Radius = vg.Points(6)
		s.Color = seriesColor(len(series) + i)
		pt.Add(s)
		pt.Legend.Add(r.Name, s)
	}
	// One rank count or one time (a single partition predicted): gonum
	// would widen the empty range by ±1, through 0 on a log axis, and
	// panic; widen it by a factor of 2 instead.
	for _, ax := range []*plot.Axis{&pt.X, &pt.Y, &pe.X} {
		if ax.Min == ax.Max {
			ax.Min, ax.Max = ax.Min/2, ax.Max*2
		}
	}
	return savePair(path, 2*width, 1.5*height, pt, pe)
}
