package exchange

import (
	"fmt"
	"slices"
)

// globalIndex maps the global ids a rank owns to its local ids. The local
// order need not follow global ids (partition.Shard.Reorder renumbers the
// owned nodes for locality): when it does, lookups binary-search the ids
// themselves; otherwise a sorted copy with its local ids, built on the
// first lookup.
type globalIndex struct {
	global []int64 // global id of every local node
	sorted []int64 // global ascending (nil: global itself is, or not built yet)
	local  []int32 // local[i] = local id of sorted[i]
	asc    bool
}

// newGlobalIndex indexes global, which must hold distinct ids.
func newGlobalIndex(global []int64) *globalIndex {
	return &globalIndex{global: global, asc: slices.IsSorted(global)}
}

// localID returns the local id of global node u.
func (x *globalIndex) localID(u int64) (int32, error) {
	if x.asc {
		i, ok := slices.BinarySearch(x.global, u)
		if !ok {
			return 0, fmt.Errorf("asked for node %d, which this rank does not own", u)
		}
		return int32(i), nil
	}
	if x.sorted == nil {
		x.local = make([]int32, len(x.global))
		for i := range x.local {
			x.local[i] = int32(i)
		}
		slices.SortFunc(x.local, func(a, b int32) int { return cmpI64(x.global[a], x.global[b]) })
		x.sorted = make([]int64, len(x.global))
		for i, v := range x.local {
			x.sorted[i] = x.global[v]
		}
	}
	i, ok := slices.BinarySearch(x.sorted, u)
	if !ok {
		return 0, fmt.Errorf("asked for node %d, which this rank does not own", u)
	}
	return x.local[i], nil
}

func cmpI64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkDistinct reports the first repeated id of global, in any order.
func checkDistinct(global []int64) error {
	if slices.IsSorted(global) {
		for i := 1; i < len(global); i++ {
			if global[i] == global[i-1] {
				return fmt.Errorf("global id %d repeated at local %d", global[i], i)
			}
		}
		return nil
	}
	s := slices.Clone(global)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return fmt.Errorf("global id %d repeated", s[i])
		}
	}
	return nil
}
