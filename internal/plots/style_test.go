package plots

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// Every series of a figure up to len(palette) has its own colour; the
// breakdown of train's eight time keys among them.
func TestSeriesColoursDistinct(t *testing.T) {
	keys := []string{"aggr_s", "comm_s", "dense_s", "eval_s", "other_s", "quant_s", "reduce_s", "sync_s"}
	cum := make([]plotter.XYs, len(keys))
	for k := range cum {
		cum[k] = plotter.XYs{{X: 1, Y: float64(k)}, {X: 2, Y: float64(k + 1)}}
	}
	lines, err := stackedLines("run", keys, cum)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for k, l := range lines {
		c := fmt.Sprint(l.FillColor)
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s share the colour %s", other, keys[k], c)
		}
		seen[c] = keys[k]
	}
	all := map[string]int{}
	for i := range palette {
		c := fmt.Sprint(seriesColor(i))
		if j, dup := all[c]; dup {
			t.Errorf("series %d and %d share the colour %s", j, i, c)
		}
		all[c] = i
	}
}

// Every tick of a linear axis is labelled, at a constant 1, 2 or 5 × 10^k
// step, covering the range with three to twelve ticks.
func TestLabelledTicks(t *testing.T) {
	for _, r := range [][2]float64{{1, 40}, {0, 0.5}, {1, 200}, {0, 1}, {-3, 7}, {0.00012, 0.00031}, {2e6, 9e7}} {
		ticks := labelledTicks{}.Ticks(r[0], r[1])
		if len(ticks) < 3 || len(ticks) > 12 {
			t.Errorf("%v: %d ticks", r, len(ticks))
			continue
		}
		step := ticks[1].Value - ticks[0].Value
		for i, tk := range ticks {
			if tk.Label == "" {
				t.Errorf("%v: tick %v has no label", r, tk.Value)
			}
			if i > 0 && math.Abs(tk.Value-ticks[i-1].Value-step) > 1e-9*step {
				t.Errorf("%v: ticks %v, %v not %v apart", r, ticks[i-1].Value, tk.Value, step)
			}
			if tk.Value < r[0]-1e-9*step || tk.Value > r[1]+1e-9*step {
				t.Errorf("%v: tick %v outside the range", r, tk.Value)
			}
		}
		if i := len(ticks) - 1; ticks[i].Label == ticks[i-1].Label {
			t.Errorf("%v: two ticks labelled %q", r, ticks[i].Label)
		}
	}
	if len(labelledTicks{}.Ticks(1, 1)) != 0 {
		t.Error("an empty range has ticks")
	}
}

// An axis of epochs is labelled at whole epochs only.
func TestIntegerTicks(t *testing.T) {
	for _, tk := range (labelledTicks{integer: true}).Ticks(1, 3) {
		if tk.Value != float64(int(tk.Value)) || strings.Contains(tk.Label, ".") {
			t.Errorf("tick %q at %v on an epoch axis", tk.Label, tk.Value)
		}
	}
	if n := len((labelledTicks{integer: true}).Ticks(1, 3)); n != 3 {
		t.Errorf("%d ticks on epochs 1…3, want 3", n)
	}
}
