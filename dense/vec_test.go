package dense

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

func TestAddBiasAndColSums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// Enough rows to take the parallel path when GOMAXPROCS > 1.
	m := randMatrix(r, 5000, 13)
	orig := append([]float32(nil), m.Data...)
	b := make([]float32, 13)
	for j := range b {
		b[j] = float32(j) - 6
	}
	AddBias(m, b)
	for i := range m.Rows {
		for j := range m.Cols {
			if got, want := m.Data[i*13+j], orig[i*13+j]+b[j]; got != want {
				t.Fatalf("AddBias[%d,%d] = %g, want %g", i, j, got, want)
			}
		}
	}
	sums := make([]float32, 13)
	ColSums(m, sums)
	for j := range sums {
		var want float64
		for i := range m.Rows {
			want += float64(m.Data[i*13+j])
		}
		if d := float64(sums[j]) - want; d > 1e-3 || d < -1e-3 {
			t.Fatalf("ColSums[%d] = %g, want %g", j, sums[j], want)
		}
	}
}

func TestAxpyScaleAddCopy(t *testing.T) {
	x := []float32{1, 2, 3}
	y := []float32{10, 20, 30}
	Axpy(2, x, y)
	Scale(0.5, y)
	if y[0] != 6 || y[1] != 12 || y[2] != 18 {
		t.Fatalf("Axpy/Scale: %v", y)
	}
	a := &Matrix{Rows: 1, Cols: 3, Data: []float32{1, 1, 1}}
	bm := &Matrix{Rows: 1, Cols: 3, Data: []float32{1, 2, 3}}
	Add(a, bm)
	if a.Data[2] != 4 {
		t.Fatalf("Add: %v", a.Data)
	}
	Copy(a, bm)
	if a.Data[0] != 1 || a.Data[2] != 3 {
		t.Fatalf("Copy: %v", a.Data)
	}
}

// TestColSumsThreadIndependent: the column sums are the same bits on 1, 2
// and 5 threads (the reduction blocks depend on the shape only).
func TestColSumsThreadIndependent(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(9, 9))
	m := randMatrix(r, 50000, 3)
	var first []float32
	for _, th := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(th)
		got := make([]float32, m.Cols)
		ColSums(m, got)
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Fatalf("%d threads: %v, 1 thread: %v", th, got, first)
		}
	}
}

// TestColSumsKernel: the column sums of the CPU's kernel are the scalar
// loop's bit for bit, for widths that end inside a vector and a chunk.
func TestColSumsKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, cols := range []int{1, 7, 8, 15, 16, 17, 31, 32, 33, 47, 100, 128, 257} {
		m := New(301, cols)
		for i := range m.Data {
			m.Data[i] = float32(r.NormFloat64()) * float32(1+i%13)
		}
		got, want := make([]float64, cols), make([]float64, cols)
		for j := range got {
			got[j], want[j] = float64(j), float64(j)
		}
		colSumsInto(got, m, 3, 300)
		for i := 3; i < 300; i++ {
			for j, v := range m.Row(i) {
				want[j] += float64(v)
			}
		}
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("%d columns: column %d sums to %v, the scalar loop %v", cols, j, got[j], want[j])
			}
		}
	}
}
