package main

import "github.com/supergcn/supergcn/internal/buildinfo"

// version and commit are set by `make build` (and scripts/test.sh) from
// git with -ldflags "-X main.version=... -X main.commit=..."; without them
// the commit comes from Go's VCS stamping when that is on.
var (
	version = "dev"
	commit  = ""
)

// buildCommit returns the commit set at build time, else the VCS
// revision Go recorded (buildinfo.Revision).
func buildCommit() string {
	if commit != "" {
		return commit
	}
	return buildinfo.Revision()
}

// versionLine is what `supergcn --version` prints.
func versionLine() string {
	return "supergcn " + version + " (commit " + buildCommit() + ")"
}
