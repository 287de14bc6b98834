package graph

import (
	"fmt"
	"math"
	"slices"
)

// DegreeSummary describes the distribution of a graph's row lengths
// (in-degrees; the degrees of a symmetric graph).
type DegreeSummary struct {
	Mean     float64
	Median   int64
	P90      int64
	P99      int64
	Max      int64
	Isolated int64   // rows without entries
	Tail     float64 // power-law exponent of the degrees ≥ P90 (maximum likelihood, discrete approximation); 0 when undefined
}

// Degrees summarises the row lengths of g.
func Degrees(g *CSR) DegreeSummary {
	n := g.NumRows
	if n == 0 {
		return DegreeSummary{}
	}
	d := make([]int64, n)
	var s DegreeSummary
	for v := range d {
		d[v] = g.Ptr[v+1] - g.Ptr[v]
		if d[v] == 0 {
			s.Isolated++
		}
	}
	slices.Sort(d)
	s.Mean = float64(g.Ptr[n]-g.Ptr[0]) / float64(n)
	s.Median, s.P90, s.P99, s.Max = d[n/2], d[n*9/10], d[n*99/100], d[n-1]
	// Clauset, Shalizi, Newman (2009), eq. 3.7: α ≈ 1 + k / Σ ln(d/(dmin-½)).
	if dmin := s.P90; dmin >= 1 {
		sum, k := 0.0, 0
		for _, x := range d[n*9/10:] {
			sum += math.Log(float64(x) / (float64(dmin) - 0.5))
			k++
		}
		if sum > 0 {
			s.Tail = 1 + float64(k)/sum
		}
	}
	return s
}

// String is one line: "degrees: mean …, median …, p90 …, p99 …, max …, …".
func (s DegreeSummary) String() string {
	return fmt.Sprintf("degrees: mean %.2f, median %d, p90 %d, p99 %d, max %d, isolated %d, tail exponent %.2f (degrees ≥ p90)",
		s.Mean, s.Median, s.P90, s.P99, s.Max, s.Isolated, s.Tail)
}
