package main

import (
	"encoding/json"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/perfmodel/measure"
)

func benchProfile(args []string) error {
	fs := newFlagSet("bench profile", "--out FILE [flags] | --published "+strings.Join(perfmodel.PublishedNames(), "|")+" --out FILE")
	out := fs.String("out", "", "profile JSON to write (perfmodel.Profile)")
	published := fs.String("published", "", "derive the profile of a published node instead of measuring: "+strings.Join(perfmodel.PublishedNames(), "|"))
	name := fs.String("name", "", "profile name (default: the host name)")
	cores := fs.Int("cores", runtime.NumCPU(), "cores of the node: each thread count T runs cores/T copies at once")
	threadsArg := fs.String("threads", "", "thread counts, comma separated (default: 1, 2, 4, … up to --cores, and --cores)")
	var sz measure.Sizes
	fs.IntVar(&sz.Nodes, "nodes", 150_000, "nodes of each copy's aggregation graph (generated: products-like degree and classes)")
	hostNodes := fs.Int("host-nodes", 0, "nodes of the graph the whole node holds: each copy's aggregation graph, and the rows of its dense passes, get that over the copies running at once (products: 2449029), as the ranks of a layout share the graph, instead of --nodes and --rows at every thread count")
	fs.StringVar(&sz.Spec, "spec", "products", "generator spec of that graph (supergcn gen --spec syntax: a preset and keys; its nodes are --nodes or the --host-nodes share, its features unused)")
	fs.Float64Var(&sz.Degree, "degree", 0, "mean degree of that graph (0: the --spec's)")
	fs.IntVar(&sz.Rows, "rows", 65_536, "rows of each copy's GEMMs, codec blocks, element-wise passes and fused hidden stage")
	fs.IntVar(&sz.Reps, "reps", 3, "timed repetitions (after one warm-up); the median is kept")
	fs.IntVar(&sz.ExchangeRows, "exchange-rows", -1, "rows of the exchange-pattern buffers (gather into the send buffer, codec per peer block, scatter-add of the receive buffer; -1: 4·--rows, as many boundary rows as a products part has per owned node; 0: not measured)")
	fs.IntVar(&sz.Peers, "peers", 15, "peer blocks of the exchange-pattern buffers (the ranks a rank exchanges with)")
	fs.StringVar(&sz.Shards, "shards", "", "aggregate the local graphs of this partition directory's parts (copy i: part i mod its parts, in train's node order) instead of a generated graph (--nodes, --degree)")
	fs.IntVar(&sz.Part, "shard-part", 0, "internal (with --worker and --shards): the part this copy aggregates")
	fs.IntVar(&sz.HaloFan, "halo-fan", 2, "cut edges a receive-buffer row in the measured cut-edge (halo) product: the partition's cut edges over its boundary rows (16-part products: about 2)")
	addTo := fs.String("add", "", "add the measured entries to this profile (the same node, measured in parts: its entries of a thread count measured again are replaced; its name and intra-node link stay) and write the whole to --out, which may be the same file")
	loadsArg := fs.String("loads", "1", "also measure each thread count with these numbers of copies at once (comma separated, each below cores/threads; empty: none): the rates of a node not full, for predict --ranks-per-host")
	worker := fs.Int("worker", 0, "internal: measure with this many threads and print the rates as JSON")
	lockstep := fs.Bool("lockstep", false, "internal (with --worker): wait for the other copies before each timed pass (pipes on fds 3 and 4)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if sz.ExchangeRows == -1 {
		sz.ExchangeRows = 4 * sz.Rows
	}
	if *worker != 0 && os.Getenv(profileWorkerEnv) != "1" {
		return usageError("--worker: internal: bench profile starts its own workers (run bench profile --out FILE)")
	}
	if *worker > 0 {
		setThreadBudget(*worker)
		var st *measure.Stepper
		if *lockstep {
			st = measure.WorkerStepper()
		}
		r, err := measure.Rates(*worker, sz, st)
		if err != nil {
			return kernelError(err)
		}
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	if *out == "" {
		return usageError("--out is required")
	}
	if err := container.CheckWritable(*out); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if *published != "" {
		if *addTo != "" {
			return usageError("--add: not with --published")
		}
		p, err := perfmodel.FromPublished(*published)
		if err != nil {
			return usageError("--published: " + err.Error())
		}
		return perfmodel.WriteProfile(*out, p)
	}
	if *hostNodes != 0 && flagSet(fs, "rows") {
		return usageError("--rows: not with --host-nodes, which gives each copy's dense passes its share of the nodes as rows")
	}
	o := measure.Options{Name: *name, Cores: *cores, Sizes: sz, HostNodes: *hostNodes, Log: os.Stderr}
	if err := profileFlags(&o, *threadsArg, *loadsArg); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	o.Worker = func(t int, sz measure.Sizes) *exec.Cmd {
		c := exec.Command(exe, "bench", "profile", "--worker", strconv.Itoa(t), "--lockstep", "--nodes", strconv.Itoa(sz.Nodes),
			"--spec", sz.Spec, "--degree", strconv.FormatFloat(sz.Degree, 'g', -1, 64), "--rows", strconv.Itoa(sz.Rows), "--reps", strconv.Itoa(sz.Reps),
			"--exchange-rows", strconv.Itoa(sz.ExchangeRows), "--peers", strconv.Itoa(sz.Peers), "--halo-fan", strconv.Itoa(sz.HaloFan))
		if sz.Shards != "" {
			c.Args = append(c.Args, "--shards", sz.Shards, "--shard-part", strconv.Itoa(sz.Part))
		}
		c.Env = append(os.Environ(), profileWorkerEnv+"=1")
		return c
	}
	eng, err := aggr.New(1, "")
	if err != nil {
		return kernelError(err)
	}
	o.Kernel = eng.KernelName()
	eng.Close()
	o.BLAS, _, _ = dense.BLAS()
	base, err := profileToAdd(*addTo, &o)
	if err != nil {
		return err
	}
	graphOf := ""
	if sz.Shards != "" {
		graphOf = fmt.Sprintf(" (aggregation and shared window on the local graphs of the %d parts of %s)", o.Parts, sz.Shards)
	}
	nodes := fmt.Sprintf("--spec %s --nodes %d --degree %g --rows %d", o.Sizes.Spec, o.Sizes.Nodes, o.Sizes.Degree, o.Sizes.Rows)
	if o.HostNodes > 0 {
		nodes = fmt.Sprintf("--spec %s --host-nodes %d (each copy's graph and dense rows that over the copies at once) --degree %g", o.Sizes.Spec, o.HostNodes, o.Sizes.Degree)
	}
	o.Source = fmt.Sprintf("measured by `supergcn bench profile --threads %s` (%s, %s/%s, %d cores, %s) with %s --reps %d --exchange-rows %d --peers %d; aggregation on train's node order with self-loops, cut-edge products with --halo-fan %d, the fused hidden stage as training runs it, the copies in lockstep%s",
		joinInts(o.Threads), version, runtime.GOOS, runtime.GOARCH, *cores, time.Now().UTC().Format("2006-01-02"), nodes, sz.Reps, sz.ExchangeRows, sz.Peers, sz.HaloFan, graphOf)
	p, err := measure.Profile(o)
	if err != nil {
		return fmt.Errorf("bench profile: %w", err)
	}
	if base != nil {
		if err := base.Add(p); err != nil {
			return fmt.Errorf("--add %s: %w", *addTo, err)
		}
		p = base
	}
	return perfmodel.WriteProfile(*out, p)
}

// profileFlags parses the count lists into o and checks the measuring
// flags (o.Check), completing o.
func profileFlags(o *measure.Options, threadsArg, loadsArg string) error {
	for _, l := range []struct {
		flag, arg string
		v         *[]int
	}{{"--threads", threadsArg, &o.Threads}, {"--loads", loadsArg, &o.Loads}} {
		var err error
		if l.arg != "" {
			if *l.v, err = measure.ParseCounts(l.arg); err != nil {
				return usageError(l.flag + ": " + err.Error())
			}
		}
	}
	if err := o.Check(runtime.NumCPU()); err != nil {
		return usageError(flagtab.UserMessage(err))
	}
	return nil
}

// profileWorkerEnv marks the processes bench profile starts as its
// workers, so that --worker run by hand is refused instead of waiting for
// a lockstep partner that never comes.
const profileWorkerEnv = "SUPERGCN_PROFILE_WORKER"

// profileToAdd loads the profile of --add (nil without), refusing one of
// another node or kernel before anything is measured.
func profileToAdd(path string, o *measure.Options) (*perfmodel.Profile, error) {
	if path == "" {
		return nil, nil
	}
	p, err := perfmodel.LoadProfile(path)
	if err == nil {
		err = o.CheckAdd(p)
	}
	if err != nil {
		return nil, usageError("--add: " + flagtab.UserMessage(err))
	}
	return p, nil
}

// joinInts writes v as --threads takes it: comma separated.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
