// Package sysmem reports how much memory this process may use, so loaders
// and the trainer can refuse an input or a model that cannot fit with a
// clear error instead of dying in the allocator.
package sysmem

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Limit returns the bytes this process may use: the smallest of the
// machine's memory (/proc/meminfo MemTotal), the cgroup limit, the address
// space left under ulimit -v (AddressSpaceLeft) and the Go memory limit
// (GOMEMLIMIT). It returns
// math.MaxInt64 when none is known.
func Limit() int64 {
	limit := int64(math.MaxInt64)
	if v := meminfoTotal(); v > 0 {
		limit = min(limit, v)
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if v := readInt(p); v > 0 {
			limit = min(limit, v)
		}
	}
	limit = min(limit, AddressSpaceLeft())
	if v := debug.SetMemoryLimit(-1); v > 0 {
		limit = min(limit, v)
	}
	return limit
}

// AddressSpaceLeft is the address space this process may still map under
// ulimit -v: the soft RLIMIT_AS minus what is mapped now (the Go runtime's
// reservations and the shared libraries count), math.MaxInt64 without a
// limit. A C library that loops on a failed malloc (OpenBLAS's buffers)
// must be checked against it before it is called.
func AddressSpaceLeft() int64 {
	lim := addressSpaceLimit()
	if lim <= 0 {
		return math.MaxInt64
	}
	return max(0, lim-mappedBytes())
}

// mappedBytes is the address space mapped now (VmSize, the first field of
// /proc/self/statm, in pages), 0 if unknown.
func mappedBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pages, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || pages < 0 || pages > math.MaxInt64/int64(os.Getpagesize()) {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// meminfoTotal is MemTotal from /proc/meminfo in bytes (0 if unknown).
func meminfoTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil && kb > 0 && kb < math.MaxInt64/1024 {
				return kb * 1024
			}
		}
	}
	return 0
}

// readInt reads a file holding one integer ("max" and errors give 0).
func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// GB formats bytes as gigabytes for messages ("1.5 GB").
func GB(b int64) string {
	if g := float64(b) / 1e9; g < 100 {
		return fmt.Sprintf("%.3g GB", g)
	} else {
		return fmt.Sprintf("%.0f GB", g)
	}
}

// Check returns an error saying what needs need bytes when that exceeds
// Limit, nil otherwise.
func Check(need int64, what string) error {
	if lim := Limit(); need > lim {
		return fmt.Errorf("%s needs ~%s, more than the %s this process may use", what, GB(need), GB(lim))
	}
	return nil
}
