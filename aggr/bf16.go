package aggr

import (
	"fmt"
	"unsafe"

	"github.com/supergcn/supergcn/dense"
)

// ApplyBF16 computes out = A·x (or +=, with accumulate) where x holds
// bfloat16 rows (the top halves of float32s: internal/amx.Bits), x.Rows =
// A.NumCols rows of out.Cols values each, row i at x[i·out.Cols:]. Sums are
// float32, in the order of Apply, so the result is Apply's on the widened
// values bit for bit. A must have no values (an unweighted CSR): it
// panics otherwise, as on a shape mismatch.
func (op *Op) ApplyBF16(x []uint16, out *dense.Matrix, accumulate bool) {
	op.applyBF16(false, x, out, accumulate)
}

// ApplyTBF16 is ApplyBF16 with Aᵀ (x has A.NumRows rows).
func (op *Op) ApplyTBF16(x []uint16, out *dense.Matrix, accumulate bool) {
	op.applyBF16(true, x, out, accumulate)
}

func (op *Op) applyBF16(transposed bool, x []uint16, out *dense.Matrix, accumulate bool) {
	a := op.a
	if transposed {
		a = op.transposed()
	}
	f := out.Cols
	if a.Val != nil {
		panic("aggr: ApplyBF16 on a weighted CSR")
	}
	if a.NumRows != out.Rows || len(x) < a.NumCols*f || len(out.Data) < out.Rows*f {
		panic(fmt.Sprintf("aggr: shape mismatch: A %d×%d, %d bfloat16 values of width %d, out %d×%d",
			a.NumRows, a.NumCols, len(x), f, out.Rows, out.Cols))
	}
	if f == 0 || a.NumRows == 0 {
		return
	}
	if n := a.NumCols * f; n > 0 && overlapBytes(unsafe.Pointer(&x[0]), 2*n, unsafe.Pointer(&out.Data[0]), 4*out.Rows*f) {
		panic("aggr: out overlaps x")
	}
	pl := op.plan(transposed, a, f)
	r := runner{k: op.e.k, a: a, xb: x, out: out.Data, f: f, acc: accumulate, tasks: pl.tasks}
	if len(pl.tasks) <= 1 || op.e.threads == 1 {
		var s scratch
		for i := range pl.tasks {
			r.do(&pl.tasks[i], &s)
		}
		return
	}
	op.e.pool.Run(r.worker)
}

func overlapBytes(a unsafe.Pointer, na int, b unsafe.Pointer, nb int) bool {
	if na == 0 || nb == 0 {
		return false
	}
	a0, b0 := uintptr(a), uintptr(b)
	return a0 < b0+uintptr(nb) && b0 < a0+uintptr(na)
}

// accumRowsBF16Generic is the pure-Go twin of the bfloat16 micro-kernel:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range out {
//			out[j] += float32 with bits r[j]<<16
//		}
//	}
func accumRowsBF16Generic(out []float32, x []uint16, stride int, idx []int32) {
	if len(idx) == 0 {
		return
	}
	n := len(out)
	j := 0
	for ; j+4 <= n; j += 4 {
		s0, s1, s2, s3 := out[j], out[j+1], out[j+2], out[j+3]
		for _, u := range idx {
			r := x[int(u)*stride+j : int(u)*stride+j+4 : int(u)*stride+j+4]
			s0 += widen(r[0])
			s1 += widen(r[1])
			s2 += widen(r[2])
			s3 += widen(r[3])
		}
		out[j], out[j+1], out[j+2], out[j+3] = s0, s1, s2, s3
	}
	for ; j < n; j++ {
		s := out[j]
		for _, u := range idx {
			s += widen(x[int(u)*stride+j])
		}
		out[j] = s
	}
}

// widen is the float32 of bfloat16 bits b.
func widen(b uint16) float32 {
	return *(*float32)(unsafe.Pointer(&[1]uint32{uint32(b) << 16}))
}
