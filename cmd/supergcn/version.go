package main

import (
	"runtime/debug"
)

// version and commit are set by `make build` (and scripts/test.sh) from
// git with -ldflags "-X main.version=... -X main.commit=..."; without them
// the commit comes from Go's VCS stamping when that is on.
var (
	version = "dev"
	commit  = ""
)

// buildCommit returns the VCS revision the binary was built from (with
// "-dirty" when the work tree had changes), or "unknown" when the build
// recorded none (go build -buildvcs=false, or outside a repository).
func buildCommit() string {
	if commit != "" {
		return commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
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

// versionLine is what `supergcn --version` prints.
func versionLine() string {
	return "supergcn " + version + " (commit " + buildCommit() + ")"
}
