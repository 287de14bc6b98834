package dense

import (
	"fmt"
	"os"
	"sync"

	"github.com/supergcn/supergcn/internal/amx"
	"github.com/supergcn/supergcn/internal/dispatch"
	"github.com/supergcn/supergcn/internal/par"
)

// Precision is the arithmetic of a Work's products.
type Precision uint8

const (
	// FP32: float32 operands, the installed BLAS (Gemm).
	FP32 Precision = iota
	// BF16: both operands rounded to bfloat16 (nearest, ties to even;
	// internal/amx.Round), products and sums in float32. This is the
	// mixed precision of bfloat16 training: the result differs from FP32
	// by the operands' rounding (relative 2⁻⁹ each), not by a shorter sum.
	// It runs on the AMX tile unit where the CPU has AMX-BF16, and is
	// otherwise emulated (the rounded operands through float32 BLAS:
	// the same values, slower than FP32).
	BF16
)

// Precisions lists the names ParsePrecision accepts.
func Precisions() []string { return []string{"fp32", "bf16"} }

// String is the precision's name (fp32, bf16).
func (p Precision) String() string {
	if p == BF16 {
		return "bf16"
	}
	return "fp32"
}

// ParsePrecision maps a name (fp32, bf16; "" is fp32) to its Precision.
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "fp32":
		return FP32, nil
	case "bf16":
		return BF16, nil
	}
	return FP32, fmt.Errorf("dense: precision %q is not fp32 or bf16", s)
}

// BF16Kernel names what runs Work.Gemm's BF16 products on this CPU and
// why.
func BF16Kernel() string {
	if err := tilesUsable(); err != nil {
		return fmt.Sprintf("emulated (operands rounded, float32 BLAS): %v", err)
	}
	return "amx (TDPBF16PS tiles, 32×32 blocks)"
}

// tilesUsable reports why the tile unit cannot run the BF16 products: no
// AMX-BF16 (or no permission from Linux), or SUPERGCN_KERNEL=generic,
// which forces the emulated product as it forces every family's pure-Go
// kernel.
func tilesUsable() error {
	if dispatch.Normalize(os.Getenv(dispatch.Env)) == dispatch.Generic {
		return fmt.Errorf("%s=%s", dispatch.Env, dispatch.Generic)
	}
	return amx.Enable()
}

// bf16Chunk is the rows of A one worker converts at once (the product's
// rows, or for the weight gradient the long inner dimension): its
// bfloat16 copy and the product's block stay in the L2 cache.
const (
	bf16Chunk      = 256
	bf16InnerChunk = 512
)

// bf16Work is Work's BF16 state: the packed second operand and the
// workers' scratch, kept across calls.
type bf16Work struct {
	bp      []uint32  // op(b) in pairs (VNNI), kp/2 × np
	bt      []float32 // op(b) transposed, when tB
	scratch sync.Pool // *bf16Scratch
	ra, rb  []float32 // the emulated product's rounded operands
	part    []float32 // innerAMX's partial products, groups × mp × np
}

type bf16Scratch struct {
	a []uint16
	b []uint32
	c []float32
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

func (s *bf16Scratch) grow(na, nb, nc int) {
	if cap(s.a) < na {
		s.a = make([]uint16, na)
	}
	if cap(s.b) < nb {
		s.b = make([]uint32, nb)
	}
	if cap(s.c) < nc {
		s.c = make([]float32, nc)
	}
	s.a, s.b, s.c = s.a[:na], s.b[:nb], s.c[:nc]
}

func (w *bf16Work) get() *bf16Scratch {
	if s, ok := w.scratch.Get().(*bf16Scratch); ok {
		return s
	}
	return &bf16Scratch{}
}

// Gemm2 sets c = a1·op(b1) + a2·op(b2) + beta·c, where op(b) is bᵀ when
// tB: the two products of a GraphSAGE layer that share their output. With
// FP32 it is w.Gemm(false, tB, 1, a1, b1, beta, c) followed by
// w.Gemm(false, tB, 1, a2, b2, 1, c), bit for bit. With BF16 on the tile
// unit it is one product over the two inner dimensions laid end to end,
// so c is written once instead of written, read and written again.
func (w *Work) Gemm2(tB bool, a1, b1, a2, b2 *Matrix, beta float32, c *Matrix) {
	m, k1, n := shapes(false, tB, a1, b1, c)
	_, k2, _ := shapes(false, tB, a2, b2, c)
	if w.Precision == BF16 && m >= amx.BlockRows && n > 0 && k1 > 0 && k2 > 0 && tilesUsable() == nil {
		w.bf.rowsAMX(tB, 1, []operand{{a1, b1}, {a2, b2}}, beta, c)
		return
	}
	w.Gemm(false, tB, 1, a1, b1, beta, c)
	w.Gemm(false, tB, 1, a2, b2, 1, c)
}

// gemmBF16 is Work.Gemm with Precision BF16 (shapes already checked, no
// zero dimension, alpha ≠ 0).
func gemmBF16(w *Work, tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	if tilesUsable() == nil {
		switch {
		case !tA && c.Rows >= amx.BlockRows:
			w.bf.rowsAMX(tB, alpha, []operand{{a, b}}, beta, c)
			return
		case tA && !tB && a.Rows >= 2*amx.KStep:
			w.bf.innerAMX(alpha, a, b, beta, c)
			return
		}
	}
	w.bf.emulated(w, tA, tB, alpha, a, b, beta, c)
}

// emulated runs the BF16 product as float32 BLAS on rounded copies.
func (w *bf16Work) emulated(work *Work, tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	w.ra = grow(w.ra, len(a.Data))
	w.rb = grow(w.rb, len(b.Data))
	par.For(len(a.Data), 1<<16, func(lo, hi int) { amx.RoundSlice(w.ra[lo:hi], a.Data[lo:hi]) })
	amx.RoundSlice(w.rb, b.Data)
	ra := &Matrix{Rows: a.Rows, Cols: a.Cols, Data: w.ra}
	rb := &Matrix{Rows: b.Rows, Cols: b.Cols, Data: w.rb}
	gemm32(work, tA, tB, alpha, ra, rb, beta, c)
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// packB puts op(b) (k×n) into dst in pairs: kp/2 rows of np uint32,
// zero past k and n.
func (w *bf16Work) packB(dst []uint32, tB bool, b *Matrix, k, n, kp, np int) {
	dst = dst[:kp/2*np]
	clear(dst)
	src, stride := b.Data, b.Cols
	if tB {
		w.bt = grow(w.bt, k*n)
		for i := range k {
			for j := range n {
				w.bt[i*n+j] = b.Data[j*b.Cols+i]
			}
		}
		src, stride = w.bt, n
	}
	amx.PairRows(dst, np, src, stride, k, n)
}

// operand is one term a·op(b) of a sum of products with one output.
type operand struct{ a, b *Matrix }

// rowsAMX is c = alpha·Σ aᵢ·op(bᵢ) + beta·c on the tile unit: the
// terms' inner dimensions are laid end to end (each padded to KStep), so
// one tile product over the concatenation computes the sum and c is
// written once. The bᵢ are packed once; the aᵢ's rows are rounded chunk by
// chunk into each worker's scratch, side by side.
func (w *bf16Work) rowsAMX(tB bool, alpha float32, terms []operand, beta float32, c *Matrix) {
	m, n := c.Rows, c.Cols
	np := roundUp(n, amx.BlockCols)
	kp := 0
	for _, t := range terms {
		kp += roundUp(t.a.Cols, amx.KStep)
	}
	if cap(w.bp) < kp/2*np {
		w.bp = make([]uint32, kp/2*np)
	}
	w.bp = w.bp[:kp/2*np]
	off := 0
	for _, t := range terms {
		k := t.a.Cols
		kpi := roundUp(k, amx.KStep)
		w.packB(w.bp[off/2*np:], tB, t.b, k, n, kpi, np)
		off += kpi
	}
	// Full blocks go straight into c where its rows are whole column
	// blocks and the result needs no scaling.
	direct := n == np && alpha == 1 && (beta == 0 || beta == 1)
	chunks := (m + bf16Chunk - 1) / bf16Chunk
	par.Blocks(chunks, 0, func(i int) {
		r0, r1 := i*bf16Chunk, min((i+1)*bf16Chunk, m)
		rows := r1 - r0
		blocks := (rows + amx.BlockRows - 1) / amx.BlockRows
		s := w.get()
		defer w.scratch.Put(s)
		s.grow(blocks*amx.BlockRows*kp, 0, blocks*amx.BlockRows*np)
		off := 0
		for _, t := range terms {
			k := t.a.Cols
			kpi := roundUp(k, amx.KStep)
			amx.RoundRows(s.a[off:], kp, t.a.Data[r0*k:], k, rows, k)
			if kpi > k {
				for r := range rows {
					clear(s.a[r*kp+off+k : r*kp+off+kpi])
				}
			}
			off += kpi
		}
		clear(s.a[rows*kp:])
		full := 0
		if direct {
			full = rows / amx.BlockRows
			amx.Tiles(s.a, 2*kp, w.bp, 4*np, c.Data[r0*n:], 4*n, full, np/amx.BlockCols, kp/amx.KStep, beta == 1)
		}
		if full == blocks {
			return
		}
		done := full * amx.BlockRows
		amx.Tiles(s.a[done*kp:], 2*kp, w.bp, 4*np, s.c, 4*np, blocks-full, np/amx.BlockCols, kp/amx.KStep, false)
		for r := done; r < rows; r++ {
			combine(alpha, s.c[(r-done)*np:(r-done)*np+n], beta, c.Data[(r0+r)*n:(r0+r+1)*n])
		}
	})
}

// combine sets dst = alpha·src + beta·dst (beta == 0 overwrites).
func combine(alpha float32, src []float32, beta float32, dst []float32) {
	switch {
	case beta == 0 && alpha == 1:
		copy(dst, src)
	case beta == 0:
		for j, v := range src {
			dst[j] = alpha * v
		}
	default:
		if beta != 1 {
			Scale(beta, dst)
		}
		Axpy(alpha, src, dst)
	}
}

// innerAMX is c = alpha·aᵀ·b + beta·c (the weight gradient: a and b have
// the long dimension as rows) on the tile unit. The rows are split as
// gemmInner splits them (blocks of GemmBlock, at most maxInnerParts
// groups, a partial product per group summed in group order), so the
// result does not depend on the thread count. Within a group, chunks of
// bf16InnerChunk rows of the narrower operand are transposed and those of
// the other paired into the tile operands (when b is the narrower, the
// partials hold cᵀ = bᵀ·a), and the group's partial accumulates on the
// tile unit.
func (w *bf16Work) innerAMX(alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	p, q := a, b // p transposed (A operand), q paired (B operand)
	swap := b.Cols < a.Cols
	if swap {
		p, q = b, a
	}
	kk, m, n := p.Rows, p.Cols, q.Cols
	mp, np := roundUp(m, amx.BlockRows), roundUp(n, amx.BlockCols)
	const cw = bf16InnerChunk // A's row stride: one chunk of the inner dimension
	blocks := (kk + GemmBlock - 1) / GemmBlock
	groups := min(blocks, maxInnerParts)
	size := mp * np
	w.part = grow(w.part, groups*size)
	par.Blocks(groups, 0, func(g int) {
		part := w.part[g*size : (g+1)*size]
		s := w.get()
		defer w.scratch.Put(s)
		s.grow(mp*cw, cw/2*np, 0)
		clear(s.a[m*cw:]) // A's rows past m stay zero
		q0, q1 := g*blocks/groups*GemmBlock, min((g+1)*blocks/groups*GemmBlock, kk)
		for lo := q0; lo < q1; lo += cw {
			rows := min(cw, q1-lo)
			rp := roundUp(rows, amx.KStep)
			amx.TransposeRows(s.a, cw, p.Data[lo*m:], m, rows, m)
			amx.PairRows(s.b, np, q.Data[lo*n:], n, rows, n)
			pairs := (rows + 1) / 2
			if rows < rp {
				for j := range m {
					clear(s.a[j*cw+rows : j*cw+rp])
				}
				clear(s.b[pairs*np : rp/2*np])
			}
			if np > n {
				for p := range pairs {
					clear(s.b[p*np+n : (p+1)*np])
				}
			}
			amx.Tiles(s.a, 2*cw, s.b, 4*np, part, 4*np, mp/amx.BlockRows, np/amx.BlockCols, rp/amx.KStep, lo != q0)
		}
	})
	par.For(c.Rows, 16, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			dst := c.Data[r*c.Cols : (r+1)*c.Cols]
			if beta == 0 {
				clear(dst)
			} else if beta != 1 {
				Scale(beta, dst)
			}
			for g := range groups {
				pg := w.part[g*size : (g+1)*size]
				if !swap {
					Axpy(alpha, pg[r*np:r*np+n], dst)
					continue
				}
				for j := range dst { // c[r][j] = cᵀ[j][r]
					dst[j] += alpha * pg[j*np+r]
				}
			}
		}
	})
}
