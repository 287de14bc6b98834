package sysmem

import "testing"

// TestAdviseHugeFresh checks that advising keeps a fresh buffer all zero
// and usable, whatever its size and alignment (whether the kernel grants
// huge pages depends on the machine and is not asserted).
func TestAdviseHugeFresh(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 1 << 20, 3<<20 + 7} {
		for _, off := range []int{0, 1, 3} {
			if off >= n && n > 0 {
				continue
			}
			buf := make([]float32, n)
			b := buf[min(off, n):]
			AdviseHugeFresh(b)
			for i, v := range buf {
				if v != 0 {
					t.Fatalf("n %d off %d: element %d = %v after advice, want 0", n, off, i, v)
				}
			}
			for i := range b {
				b[i] = float32(i)
			}
			for i, v := range b {
				if v != float32(i) {
					t.Fatalf("n %d off %d: element %d = %v, want %d", n, off, i, v, i)
				}
			}
		}
	}
}
