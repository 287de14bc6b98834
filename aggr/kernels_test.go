package aggr

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/dispatch"
)

// testWidths are the row widths every kernel is checked at: all of 1…67,
// then wide rows crossing every block size and ending in every tail class.
func testWidths() []int {
	var ws []int
	for w := 1; w <= 67; w++ {
		ws = append(ws, w)
	}
	return append(ws, 127, 128, 129, 256, 602, 1031)
}

const sentinel = float32(-7.77e33)

// refAccum is the naive float64 reference of the micro-kernel contract; it
// also returns, per column, Σ|terms| + |out| for the tolerance.
func refAccum(out, x []float32, stride int, idx []int32, w []float32) (ref, mag []float64) {
	ref = make([]float64, len(out))
	mag = make([]float64, len(out))
	for j := range out {
		s, m := float64(out[j]), math.Abs(float64(out[j]))
		for k, u := range idx {
			t := float64(x[int(u)*stride+j])
			if w != nil {
				t *= float64(w[k])
			}
			s += t
			m += math.Abs(t)
		}
		ref[j], mag[j] = s, m
	}
	return ref, mag
}

func close32(got float32, ref, mag float64) bool {
	return math.Abs(float64(got)-ref) <= 2e-5*mag+1e-30
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// TestKernels checks every kernel available here (asm and generic twin) on
// misaligned, sentinel-padded buffers against the float64 reference, and
// against the generic twin.
func TestKernels(t *testing.T) {
	for _, k := range kernelTable {
		t.Run(k.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(k.name))))
			for _, width := range testWidths() {
				for _, weighted := range []bool{false, true} {
					for _, nnz := range []int{0, 1, 3, 8, 9, 17, 40} {
						pad := rng.IntN(3) * (1 + rng.IntN(5)) // stride > width in two thirds of the cases
						stride := width + pad
						rows := 1 + rng.IntN(50)
						xoff := rng.IntN(16)
						ooff := rng.IntN(16)
						// x is the tail of a longer buffer (misaligned by xoff) and
						// ends exactly at the last row's last column.
						xbuf := randVec(rng, xoff+(rows-1)*stride+width)
						x := xbuf[xoff:]
						idx := make([]int32, nnz)
						for i := range idx {
							idx[i] = int32(rng.IntN(rows))
						}
						if nnz > 2 {
							idx[0] = int32(rows - 1) // the very last row
						}
						var wv []float32
						if weighted {
							wv = randVec(rng, nnz+rng.IntN(3))
						}
						obuf := make([]float32, ooff+width+16)
						for i := range obuf {
							obuf[i] = sentinel
						}
						out := obuf[ooff : ooff+width]
						copy(out, randVec(rng, width))
						out0 := append([]float32(nil), out...)
						ref, mag := refAccum(out, x, stride, idx, wv)
						gen := append([]float32(nil), out...)
						if weighted {
							k.rowsW(out, x, stride, idx, wv)
							accumRowsWGeneric(gen, x, stride, idx, wv)
						} else {
							k.rows(out, x, stride, idx)
							accumRowsGeneric(gen, x, stride, idx)
						}
						desc := fmt.Sprintf("width %d stride %d nnz %d weighted %v xoff %d ooff %d", width, stride, nnz, weighted, xoff, ooff)
						for i := 0; i < ooff; i++ {
							if obuf[i] != sentinel {
								t.Fatalf("%s: wrote before out at %d", desc, i-ooff)
							}
						}
						for i := ooff + width; i < len(obuf); i++ {
							if obuf[i] != sentinel {
								t.Fatalf("%s: wrote after out at +%d", desc, i-ooff-width)
							}
						}
						for j := range out {
							if nnz == 0 && out[j] != out0[j] {
								t.Fatalf("%s: empty idx changed out[%d]", desc, j)
							}
							if !close32(out[j], ref[j], mag[j]) {
								t.Fatalf("%s: out[%d]=%v, reference %v", desc, j, out[j], ref[j])
							}
							if !close32(out[j], float64(gen[j]), mag[j]) {
								t.Fatalf("%s: out[%d]=%v, generic twin %v", desc, j, out[j], gen[j])
							}
						}
					}
				}
			}
		})
	}
}

// checkRow runs kernel k on one output row, unweighted and weighted by w,
// and compares each result with the float64 reference.
func checkRow(t *testing.T, k kernel, width int, x []float32, stride int, idx []int32, w []float32, rng *rand.Rand, what string) {
	t.Helper()
	for _, wv := range [][]float32{nil, w} {
		out := randVec(rng, width)
		ref, mag := refAccum(out, x, stride, idx, wv)
		if wv == nil {
			k.rows(out, x, stride, idx)
		} else {
			k.rowsW(out, x, stride, idx, wv)
		}
		for j := range out {
			if !close32(out[j], ref[j], mag[j]) {
				t.Fatalf("%s %s width %d weighted %v: out[%d]=%v, reference %v", k.name, what, width, wv != nil, j, out[j], ref[j])
			}
		}
	}
}

// TestKernelsLongRow runs one long index list (hub row) through every
// kernel at a few widths, where the prefetching loop dominates.
func TestKernelsLongRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, k := range kernelTable {
		for _, width := range []int{5, 16, 130, 1031} {
			rows := 300
			x := randVec(rng, rows*width)
			idx := make([]int32, 5000)
			for i := range idx {
				idx[i] = int32(rng.IntN(rows))
			}
			checkRow(t, k, width, x, width, idx, randVec(rng, len(idx)), rng, "long row")
		}
	}
}

// TestKernelsOffered: the kernels offered are this architecture's kernels
// that internal/dispatch finds the CPU supports (its own test checks that
// against the CPU flags), best first, each native except generic, so a
// wiring bug cannot silently leave generic alone under test.
func TestKernelsOffered(t *testing.T) {
	var want []string
	for _, k := range platformKernels() {
		if dispatch.Supported(k.name) {
			want = append(want, k.name)
		}
	}
	want = append(want, "generic")
	if got := Kernels(); !slices.Equal(got, want) {
		t.Fatalf("Kernels() = %v, want %v", got, want)
	}
	for _, k := range kernelTable {
		if k.native != (k.name != "generic") {
			t.Fatalf("kernel %q native = %v", k.name, k.native)
		}
	}
}

// TestKernelsEmptyRow: a row of no columns leaves the buffer around it
// untouched, with and without edges.
func TestKernelsEmptyRow(t *testing.T) {
	x := []float32{1, 2, 3, 4}
	for _, k := range kernelTable {
		buf := []float32{sentinel, sentinel}
		for _, idx := range [][]int32{nil, {0, 1, 3}} {
			k.rows(buf[1:1], x, 1, idx)
			k.rowsW(buf[1:1], x, 1, idx, []float32{1, 2, 3})
			if buf[0] != sentinel || buf[1] != sentinel {
				t.Fatalf("%s: an empty row wrote %v", k.name, buf)
			}
		}
	}
}

func TestKernelLookup(t *testing.T) {
	names := Kernels()
	if len(names) == 0 || names[len(names)-1] != "generic" {
		t.Fatalf("Kernels() = %v, want generic last", names)
	}
	for _, n := range names {
		e, err := New(2, n)
		if err != nil {
			t.Fatalf("New(%q): %v", n, err)
		}
		if e.KernelName() != n {
			t.Fatalf("New(%q).KernelName() = %q", n, e.KernelName())
		}
		e.Close()
	}
	if _, err := New(1, "bogus"); err == nil {
		t.Fatal("New(bogus): no error")
	}
	// a known kernel this build cannot run
	for _, n := range dispatch.Known() {
		avail := false
		for _, m := range names {
			avail = avail || m == n
		}
		if !avail {
			if _, err := New(1, n); err == nil {
				t.Fatalf("New(%q): no error, available: %v", n, names)
			}
		}
	}
	e, err := New(1, "auto")
	if err != nil || e.KernelName() != names[0] {
		t.Fatalf("auto: %v, %v; want %s", e, err, names[0])
	}
	if e, err := New(1, " AUTO "); err != nil || e.KernelName() != names[0] {
		t.Fatalf("AUTO: %v; want %s", err, names[0])
	}
	if e, err := New(1, strings.ToUpper(names[0])); err != nil || e.KernelName() != names[0] {
		t.Fatalf("%s: %v", strings.ToUpper(names[0]), err)
	}
	t.Setenv(dispatch.Env, "Generic")
	if KernelName() != "generic" || mustNew(t, 1).KernelName() != "generic" {
		t.Fatalf("%s=Generic not honoured", dispatch.Env)
	}
	t.Setenv(dispatch.Env, "bogus")
	var de *dispatch.Error
	if _, err := New(1, ""); !errors.As(err, &de) || de.Source != dispatch.Env || !de.Unknown {
		t.Fatalf("%s=bogus: %v", dispatch.Env, err)
	}
	if _, err := New(1, "bogus"); !errors.As(err, &de) || de.Source != dispatch.Field {
		t.Fatalf("bogus argument: %v", err)
	}
}
