// Package buildinfo reads what the Go toolchain recorded about the build
// of the running binary.
package buildinfo

import "runtime/debug"

// Revision returns the VCS revision the binary was built from (with
// "-dirty" when the work tree had changes), or "unknown" when the build
// recorded none (go build -buildvcs=false, or outside a repository).
func Revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return revision(bi.Settings)
}

func revision(settings []debug.BuildSetting) string {
	rev, dirty := "", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
