package exchange

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// patternKind is one row of the pattern table: an exchange pattern's name
// (Options.Exchange), the other names a command line accepts, its key in
// NodeVolumes' and NodeReport's JSON, what it is (one line, for help
// texts), whether its rows cross between nodes in stages, its plan (build,
// collective) and the rows it would move on a node layout (volumes).
type patternKind struct {
	name, doc string
	aliases   []string
	key       string
	// staged: the rows cross between nodes in three all-to-alls (gather
	// inside the node, between nodes, scatter inside the node), whose
	// NodeVolumes the performance model times stage by stage; otherwise
	// one all-to-all of every rank pair's rows (the partition's Volumes).
	staged  bool
	build   buildFunc
	volumes func(cuts *nodeCuts, nodes *comm.Nodes) ExchangeVolume
}

// buildFunc plans a pattern of shard s on c's ranks laid out on nodes
// (collective).
type buildFunc func(s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes) (pattern, PlanStats, error)

// patterns is the pattern table, the one place that maps an
// Options.Exchange name to its plan and volumes. Read-only.
var patterns = []patternKind{
	{name: ExchangeFlat, key: "flat", doc: "one all-to-all of every rank pair's boundary rows",
		build: newFlat, volumes: flatVolumes},
	{name: ExchangeTwoLevel, key: "two_level", aliases: []string{"twolevel", "hierarchical"}, staged: true,
		doc:   "cut edges planned per node pair: gather inside the node, one row per cover vertex between nodes, scatter",
		build: newTwoLevel(false), volumes: twoLevelVolumes(false)},
	{name: ExchangeTwoLevelPaired, key: "two_level_paired", aliases: []string{"twolevel-paired", "paired"}, staged: true,
		doc:   "two-level, each rank sending to and receiving from one rank of every other node",
		build: newTwoLevel(true), volumes: twoLevelVolumes(true)},
}

// PatternInfo describes a pattern of the table for command lines, help
// texts and the performance model.
type PatternInfo struct {
	Name, Doc string
	Aliases   []string
	Key       string // its key in NodeVolumes' and NodeReport's JSON
	Staged    bool   // its rows cross between nodes in stages (NodeVolumes)
}

// Patterns returns every pattern's PatternInfo, in table order (the
// default's first).
func Patterns() []PatternInfo {
	out := make([]PatternInfo, len(patterns))
	for i, p := range patterns {
		out[i] = PatternInfo{Name: p.name, Doc: p.doc, Aliases: slices.Clone(p.aliases), Key: p.key, Staged: p.staged}
	}
	return out
}

// Exchanges names the exchange patterns (Options.Exchange), the default's
// first.
func Exchanges() []string {
	n := make([]string, len(patterns))
	for i, p := range patterns {
		n[i] = p.name
	}
	return n
}

// ExchangeAliases maps every pattern's other names to its name.
func ExchangeAliases() map[string]string {
	m := map[string]string{}
	for _, p := range patterns {
		for _, a := range p.aliases {
			m[a] = p.name
		}
	}
	return m
}

func lookupPattern(name string) (patternKind, bool) {
	for _, p := range patterns {
		if p.name == name || slices.Contains(p.aliases, name) {
			return p, true
		}
	}
	return patternKind{}, false
}

// Staged reports whether pattern name moves its rows between nodes in
// stages (its volumes are NodeVolumes.Exchange[name]); false for an
// unknown name.
func Staged(name string) bool {
	p, _ := lookupPattern(name)
	return p.staged
}

// ParseExchange checks an Options.Exchange value, the one place that
// reads a pattern's name: one of Exchanges or their aliases (returned as
// the name), or "" or "auto" (returned as "": ChooseExchange's rule).
func ParseExchange(s string) (string, error) {
	if s == "" || s == "auto" {
		return "", nil
	}
	if p, ok := lookupPattern(s); ok {
		return p.name, nil
	}
	return "", fmt.Errorf("exchange: unknown exchange %q (want %s or auto)", s, strings.Join(Exchanges(), ", "))
}

// buildPattern plans the named exchange pattern (collective).
func buildPattern(exch string, s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes) (pattern, PlanStats, error) {
	p, ok := lookupPattern(exch)
	if !ok {
		return nil, PlanStats{}, fmt.Errorf("exchange: unknown exchange %q", exch)
	}
	pat, stats, err := p.build(s, c, e, mode, nodes)
	stats.Exchange = p.name
	return pat, stats, err
}

// marshalByPattern is the JSON of head (a struct whose per-pattern map is
// tagged "-") with per's values appended under their patterns' keys, in
// table order.
func marshalByPattern[V any](head any, per map[string]V) ([]byte, error) {
	b, err := json.Marshal(head)
	if err != nil || len(b) < 2 {
		return b, err
	}
	b = b[:len(b)-1]
	for _, p := range patterns {
		v, ok := per[p.name]
		if !ok {
			continue
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), p.key...), `":`...)
		b = append(b, vb...)
	}
	return append(b, '}'), nil
}

// unmarshalByPattern reads b into head (as marshalByPattern wrote it) and
// returns the values under the patterns' keys, by pattern name. A pattern
// whose key b lacks has no entry.
func unmarshalByPattern[V any](b []byte, head any) (map[string]V, error) {
	if err := json.Unmarshal(b, head); err != nil {
		return nil, fmt.Errorf("%v", err) // the offset is within b, not the file
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	per := map[string]V{}
	for _, p := range patterns {
		r, ok := raw[p.key]
		if !ok {
			continue
		}
		var v V
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("%s: %v", p.key, err) // %v: the offset is within r, not the file
		}
		per[p.name] = v
	}
	return per, nil
}
