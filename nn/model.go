package nn

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/rowk"
)

// modelKind is one row of the model table: a model's name, what it is
// (one line, for help texts), the graph operator its layers take, its
// default layer count, the hyperparameters it takes (hyper.go), and its layers' plan
// (parameters, cost schedule) and build (the layer on those parameters).
type modelKind struct {
	name, doc string
	aliases   []string // other names a command line accepts (PyG's class names)
	op        OpKind
	layers    int     // default Config.Layers
	hypers    []Hyper // the model's hyperparameters (Config.Hyper)
	plan      func(LayerShape) LayerPlan
	build     func(LayerShape, []*Param) Conv
	// body builds the model's own architecture over its layers' planned
	// parameters (build unused); nil: Model's pipeline of convolutions.
	body func(c Config, shapes []LayerShape, params [][]*Param) body
}

// models is the model table, the one place that maps a Config.Model name to
// its layer and operator kind. Read-only.
var models = []modelKind{
	{name: "gcn", doc: "graph convolution, Kipf & Welling", aliases: []string{"gcnconv"},
		op: OpGCN, layers: 2, plan: gcnPlan, build: buildGCN},
	{name: "sage", doc: "GraphSAGE with mean aggregation", aliases: []string{"graphsage", "graph-sage", "sageconv"},
		op: OpMean, layers: 2, plan: sagePlan, build: newSAGE},
	{name: "sage-max", doc: "GraphSAGE with max aggregation", aliases: []string{"sagemax"},
		op: OpMax, layers: 2, plan: sageMaxPlan, build: newSAGEMax},
	{name: "sage-pool", doc: "GraphSAGE with the pooling aggregator: max over ReLU(W_p·x + b_p)", aliases: []string{"sagepool"},
		op: OpMax, layers: 2, plan: sagePoolPlan, build: newSAGEPool},
	{name: "gin", doc: "graph isomorphism network, sum aggregation and a 2-layer MLP", aliases: []string{"ginconv"},
		op: OpSum, layers: 2, hypers: ginHypers, plan: ginPlan, build: buildGIN},
	{name: "sgc", doc: "simplified graph convolution: K steps of Â, then a linear layer", aliases: []string{"sgconv"},
		op: OpGCN, layers: 1, hypers: sgcHypers, plan: sgcPlan, build: buildSGC},
	{name: "appnp", doc: "MLP, then K steps of personalised PageRank with teleport α",
		op: OpGCN, layers: 2, hypers: appnpHypers, plan: appnpPlan, build: buildAPPNP},
	{name: "gat", doc: "graph attention, Veličković et al.", aliases: []string{"gatconv"},
		op: OpAttention, layers: 2, plan: gatPlan, build: buildGAT},
	{name: "gatv2", doc: "dynamic graph attention (GATv2), Brody et al.", aliases: []string{"gatv2conv"},
		op: OpAttentionV2, layers: 2, hypers: gatv2Hypers, plan: gatv2Plan, build: buildGATv2},
	{name: "gcnii", doc: "GCNII, deep GCN with initial residual α and identity mapping, Chen et al.", aliases: []string{"gcn2", "gcn2conv"},
		op: OpGCN, layers: 64, hypers: gcniiHypers, plan: gcniiPlan, body: newGCNIIBody},
}

// Models returns the model names Config.Model accepts.
func Models() []string {
	n := make([]string, len(models))
	for i, m := range models {
		n[i] = m.name
	}
	return n
}

// ModelInfo describes a model of the table for command lines and help
// texts: its one-line description, default layer count and the
// hyperparameters it takes (with their defaults).
type ModelInfo struct {
	Name, Doc string
	Aliases   []string
	Layers    int
	Hypers    []Hyper
	Body      bool // its own architecture (gcnii): no --norm, no --jk
}

// ModelInfos returns every model's ModelInfo, in table order.
func ModelInfos() []ModelInfo {
	out := make([]ModelInfo, len(models))
	for i, m := range models {
		out[i] = ModelInfo{Name: m.name, Doc: m.doc, Aliases: m.aliases, Layers: m.layers, Hypers: m.hypers, Body: m.body != nil}
	}
	return out
}

func lookupModel(name string) (modelKind, bool) {
	for _, m := range models {
		if m.name == name {
			return m, true
		}
	}
	return modelKind{}, false
}

// ModelOp returns the graph operator kind of model name (OpGCN for gcn,
// sgc and appnp, OpMean for sage, OpSum for gin), or an error naming Config.Model for an unknown name.
func ModelOp(name string) (OpKind, error) {
	m, ok := lookupModel(name)
	if !ok {
		return 0, field.Errorf("nn.Config.Model", "%q is not %s", name, strings.Join(Models(), " or "))
	}
	return m.op, nil
}

// Config describes a model.
type Config struct {
	Model           string  // one of Models()
	Layers          int     // number of graph convolutions, ≥ 1
	In, Hidden, Out int     // input features, hidden width (Layers > 1), classes
	Dropout         float64 // dropout rate in [0, 1), on the input and after every hidden layer
	Norm            string  // "none" (or "") or "layer"
	Seed            uint64  // weight initialisation (and default dropout) seed
	// Precision of the layers' dense products: "fp32" (or "") or "bf16"
	// (dense.BF16: operands rounded to bfloat16, float32 sums; weights,
	// gradients, optimizer state and every other pass stay float32).
	Precision string `json:",omitempty"`
	// Attention models (operator kind OpAttention): heads of the hidden
	// layers (concatenated, Hidden/Heads wide each) and of the output layer
	// (averaged), 0 meaning 1, and dropout on the attention coefficients.
	Heads       int     `json:",omitempty"`
	OutHeads    int     `json:",omitempty"`
	AttnDropout float64 `json:",omitempty"`
	// Hyper holds the values of the hyperparameters the model's table row
	// declares (ModelInfo.Hypers, by name: "k", "alpha", "train-eps",
	// "theta", …); one absent takes its default. Files of older builds
	// held k, alpha and train-eps as fields K, Alpha and TrainEps, which
	// decoding moves here (hyper.go).
	Hyper map[string]float64 `json:",omitempty"`
	// JK combines the layers by jumping knowledge (jk.go): "cat", "max"
	// or "last"; "" or "none": the model's own architecture.
	JK string `json:",omitempty"`
	// Residual adds every hidden layer's input to its activation
	// (residual.go).
	Residual bool `json:",omitempty"`
}

// MaxSteps bounds hyperparameter k, the propagation steps.
const MaxSteps = 1 << 10

// validateHyper checks the hyperparameters against model m.
func (c Config) validateHyper(m modelKind) error {
	bad := func(name, format string, args ...any) error {
		return field.Errorf("nn.Config."+name, format, args...)
	}
	if m.body != nil && c.Norm != "" && c.Norm != "none" {
		return bad("Norm", "%s has no normalisation layers", m.name)
	}
	if err := c.validateHypers(m); err != nil {
		return err
	}
	if err := c.validateJK(m); err != nil {
		return err
	}
	if err := c.validateResidual(m); err != nil {
		return err
	}
	return c.validateHeads(m)
}

// shape is layer i of the model of c (a row of the table).
func (c Config) shape(m modelKind, i int) LayerShape {
	s := LayerShape{Name: fmt.Sprintf("conv%d", i), Index: i, Layers: c.Layers, In: c.Hidden, Out: c.Hidden,
		Hidden: c.Hidden, Op: m.op,
		Heads: max(c.Heads, 1), AttnDropout: c.AttnDropout, Seed: c.Seed, Hyper: c.hyperValues(m)}
	if i == c.Layers-1 {
		s.Heads = max(c.OutHeads, 1)
	}
	if i == 0 {
		s.In = c.In
	}
	if i == c.Layers-1 && !c.jumping() {
		s.Out = c.Out
	}
	if s.Hidden < 1 { // one layer: an inner width is the output's
		s.Hidden = s.Out
	}
	return s
}

// LayerCosts returns the cost schedule of every layer of the model of c
// (widths and layers within the bounds Validate checks), or an error
// naming Config.Model for an unknown model.
func (c Config) LayerCosts() ([]LayerCost, error) {
	m, ok := lookupModel(c.Model)
	if !ok {
		_, err := ModelOp(c.Model)
		return nil, err
	}
	out := make([]LayerCost, c.Layers)
	for i := range out {
		out[i] = m.plan(c.shape(m, i)).Cost
	}
	return out, nil
}

// Validate reports the first invalid field as an *field.Error naming it
// ("nn.Config.Hidden").
func (c Config) Validate() error {
	m, ok := lookupModel(c.Model)
	if !ok {
		_, err := ModelOp(c.Model)
		return err
	}
	if err := c.validateHyper(m); err != nil {
		return err
	}
	bad := func(name, format string, args ...any) error {
		return field.Errorf("nn.Config."+name, format, args...)
	}
	switch {
	case c.Layers < 1:
		return bad("Layers", "%d, need at least 1", c.Layers)
	case c.In < 1:
		return bad("In", "%d, need at least 1", c.In)
	case c.Layers > 1 && c.Hidden < 1:
		return bad("Hidden", "%d, need at least 1 with %d layers", c.Hidden, c.Layers)
	case c.Out < 1:
		return bad("Out", "%d, need at least 1", c.Out)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return bad("Dropout", "%g is not in [0, 1)", c.Dropout)
	case c.Norm != "" && c.Norm != "none" && c.Norm != "layer" && c.Norm != "batch":
		return bad("Norm", "%q is not none, layer or batch", c.Norm)
	case c.Layers > MaxLayers:
		return bad("Layers", "%d, at most %d", c.Layers, MaxLayers)
	}
	if _, err := dense.ParsePrecision(c.Precision); err != nil {
		return bad("Precision", "%q is not %s", c.Precision, strings.Join(dense.Precisions(), " or "))
	}
	for _, w := range []struct {
		name string
		v    int
	}{{"In", c.In}, {"Hidden", c.Hidden}, {"Out", c.Out}} {
		if w.v > MaxWidth {
			return bad(w.name, "%d, at most %d", w.v, MaxWidth)
		}
	}
	if n := c.NumParams(); n > MaxParams {
		return bad("Hidden", "%d parameters (In %d, Hidden %d, Out %d, %d layers), at most %d", n, c.In, c.Hidden, c.Out, c.Layers, int64(MaxParams))
	}
	return nil
}

// Bounds on a Config, so that sizes never overflow: a matrix of
// MaxWidth×MaxWidth fits an int64, and no parameter tensor exceeds 2^31
// values.
const (
	MaxLayers = 1 << 10
	MaxWidth  = 1 << 24
	MaxParams = 1 << 31
)

// NumParams is the number of scalars the model of c has (NewModel's
// NumParams), computed without building it from its layers' plans; c's
// model must be known, its widths within MaxWidth and its layers within
// MaxLayers.
func (c Config) NumParams() int64 {
	m, _ := lookupModel(c.Model)
	var n int64
	for i := range c.Layers {
		s := c.shape(m, i)
		n += m.plan(s).numParams()
		if i < c.Layers-1 || c.jumping() {
			n += int64(len(normSuffixes(c.Norm))) * int64(s.Out)
		}
		for _, p := range c.resParams(s) {
			n += int64(p.Rows) * int64(p.Cols)
		}
	}
	for _, p := range c.jkParams() {
		n += int64(p.Rows) * int64(p.Cols)
	}
	return n
}

// Model is the PyG-example architecture:
//
//	x → dropout → for i < Layers-1: conv_i → [LayerNorm] → ReLU → dropout
//	  → conv_{Layers-1} → logits
//
// A row with a body (gcnii) runs its own architecture instead (body.go,
// gcnii.go); a Config with JK or Residual runs the pipeline in separate
// passes with those connections (jk.go, residual.go), as batch
// normalisation runs the separate passes of the hidden stage.
//
// Dropout is active only when Pass.Train is set. Backward sets every Param's
// G (overwriting it); in a distributed run the caller sums the G over ranks
// before the optimiser step. All buffers are owned by the model and reused
// across epochs, from one pool (see arena): a buffer is lent while its value
// lives (what backward needs from the forward pass until backward has used
// it), so the model's memory is its largest set of buffers live at once.
// Matrices Forward returns (and LastHidden) stay valid until the next
// Forward; those Backward returns until the next Forward or Backward.
type Model struct {
	cfg    Config
	op     Operator
	convs  []Conv
	pool   *arena        // every activation-sized buffer but the evaluation aggregate
	x      *dense.Matrix // input of the last Forward
	norms  []*LayerNorm  // nil entries without normalisation
	bnorms []*BatchNorm  // nil entries without batch normalisation
	drops  []*Dropout    // drops[0] on the input, drops[i+1] after hidden layer i
	acts   []*dense.Matrix
	params []*Param
	fused  bool         // hidden activations through stages (one pass each way), not norms/drops
	stages []*hiddenAct // stages[i] after hidden layer i, when fused
	body   body         // the row's own architecture (nil: the pipeline above)

	input  *Input        // SetInput's input (input.go), nil without
	evalX  *dense.Matrix // SetEvalInput's matrix, nil without
	evalAX *dense.Matrix // Â·evalX for the first layer, computed at the first evaluation Forward on evalX

	dropSeed uint64
	step     uint64 // training forwards since the dropout seed was set
	forward  bool   // a Forward has run (Backward is legal)
	decayAll bool
}

// NewModel validates cfg and builds the model over the graph operator op
// of kind ModelOp(cfg.Model) (a Propagator for every model of the table
// but those whose operator kind says otherwise). Weights are drawn from
// PCG(cfg.Seed, ·) in parameter order, so every process given the same
// Config gets identical weights. The dropout stream starts at cfg.Seed; give
// each rank its own with SetDropoutSeed.
func NewModel(cfg Config, op Operator) (*Model, error) {
	return newModel(cfg, op, true)
}

// newModel is NewModel with the choice of the fused hidden stages (fused)
// or the separate passes of LayerNorm, ReLU and Dropout, which the tests
// compare.
func newModel(cfg Config, op Operator, fused bool) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if op == nil {
		return nil, errors.New("nn: NewModel: nil operator")
	}
	kind, _ := lookupModel(cfg.Model) // Validate checked the name
	if err := kind.op.check(op); err != nil {
		return nil, fmt.Errorf("nn: NewModel: %s: %w", cfg.Model, err)
	}
	// Batch normalisation runs the separate passes: its statistics are
	// the whole graph's, not a row's.
	m := &Model{cfg: cfg, op: op, dropSeed: cfg.Seed, fused: fused && cfg.Norm != "batch"}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x6e6e2d696e6974)) // "nn-init"
	if kind.body != nil {
		m.newBody(kind, r)
		return m, nil
	}
	if cfg.jumping() || cfg.Residual {
		if err := m.newStack(kind, r); err != nil {
			return nil, err
		}
		return m, nil
	}
	m.drops = append(m.drops, &Dropout{P: cfg.Dropout})
	for i := range cfg.Layers {
		c, err := buildLayer(kind, cfg.shape(kind, i), r)
		if err != nil {
			return nil, err
		}
		out := cfg.shape(kind, i).Out
		m.convs = append(m.convs, c)
		m.params = append(m.params, c.Params()...)
		if i == cfg.Layers-1 {
			break
		}
		var ln *LayerNorm
		if cfg.Norm == "layer" {
			ln = NewLayerNorm(normName(i), out)
			m.params = append(m.params, ln.Params()...)
		}
		m.norms = append(m.norms, ln)
		var bn *BatchNorm
		if cfg.Norm == "batch" {
			sum, _ := op.(Reducer)
			bn = NewBatchNorm(normName(i), out, sum)
			m.params = append(m.params, bn.Params()...)
		}
		m.bnorms = append(m.bnorms, bn)
		m.drops = append(m.drops, &Dropout{P: cfg.Dropout})
		if m.fused {
			bias := c.deferBias()
			if bias == nil { // the layer adds its own bias (or has none)
				bias = make([]float32, out)
			}
			m.stages = append(m.stages, &hiddenAct{norm: ln, p: cfg.Dropout, bias: bias, kern: rowk.Default()})
		}
	}
	m.acts = make([]*dense.Matrix, cfg.Layers-1)
	m.pool = &arena{}
	m.pool.work.Precision, _ = dense.ParsePrecision(cfg.Precision) // validated above
	m.drops[0].pool = m.pool
	for _, c := range m.convs {
		c.setPool(m.pool)
	}
	for _, st := range m.stages {
		st.pool = m.pool
	}
	m.SetDecayAll(false)
	return m, nil
}

// buildLayer allocates the parameters layer s of model kind declares,
// draws them from r and builds the layer on them, checking that the layer
// holds the parameters its plan declares, in order.
func buildLayer(kind modelKind, s LayerShape, r *rand.Rand) (Conv, error) {
	ps := kind.plan(s).newParams(s.Name, r)
	c := kind.build(s, ps)
	if got := c.Params(); !slices.Equal(got, ps) {
		return nil, fmt.Errorf("nn: NewModel: %s layer %s holds %d parameters, not the %d its plan declares in that order",
			kind.name, s.Name, len(got), len(ps))
	}
	return c, nil
}

// newBody builds the architecture of a row with a body: its layers'
// planned parameters, drawn from r in layer order, wired by the body.
func (m *Model) newBody(kind modelKind, r *rand.Rand) {
	shapes := make([]LayerShape, m.cfg.Layers)
	params := make([][]*Param, m.cfg.Layers)
	for i := range shapes {
		shapes[i] = m.cfg.shape(kind, i)
		params[i] = kind.plan(shapes[i]).newParams(shapes[i].Name, r)
		m.params = append(m.params, params[i]...)
	}
	m.pool = &arena{}
	m.pool.work.Precision, _ = dense.ParsePrecision(m.cfg.Precision) // validated
	m.body = kind.body(m.cfg, shapes, params)
	m.body.setPool(m.pool)
	m.SetDecayAll(false)
}

// release gives every buffer of the last Forward and Backward back to the
// pool.
func (m *Model) release() {
	if m.body != nil {
		m.body.release()
		return
	}
	for _, c := range m.convs {
		c.releaseSaved()
		c.releaseOut()
		c.releaseGrad()
	}
	for _, st := range m.stages {
		st.release()
	}
	m.drops[0].release()
	clear(m.acts)
}

// PoolBytes is the storage the model's buffer pool has allocated: the
// activations, gradients and temporaries of its largest step so far (the
// evaluation aggregate of SetEvalInput and the dropout masks not included).
func (m *Model) PoolBytes() int64 { return m.pool.bytes }

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Params returns the learnable parameters in a fixed order: per layer i the
// conv's, in the order its plan declares them (conv{i}.lin.weight,
// conv{i}.bias for GCN; conv{i}.lin_l.weight, conv{i}.lin_l.bias,
// conv{i}.lin_r.weight for SAGE; …), then norm{i}.weight and norm{i}.bias
// with LayerNorm.
func (m *Model) Params() []*Param { return m.params }

// NumParams is the total number of scalars in Params.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.params {
		n += len(p.W)
	}
	return n
}

// SetKernel chooses the row kernel set of the fused hidden stages and the
// LayerNorms by name, as aggr.New and quant.NewCodec choose theirs (the
// internal/dispatch names; "" means $SUPERGCN_KERNEL, "auto" the best set);
// NewModel starts with rowk.Default(). Every set rounds exactly as the
// generic one, so the choice changes speed only.
func (m *Model) SetKernel(name string) error {
	k, err := rowk.Lookup(name)
	if err != nil {
		return err
	}
	for _, st := range m.stages {
		st.kern = k
	}
	for _, ln := range m.norms {
		if ln != nil {
			ln.kern = k
		}
	}
	return nil
}

// SetDecayAll selects which parameters carry weight decay: every parameter
// (true, like torch's weight_decay on model.parameters()), or only the
// weight matrices of the first convolution (false, the default: Kipf &
// Welling's regularisation of the first layer; PyG's GCN example also decays
// conv1's bias, which starts at zero).
func (m *Model) SetDecayAll(all bool) {
	m.decayAll = all
	if m.body != nil {
		m.body.setDecay(all)
		return
	}
	first := map[*Param]bool{}
	for _, p := range m.convs[0].Params() {
		first[p] = p.weight
	}
	for _, p := range m.params {
		p.Decay = !p.buffer && (all || first[p])
	}
}

// SetDropoutSeed restarts the dropout stream: the masks of the k-th training
// Forward after this call are a function of (seed, k) only. Give each MPI
// rank a different seed so that ranks drop independent elements.
func (m *Model) SetDropoutSeed(seed uint64) {
	m.dropSeed = seed
	m.step = 0
}

// DropoutStep is the position in the dropout stream: the number of
// training Forwards with dropout since the dropout seed was set. It is the
// same on every rank of a run (all do the same training Forwards).
func (m *Model) DropoutStep() uint64 { return m.step }

// SetDropoutStep moves the dropout stream to position step (after
// SetDropoutSeed), so that the next training Forward draws the masks an
// uninterrupted run draws after step training Forwards: for resuming.
func (m *Model) SetDropoutStep(step uint64) { m.step = step }

// dropSeedFor is the seed of dropout site s in the current training step.
// Sites from 256 on (deep bodies) take a further selector.
func (m *Model) dropSeedFor(site int) uint64 {
	return mix64(m.dropSeed^mix64(m.step<<8|uint64(site&0xff))) ^ mix64(uint64(site>>8))
}

// SetEvalInput declares x the constant input of the evaluation Forwards to
// come (Pass.Train false): when the first layer starts by aggregating its
// input (a GCN or SAGE layer wider than its input), an evaluation Forward
// given this very matrix x reuses Â·x, computed once through the
// Propagator at the first such Forward with exact float32 rows
// (Pass.Exact; under MPI this is the one distributed exchange of x), and
// so skips the first layer's graph operator. x must stay unmodified until
// the next SetEvalInput; SetEvalInput(nil) (or another matrix) drops the
// aggregate. Training Forwards, and evaluation Forwards on other matrices,
// are unaffected. The aggregate costs prop.Rows() × In floats.
func (m *Model) SetEvalInput(x *dense.Matrix) {
	m.evalX, m.evalAX = x, nil
}

// firstConv runs the first convolution on the model input x (h: x after
// input dropout), through the evaluation aggregate when SetEvalInput
// declared x and the layer takes one.
func (m *Model) firstConv(p Pass, x, h *dense.Matrix) (*dense.Matrix, error) {
	c := m.convs[0]
	ia, ok := c.(inputAggregator)
	aggregate := m.inputAggregate()
	if p.Train || x != m.evalX || h != x || !ok || aggregate == nil || !ia.aggregatesInput() {
		return c.Forward(p, m.op, h)
	}
	if m.evalAX == nil {
		ax := dense.New(x.Rows, x.Cols)
		pe := p
		pe.Exact, pe.Consume = true, false
		if err := aggregate(pe, x, ax); err != nil {
			return nil, err
		}
		m.evalAX = ax
	}
	return ia.forwardAggregated(p, m.op, x, m.evalAX)
}

// inputAggregate is the operator's product that gives the first layer's
// aggregate of its input: the maximum of a MaxAggregator for a model of
// kind OpMax, else a Propagator's Â; nil when the operator has neither.
func (m *Model) inputAggregate() func(p Pass, x, out *dense.Matrix) error {
	if kind, _ := lookupModel(m.cfg.Model); kind.op == OpMax {
		if mx, ok := m.op.(MaxAggregator); ok {
			return mx.MaxForward
		}
		return nil
	}
	if prop, ok := m.op.(Propagator); ok {
		return prop.Forward
	}
	return nil
}

// Forward computes the logits (op.Rows() × Out) for the input features x
// (op.Rows() × In). x is read, never written, and must stay unmodified
// until Backward.
func (m *Model) Forward(p Pass, x *dense.Matrix) (*dense.Matrix, error) {
	if x.Rows != m.op.Rows() || x.Cols != m.cfg.In {
		return nil, fmt.Errorf("nn: Model.Forward: input is %d×%d, want %d×%d", x.Rows, x.Cols, m.op.Rows(), m.cfg.In)
	}
	m.forward = false
	m.release()
	m.x = x
	p.Scratch = m.pool
	if p.Train && m.cfg.Dropout > 0 {
		m.step++
	}
	if m.body != nil {
		out, err := m.body.forward(p, m.op, x, m.dropSeedFor)
		m.forward = err == nil
		return out, err
	}
	h := m.dropInput(x, p.Train)
	last := len(m.convs) - 1
	for i, c := range m.convs {
		p.Layer = i
		var out *dense.Matrix
		var err error
		if i == 0 {
			pc := p
			// The dropped input is the first layer's to overwrite when its
			// backward does not read it (a propagate-first GCN layer).
			pc.Consume = h != x && !m.convs[0].needsInput()
			out, err = m.firstConv(pc, x, h)
			// The dropped input is dead until the first layer's backward,
			// which restores it from x and the mask bits.
			m.drops[0].release()
		} else {
			out, err = c.Forward(p, m.op, h)
		}
		if err != nil {
			return nil, err
		}
		if i == last {
			m.forward = true
			return out, nil
		}
		if m.fused {
			h = m.stages[i].forward(out, p.Train, m.dropSeedFor(i+1))
		} else {
			if m.norms[i] != nil {
				out = m.norms[i].Forward(out)
			}
			if m.bnorms[i] != nil {
				if out, err = m.bnorms[i].Forward(p.Train, out); err != nil {
					return nil, err
				}
			}
			ReLU(out)
			h = m.drops[i+1].Forward(out, p.Train, true, m.dropSeedFor(i+1))
		}
		m.acts[i] = h
	}
	panic("unreachable")
}

// LastHidden is the input of the last layer in the last Forward: the node
// embeddings (prop.Rows() × Hidden, after activation, normalisation and,
// in training passes, dropout), owned by the model; nil for a one-layer
// model, which has no hidden layer, and after a Backward (which gives the
// activations back to the pool).
func (m *Model) LastHidden() *dense.Matrix {
	if m.body != nil {
		return m.body.lastHidden()
	}
	if len(m.acts) == 0 {
		return nil
	}
	return m.acts[len(m.acts)-1]
}

// Backward back-propagates dlogits = dL/d(logits) of the last Forward (same
// p.Train), setting every Param's G. With wantInputGrad it returns dL/dx for
// the model input x (owned by the model); otherwise it returns nil and skips
// the first layer's input-gradient work. dlogits is the caller's buffer,
// dead after Backward: Backward may overwrite it (a transform-first GCN
// output layer scales it in place for Âᵀ instead of copying it).
func (m *Model) Backward(p Pass, dlogits *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	if !m.forward {
		return nil, errors.New("nn: Model.Backward without a completed Forward")
	}
	if dlogits.Rows != m.op.Rows() || dlogits.Cols != m.cfg.Out {
		return nil, fmt.Errorf("nn: Model.Backward: gradient is %d×%d, want %d×%d",
			dlogits.Rows, dlogits.Cols, m.op.Rows(), m.cfg.Out)
	}
	// The buffers Forward kept are given back as Backward goes: a second
	// Backward needs a new Forward.
	m.forward = false
	p.Scratch = m.pool
	if m.body != nil {
		return m.body.backward(p, m.op, dlogits, wantInputGrad)
	}
	p.Consume = true // every gradient a layer gets is dead after its backward
	g := dlogits
	last := len(m.convs) - 1
	for i := last; i >= 0; i-- {
		p.Layer = i
		if i == 0 && m.drops[0].active && m.convs[0].needsInput() {
			m.convs[0].setInput(m.drops[0].restore(m.x))
		}
		gx, err := m.convs[i].Backward(p, m.op, g, i > 0 || wantInputGrad)
		if err != nil {
			return nil, err
		}
		if i < last { // g was conv i+1's input gradient
			m.convs[i+1].releaseGrad()
		}
		if i == 0 {
			m.drops[0].release()
			if !wantInputGrad {
				return nil, nil
			}
			return m.inputGrad(gx), nil
		}
		// gx is owned by conv i; the hidden-layer steps work on it in place.
		if m.fused {
			g = m.stages[i-1].backward(gx)
			// Stage i-1's activation (conv i's input) and conv i-1's
			// output, which the stage read, are dead.
			m.stages[i-1].release()
			m.convs[i-1].releaseOut()
			m.acts[i-1] = nil
			continue
		}
		g = m.drops[i].Backward(gx)
		ReLUBackward(g, m.acts[i-1])
		if m.norms[i-1] != nil {
			g = m.norms[i-1].Backward(g)
		}
		if m.bnorms[i-1] != nil {
			if g, err = m.bnorms[i-1].Backward(g); err != nil {
				return nil, err
			}
		}
	}
	panic("unreachable")
}

// NonFiniteLayer returns the 1-based index of the first layer whose output
// in the last Forward held a NaN or an infinity: a hidden layer's output, or
// logits (the output of layer Layers; nil skips it). It returns 0 when every
// value is finite.
func (m *Model) NonFiniteLayer(logits *dense.Matrix) int {
	for i, a := range m.acts {
		switch {
		case a != nil: // still held: after Forward, or in the separate passes
			if !AllFinite(a.Data) {
				return i + 1
			}
		case m.fused && m.stages[i].nonFinite.Load(): // given back by Backward, which read it all and recorded it
			return i + 1
		}
	}
	if logits != nil && !AllFinite(logits.Data) {
		return m.cfg.Layers
	}
	return 0
}

// AllFinite reports whether x holds no NaN and no infinity.
func AllFinite(x []float32) bool {
	for _, v := range x {
		if v-v != 0 { // NaN and ±Inf give NaN
			return false
		}
	}
	return true
}
