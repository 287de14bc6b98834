package measure

import (
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// The GEMM of the roofline gives every thread row blocks of dense.Gemm.
func TestRooflineRows(t *testing.T) {
	for _, threads := range []int{0, 1, 2, 4, 16, 128} {
		rows := rooflineRows(threads)
		if rows < 16384 || rows/dense.GemmBlock < 4*threads {
			t.Errorf("threads %d: %d rows, %d blocks of %d", threads, rows, rows/dense.GemmBlock, dense.GemmBlock)
		}
	}
}
