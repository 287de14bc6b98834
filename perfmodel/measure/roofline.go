package measure

import (
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/perfmodel"
)

// rooflineRows × rooflineWidth is the product Machine times for the GEMM rate: square
// enough that the BLAS runs at its peak (X·W, 16384×1024 · 1024×1024,
// 34 GFLOP).
const (
	rooflineRows  = 16384
	rooflineWidth = 1024
)

// Machine measures the two rates of a roofline with the threads already
// budgeted: the fp32 GEMM rate of a large product through dense.Gemm and
// STREAM triad on three arrays of 128 MiB (threads goroutines): the GEMM
// the median of three repetitions after a warm-up, STREAM the best of three.
func Machine(threads int) (perfmodel.Machine, error) {
	var m perfmodel.Machine
	err := Gemm(&dense.Work{}, rooflineRows, []string{"NN"}, []int{rooflineWidth}, []int{rooflineWidth}, 3, func(g GemmResult) error {
		m.GemmGFLOPS = max(m.GemmGFLOPS, g.GFLOPS)
		return nil
	})
	if err != nil {
		return m, err
	}
	m.StreamGBs = Stream(threads, 128, 3).Triad
	return m, m.Validate()
}
