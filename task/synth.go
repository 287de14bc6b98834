package task

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/supergcn/supergcn/graph"
)

// Synthesize generates a target table of T tasks for dataset ds (which
// must have features and labels), for task kind "multilabel" or
// "regression", reproducibly from seed. Each task j scores node v as a
// random projection of its features plus the mean of its in-neighbours'
// features, plus a random offset per class of v: learnable by a GNN, and
// only partly from a node's own features. Regression targets are the
// scores standardised per task, plus Gaussian noise of 0.1; multilabel
// targets are 1 where the score exceeds the task's quantile 1 - q, q drawn
// from [0.1, 0.5] per task, and 5% of the entries are NaN (unlabelled).
func Synthesize(ds *graph.Dataset, kind string, tasks int, seed uint64) (*Table, error) {
	if kind != "multilabel" && kind != "regression" {
		return nil, fmt.Errorf("task: synthetic targets are for multilabel or regression, not %q", kind)
	}
	if ds.FeatDim == 0 || ds.Labels == nil || tasks < 1 {
		return nil, fmt.Errorf("task: synthetic targets need features, labels and ≥ 1 task")
	}
	n, f := ds.NumNodes(), ds.FeatDim
	rng := rand.New(rand.NewPCG(seed, 0x7a5c))
	w := make([]float64, tasks*f)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	off := make([]float64, (ds.NumClasses+1)*tasks)
	for i := range off {
		off[i] = rng.NormFloat64()
	}
	score := make([]float64, n*tasks)
	h := make([]float64, f)
	buf := make([]float32, f)
	for v := range n {
		clear(h)
		for _, u := range ds.Graph.Idx[ds.Graph.Ptr[v]:ds.Graph.Ptr[v+1]] {
			for k, x := range ds.Features.Row(int(u), buf) {
				h[k] += float64(x)
			}
		}
		deg := float64(max(ds.Graph.Ptr[v+1]-ds.Graph.Ptr[v], 1))
		for k, x := range ds.Features.Row(v, buf) {
			h[k] = h[k]/deg + float64(x)
		}
		c := int(ds.Labels[v]) + 1 // unlabelled nodes: offset row 0
		for j := range tasks {
			var s float64
			for k, x := range h {
				s += w[j*f+k] * x
			}
			score[v*tasks+j] = s/math.Sqrt(float64(f)) + off[c*tasks+j]
		}
	}
	t := &Table{Path: "synthetic", Rows: n, Cols: tasks, Y: make([]float32, n*tasks)}
	col := make([]float64, n)
	for j := range tasks {
		for v := range n {
			col[v] = score[v*tasks+j]
		}
		if kind == "regression" {
			mean, sd := meanSD(col)
			for v := range n {
				t.Y[v*tasks+j] = float32((col[v]-mean)/sd + 0.1*rng.NormFloat64())
			}
			continue
		}
		q := 0.1 + 0.4*rng.Float64()
		sorted := slices.Clone(col)
		slices.Sort(sorted)
		cut := sorted[min(n-1, int(float64(n)*(1-q)))]
		for v := range n {
			switch {
			case rng.Float64() < 0.05:
				t.Y[v*tasks+j] = float32(math.NaN())
			case col[v] >= cut:
				t.Y[v*tasks+j] = 1
			}
		}
	}
	return t, nil
}

// meanSD is the mean and standard deviation of x (1 for a constant x).
func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / float64(len(x)))
	if sd == 0 {
		sd = 1
	}
	return mean, sd
}
