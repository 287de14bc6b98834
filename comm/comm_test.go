package comm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// alltoallPattern: rank r sends rank q the block [r*100+q, r*100+q+1, ...]
// of length (r+q)%3+1.
func blockLen(r, q int) int { return (r+q)%3 + 1 }

func block(r, q int) []int64 {
	b := make([]int64, blockLen(r, q))
	for i := range b {
		b[i] = int64(r*100 + q + i)
	}
	return b
}

// layout builds the send and recv sides of the pattern for rank r of p.
func layout(r, p int) (send []int64, sc, sd []int, want []int64, rc, rd []int) {
	sc, sd, rc, rd = make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	for q := 0; q < p; q++ {
		sd[q] = len(send)
		send = append(send, block(r, q)...)
		sc[q] = blockLen(r, q)
		rd[q] = len(want)
		want = append(want, block(q, r)...)
		rc[q] = blockLen(q, r)
	}
	return
}

func checkCollectives(c Comm) error {
	r, p := c.Rank(), c.Size()
	if err := c.Barrier(); err != nil {
		return err
	}
	// Broadcast from the last rank.
	b := []byte{byte(r), 0, 0}
	if r == p-1 {
		b = []byte{7, 8, 9}
	}
	if err := c.BcastBytes(b, p-1); err != nil {
		return err
	}
	if !slices.Equal(b, []byte{7, 8, 9}) {
		return fmt.Errorf("bcast got %v", b)
	}
	// Reductions.
	f32, f64, i64, mx := []float32{float32(r), 1}, []float64{float64(r), 1}, []int64{int64(r), 1}, []float64{float64(r), -float64(r)}
	if err := errors.Join(c.AllreduceSumF32(f32), c.AllreduceSumF64(f64), c.AllreduceSumI64(i64), c.AllreduceMaxF64(mx)); err != nil {
		return err
	}
	tri := p * (p - 1) / 2
	if f32[0] != float32(tri) || f32[1] != float32(p) || f64[0] != float64(tri) || i64[0] != int64(tri) || i64[1] != int64(p) ||
		mx[0] != float64(p-1) || mx[1] != 0 {
		return fmt.Errorf("reductions got %v %v %v %v", f32, f64, i64, mx)
	}
	// All-to-alls, blocking and not, every element type.
	send, sc, sd, want, rc, rd := layout(r, p)
	got := make([]int64, len(want))
	if err := c.AlltoallvI64(send, sc, sd, got, rc, rd); err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("alltoallv i64 got %v want %v", got, want)
	}
	sf, wf := toF32(send), toF32(want)
	gf := make([]float32, len(wf))
	req, err := c.IalltoallvF32(sf, sc, sd, gf, rc, rd)
	if err != nil {
		return err
	}
	if err := req.Wait(); err != nil {
		return err
	}
	if !slices.Equal(gf, wf) {
		return fmt.Errorf("ialltoallv f32 got %v want %v", gf, wf)
	}
	sb, wb := toBytes(send), toBytes(want)
	gb := make([]byte, len(wb))
	req, err = c.IalltoallvBytes(sb, sc, sd, gb, rc, rd)
	if err != nil {
		return err
	}
	if err := req.Wait(); err != nil || !slices.Equal(gb, wb) {
		return fmt.Errorf("ialltoallv bytes got %v (%v)", gb, err)
	}
	return nil
}

func toF32(a []int64) []float32 {
	f := make([]float32, len(a))
	for i, v := range a {
		f[i] = float32(v)
	}
	return f
}

func toBytes(a []int64) []byte {
	b := make([]byte, len(a))
	for i, v := range a {
		b[i] = byte(v)
	}
	return b
}

func TestSingleCollectives(t *testing.T) {
	c := Single()
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("rank %d size %d", c.Rank(), c.Size())
	}
	if err := checkCollectives(c); err != nil {
		t.Fatal(err)
	}
	if err := c.BcastBytes(nil, 1); err == nil {
		t.Error("root 1 accepted")
	}
	if err := c.AlltoallvI64([]int64{1}, []int{1}, []int{0}, make([]int64, 2), []int{2}, []int{0}); err == nil {
		t.Error("count mismatch accepted")
	}
}

func TestGroupCollectives(t *testing.T) {
	for _, p := range []int{1, 2, 3, 5} {
		if err := RunGroup(p, checkCollectives); err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
	}
}

// TestGroupOverlap keeps two all-to-alls in flight with a reduction between
// start and wait, and checks the non-blocking one copies only at Wait.
func TestGroupOverlap(t *testing.T) {
	err := RunGroup(3, func(c Comm) error {
		r, p := c.Rank(), c.Size()
		send, sc, sd, want, rc, rd := layout(r, p)
		got := make([]int64, len(want))
		sf := toF32(send)
		gf := make([]float32, len(want))
		req, err := c.IalltoallvF32(sf, sc, sd, gf, rc, rd)
		if err != nil {
			return err
		}
		if err := c.AlltoallvI64(send, sc, sd, got, rc, rd); err != nil {
			return err
		}
		s := []int64{1}
		if err := c.AllreduceSumI64(s); err != nil || s[0] != int64(p) {
			return fmt.Errorf("allreduce in between: %v %v", s, err)
		}
		if err := req.Wait(); err != nil {
			return err
		}
		if err := req.Wait(); err != nil { // a second Wait is harmless
			return err
		}
		if !slices.Equal(got, want) || !slices.Equal(gf, toF32(want)) {
			return fmt.Errorf("got %v / %v want %v", got, gf, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGroupErrors(t *testing.T) {
	// Mismatched collectives fail on every rank instead of hanging.
	err := RunGroup(2, func(c Comm) error {
		if c.Rank() == 0 {
			return c.Barrier()
		}
		return c.AllreduceSumI64([]int64{1})
	})
	if err == nil || strings.Count(err.Error(), "calls") != 2 {
		t.Errorf("mismatch: %v", err)
	}
	// One rank with bad counts: every rank gets an error, none hangs.
	err = RunGroup(3, func(c Comm) error {
		recv := make([]float32, 3)
		if c.Rank() == 1 {
			recv = recv[:2] // block 2 falls outside
		}
		ones, displs := []int{1, 1, 1}, []int{0, 1, 2}
		req, err := c.IalltoallvF32(make([]float32, 3), ones, displs, recv, ones, displs)
		if err != nil {
			return err
		}
		if err := req.Wait(); err != nil {
			return err
		}
		return errors.New("no error")
	})
	if err == nil || strings.Contains(err.Error(), "no error") {
		t.Errorf("bad layout: %v", err)
	}
	// Count disagreement between sender and receiver.
	err = RunGroup(2, func(c Comm) error {
		rc := []int{1, 1}
		if c.Rank() == 0 {
			rc = []int{1, 0}
		}
		return c.AlltoallvI64(make([]int64, 2), []int{1, 1}, []int{0, 1}, make([]int64, 2), rc, []int{0, 1})
	})
	if err == nil || !strings.Contains(err.Error(), "expects") {
		t.Errorf("count disagreement: %v", err)
	}
}

func TestGroupAbort(t *testing.T) {
	err := RunGroup(3, func(c Comm) error {
		if c.Rank() == 2 {
			c.Abort(5)
		}
		return c.Barrier() // never completes: rank 2 is gone
	})
	var ae *AbortError
	if !errors.As(err, &ae) || ae.Rank != 2 || ae.Code != 5 {
		t.Fatalf("err = %v", err)
	}
	if n := strings.Count(err.Error(), "aborted"); n != 3 {
		t.Fatalf("%d ranks report the abort: %v", n, err)
	}
}
