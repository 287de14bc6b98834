package nn

// LayerMem is a layer's memory schedule: the activation-sized buffers it
// holds, in float32 values per owned row (widths summed), per edge of the
// rank's graph and per row received from other ranks, besides its output
// (Out wide, the Model's until the next layer's backward) and its input
// gradient (In wide). The graph operator's own state for the layer counts
// as the layer's.
type LayerMem struct {
	Kept     int // per row, from Forward until Backward
	Held     int // per row, from the first Forward on (the operator's state for the layer)
	Forward  int // per row, temporaries of Forward beside Kept (their peak)
	Backward int // per row, temporaries of Backward beside Kept and gout (their peak)
	EdgeKept int // per edge, from Forward until Backward (attention weights)
	EdgeTemp int // per edge, temporaries of Backward
	HaloKept int // per received row, from Forward until Backward (attention: the rows and their terms)
}

// ModelMem is what a model holds at its peak, in float32 values: per owned
// row (the pool's buffers: activations, their gradients, the layers' and
// the operator's temporaries), per edge and per received row (the
// exchange's send and receive buffers and what the operator keeps of the
// received rows). Parameters, optimiser state and the caller's buffers
// (inputs, the loss gradient) are not in it.
type ModelMem struct {
	Row, Edge, Halo int64
}

// Memory walks the layers' memory schedules through a training step as
// Model runs it (input dropout, the layers' forwards with the hidden stages
// between them, the backwards freeing layer by layer) and returns the
// peak. c must be valid (Validate).
func (c Config) Memory() ModelMem {
	m, _ := lookupModel(c.Model)
	plans := make([]LayerPlan, c.Layers)
	shapes := make([]LayerShape, c.Layers)
	for i := range plans {
		shapes[i] = c.shape(m, i)
		plans[i] = m.plan(shapes[i])
	}
	drop := 0 // the input dropout's output, until the first layer's forward
	if c.Dropout > 0 {
		drop = c.In
	}
	act := func(i int) int { // hidden stage i's activation beside conv i's output
		w := 0
		if (c.Norm == "layer" || c.Norm == "batch") && (i < c.Layers-1 || c.jumping()) {
			w += shapes[i].Out
		}
		if c.residual(i) { // activation + skip, beside the activation (its ReLU mask)
			w += shapes[i].Out
		}
		return w
	}
	var mm ModelMem
	live, peak, maxAgg, edgeTemp := drop, 0, 0, 0
	for _, p := range plans {
		live += p.Mem.Held
	}
	for i, p := range plans {
		s := p.Mem
		peak = max(peak, live+s.Kept+s.Forward+shapes[i].Out)
		live += s.Kept + shapes[i].Out + act(i)
		if i == 0 {
			live -= drop
		}
		mm.Edge += int64(s.EdgeKept)
		mm.Halo += int64(s.HaloKept)
		edgeTemp = max(edgeTemp, s.EdgeTemp)
		for _, st := range append(p.Cost.Forward, p.Cost.Backward...) {
			if st.Kind == StepAggregate || st.Kind == StepAttention {
				maxAgg = max(maxAgg, st.Width)
			}
		}
	}
	g := 0 // the gradient a layer gets from the layer above (the loss gradient is the caller's)
	for i := c.Layers - 1; i >= 0; i-- {
		s, restore := plans[i].Mem, 0
		if i == 0 {
			restore = drop // the first layer's input, restored when its backward reads it
		}
		peak = max(peak, live+g+restore+s.Backward+shapes[i].In)
		live -= s.Kept
		if i > 0 {
			live -= shapes[i-1].Out + act(i-1)
		}
		g = shapes[i].In
	}
	mm.Row = int64(peak)
	mm.Edge += int64(edgeTemp)
	mm.Halo += 2 * int64(maxAgg) // send and receive buffers at the widest exchange
	return mm
}
