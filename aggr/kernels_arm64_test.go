//go:build !noasm

package aggr

import (
	"fmt"
	"math"
	"math/rand"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// arm64Kernel is one assembly kernel under test.
type arm64Kernel struct {
	name  string
	rows  func(out, x []float32, stride int, idx []int32)
	rowsW func(out, x []float32, stride int, idx []int32, w []float32)
}

// arm64Kernels returns the assembly kernels this CPU can run: NEON always,
// SVE when the OS reports it (qemu-aarch64 -cpu max,sve512=on does).
func arm64Kernels(t testing.TB) []arm64Kernel {
	ks := []arm64Kernel{{"neon", accumRowsNEON, accumRowsWNEON}}
	if cpu.ARM64.HasSVE {
		ks = append(ks, arm64Kernel{"sve", accumRowsSVE, accumRowsWSVE})
		t.Logf("SVE vector length %d bits", 32*sveLen32())
	} else {
		t.Logf("CPU has no SVE: only NEON tested")
	}
	return ks
}

// a64Sentinel fills the guard cells around out; its bit pattern (a NaN payload)
// cannot result from any sum, so a stray store is always noticed.
const a64Sentinel = 0x7fc0dead

func a64SentinelF() float32 { return math.Float32frombits(a64Sentinel) }

// a64CaseData is one input set laid out with guard cells around out.
type a64CaseData struct {
	buf    []float32 // guard | out | guard
	lo     int       // out = buf[lo : lo+width]
	width  int
	x      []float32
	stride int
	idx    []int32
	w      []float32
}

func (c *a64CaseData) out() []float32 { return c.buf[c.lo : c.lo+c.width : c.lo+c.width] }

const a64Guard = 19

// a64NewCase builds random data: rows source rows of the given stride (only the
// first width columns of the last row exist in x), nnz edges with repeats,
// out and x starting misalign floats past a 64-byte boundary.
func a64NewCase(rng *rand.Rand, width, stride, rows, nnz, misalign int) *a64CaseData {
	c := &a64CaseData{width: width, stride: stride}
	c.buf = make([]float32, misalign+2*a64Guard+width)
	c.lo = misalign + a64Guard
	for i := range c.buf {
		c.buf[i] = a64SentinelF()
	}
	for j := range c.out() {
		c.buf[c.lo+j] = rng.Float32()*2 - 1
	}
	xlen := (rows-1)*stride + width
	xb := make([]float32, xlen+misalign)
	c.x = xb[misalign : misalign+xlen : misalign+xlen]
	for i := range c.x {
		c.x[i] = rng.Float32()*2 - 1
	}
	c.idx = make([]int32, nnz)
	c.w = make([]float32, nnz)
	for k := range c.idx {
		c.idx[k] = int32(rng.Intn(rows))
		c.w[k] = rng.Float32()*4 - 2
	}
	if nnz > 2 {
		c.idx[nnz-1] = int32(rows - 1) // the last row, ending x exactly
		c.idx[1] = c.idx[0]            // a repeated source
	}
	return c
}

func (c *a64CaseData) clone() *a64CaseData {
	d := *c
	d.buf = append([]float32(nil), c.buf...)
	return &d
}

// reference returns the float64 result and, per column, Σ|terms| (the scale
// of the rounding error a float32 sum can make).
func (c *a64CaseData) reference(weighted bool) (ref, mag []float64) {
	ref = make([]float64, c.width)
	mag = make([]float64, c.width)
	for j := range ref {
		o := float64(c.out()[j])
		ref[j], mag[j] = o, math.Abs(o)
	}
	for k, u := range c.idx {
		w := 1.0
		if weighted {
			w = float64(c.w[k])
		}
		r := c.x[int(u)*c.stride:]
		for j := range ref {
			t := w * float64(r[j])
			ref[j] += t
			mag[j] += math.Abs(t)
		}
	}
	return ref, mag
}

// a64Check runs kernel k on c and compares it with the generic twin (bit for bit
// when unweighted: both add in k order in float32; within rounding when
// weighted, the twin may or may not fuse the multiply-add) and with the float64
// reference, and checks every guard cell.
func a64Check(t *testing.T, k arm64Kernel, c *a64CaseData, weighted bool, what string) {
	t.Helper()
	got, want := c.clone(), c.clone()
	if weighted {
		k.rowsW(got.out(), got.x, got.stride, got.idx, got.w)
		accumRowsWGeneric(want.out(), want.x, want.stride, want.idx, want.w)
	} else {
		k.rows(got.out(), got.x, got.stride, got.idx)
		accumRowsGeneric(want.out(), want.x, want.stride, want.idx)
	}
	for i := 0; i < got.lo; i++ {
		if math.Float32bits(got.buf[i]) != a64Sentinel {
			t.Fatalf("%s %s weighted=%v: wrote out[%d] (before the row)", k.name, what, weighted, i-got.lo)
		}
	}
	for i := got.lo + got.width; i < len(got.buf); i++ {
		if math.Float32bits(got.buf[i]) != a64Sentinel {
			t.Fatalf("%s %s weighted=%v: wrote out[%d] (past the row)", k.name, what, weighted, i-got.lo)
		}
	}
	ref, mag := c.reference(weighted)
	g, w := got.out(), want.out()
	for j := range g {
		if !weighted && math.Float32bits(g[j]) != math.Float32bits(w[j]) {
			t.Fatalf("%s %s: out[%d] = %v, generic twin %v", k.name, what, j, g[j], w[j])
		}
		tol := float64(len(c.idx)+2) * 0x1p-23 * mag[j]
		if weighted && math.Abs(float64(g[j])-float64(w[j])) > 2*tol {
			t.Fatalf("%s %s weighted: out[%d] = %v, generic twin %v", k.name, what, j, g[j], w[j])
		}
		if d := math.Abs(float64(g[j]) - ref[j]); !(d <= tol) {
			t.Fatalf("%s %s weighted=%v: out[%d] = %v, float64 reference %v (|diff| %g > %g)",
				k.name, what, weighted, j, g[j], ref[j], d, tol)
		}
	}
}

func a64TestWidths() []int {
	var ws []int
	for w := 1; w <= 67; w++ {
		ws = append(ws, w)
	}
	// 400 and 1000 run the SVE 16-vector blocks and then an 8-vector one at
	// VL 128 and 512 bits.
	return append(ws, 128, 256, 400, 602, 1000, 1031)
}

// TestArm64KernelsMatchGeneric: every width 1…67 and a few wide rows, stride
// equal to or past the width, short and longer edge lists (shorter and longer
// than the prefetch distance), misaligned out and x, weighted and not.
func TestArm64KernelsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, k := range arm64Kernels(t) {
		for _, width := range a64TestWidths() {
			for _, nnz := range []int{1, 3, 17} {
				stride := width
				if nnz != 3 {
					stride = width + 1 + rng.Intn(13)
				}
				misalign := (width + nnz) % 4
				c := a64NewCase(rng, width, stride, 9, nnz, misalign)
				what := fmt.Sprintf("width=%d stride=%d nnz=%d misalign=%d", width, stride, nnz, misalign)
				a64Check(t, k, c, false, what)
				a64Check(t, k, c, true, what)
			}
		}
	}
}

// TestArm64KernelsEmpty: no edges, or no columns, leave out untouched.
func TestArm64KernelsEmpty(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, k := range arm64Kernels(t) {
		for _, width := range []int{0, 1, 5, 64, 602} {
			for _, nnz := range []int{0, 4} {
				if width == 0 && nnz > 0 {
					c := a64NewCase(rng, 1, 8, 4, nnz, 1)
					c.width = 0
					c.buf[c.lo] = a64SentinelF() // now a guard cell too
					a64Check(t, k, c, false, "width=0")
					a64Check(t, k, c, true, "width=0")
					continue
				}
				if nnz > 0 {
					continue
				}
				c := a64NewCase(rng, width, width+3, 4, 0, 2)
				a64Check(t, k, c, false, fmt.Sprintf("width=%d nnz=0", width))
				a64Check(t, k, c, true, fmt.Sprintf("width=%d nnz=0", width))
				// nil idx and nil w
				c.idx, c.w = nil, nil
				a64Check(t, k, c, false, fmt.Sprintf("width=%d idx=nil", width))
				a64Check(t, k, c, true, fmt.Sprintf("width=%d idx=nil", width))
			}
		}
	}
}

// TestArm64KernelsHugeRow: one output row with many thousand in-edges (a hub
// node), so the edge loop runs long in every column block.
func TestArm64KernelsHugeRow(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, k := range arm64Kernels(t) {
		for _, width := range []int{83, 131} {
			c := a64NewCase(rng, width, width+5, 300, 6000, 3)
			a64Check(t, k, c, false, fmt.Sprintf("hub width=%d", width))
			a64Check(t, k, c, true, fmt.Sprintf("hub width=%d", width))
		}
	}
}

// TestArm64KernelsGuardPage: x ends right before a PROT_NONE page and the
// last edge reads its last row, so a load past the row's len(out) columns (a
// vector tail read too wide) faults and kills the test.
func TestArm64KernelsGuardPage(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[3*page:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	all := a64UnsafeFloats(mem[:3*page])
	rng := rand.New(rand.NewSource(4))
	for _, k := range arm64Kernels(t) {
		for _, width := range []int{1, 2, 3, 5, 7, 13, 17, 31, 63, 67, 131, 602} {
			stride := width + width%3
			rows := (len(all) - width) / stride // rows-1 full strides + one width fit
			xlen := (rows-1)*stride + width
			x := all[len(all)-xlen:]
			for i := range x {
				x[i] = rng.Float32()
			}
			c := a64NewCase(rng, width, stride, rows, 5, 1)
			c.x = x // a64NewCase already made the last edge read row rows-1
			a64Check(t, k, c, false, fmt.Sprintf("guard page width=%d", width))
			a64Check(t, k, c, true, fmt.Sprintf("guard page width=%d", width))
		}
	}
}

// TestArm64Dispatch: the table offers SVE first when the CPU has it, NEON
// always, and SUPERGCN_KERNEL names resolve to them.
func TestArm64Dispatch(t *testing.T) {
	names := Kernels()
	want := []string{"neon", "generic"}
	if cpu.ARM64.HasSVE {
		want = []string{"sve", "neon", "generic"}
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("Kernels() = %v, want %v", names, want)
	}
	for _, n := range want {
		k, err := lookupKernel(n)
		if err != nil || k.name != n {
			t.Fatalf("lookupKernel(%q) = %q, %v", n, k.name, err)
		}
		if k.native != (n != "generic") {
			t.Fatalf("kernel %q native = %v", n, k.native)
		}
	}
	if !cpu.ARM64.HasSVE {
		if _, err := lookupKernel("sve"); err == nil {
			t.Fatalf("lookupKernel(sve) succeeded on a CPU without SVE")
		}
	}
}

// a64UnsafeFloats views page-aligned bytes as float32s.
func a64UnsafeFloats(b []byte) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

var a64BenchSink float32

func a64BenchNaive(out, x []float32, stride int, idx []int32) {
	for _, u := range idx {
		r := x[int(u)*stride:]
		for j := range out {
			out[j] += r[j]
		}
	}
}

// BenchmarkArm64AccumRows compares the kernels with a naive Go loop on a
// 128-wide row with 32 edges. Timings under qemu mean nothing.
func BenchmarkArm64AccumRows(b *testing.B) {
	rng := rand.New(rand.NewSource(5))
	c := a64NewCase(rng, 128, 128, 4096, 32, 0)
	ks := append(arm64Kernels(b), arm64Kernel{name: "naive", rows: a64BenchNaive})
	for _, k := range ks {
		b.Run(k.name, func(b *testing.B) {
			out := make([]float32, c.width)
			b.SetBytes(int64(4 * c.width * len(c.idx)))
			for i := 0; i < b.N; i++ {
				k.rows(out, c.x, c.stride, c.idx)
			}
			a64BenchSink += out[0]
		})
	}
}
