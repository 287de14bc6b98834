package perfmodel

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/quant"
	"github.com/supergcn/supergcn/task"
)

// Model is the network trained, as `supergcn train` builds it: Layers
// graph convolutions In → Hidden … → Classes.
type Model struct {
	Kind      string // a model of nn.Models()
	Layers    int
	Hidden    int
	In        int // input feature width
	Classes   int
	LayerNorm bool               // --norm layer between layers
	BatchNorm bool               // --norm batch: LayerNorm's elementwise passes, and the statistics all-reduced across ranks
	JK        string             // --jk cat|max|last: every layer hidden, combined by a linear layer ("" or none: without)
	Residual  bool               // --residual: skip connections around the hidden layers
	Dropout   bool               // dropout > 0 (input and hidden)
	Hyper     map[string]float64 // the model's hyperparameters (nn.Config.Hyper; absent: the defaults)
	// Attention models: heads of the hidden and of the output layer (0:
	// one) and the attention dropout (nn.Config's).
	Heads, OutHeads int
	AttnDropout     float64
}

// net is the nn configuration of m's layers, whose plans give the cost
// schedules and the parameter count.
func (m Model) net() nn.Config {
	norm := "none"
	switch {
	case m.BatchNorm:
		norm = "batch"
	case m.LayerNorm:
		norm = "layer"
	}
	return nn.Config{Model: m.Kind, Layers: m.Layers, In: m.In, Hidden: m.Hidden, Out: m.Classes, Norm: norm,
		JK: m.JK, Residual: m.Residual, Hyper: m.Hyper, Heads: m.Heads, OutHeads: m.OutHeads, AttnDropout: m.AttnDropout}
}

// Config is one prediction's setting.
type Config struct {
	Model Model
	Mode  exchange.Mode
	// Wire is the boundary rows' wire format per role, as train's
	// (unset roles: quant.Wires.Resolve's defaults).
	Wire         quant.Wires
	EvalEvery    int // an evaluation pass (a forward at the Eval wire) every EvalEvery epochs, averaged in; 0: none
	Threads      int // per rank
	RanksPerNode int // ranks r·K … r·K+K-1 share node r (ignored on a single-node network)
	CoresPerNode int // 0 = the profile's; decides whether the exchange overlaps the local product
	// Staged, when set, is a staged pattern's volume for the RanksPerNode
	// layout (exchange.NodeVolumes.Exchange[Exchange], one layer, one
	// direction): its three stages (gather inside the node at
	// the Intra wire, between nodes at the role's, scatter inside the
	// node) replace the flat pairs of the volumes. Hybrid mode only.
	Staged *exchange.ExchangeVolume
	// Exchange names the pattern Staged was planned for (a staged one of
	// exchange.Exchanges; "" is two-level); it names the prediction's
	// exchange. Without Staged the exchange is flat.
	Exchange string
	// RanksPerHost is how many ranks share the machine whose memory a
	// rank uses (0: RanksPerNode; every rank on a single-node network):
	// it picks the profile's measurement of that many copies
	// (Profile.RatesFor). An emulated cluster on one box runs all its
	// ranks on that box, whatever its emulated nodes.
	RanksPerHost int
	// EvalCache: the evaluation pass starts from the first layer's
	// aggregate of the features, computed once (nn.Model.SetEvalInput,
	// which train uses unless label propagation is on), so a first layer
	// that aggregates its input (propagate-first) exchanges and
	// aggregates nothing in evaluation.
	EvalCache bool
	// Pairs, when set, is the link task's pair exchange on these ranks
	// (pairs.go): its rows have the model's output width (Model.Classes,
	// the embedding).
	Pairs *task.PairVolume
}

func (c *Config) validate(ranks int) error {
	m := c.Model
	if _, err := nn.ModelOp(m.Kind); err != nil {
		return field.Errorf("perfmodel.Model.Kind", "%q, want %s", m.Kind, strings.Join(nn.Models(), " or "))
	}
	if m.Layers < 1 {
		return field.Errorf("perfmodel.Model.Layers", "%d, want ≥ 1", m.Layers)
	}
	if m.Layers > 1 && m.Hidden < 1 {
		return field.Errorf("perfmodel.Model.Hidden", "%d, want ≥ 1", m.Hidden)
	}
	if m.In < 1 {
		return field.Errorf("perfmodel.Model.In", "%d, want ≥ 1", m.In)
	}
	if m.Classes < 1 {
		return field.Errorf("perfmodel.Model.Classes", "%d, want ≥ 1", m.Classes)
	}
	if j := m.JK; j != "" && j != "none" && j != "cat" && j != "max" && j != "last" {
		return field.Errorf("perfmodel.Model.JK", "%q, want none, cat, max or last", j)
	}
	if err := c.Wire.Validate("perfmodel.Config.Wire"); err != nil {
		return err
	}
	if c.Threads < 1 {
		return field.Errorf("perfmodel.Config.Threads", "%d, want ≥ 1", c.Threads)
	}
	if c.RanksPerNode < 1 || ranks%c.RanksPerNode != 0 {
		return field.Errorf("perfmodel.Config.RanksPerNode", "%d, want ≥ 1 and a divisor of the %d ranks", c.RanksPerNode, ranks)
	}
	switch x, err := exchange.ParseExchange(c.Exchange); {
	case err != nil:
		return field.Wrap("perfmodel.Config.Exchange", err)
	case x != "" && exchange.Staged(x) != (c.Staged != nil):
		return field.Errorf("perfmodel.Config.Exchange", "%s, but perfmodel.Config.Staged is %s", x, map[bool]string{true: "unset", false: "set"}[c.Staged == nil])
	}
	if op, _ := nn.ModelOp(m.Kind); op == nn.OpMax && c.Staged != nil {
		return field.Errorf("perfmodel.Config.Staged", "the max operator (%s) runs the flat exchange", m.Kind)
	}
	if c.Staged != nil && c.Mode != exchange.ModeHybrid {
		return field.Errorf("perfmodel.Config.Staged", "the two-level exchange plans hybrid aggregation only (mode %s)", c.Mode)
	}
	if c.EvalEvery < 0 {
		return field.Errorf("perfmodel.Config.EvalEvery", "%d, want ≥ 0", c.EvalEvery)
	}
	if c.CoresPerNode < 0 {
		return field.Errorf("perfmodel.Config.CoresPerNode", "%d, want ≥ 0", c.CoresPerNode)
	}
	if c.RanksPerHost < 0 {
		return field.Errorf("perfmodel.Config.RanksPerHost", "%d, want ≥ 0", c.RanksPerHost)
	}
	if c.Pairs != nil && c.Pairs.Ranks != ranks {
		return field.Errorf("perfmodel.Config.Pairs", "counted on %d ranks, the volumes have %d", c.Pairs.Ranks, ranks)
	}
	return nil
}

// Prediction is the predicted epoch of one configuration. Component times
// are those of the critical rank (the one with the most busy time in the
// training step); SyncS is the rest of the step: waiting at the exchanges
// for slower ranks. EvalS is the evaluation pass, EpochS = TrainS + EvalS.
type Prediction struct {
	EpochS      float64 `json:"epoch_s"`
	TrainS      float64 `json:"train_s"`
	EvalS       float64 `json:"eval_s"`
	AggrS       float64 `json:"aggr_s"`
	AggrLocalS  float64 `json:"aggr_local_s"` // of AggrS, the local product left once the driver is done (not hidden)
	DenseS      float64 `json:"dense_s"`
	QuantS      float64 `json:"quant_s"`
	CommS       float64 `json:"comm_s"`      // moving boundary rows (critical rank)
	AllreduceS  float64 `json:"allreduce_s"` // gradient all-reduce
	CollectiveS float64 `json:"collective_s"`
	SyncS       float64 `json:"sync_s"`
	// SyncMaxS is the waiting of the least busy rank (train − its busy
	// time − all-reduce − collectives): what the trainer's sync_s reports,
	// the maximum over ranks of each rank's waiting.
	SyncMaxS float64 `json:"sync_max_s"`
	// CriticalRank has the most busy time (aggr+dense+quant+comm) in the
	// training step; BusyMin/BusyMax are the extremes over ranks.
	CriticalRank int     `json:"critical_rank"`
	BusyMinS     float64 `json:"busy_min_s"`
	BusyMaxS     float64 `json:"busy_max_s"`
	// IdealS is the epoch's aggregation and dense work spread evenly over
	// the ranks with no exchange; Efficiency = IdealS / EpochS.
	IdealS     float64 `json:"ideal_s"`
	Efficiency float64 `json:"efficiency"`
	// Boundary bytes per epoch, all ranks (training step; evaluation pass),
	// and the fraction of them that crosses nodes.
	TrainBytes int64 `json:"train_bytes"`
	EvalBytes  int64 `json:"eval_bytes"`  // of one evaluation pass over EvalEvery epochs
	IntraBytes int64 `json:"intra_bytes"` // of TrainBytes, those moved between ranks of one node
	// PairBytes and EvalPairBytes are the link task's pair rows (of
	// TrainBytes and EvalBytes; Config.Pairs).
	PairBytes      int64   `json:"pair_bytes,omitempty"`
	EvalPairBytes  int64   `json:"eval_pair_bytes,omitempty"`
	Exchange       string  `json:"exchange"` // the pattern (exchange.Exchanges)
	InterNodeShare float64 `json:"inter_node_share"`
	Ranks          int     `json:"ranks"`
	Nodes          int     `json:"nodes"`
	RanksPerNode   int     `json:"ranks_per_node"`
	Threads        int     `json:"threads"`
	ProfileThreads int     `json:"profile_threads"` // the profile's entry used (Threads: interpolated between the counts measured around it)
	ProfileCopies  int     `json:"profile_copies"`  // and the copies it was measured with (Config.RanksPerHost)
	Overlap        bool    `json:"overlap"`         // exchange overlapped with the local product
	// Oversubscription is (ranks per host · threads) / the profile's
	// cores when above 1: the ranks time-share the cores, and every
	// compute rate is divided by it.
	Oversubscription float64 `json:"oversubscription,omitempty"`
	// Straggle is the profile entry's Rates.Straggle when the job has
	// several ranks: every compute rate is divided by it (the exchanges
	// wait for the slowest rank).
	Straggle float64 `json:"straggle,omitempty"`
}

// Element-wise traffic, bytes per matrix value (4-byte floats, read +
// written), of the bandwidth-bound passes around the GEMMs and
// aggregations.
const (
	elemBias     = 8  // out += b
	elemReLU     = 8  // y = max(x, 0)
	elemReLUBack = 12 // g *= (y > 0)
	elemLossZero = 4  // gradient matrix cleared
	elemCount    = 4  // evaluation: arg max of each row
	adamBytes    = 28 // per parameter: read p, g, m, v; write p, m, v
)

// The passes measured as rates of their own (dropout, LayerNorm and the
// loss: random numbers, row statistics and exponentials, not bandwidth).
type measuredPass int

const (
	passDropout measuredPass = iota // forward and backward
	passLayerNorm
	passSoftmax
)

// pass adds a measured pass over rows×width values to every rank; forward
// and backward together are one unit, so a direction counts half.
func (p *predictor) pass(kind measuredPass, frac float64, width int, rowsOf func(v *exchange.RankVolume) int64) {
	for r := range p.vols {
		n := frac * float64(rowsOf(&p.vols[r])) * float64(width)
		var s float64
		switch kind {
		case passDropout:
			s = p.rates.DropoutSeconds(n)
		case passLayerNorm:
			s = p.rates.LayerNormSeconds(n)
		case passSoftmax:
			s = p.rates.SoftmaxSeconds(n)
		}
		p.addDense(r, s)
	}
}

// hidden adds one direction of the fused hidden stage over every rank's
// rows of width values (half its measured forward and backward), with
// dropout when drop, and reports whether the profile measured it
// (Rates.Hidden); without, it adds nothing, and the caller charges the
// separate passes (bias, LayerNorm, ReLU, dropout) as older profiles
// measured them.
func (p *predictor) hidden(width int, drop bool) bool {
	norm := p.cfg.Model.LayerNorm || p.cfg.Model.BatchNorm
	if _, ok := p.rates.HiddenSeconds(0, norm, drop); !ok {
		return false
	}
	for r := range p.vols {
		s, _ := p.rates.HiddenSeconds(0.5*float64(p.vols[r].Nodes)*float64(width), norm, drop)
		p.addDense(r, s)
	}
	return true
}

// hiddenLayer reports whether layer i is followed by a hidden stage:
// every layer but the last, and the last too with jumping knowledge.
func (m Model) hiddenLayer(i int) bool { return i < m.Layers-1 || (m.JK != "" && m.JK != "none") }

// params is the number of trained values.
func (m Model) params() int64 { return m.net().NumParams() }

// predictor holds the per-rank state of one walk over an epoch.
type predictor struct {
	cfg   Config
	costs []nn.LayerCost // the layers' cost schedules
	jk    nn.LayerCost   // the jumping-knowledge output layer's (empty without)
	op    nn.OpKind      // the operator of the aggregation walked
	heads int            // and its heads (an attention step; 0: an aggregation)
	vols  []exchange.RankVolume
	rates *Rates
	intra Link
	net   Network
	k     int // ranks per node
	nodes int
	over  bool
	// share is the profile's ShareFactor (1: not measured): the cost of
	// the local product and the exchange's driver sharing the cores,
	// beyond their CPU times.
	share float64

	t                        float64   // elapsed seconds of the walk
	pending                  []float64 // work of each rank since the last exchange
	aggr, dense, quant, comm []float64 // per rank totals
	local                    []float64 // of aggr, the local products
	collective, allreduce    float64
	trainBytes, evalBytes    int64
	pairBytes, evalPairBytes int64 // of them, the link task's pair rows
	intraBytes               int64
	interBytes, allBytes     float64
	idealWork                float64 // Σ over ranks of aggr+dense (ideal)
	stages                   pattern // the exchange's stage lists
	stagesV2                 pattern // a GATv2 attention's (gatv2.go)
	target                   bool    // the step walked is a GATv2 attention (nn.CostStep.TargetRows)
}

// Predict predicts one epoch of training on the partition whose volumes
// are vols (one per rank) on machine prof with network net.
func Predict(vols []exchange.RankVolume, prof *Profile, net Network, cfg Config) (*Prediction, error) {
	ranks := len(vols)
	if ranks == 0 {
		return nil, fmt.Errorf("perfmodel: no ranks")
	}
	cfg, err := resolve(cfg, ranks, prof, net)
	if err != nil {
		return nil, err
	}
	cores := cmp.Or(cfg.CoresPerNode, prof.CoresPerNode)
	rates, oversub, straggle := jobRates(prof, cfg, ranks)
	costs, err := cfg.Model.net().LayerCosts()
	if err != nil {
		return nil, err
	}
	if err := prof.CheckModel(cfg.Model); err != nil {
		return nil, fmt.Errorf("perfmodel: profile %s: %w", prof.Name, err)
	}
	p := &predictor{cfg: cfg, costs: costs, jk: cfg.Model.net().JKCost(), vols: vols, rates: rates, intra: prof.IntraNode, net: net,
		k: cfg.RanksPerNode, nodes: ranks / cfg.RanksPerNode,
		over: (cfg.Threads+1)*cfg.RanksPerNode <= cores, share: rates.Exchange.Share(),
		pending: make([]float64, ranks), aggr: make([]float64, ranks), dense: make([]float64, ranks), local: make([]float64, ranks),
		quant: make([]float64, ranks), comm: make([]float64, ranks)}
	p.stages = patternOf(cfg.Exchange, p)
	p.stagesV2 = gatv2Stages(p)
	pr := p.epoch()
	pr.ProfileThreads, pr.ProfileCopies = rates.Threads, rates.Copies
	pr.Oversubscription, pr.Straggle = max(oversub, 1), straggle
	return pr, nil
}

// resolve validates cfg for ranks ranks on prof and net and returns it
// with its wires resolved and its exchange named (flat, or the staged
// one's).
func resolve(cfg Config, ranks int, prof *Profile, net Network) (Config, error) {
	if net.Single {
		cfg.RanksPerNode = ranks
	}
	if err := cfg.validate(ranks); err != nil {
		return cfg, err
	}
	cfg.Wire = cfg.Wire.Resolve()
	x, _ := exchange.ParseExchange(cfg.Exchange) // validated
	cfg.Exchange = exchange.ExchangeFlat
	if cfg.Staged != nil {
		cfg.Exchange = cmp.Or(x, exchange.ExchangeTwoLevel)
	}
	if err := prof.Validate(); err != nil {
		return cfg, fmt.Errorf("perfmodel: profile %s: %w", prof.Name, err)
	}
	if !net.Single {
		if err := net.Inter.validate("network " + net.Name); err != nil {
			return cfg, fmt.Errorf("perfmodel: %w", err)
		}
	}
	return cfg, nil
}

// jobRates returns the rates a rank of cfg runs at on prof: those of its
// thread count with the ranks busy on its machine, slowed by the
// oversubscription of the machine's cores and, in a job of several ranks,
// by the profile's straggle (returned, 0 when none applies).
func jobRates(prof *Profile, cfg Config, ranks int) (rates *Rates, oversub, straggle float64) {
	busy := cmp.Or(cfg.RanksPerHost, cfg.RanksPerNode)
	rates = prof.RatesAt(cfg.Threads, busy)
	oversub = float64(busy*cfg.Threads) / float64(prof.CoresPerNode)
	if oversub > 1 {
		rates = rates.Scaled(1 / oversub)
	}
	if ranks > 1 && rates.Straggle > 1 {
		straggle = rates.Straggle
		rates = rates.Scaled(1 / straggle)
	}
	return rates, oversub, straggle
}

// epoch walks a training step and, every EvalEvery epochs, an evaluation
// pass, and returns the prediction (its profile fields unset).
func (p *predictor) epoch() *Prediction {
	cfg, ranks := p.cfg, len(p.vols)
	p.forward(true)
	p.pairTraining(false)
	p.lossAndBackward()
	p.sync()
	p.gradAllreduce()
	train := p.t
	aggr, dense, quant, comm, local := clone(p.aggr), clone(p.dense), clone(p.quant), clone(p.comm), clone(p.local)
	coll, ar := p.collective, p.allreduce
	trainIdeal := p.idealWork
	eval, evalIdeal := 0.0, 0.0
	if cfg.EvalEvery > 0 {
		p.t, p.idealWork = 0, 0
		p.forward(false)
		p.sync()
		p.pairEval()
		eval, evalIdeal = p.t/float64(cfg.EvalEvery), p.idealWork/float64(cfg.EvalEvery)
		p.evalBytes /= int64(cfg.EvalEvery)
		p.evalPairBytes /= int64(cfg.EvalEvery)
	}
	pr := &Prediction{TrainS: train, EvalS: eval, EpochS: train + eval, Ranks: ranks, Nodes: p.nodes,
		RanksPerNode: p.k, Threads: cfg.Threads, Overlap: p.over,
		TrainBytes: p.trainBytes, EvalBytes: p.evalBytes, IntraBytes: p.intraBytes, AllreduceS: ar, CollectiveS: coll,
		PairBytes: p.pairBytes, EvalPairBytes: p.evalPairBytes,
		Exchange: cfg.Exchange}
	if p.allBytes > 0 {
		pr.InterNodeShare = p.interBytes / p.allBytes
	}
	pr.BusyMinS = math.Inf(1)
	for r := range p.vols {
		b := aggr[r] + dense[r] + quant[r] + comm[r]
		if b > pr.BusyMaxS {
			pr.BusyMaxS, pr.CriticalRank = b, r
		}
		pr.BusyMinS = min(pr.BusyMinS, b)
	}
	c := pr.CriticalRank
	pr.AggrS, pr.DenseS, pr.QuantS, pr.CommS, pr.AggrLocalS = aggr[c], dense[c], quant[c], comm[c], local[c]
	pr.SyncS = max(0, train-pr.BusyMaxS-ar-coll)
	pr.SyncMaxS = max(0, train-pr.BusyMinS-ar-coll)
	pr.IdealS = (trainIdeal + evalIdeal) / float64(ranks)
	pr.Efficiency = pr.IdealS / pr.EpochS
	return pr
}

// CheckModel reports whether every measurement of p has the rates model m
// needs: the attention kernels' for an attention model.
func (p *Profile) CheckModel(m Model) error {
	costs, err := m.net().LayerCosts()
	if err != nil {
		return err
	}
	if !needsAttention(costs) {
		return nil
	}
	for _, r := range append(append([]Rates(nil), p.Rates...), p.Loads...) {
		if r.Attention == nil {
			return fmt.Errorf("the measurement of %d thread(s) × %d copies has no attention rates, which %s needs (measure the profile again with bench profile)", r.Threads, r.Copies, m.Kind)
		}
	}
	return nil
}

// needsAttention reports whether a schedule has attention steps.
func needsAttention(costs []nn.LayerCost) bool {
	for _, c := range costs {
		for _, s := range append(c.Forward, c.Backward...) {
			if s.Kind == nn.StepAttention {
				return true
			}
		}
	}
	return false
}

func clone(a []float64) []float64 { return append([]float64(nil), a...) }

// addDense adds s seconds of dense work to rank r (pending and total).
func (p *predictor) addDense(r int, s float64) {
	p.pending[r] += s
	p.dense[r] += s
	p.idealWork += s
}

// addQuant adds s seconds of encoding or decoding to rank r.
func (p *predictor) addQuant(r int, s float64) {
	p.pending[r] += s
	p.quant[r] += s
}

// addCollective adds the exchange's synchronisation point, a collective of
// 2·⌈log2 ranks⌉ latency-bound steps over the slowest link in use, to the
// collective total and the clock.
func (p *predictor) addCollective(ranks int) {
	coll := 0.0
	if ranks > 1 {
		l := p.intra
		if !p.net.Single && p.nodes > 1 {
			l = p.net.Inter
		}
		coll = 2 * float64(ceilLog2(ranks)) * l.LatencyUS * 1e-6
	}
	p.collective += coll
	p.t += coll
}

// addAggr adds s seconds of aggregation work outside the overlap to rank
// r (pending and totals).
func (p *predictor) addAggr(r int, s float64) {
	p.pending[r] += s
	p.aggr[r] += s
	p.idealWork += s
}

// sharedWall is the wall time of cpu seconds of the exchange driver's work
// run beside local seconds of local product still to do (T threads), and
// the local product left afterwards. The driver's work runs on d threads:
// the codec on T (quant.Codec splits its blocks over the rank's threads),
// the MPI copies on the driver's one. The rank has T cores, T+1 with a
// spare core (over). When the d+T runnable threads outnumber them, each
// progresses at cores/(d+T) of its speed alone while both run, so the
// window lasts (d+T)/cores times the work done in it, times the profile's
// measured ShareFactor (1: sharing without loss); otherwise both run at
// full speed. With one thread, no spare core and a factor of 1, CPU is
// conserved: wall + left = cpu + local.
func (p *predictor) sharedWall(cpu, local float64, d int) (wall, left float64) {
	s := min(cpu, local)
	t, cores := float64(p.cfg.Threads), float64(p.cfg.Threads)
	if p.over {
		cores++
	}
	f := 1.0
	if float64(d)+t > cores {
		f = p.share
		if t == 1 {
			// One thread, no spare core, and every rank of the node in
			// its window at once (the exchange's collective just before
			// the post lines them up): the window cannot take less than
			// its CPU, local + driver's work. A measured factor below 1
			// saw free cores: bench profile's copies ran their windows
			// out of step (profiles measured without --lockstep). With more threads a
			// factor below 1 can be real (the parts alone leave threads
			// idle), so it stays.
			f = max(1, f)
		}
		f *= (float64(d) + t) / cores
	}
	return cpu - s + s*f, local - s
}

// sharedEncode adds the encoding of rank r's send rows (enc seconds on the
// rank's threads alone) before the post, as the exchange's driver does
// it: beside the local product, which starts first (sharedWall). It
// returns the local product's seconds done meanwhile.
func (p *predictor) sharedEncode(r int, enc, local float64) (done float64) {
	wall, left := p.sharedWall(enc, local, p.cfg.Threads)
	p.addQuant(r, wall)
	return local - left
}

// exchangeWork is rank r's aggregation work of one exchange at width,
// counted from the exchange's products (exchange.Propagator): before the
// post, the input row scaling and the send product, which writes every
// row sent (the row gather: one entry a row, RowSeconds); beside the
// transfer, the local product (GCN: with a self-loop a node); after it,
// the cut edges (each one entry of the halo product, forward, or of the
// send product's transpose, backward: random reads of an exchange buffer,
// at the profile's HaloGUPS when measured, else the aggregation rate), in
// pre mode one more entry a received row (its
// scatter-add into the destination), and the output row scaling. GCN
// scales input and output rows (D^-1/2 each side), SAGE's mean one side;
// a scaling is a pass of 8 bytes a value (read and write). An attention
// step (p.heads) runs the attention kernels on the local and the cut edges
// instead, and its normalisation (attn.Finish; backward attn.Scale) is
// the scaling pass.
func (p *predictor) exchangeWork(r, width int, backward bool, sent, recv int64) (before, local, after float64) {
	v := &p.vols[r]
	if p.op == nn.OpMax {
		return p.maxWork(v, width, backward, sent, recv)
	}
	pass := p.rates.ElemSeconds(8 * float64(v.Nodes) * float64(width))
	loops := int64(0)
	switch {
	case p.op == nn.OpGCN:
		before, after = pass, pass
		loops = v.Nodes
	case p.op == nn.OpSum: // no scaling
	case backward:
		before = pass
	default:
		after = pass
	}
	before += p.rates.RowSeconds(sent, width, false, backward)
	if p.cfg.Mode == exchange.ModePre {
		after += p.rates.RowSeconds(recv, width, true, backward)
	}
	if p.heads > 0 { // the attention kernels, a self-loop a node, on the owned and the halo graph
		local, _ = p.rates.attentionSeconds(p.target, v.LocalEdges+v.Nodes, p.heads, width, backward)
		halo, _ := p.rates.attentionSeconds(p.target, v.CutEdges, p.heads, width, backward)
		return before, local, after + halo
	}
	local = p.rates.AggrSeconds(v.LocalEdges+loops, width, backward)
	after += p.rates.HaloSeconds(v.CutEdges, width, backward)
	return before, local, after
}

// maxWork is exchangeWork for the max operator (exchange's max.go), no
// scalings: forward, the send product (partial maxima and raw rows, as the
// sums' rows) and the local maximum over the owned edges, each also writing
// its arg max (4 bytes a value), then the halo's maximum over the cut
// edges; backward no product over the edges but the routing of every
// owned row's gradient to its arg max, twice (12 bytes a value: the
// gradient and the arg max read, the destination added to; once to the
// received rows before the post, once to the local sources beside the
// transfer), then that of the received rows through the send rows'
// arguments.
func (p *predictor) maxWork(v *exchange.RankVolume, width int, backward bool, sent, recv int64) (before, local, after float64) {
	route := func(rows int64) float64 { return p.rates.ElemSeconds(12 * float64(rows) * float64(width)) }
	if backward {
		return route(v.Nodes), route(v.Nodes), route(sent)
	}
	args := func(rows int64) float64 { return p.rates.ElemSeconds(4 * float64(rows) * float64(width)) }
	before = p.rates.RowSeconds(sent, width, false, false) + args(sent)
	local = p.rates.AggrSeconds(v.LocalEdges, width, false) + args(v.Nodes)
	after = p.rates.HaloSeconds(v.CutEdges, width, false)
	if p.cfg.Mode == exchange.ModePre {
		after += p.rates.RowSeconds(recv, width, true, false)
	}
	return before, local, after
}

// elem adds element-wise passes of bytesPerValue over rows×width values
// to every rank (rows from rowsOf).
func (p *predictor) elem(bytesPerValue float64, width int, rowsOf func(v *exchange.RankVolume) int64) {
	for r := range p.vols {
		p.addDense(r, p.rates.ElemSeconds(bytesPerValue*float64(rowsOf(&p.vols[r]))*float64(width)))
	}
}

func nodesOf(v *exchange.RankVolume) int64 { return v.Nodes }
func trainOf(v *exchange.RankVolume) int64 { return v.TrainNodes }

// gemm adds one GEMM over each rank's rows.
func (p *predictor) gemm(op string, k, n int) {
	for r := range p.vols {
		p.addDense(r, p.rates.GemmSeconds(op, p.vols[r].Nodes, k, n))
	}
}

// sync ends a phase: the slowest rank's pending work.
func (p *predictor) sync() {
	m := 0.0
	for r := range p.pending {
		m = max(m, p.pending[r])
		p.pending[r] = 0
	}
	p.t += m
}

// forward walks the layers' forward pass (training, or evaluation).
func (p *predictor) forward(training bool) {
	m := p.cfg.Model
	wire := p.cfg.Wire[quant.Forward]
	if !training {
		wire = p.cfg.Wire[quant.Eval]
	}
	if training && m.Dropout {
		p.pass(passDropout, 0.5, m.In, nodesOf)
	}
	for i, c := range p.costs {
		for _, s := range c.Forward {
			if s.Input && i == 0 && !training && p.cfg.EvalCache {
				continue // the cached aggregate of the features
			}
			p.step(s, wire, false, training)
		}
		out := m.Classes
		if m.hiddenLayer(i) {
			out = m.Hidden
		}
		if training && m.hiddenLayer(i) {
			p.batchNormSums(out, false)
		}
		if m.hiddenLayer(i) && p.hidden(out, training && m.Dropout) {
			p.skip(i, false)
			continue
		}
		p.elem(elemBias, out, nodesOf)
		if m.hiddenLayer(i) {
			if m.LayerNorm || m.BatchNorm {
				p.pass(passLayerNorm, 0.5, out, nodesOf)
			}
			p.elem(elemReLU, out, nodesOf)
			p.skip(i, false)
			if training && m.Dropout {
				p.pass(passDropout, 0.5, out, nodesOf)
			}
		}
	}
	for _, s := range p.jk.Forward {
		p.step(s, wire, false, training)
	}
	if !training {
		p.elem(elemCount, m.Classes, nodesOf)
	}
}

// step adds one step of a layer's cost schedule: a dense product over
// every rank's rows, an exchange (at wire) with its aggregation, or an
// elementwise pass.
func (p *predictor) step(s nn.CostStep, wire quant.Wire, backward, training bool) {
	switch s.Kind {
	case nn.StepGemm:
		p.gemm(s.Trans, s.K, s.N)
	case nn.StepAggregate:
		p.op, p.heads, p.target = s.Op, 0, false
		p.exchange(s.Width, wire, backward, training)
	case nn.StepAttention:
		p.op, p.heads, p.target = nn.OpAttention, s.Heads, s.TargetRows
		p.exchange(s.Width, wire, backward, training)
	case nn.StepElem:
		p.elem(s.Bytes, s.Width, nodesOf)
	}
}

// lossAndBackward walks the loss, the backward pass and the optimiser.
func (p *predictor) lossAndBackward() {
	m := p.cfg.Model
	p.elem(elemLossZero, m.Classes, nodesOf)
	if p.cfg.Pairs != nil {
		p.pairTraining(true) // the pairs' loss and the rows' gradients back
	} else {
		p.pass(passSoftmax, 1, m.Classes, trainOf)
	}
	for _, s := range p.jk.Backward {
		p.step(s, p.cfg.Wire[quant.Backward], true, true)
	}
	if m.hiddenLayer(m.Layers - 1) { // jumping knowledge: the last convolution's hidden stage
		p.hiddenBackward(m.Hidden)
	}
	for i := m.Layers - 1; i >= 0; i-- {
		p.skip(i, true)
		for _, s := range p.costs[i].Backward {
			if s.InputGrad && i == 0 {
				continue
			}
			p.step(s, p.cfg.Wire[quant.Backward], true, true)
		}
		if i > 0 {
			p.hiddenBackward(m.Hidden)
		}
	}
	adam := p.rates.ElemSeconds(adamBytes * float64(m.params()))
	for r := range p.vols {
		p.addDense(r, adam)
	}
}

// skip adds layer i's residual connection, one direction (nn.Config.ResidualCost).
func (p *predictor) skip(i int, backward bool) {
	c := p.cfg.Model.net().ResidualCost(i)
	steps := c.Forward
	if backward {
		steps = c.Backward
	}
	for _, s := range steps {
		p.step(s, p.cfg.Wire[quant.Forward], backward, true)
	}
}

// hiddenBackward adds the backward of a hidden stage of width values: the
// fused stage's, or dropout's, ReLU's and the normalisation's, with batch
// normalisation's all-reduce of its gradient sums.
func (p *predictor) hiddenBackward(width int) {
	m := p.cfg.Model
	p.batchNormSums(width, true)
	if p.hidden(width, m.Dropout) {
		return
	}
	if m.Dropout {
		p.pass(passDropout, 0.5, width, nodesOf)
	}
	p.elem(elemReLUBack, width, nodesOf)
	if m.LayerNorm || m.BatchNorm {
		p.pass(passLayerNorm, 0.5, width, nodesOf)
	}
}

// batchNormSums adds batch normalisation's all-reduces of a training step
// at a hidden stage of width features (nn/batchnorm.go): forward the
// feature sums and the row count (width+1 float64s), then the centred
// squares (width); backward the gradient sums (2·width). Each waits for
// every rank's work before it (sync). Evaluation normalises with the
// running statistics: no all-reduce.
func (p *predictor) batchNormSums(width int, backward bool) {
	if !p.cfg.Model.BatchNorm {
		return
	}
	sizes := []int{width + 1, width}
	if backward {
		sizes = []int{2 * width}
	}
	for _, n := range sizes {
		p.sync()
		p.allreduceOf(8 * float64(n))
	}
}

// gradAllreduce adds the gradient all-reduce (float32 values).
func (p *predictor) gradAllreduce() { p.allreduceOf(4 * float64(p.cfg.Model.params())) }

// allreduceOf adds an all-reduce of b bytes: within each node a reduce and
// a broadcast over the intra-node link (binomial trees), across nodes a
// ring all-reduce at the node's injection bandwidth.
func (p *predictor) allreduceOf(b float64) {
	t := 2 * p.intra.Seconds(int64(ceilLog2(p.k)), b)
	if n := p.nodes; n > 1 && !p.net.Single {
		t += p.net.Inter.Seconds(int64(2*(n-1)), 2*float64(n-1)/float64(n)*b)
	}
	p.allreduce += t
	p.t += t
}

func ceilLog2(n int) int {
	l := 0
	for 1<<l < n {
		l++
	}
	return l
}
