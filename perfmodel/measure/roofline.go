package measure

import (
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/perfmodel"
)

// rooflineRows(threads) × rooflineWidth is the product Machine times for
// the GEMM rate: wide enough that the BLAS runs at its peak (X·W, N×1024 ·
// 1024×1024), and tall enough that every thread gets blocks of rows:
// dense.Gemm runs one single-threaded BLAS call per dense.GemmBlock rows, so
// 16384 rows would keep only 4 threads busy. At least 16384 rows, 4 blocks a
// thread (16 threads: 262144 rows, 550 GFLOP, 1 GiB for each of X and the
// product).
const rooflineWidth = 1024

func rooflineRows(threads int) int {
	return max(16384, 4*max(threads, 1)*dense.GemmBlock)
}

// Machine measures the two rates of a roofline with the threads already
// budgeted: the fp32 GEMM rate of a large product through dense.Gemm (every
// thread busy) and
// STREAM triad on three arrays of 128 MiB (threads goroutines): the GEMM
// the median of three repetitions after a warm-up, STREAM the best of three.
func Machine(threads int) (perfmodel.Machine, error) {
	var m perfmodel.Machine
	err := Gemm(&dense.Work{}, rooflineRows(threads), []string{"NN"}, []int{rooflineWidth}, []int{rooflineWidth}, 3, func(g GemmResult) error {
		m.GemmGFLOPS = max(m.GemmGFLOPS, g.GFLOPS)
		return nil
	})
	if err != nil {
		return m, err
	}
	m.StreamGBs = Stream(threads, 128, 3).Triad
	return m, m.Validate()
}
