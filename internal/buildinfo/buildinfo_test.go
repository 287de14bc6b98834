package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestRevision(t *testing.T) {
	for want, s := range map[string][]debug.BuildSetting{
		"abc123":       {{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}},
		"abc123-dirty": {{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "abc123"}},
		"unknown":      {{Key: "vcs.modified", Value: "true"}},
	} {
		if got := revision(s); got != want {
			t.Errorf("%v: %q, want %q", s, got, want)
		}
	}
	if Revision() == "" {
		t.Error("Revision is empty")
	}
}
