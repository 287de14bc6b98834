package measure

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel"
)

// Check validates the measuring settings of o for a host of cpus CPUs,
// as *field.Errors naming them ("measure.Sizes.Peers",
// "measure.Options.Cores"), and completes them: Sizes.Degree 0 takes the
// spec's, Parts those of the Sizes.Shards partition, no Threads the
// counts 1, 2, 4, … below Cores and Cores, an empty Name the host name.
func (o *Options) Check(cpus int) error {
	sz := &o.Sizes
	if sz.Shards != "" {
		m, err := partition.ReadMeta(sz.Shards)
		if err != nil {
			return field.Wrap("measure.Sizes.Shards", err)
		}
		o.Parts = m.Parts
	}
	g, err := graph.ParseGenSpec(sz.Spec)
	if err != nil {
		return field.Wrap("measure.Sizes.Spec", err)
	}
	if sz.Degree == 0 {
		sz.Degree = g.Degree
	}
	if err := o.checkSizes(cpus); err != nil {
		return err
	}
	if len(o.Threads) == 0 {
		for t := 1; t < o.Cores; t *= 2 {
			o.Threads = append(o.Threads, t)
		}
		o.Threads = append(o.Threads, o.Cores)
	}
	if copies := o.Cores / o.Threads[0]; o.HostNodes > 0 && !(sz.Degree <= float64(o.HostNodes/copies-1)) {
		return field.Errorf("measure.Options.HostNodes", "%d over %d copies of %d thread(s) leaves %d nodes a copy, too few for degree %g",
			o.HostNodes, copies, o.Threads[0], o.HostNodes/copies, sz.Degree)
	}
	if o.Name == "" {
		o.Name, _ = os.Hostname()
	}
	return nil
}

// checkSizes reports the first size or count of o out of its range.
func (o *Options) checkSizes(cpus int) error {
	sz := o.Sizes
	for _, c := range []struct {
		name string
		v    float64
	}{{"Options.Cores", float64(o.Cores)}, {"Sizes.Nodes", float64(sz.Nodes)}, {"Sizes.Rows", float64(sz.Rows)},
		{"Sizes.Reps", float64(sz.Reps)}, {"Sizes.Peers", float64(sz.Peers)}, {"Sizes.HaloFan", float64(sz.HaloFan)}} {
		if !(c.v > 0) {
			return field.Errorf("measure."+c.name, "%g, want a positive value", c.v)
		}
	}
	switch {
	case sz.ExchangeRows < 0 || (sz.ExchangeRows > 0 && sz.ExchangeRows < sz.Peers):
		return field.Errorf("measure.Sizes.ExchangeRows", "%d, want 0 or at least the peers (%d): a row a peer", sz.ExchangeRows, sz.Peers)
	case o.HostNodes < 0 || (o.HostNodes > 0 && sz.Shards != ""):
		return field.Errorf("measure.Options.HostNodes", "%d, want a node count, and no shards (whose parts have their own nodes)", o.HostNodes)
	case !(sz.Degree > 0 && sz.Degree <= float64(sz.Nodes-1)):
		// NaN and +Inf too, which the workers' generator would refuse
		// only after the first measurement
		return field.Errorf("measure.Sizes.Degree", "%g, want a mean degree in (0, measure.Sizes.Nodes-1 = %d]", sz.Degree, sz.Nodes-1)
	case o.Cores > cpus:
		// more copies than CPUs would time them oversubscribed: rates
		// of no node
		return field.Errorf("measure.Options.Cores", "%d, but this process may run on %d CPUs: the profile measures this node full", o.Cores, cpus)
	}
	for _, c := range []struct {
		name string
		v    []int
	}{{"Threads", o.Threads}, {"Loads", o.Loads}} {
		if i := slices.IndexFunc(c.v, func(n int) bool { return n < 1 || n > o.Cores }); i >= 0 || !slices.IsSorted(c.v) {
			return field.Errorf("measure.Options."+c.name, "%v, want ascending counts in [1, cores = %d]", c.v, o.Cores)
		}
	}
	return nil
}

// ParseCounts parses a comma-separated list of counts into ascending
// order; a field that is not an integer is an error naming it.
func ParseCounts(s string) ([]int, error) {
	var v []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a count", f)
		}
		v = append(v, c)
	}
	slices.Sort(v)
	return v, nil
}

// CheckAdd reports whether profile p, to which o's measurements are to be
// added, was measured on the same node setting: its cores, aggregation
// kernel and BLAS.
func (o *Options) CheckAdd(p *perfmodel.Profile) error {
	if p.CoresPerNode != o.Cores || p.Kernel != o.Kernel || p.BLAS != o.BLAS {
		return fmt.Errorf("%s: %d cores, kernel %q, BLAS %q; this run: %d cores, kernel %q, BLAS %q (measure.Options.Cores, or another node)",
			p.Name, p.CoresPerNode, p.Kernel, p.BLAS, o.Cores, o.Kernel, o.BLAS)
	}
	return nil
}
