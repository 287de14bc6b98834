package affinity

import (
	"fmt"
	"io/fs"
	"strings"
)

// CPUModel is /proc/cpuinfo's model name (under fsys, rooted at "/"), or
// its CPU implementer and part where there is none (arm64), or "unknown".
func CPUModel(fsys fs.FS) string {
	b, err := fs.ReadFile(fsys, "proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	var impl, part string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			return strings.TrimSpace(v)
		case "CPU implementer":
			impl = strings.TrimSpace(v)
		case "CPU part":
			part = strings.TrimSpace(v)
		}
	}
	if impl != "" {
		return fmt.Sprintf("implementer %s, part %s", impl, part) // A64FX: 0x46, 0x001
	}
	return "unknown"
}
