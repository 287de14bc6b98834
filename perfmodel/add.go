package perfmodel

import (
	"fmt"
	"slices"
)

// Add merges the entries of q, measured on the same node with the same
// kernel and BLAS, into p: an entry of a thread count (Rates) or of a
// thread count and copy count (Loads) that p holds is replaced, the others
// are inserted in order. p keeps its name and intra-node link; q's source
// is appended to p's. Profiles of one node measured in parts (a job's time
// limit, a thread count measured again) become one this way.
func (p *Profile) Add(q *Profile) error {
	switch {
	case q.CoresPerNode != p.CoresPerNode:
		return fmt.Errorf("profile %s: %d cores a node, the added one %d: another node", p.Name, p.CoresPerNode, q.CoresPerNode)
	case q.Kernel != p.Kernel || q.BLAS != p.BLAS:
		return fmt.Errorf("profile %s: kernel %q and BLAS %q, the added one %q and %q: rates of other code", p.Name, p.Kernel, p.BLAS, q.Kernel, q.BLAS)
	}
	m := *p
	m.Rates = addRates(p.Rates, q.Rates, func(a, b *Rates) int { return a.Threads - b.Threads })
	m.Loads = addRates(p.Loads, q.Loads, func(a, b *Rates) int {
		if a.Threads != b.Threads {
			return a.Threads - b.Threads
		}
		return a.Copies - b.Copies
	})
	if q.Source != "" {
		m.Source = p.Source + "; and " + q.Source
	}
	if err := m.Validate(); err != nil {
		return err
	}
	*p = m
	return nil
}

// addRates returns the entries of old with those of add in their places:
// an entry of add equal to one of old under cmp replaces it, the others
// are inserted; sorted by cmp.
func addRates(old, add []Rates, cmp func(a, b *Rates) int) []Rates {
	out := slices.Clone(old)
	slices.SortStableFunc(out, func(a, b Rates) int { return cmp(&a, &b) })
	for i := range add {
		j, found := slices.BinarySearchFunc(out, add[i], func(e, t Rates) int { return cmp(&e, &t) })
		if found {
			out[j] = add[i]
		} else {
			out = slices.Insert(out, j, add[i])
		}
	}
	return out
}
