package train

import (
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/interop"
)

// initFrom replaces the model's seeded weights by those of the tensor file
// path (every rank reads it; interop.Import checks every tensor's name and
// shape against the model the configuration built).
func (t *trainer) initFrom(path string) error {
	ts, _, err := interop.ReadFile(path)
	if err != nil {
		return field.Wrap("train.Config.InitPath", err)
	}
	vals, err := interop.Import(t.model.Config(), ts)
	if err != nil {
		return field.Errorf("train.Config.InitPath", "%s: %v", path, err)
	}
	for _, p := range t.model.Params() {
		copy(p.W, vals[p.Name])
	}
	return nil
}

// evaluateInit evaluates the weights before the first epoch: the
// accuracies and validation and test losses of EpochMetrics epoch 0
// (Evaluated; no training loss, no step).
func (t *trainer) evaluateInit() (EpochMetrics, error) {
	m := EpochMetrics{Epoch: 0, Ranks: t.c.Size(), Evaluated: true}
	correct, losses, err := t.evaluate(0)
	if err != nil {
		return m, err
	}
	cnt := correct[:]
	if err := t.c.AllreduceSumI64(cnt); err != nil {
		return m, err
	}
	m.TrainAcc, m.ValAcc, m.TestAcc = ratio(cnt[0], t.nTrain), ratio(cnt[1], t.nValid), ratio(cnt[2], t.nTest)
	m.ValLoss, m.TestLoss = fratio(losses[0], t.nValid), fratio(losses[1], t.nTest) // evaluate summed them over the ranks
	return m, nil
}
