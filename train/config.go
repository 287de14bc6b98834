package train

import (
	"math"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/partition"
)

// Validate reports the first invalid setting of c as a *field.Error
// naming it ("train.Config.LR"), before any data is read: the model (with
// placeholder widths where In and Out are still 0, the data's), the
// optimiser, the exchange and the outputs' settings. Exchange "" is
// refused here: a caller with a choice passes "auto".
func (c Config) Validate() error {
	bad := func(name, format string, args ...any) error {
		return field.Errorf("train.Config."+name, format, args...)
	}
	m := c.Model
	m.In, m.Out = max(m.In, 1), max(m.Out, 1)
	if err := m.Validate(); err != nil {
		return err
	}
	switch {
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return bad("LR", "%g, need a finite positive learning rate", c.LR)
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return bad("WeightDecay", "%g, need a finite value ≥ 0", c.WeightDecay)
	case c.Epochs < 0:
		return bad("Epochs", "%d, need ≥ 0", c.Epochs)
	case !(c.LabelProp >= 0 && c.LabelProp < 1):
		return bad("LabelProp", "%g is not in [0, 1)", c.LabelProp)
	case !slices.Contains(partition.NodeOrders(), c.NodeOrder):
		return bad("NodeOrder", "%q is not %s", c.NodeOrder, strings.Join(partition.NodeOrders(), ", "))
	case c.EvalEvery < 1:
		return bad("EvalEvery", "%d, need ≥ 1", c.EvalEvery)
	case c.EvalCache != "" && !slices.Contains(EvalCaches(), c.EvalCache):
		return bad("EvalCache", "%q is not %s", c.EvalCache, strings.Join(EvalCaches(), ", "))
	case c.SaveEvery < 0:
		return bad("SaveEvery", "%d, need ≥ 1 (0: save only at the end)", c.SaveEvery)
	case c.SaveEvery > 0 && c.SavePath == "":
		return bad("SaveEvery", "needs train.Config.SavePath FILE")
	case c.SaveBest != "" && c.SaveBest == c.SavePath:
		return bad("SaveBest", "is the train.Config.SavePath file; give another")
	}
	if err := c.loopSettings().check(c.LR); err != nil {
		return err
	}
	if _, err := exchange.ParseMode(c.AggrMode); err != nil {
		return bad("AggrMode", "%q is not post, pre or hybrid", c.AggrMode)
	}
	if _, err := exchange.ParseExchange(c.Exchange); err != nil || c.Exchange == "" {
		return bad("Exchange", "%q is not %s or auto", c.Exchange, strings.Join(exchange.Exchanges(), ", "))
	}
	return nil
}
