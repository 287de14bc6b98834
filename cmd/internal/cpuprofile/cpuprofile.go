// Package cpuprofile writes train's --cpuprofile: a Go CPU profile per
// rank, renamed into place only when complete.
package cpuprofile

import (
	"fmt"
	"runtime/pprof"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/internal/container"
)

// Start starts a CPU profile when path is set; the returned func
// stops it and reports a profile that could not be written.
func Start(path string, c comm.Comm) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	if c.Size() > 1 {
		path = fmt.Sprintf("%s.rank%d", path, c.Rank())
	}
	// The profile goes to path.tmp and is renamed when complete, so a full
	// disk or a crash never leaves a truncated or empty profile at path.
	f, err := container.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			return fmt.Errorf("--cpuprofile: %s: %w", path, err)
		}
		return nil
	}, nil
}
