package exchange

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every row of the pattern table is complete, its names and keys unique,
// and ParseExchange reads each name and alias as the pattern's name.
func TestPatternTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range patterns {
		if p.name == "" || p.doc == "" || p.key == "" || p.build == nil || p.volumes == nil {
			t.Errorf("pattern %q: incomplete row", p.name)
		}
		for _, n := range append([]string{p.name, "key " + p.key}, p.aliases...) {
			if seen[n] {
				t.Errorf("pattern %q: %q used twice", p.name, n)
			}
			seen[n] = true
			if strings.HasPrefix(n, "key ") {
				continue
			}
			if got, err := ParseExchange(n); err != nil || got != p.name {
				t.Errorf("ParseExchange(%q) = %q, %v; want %q", n, got, err, p.name)
			}
		}
	}
	if got, err := ParseExchange("auto"); err != nil || got != "" {
		t.Errorf(`ParseExchange("auto") = %q, %v`, got, err)
	}
	if _, err := ParseExchange("ring"); err == nil || !strings.Contains(err.Error(), strings.Join(Exchanges(), ", ")) {
		t.Errorf(`ParseExchange("ring"): %v, want an error naming the patterns`, err)
	}
	if Staged(ExchangeFlat) || !Staged(ExchangeTwoLevel) || Staged("ring") {
		t.Error("Staged: flat staged, two-level not, or an unknown name staged")
	}
}

// A NodeReport's JSON has each pattern's level under its key, and reads
// back the same.
func TestNodeReportJSON(t *testing.T) {
	r := &NodeReport{Dir: "p", Ranks: 4, Exchange: map[string]NodeLevel{}}
	for i, name := range Exchanges() {
		r.Exchange[name] = NodeLevel{InterRows: int64(10 + i)}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, p := range Patterns() {
		if _, ok := keys[p.Key]; !ok {
			t.Errorf("%s: no key %q", b, p.Key)
		}
	}
	var back NodeReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Dir != "p" || back.Ranks != 4 || len(back.Exchange) != len(patterns) || back.Exchange[ExchangeTwoLevel].InterRows != 11 {
		t.Errorf("read back %+v from %s", back, b)
	}
	if err := json.Unmarshal([]byte(`{"flat": {"inter_rows": "x"}}`), &back); err == nil || !strings.Contains(err.Error(), "flat") {
		t.Errorf("a bad level: %v, want an error naming its key", err)
	}
}
