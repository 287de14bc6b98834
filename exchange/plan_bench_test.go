package exchange

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/metis"
)

// planBenchParts is the rank count of BenchmarkPlanDBLP.
const planBenchParts = 64

// dblpCache caches dblp-2010 and its METIS shards by part count across
// the benchmarks' rounds (loading and partitioning take longer than the
// plan itself).
var dblpCache struct {
	sync.Mutex
	ds     *graph.Dataset
	shards map[int][]*partition.Shard
}

// loadDBLPShards loads dblp-2010, makes it undirected without self-loops or
// duplicates (as `supergcn partition` does), attaches 16 synthetic features,
// partitions it with METIS (degree weights) into parts and splits it into
// shards.
func loadDBLPShards(b *testing.B, parts int) []*partition.Shard {
	d := &dblpCache
	d.Lock()
	defer d.Unlock()
	if sh, ok := d.shards[parts]; ok {
		return sh
	}
	if d.ds == nil {
		path := filepath.Join(testdataset.Dataset(b, "dblp-2010"), "edges.txt.gz")
		ds, err := graph.Load(path, graph.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ds.Graph = graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(ds.Graph)))
		if err := graph.AttachSyntheticFeatures(ds, 16, 8, 1); err != nil {
			b.Fatal(err)
		}
		d.ds, d.shards = ds, map[int][]*partition.Shard{}
	}
	owner, err := metis.Metis(d.ds.Graph, parts, metis.Options{Weights: metis.WeightsDegree})
	if err != nil {
		b.Fatal(err)
	}
	sh := make([]*partition.Shard, parts)
	for r := range sh {
		sh[r] = partition.Split(d.ds, owner, r, parts)
	}
	d.shards[parts] = sh
	b.Logf("dblp-2010: %d nodes, %d arcs, %d parts", d.ds.NumNodes(), d.ds.Graph.Ptr[d.ds.Graph.NumRows], parts)
	return sh
}

// BenchmarkSplitShardDBLP splits every pair of every shard of dblp-2010 at
// 4 METIS parts (SplitShard: one vertex cover per pair), one shard after
// another, as the ranks of a threaded layout plan few large pairs each.
// The pairs of a shard run on the thread budget (GOMAXPROCS here):
//
//	GOMAXPROCS=1 go test -run '^$' -bench SplitShardDBLP ./exchange/   # then GOMAXPROCS=2, …
func BenchmarkSplitShardDBLP(b *testing.B) {
	shards := loadDBLPShards(b, 4)
	for b.Loop() {
		for _, s := range shards {
			if _, err := SplitShard(s, ModeHybrid); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkPlanDBLP builds the hybrid exchange plan of dblp-2010 (326k
// nodes, 1.6M arcs) at 64 METIS parts, the 64 ranks running as goroutines
// of one process (comm.RunGroup). Loading and partitioning are set up once,
// outside the timing. Metrics: plan_s is the plan build time of the slowest
// rank (PlanStats().Seconds, which spans the whole collective build, so it
// is close to the wall time of one op), rows/layer the hybrid rows all ranks
// send per layer and direction (pre and post for comparison).
//
//	go test -run '^$' -bench PlanDBLP -benchtime 3x ./exchange/
func BenchmarkPlanDBLP(b *testing.B) {
	shards := loadDBLPShards(b, planBenchParts)
	var maxPlan, sumPlan float64
	var rows RowCounts
	rounds := 0
	for b.Loop() {
		stats, slowest := buildPlans(b, shards, planBenchParts, Options{Mode: "hybrid"})
		rows = RowCounts{}
		for _, s := range stats {
			rows = rows.Add(s.TotalSent())
		}
		maxPlan = max(maxPlan, slowest)
		sumPlan += slowest
		rounds++
	}
	b.ReportMetric(sumPlan/float64(rounds), "plan_s")
	b.ReportMetric(maxPlan, "plan_s_worst")
	b.ReportMetric(float64(rows.Hybrid), "rows_hybrid")
	b.ReportMetric(float64(rows.Pre), "rows_pre")
	b.ReportMetric(float64(rows.Post), "rows_post")
}

// BenchmarkPlanDBLPTwoLevel builds the two-level exchange of the same 64
// shards on 8 emulated nodes of 8 ranks (comm.RunGroupNodes): every rank
// plans the node pairs into its node (PlanNodePair), so the cover work is
// done by each of the node's ranks. plan_s as in BenchmarkPlanDBLP; rows
// are the inter-node and intra-node rows all ranks send per layer.
//
//	go test -run '^$' -bench PlanDBLPTwoLevel -benchtime 3x ./exchange/
func BenchmarkPlanDBLPTwoLevel(b *testing.B) {
	shards := loadDBLPShards(b, planBenchParts)
	var maxPlan, sumPlan float64
	var inter, intra int64
	rounds := 0
	for b.Loop() {
		stats, slowest := buildPlans(b, shards, 8, Options{Exchange: ExchangeTwoLevel})
		inter, intra = 0, 0
		for _, s := range stats {
			inter += s.InterRows
			intra += s.IntraRows
		}
		maxPlan = max(maxPlan, slowest)
		sumPlan += slowest
		rounds++
	}
	b.ReportMetric(sumPlan/float64(rounds), "plan_s")
	b.ReportMetric(maxPlan, "plan_s_worst")
	b.ReportMetric(float64(inter), "rows_inter")
	b.ReportMetric(float64(intra), "rows_intra")
}

// buildPlans builds the GCN exchange of every shard with o on a goroutine
// group of planBenchParts ranks, perNode to an emulated node, and returns
// each rank's PlanStats and the slowest rank's plan time.
func buildPlans(b *testing.B, shards []*partition.Shard, perNode int, o Options) ([]PlanStats, float64) {
	stats := make([]PlanStats, planBenchParts)
	err := comm.RunGroupNodes(planBenchParts, perNode, func(c comm.Comm) error {
		p, err := New(shards[c.Rank()], c, testEngine(), nn.OpGCN, o)
		if err != nil {
			return err
		}
		stats[c.Rank()] = p.PlanStats()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	slowest := 0.0
	for _, s := range stats {
		slowest = max(slowest, s.Seconds)
	}
	return stats, slowest
}
