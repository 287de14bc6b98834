// Package nn holds the dense half of a full-batch GNN: the layers of the
// model table (GCN, GraphSAGE, GIN, SGC, APPNP; layer.go states the
// contract a layer meets) with hand-written backward passes, LayerNorm,
// ReLU, dropout, the softmax cross-entropy loss and Adam, all on
// dense.Matrix. The graph enters only through an Operator (a Propagator:
// Â·x forward, Âᵀ·g backward), so the same model runs in one process or
// across MPI ranks, each rank owning a block of rows.
//
// A training step, per rank (labels and trainRows local to the rank,
// globalTrain the number of training nodes over all ranks):
//
//	m, _ := nn.NewModel(nn.Config{Model: "gcn", Layers: 2, In: f, Hidden: 16, Out: c, Dropout: 0.5, Seed: 1}, prop)
//	m.SetDropoutSeed(seed + uint64(rank))
//	opt, _ := nn.NewAdam(m.Params(), nn.DefaultAdam())
//	for epoch := range epochs {
//		p := nn.Pass{Train: true, Epoch: epoch}
//		logits, _ := m.Forward(p, x)
//		loss, grad, _ = nn.SoftmaxCrossEntropyInto(grad, logits, labels, trainRows, float64(globalTrain))
//		m.Backward(p, grad, false)
//		// distributed: AllreduceSumF32 every Param.G (and the loss) here
//		opt.Step()
//	}
//
// Panics are reserved for programmer errors (mismatched shapes inside the
// elementwise kernels, invalid arguments to the panicking loss helpers);
// everything that depends on input data returns an error.
package nn
