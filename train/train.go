// Package train runs full-batch GNN training on one rank's shard of a graph:
// the epoch loop, global loss and accuracy, gradient all-reduce, the time
// breakdown, metrics and checkpoints. With one rank (comm.Single) it is the
// single-process trainer; under MPI every rank runs the same loop.
package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/labelprop"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
	"github.com/supergcn/supergcn/task"
)

// ErrStructureOnly: the data has no features or labels to train on.
var ErrStructureOnly = errors.New("dataset has no features or labels (structure-only input)")

// ErrNoTrainNodes: no rank has a labelled training node.
var ErrNoTrainNodes = errors.New("no labelled training nodes: the split is empty (an OGB directory needs split/<name>/train.csv)")

// Config is everything the training loop needs besides the data. Errors
// about one of its fields are *field.Error values naming it
// ("train.Config.Epochs").
type Config struct {
	Model       nn.Config // In and Out are filled from the data when zero
	LR          float64
	WeightDecay float64
	DecayAll    bool // weight decay on every weight matrix (default: first layer only, as Kipf & Welling)
	Decoupled   bool // AdamW instead of Adam with L2
	Epochs      int

	// The learning rate of each epoch (schedule.go): LRSchedule is one of
	// Schedules ("" = ScheduleNone). The plateau schedule watches the
	// validation loss of the epochs evaluated on the EvalEvery grid.
	LRSchedule        string
	LRStepSize        int     // step: epochs between reductions (≥ 1)
	LRGamma           float64 // step and plateau: the factor of a reduction, in (0, 1]
	LRMin             float64 // cosine: the rate it anneals to; plateau: the lowest rate
	LRPlateauPatience int     // plateau: evaluations without a lower validation loss tolerated; one more reduces the rate
	// Patience > 0 stops training after Patience evaluations (on the
	// EvalEvery grid) without a better validation value than the best so
	// far; 0 trains all Epochs.
	Patience int
	// StopOn is the validation value that chooses the best epoch (the
	// model SaveBest keeps, the test accuracy reported) and that Patience
	// watches: StopValAcc ("" too: the task's metric, higher or lower as
	// the task says) or StopValLoss (the lowest validation loss, as
	// Chen et al.'s GCNII runs).
	StopOn string

	Seed        uint64
	Threads     int
	Kernel      string      // kernel of every family: aggr, quant, nn's row kernels (internal/dispatch names; "" = $SUPERGCN_KERNEL, else the best)
	NodeOrder   string      // local node order (partition.NodeOrders; "" = partition.DefaultOrder); Run renumbers the shard's nodes in place
	AggrMode    string      // post|pre|hybrid
	Exchange    string      // flat|two-level|two-level-paired ("" = two-level with several multi-rank nodes; exchange.Options.Exchange)
	Wire        quant.Wires // boundary rows' wire format per role (unset: quant.Wires.Resolve's defaults, fp32)
	EvalEvery   int         // evaluate every N epochs and after the last (0 or 1 = every epoch)
	EvalCache   string      // keep the evaluation passes' aggregate of the features: EvalCacheAuto ("" too)|EvalCacheOn|EvalCacheOff (memory.go)
	LabelProp   float64
	FeatNorm    string // input preprocessing applied by the caller, recorded in checkpoints
	MetricsPath string
	SavePath    string
	SaveEvery   int    // also save to SavePath every SaveEvery epochs (0: only at the end)
	SaveBest    string // save the model of the best validation epoch so far here ("" = no)
	ResumePath  string // continue the training saved in this checkpoint (metrics are appended)
	// InitPath starts training from the weights in this .safetensors or
	// .npz file (interop.Import: PyG's names and PyTorch's layouts, as
	// supergcn export writes them), instead of the seeded initialisation;
	// the model is evaluated on them before the first epoch (Result.Init).
	InitPath string
	// Outputs asks for the per-node outputs (EvaluateWith) of the
	// best-validation model when the split has validation nodes (the model
	// SaveBest holds), else of the last epoch's, in Result.Outputs.
	Outputs EvalOutputs
	// Task is the training objective (task.Names; "" = task.Default, node
	// classification on the dataset's labels); Targets its target table
	// when the task reads one (task.Kind.Table).
	Task    string
	Targets *task.Table
	Log     io.Writer // per-epoch lines (rank 0); nil = silent
	Quiet   bool      // no plan or per-epoch lines: only a resume notice and the summary

	// Stop, when set, is asked once per epoch on every rank whether a stop
	// was requested (a signal); the ranks agree in the epoch's all-reduce,
	// and when any rank asks, all finish the epoch, save to SavePath and
	// return a *StoppedError.
	Stop func() bool
	// Header, when set, is written (completed) as the first metrics record.
	Header *RunHeader
}

// StoppedError is returned by Run when Config.Stop asked to stop before
// the last epoch: the run ended cleanly after Epoch epochs, and the
// checkpoint (when Saved is not "") continues it.
type StoppedError struct {
	Epoch, Epochs int
	Saved         string
}

func (e *StoppedError) Error() string {
	if e.Saved == "" {
		return fmt.Sprintf("stopped on request after epoch %d of %d; no checkpoint file was given, the run is lost", e.Epoch, e.Epochs)
	}
	return fmt.Sprintf("stopped on request after epoch %d of %d; checkpoint %s continues it", e.Epoch, e.Epochs, e.Saved)
}

// Result summarises a finished run (identical on every rank).
type Result struct {
	Final  FinalMetrics
	Epochs []EpochMetrics
	Init   *EpochMetrics // with Config.InitPath: the accuracies of the loaded weights (epoch 0, no training step)
	// Outputs, with Config.Outputs, is EvaluateWith's result for that
	// model: its matrices on rank 0 only.
	Outputs *Scores
}

// Run trains on shard s over communicator c and returns the global result.
// Every rank must call Run with the same Config. Unless Config.NodeOrder
// is partition.OrderGiven, Run first renumbers s's nodes in place
// (partition.Shard.Reorder): s stays a valid shard of the same data.
func Run(cfg Config, s *partition.Shard, c comm.Comm) (*Result, error) {
	t, err := newTrainer(cfg, s, c)
	if err != nil {
		return nil, err
	}
	// Hand the heap that loading and planning freed back to the system
	// before the model's buffers are allocated: otherwise the freed pages
	// stay resident beside them (the heap is far below its collection goal,
	// so the runtime would keep them), adding to the peak RSS.
	debug.FreeOSMemory()
	return t.run()
}

type trainer struct {
	cfg   Config
	shard *partition.Shard
	c     comm.Comm
	prop  *exchange.Propagator
	model *nn.Model
	opt   *nn.Adam
	x     *dense.Matrix
	input *nn.Input // the features as the model's input (features.go: useInput)
	lp    *labelprop.Embedding
	kind  task.Kind // the task's table row
	task  task.Task // the task on this shard

	trainRows, validRows, testRows []int32
	nTrain, nValid, nTest          int64    // global counts
	terms                          [3]int64 // global loss terms of the train, validation and test rows (task.Task.Terms)
	params                         []*nn.Param
	gradBuf                        []float32
	planS                          float64
	orderS                         float64 // seconds computing and applying the node order
	lastLoss                       float64 // global loss sum of the last step
	codecs                         []*quant.Codec
	nonFiniteSeen                  int64         // t.nonFinite() at the last divergence check
	lossBuf                        []float64     // loss sum, then one divergence code per rank
	lossGrad                       *dense.Matrix // the loss gradient, reused across epochs
	watch                          lossWatch
	featMax                        float64 // the input features' largest magnitude, all ranks (blameFeatures)
	evalCache                      bool    // the evaluation passes reuse the features' aggregate (checkMemory decides)

	done int          // epochs completed (by this run or the resumed one)
	best FinalMetrics // best-validation bookkeeping (BestValAcc -1 before any epoch)
	// gridBest is best over the epochs on the EvalEvery grid only: what a
	// checkpoint keeps. The last epoch of a run is evaluated off the grid
	// too; a run resumed past it must not count that evaluation, which a
	// run that never stopped there did not make.
	gridBest FinalMetrics
	lastTest float64 // test accuracy of epoch done
	// bestParams, with Config.Outputs, are the parameters of the best
	// validation epoch of this run (nil before one).
	bestParams [][]float32
	loop       LoopState // learning-rate schedule and early stopping

	dataID  string // DataIdentity of the shards
	stopped bool   // the ranks agreed to stop after the current epoch
}

func newTrainer(cfg Config, s *partition.Shard, c comm.Comm) (*trainer, error) {
	if cfg.Epochs < 0 {
		return nil, field.Errorf("train.Config.Epochs", "must be ≥ 0, got %d", cfg.Epochs)
	}
	if cfg.SaveEvery < 0 || (cfg.SaveEvery > 0 && cfg.SavePath == "") {
		return nil, field.Errorf("train.Config.SaveEvery", "%d needs train.Config.SavePath and must be ≥ 1", cfg.SaveEvery)
	}
	if err := cfg.loopSettings().check(cfg.LR); err != nil {
		return nil, err
	}
	kind, err := task.Lookup(cfg.Task)
	if err != nil {
		return nil, field.Wrap("train.Config.Task", err)
	}
	if s.FeatDim == 0 || (s.Labels == nil && !kind.Table && !kind.Pairs) {
		return nil, ErrStructureOnly
	}
	t := &trainer{kind: kind, cfg: cfg, shard: s, c: c, best: FinalMetrics{BestValAcc: -1}, gridBest: FinalMetrics{BestValAcc: -1},
		loop: LoopState{LR: cfg.LR}}
	if err := t.reorder(); err != nil {
		return nil, err
	}
	if err := t.buildTask(); err != nil {
		return nil, err
	}
	fm := []float64{maxAbs(featureValues(s))}
	if err := c.AllreduceMaxF64(fm); err != nil {
		return nil, err
	}
	t.featMax = fm[0]
	if err := t.splitRows(); err != nil {
		return nil, err
	}
	if err := t.checkWatched(); err != nil {
		return nil, err
	}
	mc, err := t.modelConfig()
	if err != nil {
		return nil, err
	}
	if err := t.plan(mc); err != nil {
		return nil, err
	}
	if err := t.buildModel(mc); err != nil {
		return nil, err
	}
	if t.dataID, err = DataIdentity(s, c); err != nil {
		return nil, err
	}
	if cfg.ResumePath != "" && cfg.InitPath != "" {
		return nil, field.Errorf("train.Config.InitPath", "%s: a resumed run continues the weights of train.Config.ResumePath; give one of the two", cfg.InitPath)
	}
	if cfg.ResumePath != "" {
		if err := t.resume(cfg.ResumePath); err != nil {
			return nil, err
		}
		if err := t.resumeBest(); err != nil {
			return nil, err
		}
	}
	if cfg.InitPath != "" {
		if err := t.initFrom(cfg.InitPath); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// splitRows lists this rank's labelled train, validation and test rows and
// counts them over all ranks.
func (t *trainer) splitRows() error {
	s := t.shard
	for v, b := range s.Split {
		if !t.task.Labelled(v) {
			continue
		}
		if t.kind.Pairs { // the task scores pairs of any nodes, whatever the node split
			b = graph.InTrain | graph.InValid | graph.InTest
		}
		if b&graph.InTrain != 0 {
			t.trainRows = append(t.trainRows, int32(v))
		}
		if b&graph.InValid != 0 {
			t.validRows = append(t.validRows, int32(v))
		}
		if b&graph.InTest != 0 {
			t.testRows = append(t.testRows, int32(v))
		}
	}
	counts := []int64{int64(len(t.trainRows)), int64(len(t.validRows)), int64(len(t.testRows))}
	for i, rows := range t.rows() {
		counts = append(counts, t.task.Terms(i, rows))
	}
	if err := t.c.AllreduceSumI64(counts); err != nil {
		return err
	}
	t.nTrain, t.nValid, t.nTest = counts[0], counts[1], counts[2]
	t.terms = [3]int64(counts[3:])
	if t.nTrain == 0 {
		return ErrNoTrainNodes
	}
	if t.nValid == 0 && t.cfg.SaveBest != "" {
		return field.Errorf("train.Config.SaveBest", "the split has no labelled validation nodes, so no epoch is best (give a split with validation nodes)")
	}
	return nil
}

// accuracy formats an accuracy over n nodes: "n/a" when the set is empty
// (0 correct of 0 is no accuracy).
func accuracy(acc float64, n int64) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", acc)
}

// splitCell formats a split's accuracy and loss for the epoch line: "n/a"
// for an empty split.
func splitCell(acc, loss float64, n int64) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.4f (loss %.4f)", acc, loss)
}

// checkWatched refuses early stopping and the plateau schedule when no
// rank has a labelled validation node: there would be nothing to watch.
func (t *trainer) checkWatched() error {
	if t.nValid > 0 {
		return nil
	}
	if t.cfg.Patience > 0 {
		return field.Errorf("train.Config.Patience", "%d, but the split has no labelled validation nodes to stop on", t.cfg.Patience)
	}
	if t.cfg.LRSchedule == SchedulePlateau {
		return field.Errorf("train.Config.LRSchedule", "plateau, but the split has no labelled validation nodes to watch")
	}
	return nil
}

// modelConfig completes the configured model's shape from the data (input
// width, classes, seed) and checks that it fits in memory.
func (t *trainer) modelConfig() (nn.Config, error) {
	s, mc := t.shard, t.cfg.Model
	if mc.In == 0 {
		mc.In = s.FeatDim
	}
	if mc.Out == 0 {
		mc.Out = t.task.Out()
	}
	if mc.Out == 0 { // the task scores node embeddings (link)
		mc.Out = mc.Hidden
	}
	if mc.In != s.FeatDim {
		return mc, fmt.Errorf("model expects %d input features, data has %d", mc.In, s.FeatDim)
	}
	t.watch = newLossWatch(mc.Out)
	if mc.Seed == 0 {
		mc.Seed = t.cfg.Seed
	}
	return mc, t.checkMemory(mc)
}

// plan builds the distributed operator the model mc needs (its exchange
// plan, timed in planS) and logs the plan and the node order.
func (t *trainer) plan(mc nn.Config) error {
	kind, err := nn.ModelOp(mc.Model)
	if err != nil {
		return err
	}
	eng, err := aggr.New(t.cfg.Threads, t.cfg.Kernel)
	if err != nil {
		return err
	}
	t0 := t.c.Wtime()
	opts, err := t.exchangeOptions()
	if err != nil {
		return err
	}
	if t.prop, err = exchange.New(t.shard, t.c, eng, kind, opts); err != nil {
		return err
	}
	if x, ok := t.task.(task.Exchanging); ok { // its rows go through the exchange's codecs
		x.UseRows(t.prop)
	}
	t.planS = t.c.Wtime() - t0
	if err := t.logPlan(); err != nil {
		return err
	}
	return t.logOrder()
}

// buildModel builds the model on the operator, label propagation when
// configured, the optimizer over their parameters and the gradient buffer.
func (t *trainer) buildModel(mc nn.Config) error {
	cfg, s := t.cfg, t.shard
	var err error
	t.model, err = nn.NewModel(mc, t.prop)
	if err == nil {
		err = t.model.SetKernel(cfg.Kernel)
	}
	if err == nil {
		err = t.useInput()
	}
	if err != nil {
		return err
	}
	// Weights start identical on every rank (same seed); dropout masks are per rank.
	t.model.SetDropoutSeed(cfg.Seed*0x9E3779B97F4A7C15 + uint64(t.c.Rank()) + 1)
	t.model.SetDecayAll(cfg.DecayAll)
	params := t.model.Params()
	if cfg.LabelProp > 0 {
		t.lp, err = labelprop.New(cfg.LabelProp, s.NumClasses, s.FeatDim, s.Labels, t.trainRows, cfg.Seed, t.c.Rank())
		if err != nil {
			return field.Wrap("train.Config.LabelProp", err)
		}
		params = append(params, t.lp.Param())
	} else if t.evalCache {
		// The features never change and evaluation has no dropout: the
		// first layer's aggregate of them is computed once (exact float32
		// rows) and reused by every evaluation pass. With label propagation
		// the evaluation input changes every epoch.
		t.model.SetEvalInput(t.x)
	}
	if pt, ok := t.task.(task.Parametric); ok { // the task's own weights (the link task's mlp decoder)
		for _, p := range pt.Params(mc.Out) {
			p.Decay = cfg.DecayAll
			params = append(params, p)
		}
	}
	t.opt, err = nn.NewAdam(params, nn.AdamConfig{LR: cfg.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8,
		WeightDecay: cfg.WeightDecay, Decoupled: cfg.Decoupled})
	if err != nil {
		return err
	}
	t.params = params
	n := 0
	for _, p := range params {
		n += len(p.G)
	}
	t.gradBuf = make([]float32, n)
	return nil
}

// nodeOrder is the configured node order (partition.DefaultOrder for "").
func (t *trainer) nodeOrder() string {
	if t.cfg.NodeOrder == "" {
		return partition.DefaultOrder
	}
	return t.cfg.NodeOrder
}

// reorder renumbers the shard's owned nodes in the configured order (in
// place) before anything indexes them; every output goes by global id.
func (t *trainer) reorder() error {
	order := t.nodeOrder()
	if !slices.Contains(partition.NodeOrders(), order) {
		return field.Errorf("train.Config.NodeOrder", "%q is not one of %s", order, strings.Join(partition.NodeOrders(), ", "))
	}
	if order == partition.OrderGiven {
		return nil
	}
	t0 := time.Now()
	perm, err := partition.LocalOrder(t.shard, order)
	if err == nil {
		err = t.shard.Reorder(perm)
	}
	if err != nil {
		return err
	}
	t.orderS = time.Since(t0).Seconds()
	return nil
}

// logOrder prints (rank 0) the node order and its cost, the slowest rank's.
func (t *trainer) logOrder() error {
	sec := []float64{t.orderS}
	if err := t.c.AllreduceMaxF64(sec); err != nil {
		return err
	}
	if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet && sec[0] > 0 {
		order := t.cfg.NodeOrder
		if order == "" {
			order = partition.DefaultOrder
		}
		fmt.Fprintf(t.cfg.Log, "node order %s: %.2fs\n", order, sec[0])
	}
	return nil
}

// logPlan prints (rank 0) the exchange plan's rows per layer summed over
// ranks under every mode, and its build time (max over ranks).
func (t *trainer) logPlan() error {
	ps := t.prop.PlanStats()
	tot := ps.TotalSent()
	rows := []int64{tot.Pre, tot.Post, tot.Hybrid}
	if err := t.c.AllreduceSumI64(rows); err != nil {
		return err
	}
	sec := []float64{ps.Seconds}
	if err := t.c.AllreduceMaxF64(sec); err != nil {
		return err
	}
	tl := []int64{ps.InterRows, ps.IntraRows}
	if err := t.c.AllreduceSumI64(tl); err != nil {
		return err
	}
	if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet && t.c.Size() > 1 {
		if exchange.Staged(ps.Exchange) {
			fmt.Fprintf(t.cfg.Log, "exchange plan (%s, same-node pairs %s) built in %.3fs: boundary rows per layer, all ranks: %d between nodes, %d inside nodes\n",
				ps.Exchange, ps.Mode, sec[0], tl[0], tl[1])
			return nil
		}
		fmt.Fprintf(t.cfg.Log, "exchange plan (%s) built in %.3fs: boundary rows per layer, all ranks: pre %d, post %d, hybrid %d\n",
			ps.Mode, sec[0], rows[0], rows[1], rows[2])
	}
	return nil
}

// exchangeOptions builds the exchange's codecs from cfg.Wire, remembering
// the quantisers so the trainer can check for non-finite values.
func (t *trainer) exchangeOptions() (exchange.Options, error) {
	cfg := t.cfg
	o := exchange.Options{Mode: cfg.AggrMode, Exchange: cfg.Exchange}
	cs, err := cfg.Wire.NewCodecs("train.Config.Wire", cfg.Threads, cfg.Kernel)
	if err != nil {
		return o, err
	}
	for r, q := range cs {
		if q != nil {
			o.Codecs[r] = q
			t.codecs = append(t.codecs, q)
		}
	}
	return o, nil
}

// nonFinite counts the NaN and Inf values the quantisers met so far: a
// diverged model, which int2 codes cannot carry.
func (t *trainer) nonFinite() int64 {
	var n int64
	for _, q := range t.codecs {
		n += q.NonFinite()
	}
	return n
}

func (t *trainer) run() (*Result, error) {
	cfg := t.cfg
	rank0 := t.c.Rank() == 0
	mw, err := newMetricsWriter(map[bool]string{true: cfg.MetricsPath}[rank0], cfg.ResumePath != "")
	if err != nil {
		return nil, err
	}
	defer mw.close()

	res := &Result{}
	start := time.Now()
	if cfg.Header != nil && cfg.MetricsPath != "" {
		if err := t.writeHeader(mw, start); err != nil {
			return nil, err
		}
	}
	if rank0 && cfg.Log != nil && cfg.ResumePath != "" {
		fmt.Fprintf(cfg.Log, "resuming from %s after epoch %d of %d\n", cfg.ResumePath, t.done, cfg.Epochs)
	}
	if cfg.InitPath != "" {
		m, err := t.evaluateInit()
		if err != nil {
			return nil, err
		}
		res.Init = &m
		if rank0 && cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "epoch %4d  weights of %s  train %.4f  val %s  test %s\n", 0, cfg.InitPath,
				m.TrainAcc, splitCell(m.ValAcc, m.ValLoss, t.nValid), splitCell(m.TestAcc, m.TestLoss, t.nTest))
		}
	}
	for epoch := t.done + 1; epoch <= cfg.Epochs && t.loop.StoppedEarly == 0; epoch++ {
		m, err := t.epoch(epoch)
		if err != nil {
			return nil, fmt.Errorf("epoch %d: %w", epoch, t.blameFeatures(err))
		}
		res.Epochs = append(res.Epochs, m)
		if err := t.record(mw, m); err != nil {
			return nil, err
		}
		if t.loop.StoppedEarly > 0 { // the run is complete; a stop request in this epoch changes nothing
			break
		}
		if t.stopped && epoch < cfg.Epochs {
			if cfg.SavePath != "" {
				if err := t.save(cfg.SavePath, "train.Config.SavePath", epoch); err != nil {
					return nil, err
				}
			}
			if err := mw.close(); err != nil {
				return nil, err
			}
			return res, &StoppedError{Epoch: epoch, Epochs: cfg.Epochs, Saved: cfg.SavePath}
		}
		if cfg.SaveEvery > 0 && epoch%cfg.SaveEvery == 0 && epoch < cfg.Epochs {
			if err := t.save(cfg.SavePath, "train.Config.SavePath", epoch); err != nil {
				return nil, err
			}
		}
	}
	if res.Final, err = t.finish(mw, start); err != nil {
		return nil, err
	}
	if err := mw.close(); err != nil {
		return nil, err
	}
	if res.Outputs, err = t.outputs(); err != nil {
		return nil, err
	}
	return res, nil
}

// outputs evaluates, for Config.Outputs, the best-validation model when
// the split has validation nodes, else the last epoch's (nil without
// Config.Outputs).
func (t *trainer) outputs() (*Scores, error) {
	if t.cfg.Outputs == (EvalOutputs{}) {
		return nil, nil
	}
	best := t.nValid > 0 && t.best.BestEpoch > 0 && t.bestParams != nil
	ck := &Checkpoint{Model: t.model.Config(), LabelProp: t.cfg.LabelProp, FeatNorm: t.cfg.FeatNorm, Task: t.kind.Name}
	for i, p := range t.params {
		w := p.W
		if best {
			w = t.bestParams[i]
		}
		ck.Params = append(ck.Params, SavedParam{Name: p.Name, W: w})
	}
	sc, err := EvaluateTask(ck, t.shard, t.c, t.cfg.Threads, t.cfg.Kernel, t.cfg.Outputs, t.cfg.Targets)
	return sc, field.Wrap("train.Config.Outputs", err)
}

// resumeBest finds, for Config.Outputs, the weights of the resumed run's
// best validation epoch before training starts: the resumed checkpoint's
// own when that epoch is its last, else the SaveBest file's when it holds
// that epoch of this data and model. Otherwise it refuses, so that no
// training time is spent on outputs that could not be written.
func (t *trainer) resumeBest() error {
	if t.cfg.Outputs == (EvalOutputs{}) || t.nValid == 0 || t.best.BestEpoch <= 0 {
		return nil
	}
	if t.best.BestEpoch == t.done {
		t.keepBest(nil)
		return nil
	}
	why := "train.Config.SaveBest is not given"
	if path := t.cfg.SaveBest; path != "" {
		ck, err := LoadCheckpoint(path)
		switch {
		case err != nil:
			why = err.Error()
		case ck.Train == nil || ck.Train.Epoch != t.best.BestEpoch || ck.Train.BestValAcc != t.best.BestValAcc:
			why = fmt.Sprintf("%s does not hold that epoch", path)
		case ck.DataID != t.dataID || !ck.Model.Equal(t.model.Config()) || !sameParams(ck.Params, t.params):
			why = fmt.Sprintf("%s holds another model or data", path)
		default:
			t.keepBest(ck.Params)
			return nil
		}
	}
	return field.Errorf("train.Config.Outputs", "the best validation epoch %d is before %s (epoch %d) and its weights are not at hand: %s (give train.Config.SaveBest the file that kept it, or evaluate that file with eval)",
		t.best.BestEpoch, t.cfg.ResumePath, t.done, why)
}

// sameParams reports whether saved has the names and sizes of params.
func sameParams(saved []SavedParam, params []*nn.Param) bool {
	if len(saved) != len(params) {
		return false
	}
	for i, p := range params {
		if saved[i].Name != p.Name || len(saved[i].W) != len(p.W) {
			return false
		}
	}
	return true
}

// keepBest keeps, for Config.Outputs, a copy of the parameters of the best
// validation epoch: saved's, or (nil) the model's current ones.
func (t *trainer) keepBest(saved []SavedParam) {
	t.bestParams = make([][]float32, len(t.params))
	for i, p := range t.params {
		w := p.W
		if saved != nil {
			w = saved[i].W
		}
		t.bestParams[i] = slices.Clone(w)
	}
}

// record takes an epoch's metrics into the best and last accuracies (the
// best model saved to SaveBest), the schedule and early stopping, marks the
// epoch done, and on rank 0 logs it and writes it to the metrics file.
func (t *trainer) record(mw *metricsWriter, m EpochMetrics) error {
	cfg, epoch := t.cfg, m.Epoch
	improved := m.Evaluated && t.beats(m, t.best)
	if improved {
		t.best.BestValAcc, t.best.BestValLoss, t.best.BestEpoch, t.best.TestAcc = m.ValAcc, m.ValLoss, epoch, m.TestAcc
	}
	if m.Evaluated {
		t.lastTest = m.TestAcc
	}
	onGrid := cfg.EvalEvery <= 1 || epoch%cfg.EvalEvery == 0
	gridImproved := onGrid && m.Evaluated && t.beats(m, t.gridBest)
	if gridImproved {
		t.gridBest.BestValAcc, t.gridBest.BestValLoss, t.gridBest.BestEpoch, t.gridBest.TestAcc = m.ValAcc, m.ValLoss, epoch, m.TestAcc
	}
	t.advanceLoop(m, onGrid, gridImproved)
	t.done = epoch
	if improved && (cfg.Outputs != EvalOutputs{}) {
		t.keepBest(nil)
	}
	if improved && cfg.SaveBest != "" {
		if err := t.save(cfg.SaveBest, "train.Config.SaveBest", epoch); err != nil {
			return err
		}
	}
	if t.c.Rank() != 0 {
		return nil
	}
	if w := t.watch.observe(epoch, m.Loss); w != "" && cfg.Log != nil {
		fmt.Fprintln(cfg.Log, w)
	}
	if cfg.Log != nil && !cfg.Quiet {
		t.logEpoch(m)
	}
	return field.Wrap("train.Config.MetricsPath", mw.write(m))
}

// logEpoch prints an epoch's line: loss, the learning rate under a
// schedule, accuracies and validation and test losses when evaluated, time
// breakdown.
func (t *trainer) logEpoch(m EpochMetrics) {
	lr := ""
	if s := t.cfg.LRSchedule; s != "" && s != ScheduleNone {
		lr = fmt.Sprintf("  lr %.3e", m.LR)
	}
	acc := fmt.Sprintf("%-65s", "(not evaluated)")
	if m.Evaluated {
		acc = fmt.Sprintf("%strain %.4f  val %s  test %s", t.metricLabel(), m.TrainAcc, splitCell(m.ValAcc, m.ValLoss, t.nValid), splitCell(m.TestAcc, m.TestLoss, t.nTest))
	}
	fmt.Fprintf(t.cfg.Log, "epoch %4d  loss %.4f%s  %s  %.3fs (aggr %.3f comm %.3f quant %.3f dense %.3f sync %.3f eval %.3f)\n",
		m.Epoch, m.Loss, lr, acc, m.EpochS, m.AggrS, m.CommS, m.QuantS, m.DenseS, m.SyncS, m.EvalS)
}

// finish builds the final record (best validation accuracy and its test
// accuracy, the slowest rank's plan time), writes and logs it on rank 0,
// and saves the model to SavePath.
func (t *trainer) finish(mw *metricsWriter, start time.Time) (FinalMetrics, error) {
	cfg := t.cfg
	best := t.best
	best.Final = true
	best.Epochs = t.done
	if best.StoppedEarly = t.loop.StoppedEarly; best.StoppedEarly > 0 {
		best.Patience = cfg.Patience
	}
	best.TotalS = time.Since(start).Seconds()
	best.Ranks = t.c.Size()
	if best.BestValAcc < 0 {
		best.BestValAcc = 0
	}
	best.LastTest = t.lastTest
	best.Metric = t.metricName()
	pl := []float64{t.planS}
	if err := t.c.AllreduceMaxF64(pl); err != nil {
		return best, err
	}
	best.PlanS = pl[0]
	if t.c.Rank() == 0 {
		if err := mw.write(best); err != nil {
			return best, field.Wrap("train.Config.MetricsPath", err)
		}
		if cfg.Log != nil {
			bestVal := fmt.Sprintf("%.4f at epoch %d", best.BestValAcc, best.BestEpoch)
			if t.nValid == 0 {
				bestVal = "n/a (no validation nodes)"
			}
			early := ""
			if best.StoppedEarly > 0 {
				early = fmt.Sprintf(", stopped early at epoch %d (patience %d)", best.StoppedEarly, best.Patience)
			}
			fmt.Fprintf(cfg.Log, "final: best val %s%s, test %s (last epoch test %s)%s, %d epochs in %.2fs on %d rank(s)\n",
				t.metricLabel(), bestVal, accuracy(best.TestAcc, t.nTest), accuracy(best.LastTest, t.nTest), early, best.Epochs, best.TotalS, best.Ranks)
		}
	}
	if cfg.SavePath != "" {
		if err := t.save(cfg.SavePath, "train.Config.SavePath", t.done); err != nil {
			return best, err
		}
	}
	return best, nil
}

// epoch runs one training step and one evaluation pass.
func (t *trainer) epoch(epoch int) (EpochMetrics, error) {
	m := EpochMetrics{Epoch: epoch, Ranks: t.c.Size(), LR: t.lrAt(epoch)}
	t.opt.SetLR(m.LR)
	t.prop.ResetStats()
	var tm epochTimes
	t0 := time.Now()
	lossSum, code, nSup, err := t.trainStep(epoch)
	if err != nil {
		return m, err
	}
	tm.compute = time.Since(t0).Seconds()
	if tm.sync, tm.reduce, err = t.update(epoch, lossSum, code); err != nil {
		return m, err
	}
	st := t.prop.Stats()

	// Evaluation pass (no dropout, all training labels embedded), every
	// EvalEvery epochs and after the last.
	m.Evaluated = t.cfg.EvalEvery <= 1 || epoch%t.cfg.EvalEvery == 0 || epoch == t.cfg.Epochs
	var cnt epochCounts
	var sc task.Scores
	var losses [2]float64
	t3 := time.Now()
	if m.Evaluated {
		if sc, losses, err = t.evaluate(epoch); err != nil {
			return m, err
		}
	}
	tm.eval = time.Since(t3).Seconds()
	if err := t.sumCounts(&cnt, st, t.prop.Stats()); err != nil {
		return m, err
	}
	tm.epoch = time.Since(t0).Seconds()

	m.Loss = t.lastLoss / float64(max(nSup, 1))
	if m.Evaluated {
		t.setScores(&m, sc, losses)
	}
	if err := t.breakdown(&m, st, tm); err != nil {
		return m, err
	}
	m.CommBytes, m.CommDataBytes, m.CommParamBytes, m.EvalBytes = cnt.commBytes, cnt.dataBytes, cnt.paramBytes, cnt.evalBytes
	m.IntraBytes, m.PairBytes, m.EvalPairBytes = cnt.intraBytes, cnt.pairBytes, cnt.evalPairs
	return m, nil
}

// trainStep runs the training forward pass, the loss and the backward pass
// of an epoch: this rank's loss sum, its divergence code (localDivergence)
// and the supervised rows of all ranks.
func (t *trainer) trainStep(epoch int) (lossSum float64, code float64, nSup int64, err error) {
	x, supervised := t.x, t.trainRows
	if t.lp != nil {
		if x, supervised, err = t.lpTrainInput(epoch); err != nil {
			return 0, 0, 0, err
		}
	}
	n := []int64{int64(len(supervised))}
	if t.lp != nil {
		if err := t.c.AllreduceSumI64(n); err != nil {
			return 0, 0, 0, err
		}
	} else {
		n[0] = t.terms[0]
	}
	pass := nn.Pass{Train: true, Epoch: epoch}
	logits, err := t.model.Forward(pass, x)
	if err != nil {
		return 0, 0, 0, diverged(epoch, err)
	}
	lossSum, grad, err := t.task.Loss(t.lossGrad, logits, supervised, float64(max(n[0], 1)), epoch)
	if err != nil {
		return 0, 0, 0, err
	}
	t.lossGrad = grad // reused next epoch (an activation-sized buffer, not reallocated)
	gx, err := t.model.Backward(pass, grad, t.lp != nil)
	if err != nil {
		return 0, 0, 0, diverged(epoch, err)
	}
	switch {
	case t.lp != nil && t.input.TermGradRows(): // the embedded rows' gradient only (nn.Input.SetTerm)
		t.lp.BackwardRows(gx)
	case t.lp != nil:
		t.lp.Backward(gx)
	}
	return lossSum, t.localDivergence(lossSum, logits), n[0], nil
}

// update waits for the slowest rank (sync), sums the gradients (reduce)
// and steps the optimizer, and returns the two times.
func (t *trainer) update(epoch int, lossSum, code float64) (syncS, reduceS float64, err error) {
	t1 := time.Now()
	if err := t.c.Barrier(); err != nil {
		return 0, 0, err
	}
	syncS = time.Since(t1).Seconds()
	t2 := time.Now()
	if err := t.allreduceGrads(lossSum, code); err != nil {
		return 0, 0, err
	}
	if err := divergence(epoch, t.lossBuf[1:]); err != nil {
		return 0, 0, err
	}
	reduceS = time.Since(t2).Seconds()
	t.opt.Step()
	if l, what := t.nonFiniteParam(); l >= 0 { // identical on every rank: no collective needed
		return 0, 0, &DivergedError{Epoch: epoch, Layer: l, Rank: t.c.Rank(), What: what + " after the optimizer step"}
	}
	return syncS, reduceS, nil
}

// evaluate runs the evaluation pass and returns the task's scores of the
// train, validation and test rows of all ranks, and the validation and
// test loss sums over all ranks.
func (t *trainer) evaluate(epoch int) (sc task.Scores, losses [2]float64, err error) {
	ex := t.x
	if t.lp != nil {
		if ex, err = t.lpEvalInput(); err != nil {
			return sc, losses, err
		}
	}
	evalLogits, err := t.model.Forward(nn.Pass{Train: false, Epoch: epoch}, ex)
	if err != nil {
		return sc, losses, diverged(epoch, err)
	}
	if sc, err = t.task.Evaluate(t.c, evalLogits, t.rows()); err != nil {
		return sc, losses, err
	}
	for i, rows := range [][]int32{t.validRows, t.testRows} {
		if losses[i], err = t.task.LossSum(evalLogits, 1+i, rows); err != nil {
			return sc, losses, err
		}
	}
	err = t.c.AllreduceSumF64(losses[:])
	return sc, losses, err
}

// sumCounts fills cnt with the exchanged bytes (st: after the training
// step, ev: after the evaluation), the non-finite values the quantisers met
// and whether this rank asks to stop, and sums it over the ranks in one
// all-reduce.
func (t *trainer) sumCounts(cnt *epochCounts, st, ev exchange.Stats) error {
	if t.cfg.Stop != nil && t.cfg.Stop() {
		cnt.stop = 1
	}
	cnt.commBytes, cnt.dataBytes, cnt.paramBytes = st.DataBytes+st.ParamBytes, st.DataBytes, st.ParamBytes
	cnt.nonFinite, cnt.evalBytes, cnt.intraBytes = t.nonFinite(), ev.CommBytes-st.CommBytes, st.IntraBytes
	cnt.pairBytes, cnt.evalPairs = st.RowBytes, ev.RowBytes-st.RowBytes
	if err := cnt.sum(t.c); err != nil {
		return err
	}
	t.stopped = cnt.stop > 0
	if cnt.nonFinite > 0 {
		return fmt.Errorf("%d non-finite values in boundary rows: training diverged (lower train.Config.LR?)", cnt.nonFinite)
	}
	return nil
}

// epochTimes are this rank's wall times of an epoch's phases.
type epochTimes struct {
	epoch, compute, sync, reduce, eval float64
}

// breakdown fills m's time breakdown of the training step: max over ranks
// in the fields, min and max in RankMin and RankMax. The evaluation pass
// is eval_s, the optimizer and bookkeeping "other".
func (t *trainer) breakdown(m *EpochMetrics, st exchange.Stats, tm epochTimes) error {
	exch := st.AggrSeconds + st.CommSeconds + st.QuantSeconds + st.SyncSeconds
	return t.reduceBreakdown(m, []breakdownTime{
		{"epoch_s", tm.epoch, &m.EpochS},
		{"aggr_s", st.AggrSeconds, &m.AggrS},
		{"comm_s", st.CommSeconds + tm.reduce, &m.CommS},
		{"quant_s", st.QuantSeconds, &m.QuantS},
		{"dense_s", math.Max(tm.compute-exch, 0), &m.DenseS},
		{"sync_s", tm.sync + st.SyncSeconds, &m.SyncS},
		{"eval_s", tm.eval, &m.EvalS},
		{"other_s", math.Max(tm.epoch-tm.compute-tm.sync-tm.reduce-tm.eval, 0), &m.OtherS},
		{"reduce_s", tm.reduce, &m.ReduceS},
	})
}

// breakdownTime is one time of the epoch breakdown: its metrics key, this
// rank's value, and the field that receives the maximum over ranks.
type breakdownTime struct {
	key string
	v   float64
	max *float64
}

// reduceBreakdown sets every time's field to its maximum over ranks and
// records the per-rank minimum and maximum in m.RankMin and m.RankMax, in
// one all-reduce (max of the values and of their negations).
func (t *trainer) reduceBreakdown(m *EpochMetrics, times []breakdownTime) error {
	n := len(times)
	buf := make([]float64, 2*n)
	for i, bt := range times {
		buf[i], buf[n+i] = bt.v, -bt.v
	}
	if err := t.c.AllreduceMaxF64(buf); err != nil {
		return err
	}
	m.RankMin, m.RankMax = make(map[string]float64, n), make(map[string]float64, n)
	for i, bt := range times {
		*bt.max = buf[i]
		m.RankMax[bt.key], m.RankMin[bt.key] = buf[i], -buf[n+i]
	}
	return nil
}

// writeHeader completes cfg.Header (data identity, ranks, threads, hosts,
// start) and writes it as the first record of this run (rank 0). Every
// rank takes part: the host names are gathered to rank 0.
func (t *trainer) writeHeader(mw *metricsWriter, start time.Time) error {
	hosts, err := gatherHosts(t.c)
	if err != nil {
		return err
	}
	if t.c.Rank() != 0 {
		return nil
	}
	h := *t.cfg.Header
	h.Header, h.DataID, h.Ranks, h.Threads, h.Hosts = true, t.dataID, t.c.Size(), t.cfg.Threads, hosts
	h.Exchange, h.EvalCache = t.prop.Exchange(), t.evalCache
	mc := t.model.Config()
	h.Model = &mc
	h.Start = start.UTC().Format(time.RFC3339)
	if t.cfg.ResumePath != "" {
		h.ResumedFrom, h.ResumedEpoch = t.cfg.ResumePath, t.done
	}
	if err := mw.write(h); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// gatherHosts returns (on rank 0) the distinct host names of the ranks, in
// rank order of first appearance; nil on the other ranks.
func gatherHosts(c comm.Comm) ([]string, error) {
	const width = 256
	name, err := os.Hostname()
	if err != nil {
		name = "unknown"
	}
	p := c.Size()
	send := make([]byte, width)
	copy(send, name)
	sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	sc[0] = width
	var recv []byte
	if c.Rank() == 0 {
		recv = make([]byte, p*width)
		for r := range rc {
			rc[r], rd[r] = width, r*width
		}
	}
	if err := c.AlltoallvBytes(send, sc, sd, recv, rc, rd); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	var hosts []string
	seen := map[string]bool{}
	for r := 0; r < p; r++ {
		h := strings.TrimRight(string(recv[r*width:(r+1)*width]), "\x00")
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

// allreduceGrads sums every parameter gradient over ranks in one call, and
// the loss with every rank's divergence code (slot 1+rank) in another.
func (t *trainer) allreduceGrads(lossSum, diverged float64) error {
	params := t.params
	off := 0
	for _, p := range params {
		copy(t.gradBuf[off:], p.G)
		off += len(p.G)
	}
	if t.c.Size() > 1 {
		if err := t.c.AllreduceSumF32(t.gradBuf); err != nil {
			return err
		}
	}
	off = 0
	for _, p := range params {
		copy(p.G, t.gradBuf[off:off+len(p.G)])
		off += len(p.G)
	}
	if len(t.lossBuf) != 1+t.c.Size() {
		t.lossBuf = make([]float64, 1+t.c.Size())
	}
	l := t.lossBuf
	clear(l)
	l[0], l[1+t.c.Rank()] = lossSum, diverged
	if err := t.c.AllreduceSumF64(l); err != nil {
		return err
	}
	t.lastLoss = l[0]
	return nil
}

func ratio(a, b int64) float64 {
	return fratio(float64(a), b)
}

func fratio(a float64, b int64) float64 {
	if b == 0 {
		return 0
	}
	return a / float64(b)
}
