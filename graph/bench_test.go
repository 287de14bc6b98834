package graph

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// writeRandomPairs writes lines "src<sep>dst" of random ids below n.
func writeRandomPairs(tb testing.TB, path string, lines, n int, sep string) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < lines; i++ {
		fmt.Fprintf(w, "%d%s%d\n", r.IntN(n), sep, r.IntN(n))
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkEdgeCSV measures parsing of an OGB edge.csv (plain) of 4M
// lines; lines/s is reported.
func BenchmarkEdgeCSV(b *testing.B) {
	const lines = 4 << 20
	p := filepath.Join(b.TempDir(), "edge.csv")
	writeRandomPairs(b, p, lines, 2_449_029, ",")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := readEdgeCSV(p, 2_449_029, -1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlines/s")
}

// BenchmarkEdgeList measures LoadEdgeList (parsing and CSR build) on a
// plain whitespace-separated file of 4M lines.
func BenchmarkEdgeList(b *testing.B) {
	const lines = 4 << 20
	p := filepath.Join(b.TempDir(), "edges.txt")
	writeRandomPairs(b, p, lines, 1_000_000, " ")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := LoadEdgeList(p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlines/s")
}

// BenchmarkFeatureCSV measures parsing of an OGB node-feat.csv (plain,
// 100 values of the form -0.057943 per row, as ogbn-products/arxiv).
func BenchmarkFeatureCSV(b *testing.B) {
	const rows, dim = 50000, 100
	p := filepath.Join(b.TempDir(), "node-feat.csv")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < rows; i++ {
		for j := 0; j < dim; j++ {
			if j > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, "%.6f", r.NormFloat64()*0.1)
		}
		w.WriteByte('\n')
	}
	w.Flush()
	f.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := readFeatureCSV(p, -1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*dim)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mvalues/s")
}
