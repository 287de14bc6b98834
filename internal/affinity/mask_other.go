//go:build !linux

package affinity

import "runtime"

// Self returns the CPUs this process may run on: where the system has no
// affinity call that this package reads, CPUs 0 to runtime.NumCPU()-1.
func Self() (Set, error) {
	var s Set
	for i := range runtime.NumCPU() {
		s.add(i)
	}
	return s, nil
}
