package attn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/internal/rowk"
)

// randGraph is a random block: rows × cols with some empty rows and
// repeated columns.
func randGraph(t *testing.T, r *rand.Rand, rows, cols int) *Graph {
	t.Helper()
	ptr := []int64{0}
	var idx []int32
	for v := range rows {
		deg := r.IntN(5)
		if v%7 == 3 {
			deg = 0
		}
		for range deg {
			idx = append(idx, int32(r.IntN(cols)))
		}
		ptr = append(ptr, int64(len(idx)))
	}
	g, err := NewGraph(rows, cols, ptr, idx)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// output is R/S of every row (0 for empty rows).
func output(sp Spec, st *State) []float32 {
	h, f := sp.Heads, sp.Width
	o := make([]float32, len(st.R))
	for v := range len(st.M) / h {
		for hd := range h {
			if s := st.S[v*h+hd]; s > 0 {
				for j := range f {
					o[v*h*f+hd*f+j] = st.R[v*h*f+hd*f+j] / s
				}
			}
		}
	}
	return o
}

// reference is the attention output in float64, straight from the
// definition.
func reference(g *Graph, sp Spec, z, src, dst []float32) []float64 {
	h, f := sp.Heads, sp.Width
	out := make([]float64, g.Rows*h*f)
	for v := range g.Rows {
		for hd := range h {
			var ls []float64
			m := math.Inf(-1)
			for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
				e := float64(src[int(g.Idx[k])*h+hd]) + float64(dst[v*h+hd])
				if e < 0 {
					e *= float64(sp.Slope)
				}
				ls = append(ls, e)
				m = math.Max(m, e)
			}
			var s float64
			for i := range ls {
				ls[i] = math.Exp(ls[i] - m)
				s += ls[i]
			}
			for i, k := 0, g.Ptr[v]; k < g.Ptr[v+1]; i, k = i+1, k+1 {
				u := int(g.Idx[k])
				a := ls[i] / s
				if !Keep(sp.Seed, int64(v), int64(u), hd, sp.Drop) {
					a = 0
				}
				a /= 1 - float64(sp.Drop)
				for j := range f {
					out[v*h*f+hd*f+j] += a * float64(z[u*h*f+hd*f+j])
				}
			}
		}
	}
	return out
}

func TestForwardMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sp := range []Spec{{Heads: 1, Width: 1, Slope: 0.2}, {Heads: 3, Width: 5, Slope: 0.2}, {Heads: 2, Width: 9, Slope: 0.1, Drop: 0.4, Seed: 7}} {
		g := randGraph(t, r, 23, 17)
		z, src, dst := randVec(r, 17*sp.Heads*sp.Width), randVec(r, 17*sp.Heads), randVec(r, 23*sp.Heads)
		var st State
		if err := Forward(g, sp, z, src, dst, Ids{}, GenericRowsW, &st); err != nil {
			t.Fatal(err)
		}
		got, want := output(sp, &st), reference(g, sp, z, src, dst)
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
				t.Fatalf("%+v: out[%d] = %g, want %g", sp, i, got[i], want[i])
			}
		}
	}
}

// TestMergeSplitsExactly splits every row's edges into two blocks: their
// merged states equal the state of the whole row.
func TestMergeSplitsExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sp := Spec{Heads: 2, Width: 3, Slope: 0.2, Drop: 0.3, Seed: 11}
	g := randGraph(t, r, 30, 12)
	z, src, dst := randVec(r, 12*6), randVec(r, 12*2), randVec(r, 30*2)
	parts := [2]struct {
		ptr []int64
		idx []int32
	}{{ptr: []int64{0}}, {ptr: []int64{0}}}
	for v := range g.Rows {
		for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
			b := r.IntN(2)
			parts[b].idx = append(parts[b].idx, g.Idx[k])
		}
		for b := range parts {
			parts[b].ptr = append(parts[b].ptr, int64(len(parts[b].idx)))
		}
	}
	var whole, st [2]State
	if err := Forward(g, sp, z, src, dst, Ids{}, GenericRowsW, &whole[0]); err != nil {
		t.Fatal(err)
	}
	for b := range parts {
		gb, err := NewGraph(g.Rows, g.Cols, parts[b].ptr, parts[b].idx)
		if err != nil {
			t.Fatal(err)
		}
		if err := Forward(gb, sp, z, src, dst, Ids{}, GenericRowsW, &st[b]); err != nil {
			t.Fatal(err)
		}
	}
	h, f := sp.Heads, sp.Width
	for i := range st[0].M {
		v := i / h
		Merge(&st[0].M[i], &st[0].S[i], st[0].R[i*f:(i+1)*f], st[1].M[i], st[1].S[i], st[1].R[i*f:(i+1)*f])
		_ = v
	}
	a, b := output(sp, &st[0]), output(sp, &whole[0])
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			t.Fatalf("merged out[%d] = %g, whole row %g", i, a[i], b[i])
		}
	}
}

// TestBackwardFiniteDifferences checks Backward against central
// differences of L = Σ gout·out for every input.
func TestBackwardFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sp := Spec{Heads: 2, Width: 3, Slope: 0.2, Drop: 0.25, Seed: 3}
	g := randGraph(t, r, 9, 7)
	h, hf := sp.Heads, sp.Heads*sp.Width
	checkBackwardFD(t, g, sp, GenericRowsW, randVec(r, 7*hf), randVec(r, 7*h), randVec(r, 9*h), randVec(r, 9*hf), 2e-3)
}

// checkBackwardFD runs Forward and Backward with kernel kern and checks the
// gradients of z, src and dst against central differences of
// L = Σ gout·out (the float64 definition), within tol relative.
func checkBackwardFD(t *testing.T, g *Graph, sp Spec, kern RowsW, z, src, dst, gout []float32, tol float64) {
	t.Helper()
	loss := func() float64 {
		out := reference(g, sp, z, src, dst)
		var l float64
		for i := range out {
			l += out[i] * float64(gout[i])
		}
		return l
	}
	var st State
	if err := Forward(g, sp, z, src, dst, Ids{}, kern, &st); err != nil {
		t.Fatal(err)
	}
	o := output(sp, &st)
	gp, cd := make([]float32, len(gout)), make([]float32, len(dst))
	for i := range cd {
		c := Share(st.M[i], st.M[i], st.S[i])
		cd[i] = c * dot(gout[i*sp.Width:(i+1)*sp.Width], o[i*sp.Width:(i+1)*sp.Width])
		for j := range sp.Width {
			gp[i*sp.Width+j] = gout[i*sp.Width+j] * c
		}
	}
	gz, gsrc, gdst := make([]float32, len(z)), make([]float32, len(src)), make([]float32, len(dst))
	if err := Backward(g, sp, z, src, dst, gp, cd, kern, &st, &Scratch{}, gz, gsrc, gdst); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		x, g []float32
	}{{"z", z, gz}, {"src", src, gsrc}, {"dst", dst, gdst}} {
		for i := range c.x {
			x0 := c.x[i]
			const eps = 1e-3
			c.x[i] = x0 + eps
			lp := loss()
			c.x[i] = x0 - eps
			lm := loss()
			c.x[i] = x0
			fd := (lp - lm) / (2 * eps)
			if math.Abs(fd-float64(c.g[i])) > tol*(1+math.Abs(fd)) {
				t.Errorf("d%s[%d] = %g, finite difference %g", c.name, i, c.g[i], fd)
			}
		}
	}
}

func TestNewGraphRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		rows, cols int
		ptr        []int64
		idx        []int32
	}{
		{2, 2, []int64{0, 1}, []int32{0}},
		{1, 2, []int64{0, 1}, []int32{2}},
		{2, 2, []int64{0, 2, 1}, []int32{0}},
		{1, 2, []int64{1, 1}, []int32{0}},
	} {
		if _, err := NewGraph(c.rows, c.cols, c.ptr, c.idx); err == nil {
			t.Errorf("NewGraph(%d, %d, %v, %v) accepted", c.rows, c.cols, c.ptr, c.idx)
		}
	}
}

// TestForwardRejectsShortIDs: ids that do not name every row or column
// of the graph are an error of Forward and ForwardV2 (the masks' kernels
// read them unchecked), not a read past their end.
func TestForwardRejectsShortIDs(t *testing.T) {
	g, err := NewGraph(2, 3, []int64{0, 2, 3}, []int32{0, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	sp := Spec{Heads: 1, Width: 2, Slope: 0.2, Drop: 0.5, Seed: 1}
	z, src, dst := make([]float32, 6), make([]float32, 3), make([]float32, 2)
	att := make([]float32, 2)
	for _, ids := range []Ids{{Row: []int64{7}}, {Col: []int64{7, 8}}} {
		if err := Forward(g, sp, z, src, dst, ids, GenericRowsW, &State{}); err == nil {
			t.Errorf("Forward accepted ids %v", ids)
		}
		if err := ForwardV2(g, sp, z, make([]float32, 4), att, ids, GenericRowsW, &StateV2{}); err == nil {
			t.Errorf("ForwardV2 accepted ids %v", ids)
		}
	}
	full := Ids{Row: []int64{7, 8}, Col: []int64{1, 2, 3}}
	if err := Forward(g, sp, z, src, dst, full, GenericRowsW, &State{}); err != nil {
		t.Errorf("Forward: %v", err)
	}
	if err := ForwardV2(g, sp, z, make([]float32, 4), att, full, GenericRowsW, &StateV2{}); err != nil {
		t.Errorf("ForwardV2: %v", err)
	}
}

// TestStateReuse runs passes with and without dropout on one State: each
// equals the pass on a fresh State.
func TestStateReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	g := randGraph(t, r, 15, 15)
	z, src, dst := randVec(r, 15*4), randVec(r, 15*2), randVec(r, 15*2)
	var reused State
	for i, drop := range []float32{0, 0.5, 0, 0.3} {
		sp := Spec{Heads: 2, Width: 2, Slope: 0.2, Drop: drop, Seed: uint64(i)}
		var fresh State
		for _, st := range []*State{&reused, &fresh} {
			if err := Forward(g, sp, z, src, dst, Ids{}, GenericRowsW, st); err != nil {
				t.Fatal(err)
			}
		}
		a, b := output(sp, &reused), output(sp, &fresh)
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("pass %d (drop %g): out[%d] = %g on a reused state, %g on a fresh one", i, drop, j, a[j], b[j])
			}
		}
	}
}

// TestNoColumns: a block without columns (a rank that receives no rows)
// gives empty states and no gradients.
func TestNoColumns(t *testing.T) {
	g, err := NewGraph(3, 0, []int64{0, 0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := Spec{Heads: 2, Width: 3, Slope: 0.2, Drop: 0.5}
	var st State
	dst := make([]float32, 6)
	if err := Forward(g, sp, nil, nil, dst, Ids{}, GenericRowsW, &st); err != nil {
		t.Fatal(err)
	}
	for i := range st.S {
		if st.S[i] != 0 || !math.IsInf(float64(st.M[i]), -1) {
			t.Fatalf("state %d: M %g, S %g", i, st.M[i], st.S[i])
		}
	}
	gd := make([]float32, 6)
	if err := Backward(g, sp, nil, nil, dst, make([]float32, 18), make([]float32, 6), GenericRowsW, &st, &Scratch{}, nil, nil, gd); err != nil {
		t.Fatal(err)
	}
}

// TestKernelsMatchGeneric runs Forward and Backward on every aggregation
// kernel this CPU has against GenericRowsW: odd widths, rows without
// edges, operands misaligned by one float inside sentinel-padded buffers
// whose padding must stay untouched.
func TestKernelsMatchGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	if len(aggr.Kernels()) == 0 {
		t.Fatal("no aggregation kernel")
	}
	t.Logf("kernels %v", aggr.Kernels())
	for _, name := range aggr.Kernels() {
		e, err := aggr.New(1, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{1, 3, 7, 8, 9, 17, 33} {
			sp := Spec{Heads: 3, Width: width, Slope: 0.2, Drop: 0.2, Seed: 5}
			g := randGraph(t, r, 19, 13)
			hf := sp.Heads * width
			z, src, dst := padded(r, 13*hf), randVec(r, 13*3), randVec(r, 19*3)
			gp, cd := padded(r, 19*hf), randVec(r, 19*3)
			var want, got [4][]float32
			for i, kern := range []RowsW{GenericRowsW, e.RowsW()} {
				var st State
				if err := Forward(g, sp, z.in, src, dst, Ids{}, kern, &st); err != nil {
					t.Fatal(err)
				}
				gz := padded(nil, 13*hf)
				gs, gd := make([]float32, 13*3), make([]float32, 19*3)
				if err := Backward(g, sp, z.in, src, dst, gp.in, cd, kern, &st, &Scratch{}, gz.in, gs, gd); err != nil {
					t.Fatal(err)
				}
				gz.check(t)
				res := [4][]float32{st.R, gz.in, gs, gd}
				if i == 0 {
					want = res
				} else {
					got = res
				}
			}
			z.check(t)
			gp.check(t)
			for j, what := range []string{"R", "gz", "gsrc", "gdst"} {
				for k := range want[j] {
					if d := math.Abs(float64(got[j][k] - want[j][k])); d > 1e-5*(1+math.Abs(float64(want[j][k]))) {
						t.Fatalf("kernel %s, width %d: %s[%d] = %g, generic %g", name, width, what, k, got[j][k], want[j][k])
					}
				}
			}
		}
	}
}

// pad is a slice inside a buffer with sentinels on both sides, starting
// one float after a 64-byte boundary's worth of padding.
type pad struct{ buf, in []float32 }

const sentinel = float32(-12345.5)

// padded returns n values (random when r is given, else zeros) misaligned
// by one float, with 17 sentinels before and after.
func padded(r *rand.Rand, n int) pad {
	buf := make([]float32, n+35)
	for i := range buf {
		buf[i] = sentinel
	}
	in := buf[17+1 : 17+1+n : 17+1+n]
	for i := range in {
		in[i] = 0
		if r != nil {
			in[i] = float32(r.NormFloat64())
		}
	}
	return pad{buf: buf, in: in}
}

func (p pad) check(t *testing.T) {
	t.Helper()
	for i, v := range p.buf[:18] {
		if v != sentinel {
			t.Fatalf("padding before the operand changed at %d: %g", i, v)
		}
	}
	for i, v := range p.buf[18+len(p.in):] {
		if v != sentinel {
			t.Fatalf("padding after the operand changed at %d: %g", i, v)
		}
	}
}

// TestExp32 sweeps exp32 over its polynomial range (every 2^-12, plus
// the ends and the values outside) against math.Exp rounded to float32:
// at most 2 ulp apart, and the special values exact.
func TestExp32(t *testing.T) {
	ulps := func(a, b float32) int64 {
		d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
		return max(d, -d)
	}
	var worst int64
	for x := float32(rowk.ExpLo); x <= rowk.ExpHi; x += 1.0 / 4096 {
		want := float32(math.Exp(float64(x)))
		if d := ulps(exp32(x), want); d > worst {
			worst = d
			if d > 2 {
				t.Fatalf("exp32(%g) = %g, want %g (%d ulp)", x, exp32(x), want, d)
			}
		}
	}
	t.Logf("largest error %d ulp", worst)
	for _, x := range []float32{0, -0.5, rowk.ExpLo, rowk.ExpHi, -87.5, -103.9, -104, -1e30, 88.5, 89, 1e30} {
		want := float32(math.Exp(float64(x)))
		if d := ulps(exp32(x), want); d > 2 {
			t.Errorf("exp32(%g) = %g, want %g", x, exp32(x), want)
		}
	}
	inf := float32(math.Inf(1))
	if exp32(-inf) != 0 || exp32(inf) != inf || !math.IsNaN(float64(exp32(float32(math.NaN())))) {
		t.Errorf("exp32(−Inf, +Inf, NaN) = %g, %g, %g", exp32(-inf), exp32(inf), exp32(float32(math.NaN())))
	}
}

// TestForEdgesCoversRows: forEdges visits every row exactly once, in
// blocks that never split a row, on graphs of skewed degrees (one heavy
// row among light ones, empty rows), none, and a single row.
func TestForEdgesCoversRows(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{0, 1, 7, 1000, 20000} {
		ptr := make([]int64, n+1)
		for v := range n {
			d := int64(r.IntN(8))
			if v == n/3 {
				d = 100000
			}
			ptr[v+1] = ptr[v] + d
		}
		seen := make([]atomic.Int32, n)
		forEdges(n, ptr, func(lo, hi int) {
			if lo < 0 || hi > n || lo >= hi && n > 0 {
				t.Errorf("%d rows: block [%d, %d)", n, lo, hi)
			}
			for v := lo; v < hi; v++ {
				seen[v].Add(1)
			}
		})
		for v := range seen {
			if c := seen[v].Load(); c != 1 {
				t.Fatalf("%d rows: row %d visited %d times", n, v, c)
			}
		}
	}
}
