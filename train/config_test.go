package train

import (
	"errors"
	"testing"

	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/nn"
)

// TestConfigValidate: a good configuration passes; each bad setting is a
// field error naming it, the model's named by nn.
func TestConfigValidate(t *testing.T) {
	good := Config{Model: nn.Config{Model: "gcn", Layers: 2, Hidden: 16}, LR: 0.01, WeightDecay: 5e-4, Epochs: 10,
		NodeOrder: "given", AggrMode: "hybrid", Exchange: "auto", EvalEvery: 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("good: %v", err)
	}
	for name, spoil := range map[string]func(*Config){
		"nn.Config.Hidden":               func(c *Config) { c.Model.Hidden = 0 },
		"train.Config.LR":                func(c *Config) { c.LR = 0 },
		"train.Config.WeightDecay":       func(c *Config) { c.WeightDecay = -1 },
		"train.Config.Epochs":            func(c *Config) { c.Epochs = -1 },
		"train.Config.LabelProp":         func(c *Config) { c.LabelProp = 1 },
		"train.Config.NodeOrder":         func(c *Config) { c.NodeOrder = "sideways" },
		"train.Config.EvalEvery":         func(c *Config) { c.EvalEvery = 0 },
		"train.Config.SaveEvery":         func(c *Config) { c.SaveEvery = 5 },
		"train.Config.SaveBest":          func(c *Config) { c.SavePath, c.SaveBest = "a", "a" },
		"train.Config.AggrMode":          func(c *Config) { c.AggrMode = "both" },
		"train.Config.Exchange":          func(c *Config) { c.Exchange = "" },
		"train.Config.LRSchedule":        func(c *Config) { c.LRSchedule = "exponential" },
		"train.Config.Patience":          func(c *Config) { c.Patience = -1 },
		"train.Config.LRStepSize":        func(c *Config) { c.LRSchedule, c.LRGamma = ScheduleStep, 0.5 },
		"train.Config.LRGamma":           func(c *Config) { c.LRSchedule, c.LRGamma = SchedulePlateau, 0 },
		"train.Config.LRMin":             func(c *Config) { c.LRSchedule, c.LRMin = ScheduleCosine, 0.1 },
		"train.Config.LRPlateauPatience": func(c *Config) { c.LRPlateauPatience = -1 },
	} {
		c := good
		spoil(&c)
		var fe *field.Error
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != name {
			t.Errorf("%s: %v", name, err)
		}
	}
}
