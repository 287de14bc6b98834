package quant

import (
	"fmt"
	"runtime"
	"testing"
)

// Benchmarks of every available kernel × bit width; b.SetBytes counts the
// fp32 data (4 bytes a value), so MB/s compare directly across bits.
//
//	go test -run '^$' -bench . -benchtime 5x ./quant/
//
// Encode/Decode run a whole 100k × 128 block through a Codec on one thread
// (row range, quantise, pack / unpack, dequantise); Pack/Unpack run the bare
// kernels over 64 rows that stay in cache.

const (
	benchRows  = 100_000
	benchWidth = 128
)

func benchName(k string, bits int) string { return fmt.Sprintf("%s/int%d", k, bits) }

func BenchmarkEncode(b *testing.B) {
	x := randRows(benchRows, benchWidth, 1)
	for _, kn := range Kernels() {
		for _, bits := range []int{2, 4, 8} {
			b.Run(benchName(kn, bits), func(b *testing.B) {
				c, err := NewCodec(Format{Bits: bits}, 1, kn)
				if err != nil {
					b.Fatal(err)
				}
				d, p := c.Size(benchRows, benchWidth)
				buf := make([]byte, d+p)
				for i := range buf { // fault the pages in before the timing
					buf[i] = 1
				}
				b.SetBytes(int64(len(x)) * 4)
				for i := 0; b.Loop(); i++ {
					c.Encode(buf, x, benchRows, benchWidth, uint64(i))
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	x := randRows(benchRows, benchWidth, 1)
	out := make([]float32, len(x))
	for i := range out { // fault the pages in here, not in the first kernel's timing
		out[i] = 1
	}
	for _, kn := range Kernels() {
		for _, bits := range []int{2, 4, 8} {
			b.Run(benchName(kn, bits), func(b *testing.B) {
				c, err := NewCodec(Format{Bits: bits}, 1, kn)
				if err != nil {
					b.Fatal(err)
				}
				d, p := c.Size(benchRows, benchWidth)
				buf := make([]byte, d+p)
				c.Encode(buf, x, benchRows, benchWidth, 1)
				b.SetBytes(int64(len(x)) * 4)
				for b.Loop() {
					if err := c.Decode(out, buf, benchRows, benchWidth); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// cacheRows is the row count of the in-cache kernel benchmarks (one block).
const cacheRows = BlockRows

func BenchmarkPack(b *testing.B) {
	x := randRows(cacheRows, benchWidth, 2)
	for _, k := range available {
		for _, bits := range []int{2, 4, 8} {
			b.Run(benchName(k.name, bits), func(b *testing.B) {
				f := Format{Bits: bits}
				rb := f.RowBytes(benchWidth)
				dst := make([]byte, cacheRows*rb)
				zero, _, inv, _ := rowParams(x, f)
				var r RNG
				r.Seed(1)
				pack := k.pack[bits]
				b.SetBytes(int64(len(x)) * 4)
				for b.Loop() {
					for i := 0; i < cacheRows; i++ {
						pack(dst[i*rb:(i+1)*rb], x[i*benchWidth:(i+1)*benchWidth], zero, inv, &r)
					}
				}
			})
		}
	}
}

func BenchmarkUnpack(b *testing.B) {
	out := make([]float32, cacheRows*benchWidth)
	for _, k := range available {
		for _, bits := range []int{2, 4, 8} {
			b.Run(benchName(k.name, bits), func(b *testing.B) {
				rb := Format{Bits: bits}.RowBytes(benchWidth)
				src := make([]byte, cacheRows*rb)
				for i := range src {
					src[i] = byte(i * 37)
				}
				unpack := k.unpack[bits]
				b.SetBytes(int64(len(out)) * 4)
				for b.Loop() {
					for i := 0; i < cacheRows; i++ {
						unpack(out[i*benchWidth:(i+1)*benchWidth], src[i*rb:(i+1)*rb], -1, 0.01)
					}
				}
			})
		}
	}
}

// BenchmarkCodecWidths runs the best kernel's int2 codec (block parameters,
// the training default) at the row widths GCN and SAGE exchange, on
// GOMAXPROCS threads (-cpu), over 2,048 rows that stay in cache and over
// 12.8 M values that do not: the per-row work (range, parameters, a partial
// last chunk) weighs most on narrow rows.
func BenchmarkCodecWidths(b *testing.B) {
	kn := Kernels()[0]
	threads := runtime.GOMAXPROCS(0)
	for _, width := range []int{47, 48, 100, 128, 256} {
		for _, rows := range []int{2048, benchRows * benchWidth / width} {
			x := randRows(rows, width, 1)
			c, err := NewCodec(Format{Bits: 2, Params: ParamsBlock}, threads, kn)
			if err != nil {
				b.Fatal(err)
			}
			d, p := c.Size(rows, width)
			buf, out := make([]byte, d+p), make([]float32, len(x))
			c.Encode(buf, x, rows, width, 0) // fault the buffers in before timing
			if err := c.Decode(out, buf, rows, width); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("encode/%s/w%d/rows%d", kn, width, rows), func(b *testing.B) {
				b.SetBytes(int64(len(x)) * 4)
				for i := 0; b.Loop(); i++ {
					c.Encode(buf, x, rows, width, uint64(i))
				}
			})
			b.Run(fmt.Sprintf("decode/%s/w%d/rows%d", kn, width, rows), func(b *testing.B) {
				b.SetBytes(int64(len(x)) * 4)
				for b.Loop() {
					if err := c.Decode(out, buf, rows, width); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
