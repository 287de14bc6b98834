package nn

// StepKind is the kind of one step of a layer's cost schedule.
type StepKind int

const (
	// StepGemm is a dense product over the rank's rows: (rows × K)·(K × N),
	// its operands transposed as Trans says.
	StepGemm StepKind = iota
	// StepAggregate is one application of the graph operator Op to rows of
	// Width values (forward Â, backward Âᵀ): under MPI, one exchange.
	StepAggregate
	// StepElem is an elementwise pass over rows of Width values moving
	// Bytes bytes a value (reads and writes).
	StepElem
	// StepAttention is one pass of the attention operator (Attention) over
	// rows of Width values in Heads heads, a self-loop a node: per edge
	// and head the score, the edge softmax and the attention dropout, per
	// edge and value the weighted aggregation (backward their adjoints);
	// under MPI, one exchange of Width values a row.
	StepAttention
)

// CostStep is one step of a layer's forward or backward pass, in the
// order the layer runs them (perfmodel walks them).
type CostStep struct {
	Kind  StepKind
	Trans string // StepGemm: "nn", "tn" (first operand transposed) or "nt"
	K, N  int    // StepGemm: inner and output widths
	Width int    // StepAggregate, StepElem, StepAttention: values a row
	Heads int    // StepAttention: heads (Width/Heads values each)
	Op    OpKind // StepAggregate: the operator
	Bytes float64
	// Input marks a forward aggregation of the layer's input, which an
	// evaluation Forward of the first layer takes from the cached
	// aggregate (Model.SetEvalInput) instead of computing it.
	Input bool
	// TargetRows marks GATv2's attention (StepAttention): its scores read
	// the targets' rows of Width values as well, so a pre-aggregated row
	// costs its target's row each way besides the partial state.
	TargetRows bool
	// InputGrad marks a backward step that runs only when the input
	// gradient is wanted (not in the first layer).
	InputGrad bool
}

// LayerCost is a layer's cost schedule: the steps of its forward pass and
// of its backward pass. The Model's own stages (input dropout, the fused
// hidden stage, the last layer's bias, the loss, the optimiser) are not in
// it.
type LayerCost struct {
	Forward, Backward []CostStep
}

func gemm(trans string, k, n int) CostStep { return CostStep{Kind: StepGemm, Trans: trans, K: k, N: n} }

func aggregate(op OpKind, width int) CostStep {
	return CostStep{Kind: StepAggregate, Op: op, Width: width}
}

func attention(heads, width int) CostStep {
	return CostStep{Kind: StepAttention, Heads: heads, Width: width}
}

func elem(bytes float64, width int) CostStep {
	return CostStep{Kind: StepElem, Bytes: bytes, Width: width}
}

// colSums is the bias gradient: the column sums of gout (4 bytes a value).
func colSums(width int) CostStep { return elem(4, width) }

// repeat returns n copies of s, the first marked by first.
func repeat(n int, s CostStep, first func(*CostStep)) []CostStep {
	out := make([]CostStep, n)
	for i := range out {
		out[i] = s
	}
	if n > 0 && first != nil {
		first(&out[0])
	}
	return out
}

func markInput(s *CostStep) { s.Input = true }

func inputGrad(steps ...CostStep) []CostStep {
	for i := range steps {
		steps[i].InputGrad = true
	}
	return steps
}

// linearPropCost is the schedule of out = Â^k·(X·W) [+ X·W_r] + b, in the
// cheaper order as GCNLayer and SAGELayer run it: transform first when
// out ≤ in (k aggregations of out columns), else propagate first (k of
// in columns). root adds the second weight of SAGE.
func linearPropCost(op OpKind, in, out, k int, root bool) LayerCost {
	var c LayerCost
	nGemm := 1
	if root {
		nGemm = 2
	}
	fwd, bwd := &c.Forward, &c.Backward
	*bwd = append(*bwd, colSums(out))
	if out <= in {
		*fwd = append(*fwd, gemm("nn", in, out))
		*fwd = append(*fwd, repeat(k, aggregate(op, out), nil)...)
		*fwd = append(*fwd, repeat(nGemm-1, gemm("nn", in, out), nil)...)
		*bwd = append(*bwd, repeat(nGemm-1, gemm("tn", in, out), nil)...)
		*bwd = append(*bwd, repeat(k, aggregate(op, out), nil)...)
		*bwd = append(*bwd, gemm("tn", in, out))
		*bwd = append(*bwd, inputGrad(repeat(nGemm, gemm("nt", out, in), nil)...)...)
		return c
	}
	*fwd = append(*fwd, repeat(k, aggregate(op, in), markInput)...)
	*fwd = append(*fwd, repeat(nGemm, gemm("nn", in, out), nil)...)
	*bwd = append(*bwd, repeat(nGemm, gemm("tn", in, out), nil)...)
	*bwd = append(*bwd, inputGrad(gemm("nt", out, in))...)
	*bwd = append(*bwd, inputGrad(repeat(k, aggregate(op, in), nil)...)...)
	*bwd = append(*bwd, inputGrad(repeat(nGemm-1, gemm("nt", out, in), nil)...)...)
	return c
}

// linearPropMem is the memory of GCNLayer and SAGELayer of k steps in the
// order linearPropCost states: transform-first X·W (Out wide) and, backward,
// Âᵀ·G and the propagator's scaled copy; propagate-first Â·X (In wide)
// kept for the weight gradient, and the scaled copy of X. With k > 1 up to
// two steps' results beside.
func linearPropMem(in, out, k int) LayerMem {
	steps := min(k-1, 2)
	if out <= in {
		return LayerMem{Forward: out * (1 + steps), Backward: out * (2 + steps)}
	}
	return LayerMem{Kept: in, Forward: in * (1 + steps), Backward: in * steps}
}
