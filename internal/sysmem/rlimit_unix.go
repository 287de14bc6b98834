//go:build unix

package sysmem

import (
	"math"
	"syscall"
)

// addressSpaceLimit is the soft RLIMIT_AS (ulimit -v) in bytes, 0 if none
// (RLIM_INFINITY is all ones, above MaxInt64).
func addressSpaceLimit() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || uint64(r.Cur) > math.MaxInt64 {
		return 0
	}
	return int64(r.Cur)
}
