package nn

import (
	"encoding/json"
	"testing"
)

// A Config of an older build (K, Alpha, TrainEps as fields; 0 meaning the
// model's default) decodes with them in Hyper; this build's form decodes
// unchanged and a value in Hyper wins.
func TestConfigOlderHyperFields(t *testing.T) {
	for _, c := range []struct {
		js   string
		want map[string]float64
	}{
		{`{"Model":"appnp","K":5,"Alpha":0.2}`, map[string]float64{"k": 5, "alpha": 0.2}},
		{`{"Model":"appnp","K":0}`, nil},
		{`{"Model":"gin","TrainEps":true}`, map[string]float64{"train-eps": 1}},
		{`{"Model":"gcnii","Alpha":0.3,"Hyper":{"theta":1.5}}`, map[string]float64{"alpha": 0.3, "theta": 1.5}},
		{`{"Model":"sgc","K":3,"Hyper":{"k":4}}`, map[string]float64{"k": 4}},
	} {
		var cfg Config
		if err := json.Unmarshal([]byte(c.js), &cfg); err != nil {
			t.Fatalf("%s: %v", c.js, err)
		}
		if len(cfg.Hyper) != len(c.want) {
			t.Fatalf("%s: Hyper %v, want %v", c.js, cfg.Hyper, c.want)
		}
		for k, v := range c.want {
			if cfg.Hyper[k] != v {
				t.Fatalf("%s: Hyper %v, want %v", c.js, cfg.Hyper, c.want)
			}
		}
	}
	var cfg Config
	if err := json.Unmarshal([]byte(`{"Model":"gcn","Layers":"x"}`), &cfg); err == nil {
		t.Fatal("a malformed Config decoded")
	}
}
