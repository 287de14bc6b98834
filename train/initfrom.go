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
	sc, losses, err := t.evaluate(0)
	if err != nil {
		return m, err
	}
	t.setScores(&m, sc, losses)
	return m, nil
}
