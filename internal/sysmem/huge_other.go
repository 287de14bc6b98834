//go:build !linux

package sysmem

// AdviseHugeFresh does nothing outside Linux (see huge_linux.go).
func AdviseHugeFresh(b []float32) {}
