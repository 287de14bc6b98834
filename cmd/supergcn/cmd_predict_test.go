package main

import (
	"bytes"
	"encoding/json"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/task"
)

// TestPredictCLI: predict's bytes equal stats' hybrid bytes for the same
// partition and width, --save-volumes and --volumes give the same answer,
// and --plot draws the lines.
func TestPredictCLI(t *testing.T) {
	dir, _, _ := statsDataset(t)
	tmp := t.TempDir()
	prof := filepath.Join(tmp, "xeon.json")
	if err := benchProfile([]string{"--published", "xeon-gold-6148", "--out", prof}); err != nil {
		t.Fatal(err)
	}
	vol := filepath.Join(tmp, "vol.json")
	// One layer 6 → 7: propagate first at width 6, one forward exchange;
	// the first layer's backward skips its product; no evaluation.
	args := []string{"--profile", prof, "--network", "10gbit,shm", "--ranks-per-node", "2", "--exchange", "flat", "--layers", "1", "--classes", "7",
		"--bits", "32,2", "--eval-every", "0", "--json"}
	var a, b bytes.Buffer
	if err := cmdPredict(append([]string{"--partitions", dir, "--save-volumes", vol}, args...), &a); err != nil {
		t.Fatal(err)
	}
	if err := cmdPredict(append([]string{"--volumes", vol, "--label", "x"}, args...), &b); err != nil {
		t.Fatal(err)
	}
	var st bytes.Buffer
	if err := cmdStats([]string{dir, "--json", "--width", "6"}, &st); err != nil {
		t.Fatal(err)
	}
	var rep exchange.RowReport
	if err := json.Unmarshal(st.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	st.Reset()
	if err := cmdStats([]string{dir, "--json", "--width", "6", "--ranks-per-node", "2", "--bits", "2"}, &st); err != nil {
		t.Fatal(err)
	}
	var node exchange.NodeReport
	if err := json.Unmarshal(st.Bytes(), &node); err != nil {
		t.Fatal(err)
	}
	la, lb := strings.Split(strings.TrimSpace(a.String()), "\n"), strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(la) != 4 || len(lb) != 4 {
		t.Fatalf("want 4 lines (2 networks × 2 bits), got %d and %d:\n%s", len(la), len(lb), a.String())
	}
	for i := range la {
		var ra, rb perfmodel.Row
		if err := json.Unmarshal([]byte(la[i]), &ra); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(lb[i]), &rb); err != nil {
			t.Fatal(err)
		}
		if ra.EpochS != rb.EpochS || ra.TrainBytes != rb.TrainBytes || rb.Label != "x" {
			t.Errorf("line %d: from the partition %+v, from --volumes %+v", i, ra.Prediction, rb.Prediction)
		}
		if ra.Bits == 32 && ra.TrainBytes != rep.Bytes.Hybrid {
			t.Errorf("line %d: fp32 train bytes %d, stats says %d", i, ra.TrainBytes, rep.Bytes.Hybrid)
		}
		// int2 between nodes, fp32 (the default --intra-bits) inside them:
		// as stats counts them; in shared memory every row is fp32.
		if want := node.Exchange[exchange.ExchangeFlat].InterBytes + node.Exchange[exchange.ExchangeFlat].IntraBytes; ra.Bits == 2 && ra.Network != "shm" && ra.TrainBytes != want {
			t.Errorf("line %d: int2 train bytes %d, want %d (stats: %+v)", i, ra.TrainBytes, want, node.Exchange[exchange.ExchangeFlat])
		}
		if ra.Bits == 2 && ra.Network == "shm" && (ra.TrainBytes != rep.Bytes.Hybrid || ra.QuantS != 0) {
			t.Errorf("line %d: shared-memory int2 train bytes %d (quant %gs), want fp32's %d and no codec", i, ra.TrainBytes, ra.QuantS, rep.Bytes.Hybrid)
		}
	}
	// Two-level: the bytes are NodeVolumesOf's rows, inside nodes at fp32
	// (--intra-bits auto with --bits 32) and between them at the codec.
	nv, err := exchange.NodeVolumesOf(4, comm.BlockNodes(4, 2), func(r int) (*partition.Shard, error) { return partition.Load(dir, r, 4) })
	if err != nil {
		t.Fatal(err)
	}
	var tl bytes.Buffer
	if err := cmdPredict([]string{"--partitions", dir, "--exchange", "two-level", "--profile", prof, "--network", "10gbit",
		"--ranks-per-node", "2", "--layers", "1", "--classes", "7", "--bits", "32", "--eval-every", "0", "--json"}, &tl); err != nil {
		t.Fatal(err)
	}
	var rt perfmodel.Row
	if err := json.Unmarshal(tl.Bytes(), &rt); err != nil {
		t.Fatal(err)
	}
	if want := 6 * 4 * (nv.Exchange[exchange.ExchangeTwoLevel].InterRows() + nv.Exchange[exchange.ExchangeTwoLevel].IntraRows()); rt.TrainBytes != want || rt.IntraBytes != 6*4*nv.Exchange[exchange.ExchangeTwoLevel].IntraRows() {
		t.Errorf("two-level: %d bytes (%d intra), want %d (%d intra)", rt.TrainBytes, rt.IntraBytes, want, 6*4*nv.Exchange[exchange.ExchangeTwoLevel].IntraRows())
	}
	// train's defaults: int2 with several ranks, two-level when several
	// nodes run several ranks each (not on one node: shm)
	var def bytes.Buffer
	if err := cmdPredict([]string{"--partitions", dir, "--profile", prof, "--network", "10gbit,shm", "--ranks-per-node", "2", "--json"}, &def); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(def.String()), "\n") {
		var r perfmodel.Row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if want := []string{"two-level", "flat"}[i]; r.Bits != 2 || r.Exchange != want {
			t.Errorf("defaults on %s: %d bits, %s exchange; want 2 bits, %s (train's)", r.Network, r.Bits, r.Exchange, want)
		}
	}
	jl := filepath.Join(tmp, "p.jsonl")
	if err := os.WriteFile(jl, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := cmdPredict([]string{"--plot", jl, "--out", filepath.Join(tmp, "plots"), "--ref", "paper:4:0.5"}, &out); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(tmp, "plots", "projection-x.png")); err != nil || fi.Size() == 0 {
		t.Errorf("plot: %v (printed %q)", err, out.String())
	}
}

func TestPredictRejectsBadInput(t *testing.T) {
	dir, _, _ := statsDataset(t)
	tmp := t.TempDir()
	prof := filepath.Join(tmp, "p.json")
	p, _ := perfmodel.FromPublished("a64fx")
	if err := perfmodel.WriteProfile(prof, p); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(tmp, "bad.json")
	os.WriteFile(bad, []byte(`{"cores_per_node": 4, "rates": []}`), 0o644)
	broken := filepath.Join(tmp, "broken.json")
	os.WriteFile(broken, []byte("{\"cores_per_node\": 4,\n \"rates\": [}"), 0o644)
	garbage := filepath.Join(tmp, "garbage.json")
	os.WriteFile(garbage, []byte(`{"volumes": [{"rank": 0, "recv": [{"from": 7}]}], "partition": {"parts": 1}}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", prof, "--network", "tofu-d"}, "one of --partitions and --volumes"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "warp"}, "--network: unknown network"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--bits", "3"}, "--bits"},
		{[]string{"--partitions", dir, "--profile", bad, "--network", "tofu-d"}, "bad.json"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--ranks-per-node", "3"}, "--ranks-per-node"},
		{[]string{"--partitions", dir, "--profile", broken, "--network", "tofu-d"}, "broken.json: line 2, column 12: invalid character '}'"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--ranks-per-host", "-2"}, "--ranks-per-host"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--model", "mlp"}, "--model"},
		{[]string{"--volumes", garbage, "--profile", prof, "--network", "tofu-d"}, "sender 7 out of range"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--scale", "0"}, "--scale"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--exchange", "three-level"}, "--exchange"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--exchange", "two-level", "--aggr-mode", "post"}, "--exchange: the two-level exchange plans hybrid aggregation only"},
		{[]string{"--plot", garbage, "--out", tmp}, "not a supergcn predict --json line"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--model", "gat", "--heads", "2"}, "--profile: " + prof + ": the measurement of"},
		{[]string{"--partitions", dir, "--profile", prof, "--network", "tofu-d", "--heads", "2"}, "--heads: only with --model gat"},
	} {
		err := cmdPredict(c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(flagtab.UserMessage(err), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
}

// TestPredictLayouts: --layouts predicts every ranks × threads layout of
// the nodes (the partition's 4 parts on 2 nodes of 2 cores: 1×2 and 2×1
// per node), marks one recommended, and refuses the flags a layout sets.
func TestPredictLayouts(t *testing.T) {
	dir, _, _ := statsDataset(t)
	prof := filepath.Join(t.TempDir(), "xeon.json")
	if err := benchProfile([]string{"--published", "xeon-gold-6148", "--out", prof}); err != nil {
		t.Fatal(err)
	}
	args := []string{"--layouts", "--partitions", dir, "--profile", prof, "--network", "10gbit", "--nodes", "2", "--cores-per-node", "2"}
	var js bytes.Buffer
	if err := cmdPredict(append(args, "--json"), &js); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	best := 0
	for i, line := range lines {
		var r perfmodel.LayoutRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		want := []perfmodel.Layout{{RanksPerNode: 1, Threads: 2}, {RanksPerNode: 2, Threads: 1}}[i]
		if r.Layout != want || r.Row == nil || r.Ranks != 2*want.RanksPerNode || r.Threads != want.Threads || !(r.EpochS > 0) {
			t.Errorf("line %d: %s, want layout %+v predicted", i, line, want)
		}
		if r.Best {
			best++
		}
	}
	if len(lines) != 2 || best != 1 {
		t.Errorf("%d layouts, %d recommended; want 2, 1", len(lines), best)
	}
	var text bytes.Buffer
	if err := cmdPredict(args, &text); err != nil || !strings.Contains(text.String(), "recommended: ") {
		t.Errorf("table: %v\n%s", err, text.String())
	}
	for _, c := range []struct{ flag, value, want string }{
		{"--ranks-per-node", "2", "--ranks-per-node: not with --layouts"},
		{"--threads", "1", "--threads: not with --layouts"},
		{"--nodes", "0", "--nodes: 0, want ≥ 1"},
		{"--network", "shm,1gbit", "one profile, network and mode"},
	} {
		err := cmdPredict(append(append([]string{}, args...), c.flag, c.value), &bytes.Buffer{})
		if err == nil || !strings.Contains(flagtab.UserMessage(err), c.want) {
			t.Errorf("%s %s: %v, want %q", c.flag, c.value, err, c.want)
		}
	}
	// several bits: every layout at each, the fastest of each and of all
	text.Reset()
	if err := cmdPredict(append(append([]string{}, args...), "--bits", "32,2"), &text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fastest with --bits 32: ", "fastest with --bits 2: ", "recommended: "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("--bits 32,2: no %q in\n%s", want, text.String())
		}
	}
}

// TestPredictLayoutsShippedProfiles: predict --layouts --nodes 4
// --cores-per-node 32 with every shipped profile (measured on smaller
// nodes) prints a table whose wider ranks run at scaled rates, the
// assumption printed; a layout is recommended only when another one was
// predicted (a partition of 4 parts gives 4 nodes one layout: none is).
func TestPredictLayoutsShippedProfiles(t *testing.T) {
	dir4, ds, _ := statsDataset(t)
	dir128 := filepath.Join(t.TempDir(), "p128")
	if err := partition.Write(dir128, ds, partition.Random(ds.Graph.NumRows, 128, 7), 128, partition.MetaInfo{Method: "random"}); err != nil {
		t.Fatal(err)
	}
	profiles, _ := filepath.Glob(filepath.Join("..", "..", "perfmodel", "profiles", "*.json"))
	if len(profiles) == 0 {
		t.Fatal("no shipped profiles")
	}
	for _, prof := range profiles {
		for _, c := range []struct {
			dir       string
			recommend bool
		}{{dir4, false}, {dir128, true}} {
			var out bytes.Buffer
			err := cmdPredict([]string{"--layouts", "--partitions", c.dir, "--profile", prof, "--network", "10gbe",
				"--nodes", "4", "--cores-per-node", "32"}, &out)
			text := out.String()
			predicted := strings.Count(text, " two-level ") + strings.Count(text, " flat ")
			switch {
			case err != nil:
				t.Errorf("%s, %s: %v", prof, c.dir, err)
			case !strings.Contains(text, "per_node") || !strings.Contains(text, "\n1×32 ") || !strings.Contains(text, "assumed: ranks of 32 threads: profile "):
				t.Errorf("%s, %s: no table with 1×32 at assumed rates:\n%s", prof, c.dir, text)
			case strings.Contains(text, "recommended: ") != c.recommend || (c.recommend && predicted < 2):
				t.Errorf("%s, %s: %d layouts predicted, recommendation %v, want %v:\n%s", prof, c.dir, predicted,
					strings.Contains(text, "recommended: "), c.recommend, text)
			case !c.recommend && (predicted != 1 || !strings.Contains(text, "no recommendation: only 1×32 per node could be predicted")):
				t.Errorf("%s, %s: want one layout and no recommendation:\n%s", prof, c.dir, text)
			}
		}
	}
	// none predictable: exit 2 with one line (a 3-part partition: no rank
	// count of 4 nodes shares it)
	dir3 := filepath.Join(t.TempDir(), "p3")
	if err := partition.Write(dir3, ds, partition.Random(ds.Graph.NumRows, 3, 7), 3, partition.MetaInfo{Method: "random"}); err != nil {
		t.Fatal(err)
	}
	err := cmdPredict([]string{"--layouts", "--partitions", dir3, "--profile", profiles[0], "--network", "10gbe",
		"--nodes", "4", "--cores-per-node", "32"}, &bytes.Buffer{})
	if err == nil || exitCode(err) != 2 || strings.Contains(flagtab.UserMessage(err), "\n") || !strings.Contains(flagtab.UserMessage(err), "no layout of 4 nodes × 32 cores") {
		t.Errorf("3 parts on 4 nodes: %v (exit %d), want exit 2 and one line", err, exitCode(err))
	}
}

// TestPredictLinkPairs: predict --edge-split counts the pair rows that
// stats --edge-split reports (training step and one evaluation, fp32
// rows of --hidden values) and refuses the flags it cannot honour.
func TestPredictLinkPairs(t *testing.T) {
	dir, _, _ := statsDataset(t)
	prof := filepath.Join(t.TempDir(), "xeon.json")
	if err := benchProfile([]string{"--published", "xeon-gold-6148", "--out", prof}); err != nil {
		t.Fatal(err)
	}
	link := []string{"--edge-split", "random:0.8,0.1,0.1:5", "--neg-ratio", "2", "--seed", "4"}
	var st bytes.Buffer
	if err := cmdStats(append([]string{dir, "--json", "--width", "16"}, link...), &st); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Link task.PairReport `json:"link"`
	}
	if err := json.Unmarshal(st.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := cmdPredict(append([]string{"--partitions", dir, "--profile", prof, "--network", "10gbit", "--bits", "32", "--hidden", "16", "--json"}, link...), &out); err != nil {
		t.Fatal(err)
	}
	var p perfmodel.Row
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if p.PairBytes != s.Link.TrainBytesTotal || p.EvalPairBytes != s.Link.EvalBytesTotal || p.PairBytes == 0 {
		t.Fatalf("predict: pair bytes %d, eval %d; stats: %d, %d", p.PairBytes, p.EvalPairBytes, s.Link.TrainBytesTotal, s.Link.EvalBytesTotal)
	}
	for _, f := range []string{"--classes 7", "--scale 2"} {
		err := cmdPredict(append(append([]string{"--partitions", dir, "--profile", prof, "--network", "10gbit"}, strings.Fields(f)...), link...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), strings.Fields(f)[0]+": not with --edge-split") {
			t.Errorf("%s: %v", f, err)
		}
	}
}
