package aggr

import "math"

// accumRowsGeneric is the pure-Go twin of the accumRows micro-kernel:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range out {
//			out[j] += r[j]
//		}
//	}
//
// It is always compiled (it is the "generic" kernel, and the only one under
// the noasm build tag). Each output element is summed in a local before the
// single store, like the SIMD kernels.
func accumRowsGeneric(out, x []float32, stride int, idx []int32) {
	if len(idx) == 0 {
		return
	}
	n := len(out)
	j := 0
	for ; j+4 <= n; j += 4 {
		s0, s1, s2, s3 := out[j], out[j+1], out[j+2], out[j+3]
		for _, u := range idx {
			r := x[int(u)*stride+j : int(u)*stride+j+4 : int(u)*stride+j+4]
			s0 += r[0]
			s1 += r[1]
			s2 += r[2]
			s3 += r[3]
		}
		out[j], out[j+1], out[j+2], out[j+3] = s0, s1, s2, s3
	}
	for ; j < n; j++ {
		s := out[j]
		for _, u := range idx {
			s += x[int(u)*stride+j]
		}
		out[j] = s
	}
}

// accumRowsWGeneric is the pure-Go twin of the accumRowsW micro-kernel:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range out {
//			out[j] += w[k] * r[j]
//		}
//	}
//
// len(w) ≥ len(idx).
func accumRowsWGeneric(out, x []float32, stride int, idx []int32, w []float32) {
	if len(idx) == 0 {
		return
	}
	w = w[:len(idx)]
	n := len(out)
	j := 0
	for ; j+4 <= n; j += 4 {
		s0, s1, s2, s3 := out[j], out[j+1], out[j+2], out[j+3]
		for k, u := range idx {
			r := x[int(u)*stride+j : int(u)*stride+j+4 : int(u)*stride+j+4]
			wk := w[k]
			s0 += wk * r[0]
			s1 += wk * r[1]
			s2 += wk * r[2]
			s3 += wk * r[3]
		}
		out[j], out[j+1], out[j+2], out[j+3] = s0, s1, s2, s3
	}
	for ; j < n; j++ {
		s := out[j]
		for k, u := range idx {
			s += w[k] * x[int(u)*stride+j]
		}
		out[j] = s
	}
}

// maxRowsGeneric is the pure-Go twin of the maxRows micro-kernel:
//
//	for _, c := range idx {
//		r := x[int(c)*stride:]
//		for j := range out {
//			if r[j] > out[j] {
//				out[j], arg[j] = r[j], base+c
//			}
//		}
//	}
//
// len(arg) ≥ len(out). It selects by masks, without a branch per value:
// which values win is random, and a mispredicted branch costs more than
// the select (about twice as fast as branching).
func maxRowsGeneric(out []float32, arg []int32, x []float32, stride int, idx []int32, base int32) {
	arg = arg[:len(out)]
	for _, c := range idx {
		r := x[int(c)*stride : int(c)*stride+len(out)]
		id := base + c
		for j, v := range r {
			var m int32
			if v > out[j] {
				m = -1
			}
			u := uint32(m)
			out[j] = math.Float32frombits(math.Float32bits(out[j])&^u | math.Float32bits(v)&u)
			arg[j] = arg[j]&^m | id&m
		}
	}
}

// scatterMaxGeneric is the pure-Go twin of the scatterMax micro-kernel:
//
//	for r := range rows {
//		for j := range cols {
//			if a := arg[r*w+j] - lo; uint32(a) < uint32(n) {
//				dst[int(a)*w+j] += g[r*w+j]
//			}
//		}
//	}
//
// It is the kernel of every set without a scatter instruction (AVX2, NEON).
func scatterMaxGeneric(dst, g []float32, arg []int32, rows, cols, w int, lo, n int32) {
	for r := range rows {
		gr, ar := g[r*w:r*w+cols], arg[r*w:r*w+cols]
		for j, a := range ar {
			if a -= lo; uint32(a) < uint32(n) {
				dst[int(a)*w+j] += gr[j]
			}
		}
	}
}
