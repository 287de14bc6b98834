package affinity

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// maxCPUs bounds the CPU numbers Self reads (the kernel's nr_cpu_ids must
// fit in the buffer).
const maxCPUs = 1 << 14

// Self returns this process's affinity mask (sched_getaffinity).
func Self() (Set, error) {
	cs := unix.NewCPUSet(maxCPUs)
	if err := unix.SchedGetaffinityDynamic(0, cs); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var s Set
	for i := range maxCPUs {
		if cs.IsSet(i) {
			s.add(i)
		}
	}
	return s, nil
}
