package train

import "github.com/supergcn/supergcn/comm"

// epochCounts are the integers an epoch sums over the ranks, in one
// all-reduce (sum).
type epochCounts struct {
	commBytes  int64 // bytes the training step's exchanges moved (data + parameters)
	dataBytes  int64 // of which row data
	paramBytes int64 // and codec parameters
	nonFinite  int64 // non-finite values the quantisers met
	stop       int64 // ranks asking to stop after this epoch
	evalBytes  int64 // bytes the evaluation pass's exchanges moved
	intraBytes int64 // bytes moved between ranks of one node
	pairBytes  int64 // of commBytes, the pair rows (exchange.Stats.RowBytes)
	evalPairs  int64 // of evalBytes, the pair rows
}

// fields lists c's counters in the all-reduce's order.
func (c *epochCounts) fields() []*int64 {
	return []*int64{&c.commBytes, &c.dataBytes, &c.paramBytes,
		&c.nonFinite, &c.stop, &c.evalBytes, &c.intraBytes, &c.pairBytes, &c.evalPairs}
}

// sum replaces every counter by its sum over the ranks of cm.
func (c *epochCounts) sum(cm comm.Comm) error {
	f := c.fields()
	buf := make([]int64, len(f))
	for i, p := range f {
		buf[i] = *p
	}
	if err := cm.AllreduceSumI64(buf); err != nil {
		return err
	}
	for i, p := range f {
		*p = buf[i]
	}
	return nil
}
