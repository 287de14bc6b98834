package main

// Every bad input, flag or file the reliability checks cover, run
// through the binary: each must end with a non-zero exit, one line on
// stderr naming the flag or file:line, and never a Go stack trace.

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/train"
)

var goroutineTrace = regexp.MustCompile(`goroutine [0-9]* \[`)

// badCase is one run of the binary that must fail cleanly.
type badCase struct {
	name string
	env  []string // extra environment (a memory limit)
	args []string
	want string // substring of the one stderr line
}

// expectCleanFailure runs c and checks exit status, the single stderr line
// and the absence of a stack trace.
func expectCleanFailure(t *testing.T, c badCase) {
	t.Helper()
	checkCleanFailure(t, c, runEnv(t, 2*time.Minute, c.env, c.args...))
}

// checkCleanFailure checks the result r of case c as expectCleanFailure does.
func checkCleanFailure(t *testing.T, c badCase, r result) {
	t.Helper()
	stderr := strings.TrimRight(r.stderr, "\n")
	switch {
	case goroutineTrace.MatchString(r.stderr):
		t.Errorf("%s: Go stack trace on stderr:\n%s", c.name, r.stderr)
	case r.code == 0:
		t.Errorf("%s: exit 0, want an error containing %q\nstdout:\n%s", c.name, c.want, r.stdout)
	case strings.Contains(stderr, "\n") || stderr == "":
		t.Errorf("%s: stderr is not one line:\n%s", c.name, r.stderr)
	case !strings.Contains(stderr, c.want):
		t.Errorf("%s: stderr %q does not contain %q", c.name, stderr, c.want)
	}
}

// runEnv is run with extra environment variables and no launcher.
func runEnv(t *testing.T, limit time.Duration, env []string, args ...string) result {
	t.Helper()
	if len(env) == 0 {
		return run(t, limit, nil, args...)
	}
	return run(t, limit, append([]string{"env"}, env...), args...)
}

// writeFiles writes name → content under dir (creating directories).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ogbDir writes a 4-node OGB-layout dataset with the given overrides.
func ogbDir(t *testing.T, dir string, over map[string]string) string {
	t.Helper()
	files := map[string]string{
		"raw/edge.csv":           "0,1\n1,2\n2,3\n3,0\n",
		"raw/node-feat.csv":      "1,0\n0,1\n1,1\n0,0\n",
		"raw/node-label.csv":     "0\n1\n0\n1\n",
		"split/public/train.csv": "0\n1\n",
		"split/public/valid.csv": "2\n",
		"split/public/test.csv":  "3\n",
	}
	for k, v := range over {
		files[k] = v
	}
	writeFiles(t, dir, files)
	return dir
}

// npyInt64 writes a 1-D int64 .npy file.
func npyInt64(t *testing.T, path string, vals []int64) string {
	t.Helper()
	dict := fmt.Sprintf("{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }", len(vals))
	hdr := dict + strings.Repeat(" ", 63-(10+len(dict))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	binary.Write(&b, binary.LittleEndian, vals)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// forgeCheckpoint writes a version-2 checkpoint with a valid CRC around an
// arbitrary header and payload.
func forgeCheckpoint(t *testing.T, path, header string, payload []byte) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("SGCNCKPT")
	binary.Write(&b, binary.LittleEndian, uint32(2))
	binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	b.WriteString(header)
	b.Write(payload)
	binary.Write(&b, binary.LittleEndian, crc32.Checksum(b.Bytes(), crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCLIBadInputsFailCleanly(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }

	// A good checkpoint to forge from.
	good := p("good.ckpt")
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "2", "--quiet", "--save", good); r.code != 0 {
		t.Fatalf("training the base checkpoint: %s", r.stderr)
	}
	ck, err := train.LoadCheckpoint(good)
	if err != nil {
		t.Fatal(err)
	}
	forged := func(name string, edit func(ck *train.Checkpoint)) string {
		c := *ck
		tr := *ck.Train
		c.Train = &tr
		c.Params = append([]train.SavedParam(nil), ck.Params...)
		c.Params[0].W = append([]float32(nil), ck.Params[0].W...)
		edit(&c)
		if err := train.SaveCheckpoint(p(name), &c); err != nil {
			t.Fatal(err)
		}
		return p(name)
	}

	// Data files.
	os.MkdirAll(p("outdir"), 0o755)
	writeFiles(t, dir, map[string]string{
		"big1e9.edges":     "0 1\n1 999999999\n",
		"big2e31.edges":    "0 1\n1 2147483646\n",
		"asym.graph":       "3 2\n2 3\n1\n2\n",
		"vol-rows.json":    `{"partition":{"parts":2},"volumes":[{"rank":0,"nodes":5,"recv":[{"from":1,"rows":{"pre":1,"post":1,"hybrid":-5}}]},{"rank":1,"nodes":5}]}`,
		"vol-train.json":   `{"partition":{"parts":2},"volumes":[{"rank":0,"nodes":5,"train_nodes":9},{"rank":1,"nodes":5}]}`,
		"scale-inf.csv":    "method,ranks,seconds,max_rss_mb\nldg,2,1.5,100\nldg,4,Inf,90\n",
		"scale-nometh.csv": "method,ranks,seconds,max_rss_mb\n,2,1.5,100\n",
		"scale-ok.csv":     "method,ranks,seconds,max_rss_mb\nldg,2,1.5,100\n",
		"pred.jsonl":       `{"ranks":2,"epoch_s":1,"efficiency":0.5,"label":"x"}` + "\n",
		"pred-label.jsonl": `{"ranks":2,"epoch_s":1,"efficiency":0.5,"label":"../../x"}` + "\n",
		"pred-eff.jsonl":   `{"ranks":2,"epoch_s":1,"efficiency":-5}` + "\n",
		"scale-short.csv":  "method,ranks,seconds,max_rss_mb\nldg,2,1.5\n",
		"vol-parts.json":   `{"partition":{"parts":3},"volumes":[{"rank":0,"nodes":5},{"rank":1,"nodes":5}]}`,
	})
	labels1e9 := ogbDir(t, p("labels1e9"), map[string]string{"raw/node-label.csv": "0\n1\n1000000000\n1\n"})
	edges2e31 := ogbDir(t, p("edges2e31"), map[string]string{"raw/num-edge-list.csv": "2147483648\n"})
	overlap := ogbDir(t, p("overlap"), map[string]string{"split/public/test.csv": "1\n3\n"})
	npyLabels := npyInt64(t, p("labels.npy"), []int64{0, 1000000000, 1, 0})
	nanSGB := p("nan.sgb")
	ds, err := graph.Load(ogbDir(t, p("fornan"), nil), graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	graph.DenseData(ds.Features)[3] = float32(math.NaN())
	if err := graph.WriteBinary(nanSGB, ds); err != nil {
		t.Fatal(err)
	}
	hdr := `{"model":{"Model":"gcn","Layers":1,"In":1433,"Hidden":16,"Out":7},"train":{"epoch":1,"adam_steps":1},"params":[{"name":"conv0.lin.weight","len":4611686018427387904}]}`
	huge := forgeCheckpoint(t, p("huge.ckpt"), hdr, make([]byte, 64))

	pdir := p("cora-2")
	if r := run(t, 2*time.Minute, nil, "partition", "--data", cora, "--parts", "2", "--method", "random", "--out", pdir); r.code != 0 {
		t.Fatalf("partitioning: %s", r.stderr)
	}
	prof := p("xeon.json")
	if r := run(t, time.Minute, nil, "bench", "profile", "--published", "xeon-gold-6148", "--out", prof); r.code != 0 {
		t.Fatalf("profile: %s", r.stderr)
	}
	profText, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"prof-garbage.json": "garbage\n",
		"prof-trunc.json":   string(profText[:len(profText)/2]),
		"prof-neg.json":     strings.Replace(string(profText), `"gflops": `, `"gflops": -`, 1),
		"prof-zero.json":    regexp.MustCompile(`"forward_gups": [0-9.e+-]+`).ReplaceAllString(string(profText), `"forward_gups": 0`),
		"prof-cores.json":   strings.Replace(string(profText), `"cores_per_node": 40`, `"cores_per_node": 0`, 1),
	})
	truncPart := p("cora-2-trunc")
	os.MkdirAll(truncPart, 0o755)
	for _, name := range []string{"meta.json", "part-00000.bin", "part-00001.bin"} {
		b, err := os.ReadFile(filepath.Join(pdir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "part-00001.bin" {
			b = b[:len(b)/2]
		}
		writeFiles(t, truncPart, map[string]string{name: string(b)})
	}
	npz := func(name string, arrays ...graph.NpyData) string {
		if err := graph.WriteNpz(p(name), arrays, false); err != nil {
			t.Fatal(err)
		}
		return p(name)
	}
	e4 := graph.NpyData{Name: "edge_index", Shape: []int{2, 3}, Data: []int64{0, 1, 2, 1, 2, 3}}
	x4 := graph.NpyData{Name: "x", Shape: []int{4, 1}, Data: []float32{1, 2, 3, 4}}
	y4 := graph.NpyData{Name: "y", Shape: []int{4}, Data: []int64{0, 1, 0, 1}}
	mask := func(name string, m ...bool) graph.NpyData {
		return graph.NpyData{Name: name, Shape: []int{len(m)}, Data: m}
	}
	T, F := true, false
	goodMasks := []graph.NpyData{mask("train_mask", T, T, F, F), mask("val_mask", F, F, T, F), mask("test_mask", F, F, F, T)}
	npzRows := npz("rows.npz", e4, graph.NpyData{Name: "num_nodes", Shape: []int{}, Data: []int64{4}}, graph.NpyData{Name: "x", Shape: []int{3, 1}, Data: []float32{1, 2, 3}}, y4)
	npzFloatIDs := npz("fids.npz", graph.NpyData{Name: "edge_index", Shape: []int{2, 1}, Data: []float32{0, 1}})
	npzRange := npz("range.npz", graph.NpyData{Name: "edge_index", Shape: []int{2, 2}, Data: []int64{0, 9, 1, 2}}, x4)
	npzMaskLen := npz("masklen.npz", append([]graph.NpyData{e4, x4, y4, mask("train_mask", T, F, F)}, goodMasks[1:]...)...)
	npzOverlap := npz("overlap.npz", append([]graph.NpyData{e4, x4, y4, mask("train_mask", T, T, T, F)}, goodMasks[1:]...)...)
	npzNoSplit := npz("nosplit.npz", e4, x4, y4)
	npzGood := npz("good.npz", append([]graph.NpyData{e4, x4, y4}, goodMasks...)...)
	writeFiles(t, dir, map[string]string{"notzip.npz": "PK\x03\x04 garbage", "g4.txt": "0 1\n1 2\n2 3\n"})
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	if w, err := zw.Create("edge_index.npy"); err == nil {
		w.Write([]byte("\x93NUMPY\x01\x00garbage"))
	}
	zw.Close()
	writeFiles(t, dir, map[string]string{"badnpy.npz": zb.String()})
	os.MkdirAll(p("nosplitfiles"), 0o755)
	predict := func(extra ...string) []string {
		return append([]string{"predict", "--partitions", pdir, "--profile", prof, "--network", "10gbit"}, extra...)
	}
	gomem := []string{"GOMEMLIMIT=1GiB"}
	for _, c := range []badCase{
		// 1: divergence and non-finite optimiser settings.
		{name: "lr 1e20", args: []string{"train", "--data", cora, "--epochs", "20", "--lr", "1e20", "--quiet", "--save", p("div.ckpt"), "--metrics", p("div.jsonl")},
			want: "non-finite loss in layer 2 on rank 0"},
		{name: "lr inf", args: []string{"train", "--data", cora, "--lr", "inf"}, want: "--lr: +Inf"},
		{name: "lr nan", args: []string{"train", "--data", cora, "--lr", "NaN"}, want: "--lr: NaN"},
		{name: "weight-decay inf", args: []string{"train", "--data", cora, "--weight-decay", "Inf"}, want: "--weight-decay: +Inf"},
		// 2: values that used to exhaust memory or panic.
		{name: "label 1e9 csv", args: []string{"train", "--data", labels1e9}, want: "node-label.csv:3: label 1000000000: at most 65536 classes"},
		{name: "label 1e9 npy", args: []string{"train", "--data", labels1e9, "--labels", npyLabels}, want: "label 1 is 1000000000: at most 65536 classes"},
		{name: "hidden 1e8", args: []string{"train", "--data", cora, "--hidden", "100000000"}, want: "--hidden: 100000000"},
		{name: "hidden 1e7", args: []string{"train", "--data", cora, "--hidden", "10000000"}, want: "--hidden: 14410000007 parameters"},
		{name: "hidden 1e6", args: []string{"train", "--data", cora, "--hidden", "1000000"}, want: "--hidden: 1000000: training needs ~"},
		{name: "k for gcn", args: []string{"train", "--data", cora, "--k", "3"}, want: "--k: 3, but gcn takes no k (sgc, appnp do)"},
		{name: "alpha for sgc", args: []string{"train", "--data", cora, "--model", "sgc", "--alpha", "0.2"}, want: "--alpha: 0.2, but sgc takes no alpha (appnp, gcnii do)"},
		{name: "alpha 2", args: []string{"train", "--data", cora, "--model", "appnp", "--alpha", "2"}, want: "--alpha: 2 is not in (0, 1]"},
		{name: "alpha 0", args: []string{"train", "--data", cora, "--model", "appnp", "--alpha", "0"}, want: "--alpha: 0 is not in (0, 1]"},
		{name: "k 0", args: []string{"train", "--data", cora, "--model", "sgc", "--k", "0"}, want: "--k: 0 is not in [1, 1024]"},
		{name: "k 2.5", args: []string{"train", "--data", cora, "--model", "sgc", "--k", "2.5"}, want: "--k: 2.5 is not a whole number"},
		{name: "heads 0", args: []string{"train", "--data", cora, "--model", "gat", "--heads", "0"}, want: "--heads: 0, need ≥ 1"},
		{name: "train-eps for sage", args: []string{"train", "--data", cora, "--model", "sage", "--train-eps"}, want: "--train-eps: 1, but sage takes no train-eps (gin do)"},
		{name: "predict k for sage", args: []string{"predict", "--volumes", cora, "--profile", cora, "--network", "shm", "--model", "sage", "--k", "2"}, want: "--k: 2, but sage takes no k (sgc, appnp do)"},
		{name: "edge id 1e9", env: gomem, args: []string{"train", "--data", p("big1e9.edges"), "--synthetic-features", "8"}, want: "big1e9.edges:2: node id 999999999 implies"},
		{name: "edge id 2^31", env: gomem, args: []string{"convert", "--data", p("big2e31.edges"), "--out", p("x.sgb")}, want: "big2e31.edges:2: node id 2147483646 implies"},
		{name: "num-edge-list 2^31", args: []string{"train", "--data", edges2e31}, want: "says 2147483648 edges but"},
		{name: "gen key of the other model", args: []string{"gen", "--spec", "products,homophily=0.5", "--out", p("g.sgb")}, want: "--spec: homophily: applies to model=sbm only"},
		{name: "synthetic bad order", args: []string{"train", "--synthetic", "products,nodes=1000,order=sorted"}, want: `--synthetic: spec: order: "sorted" is not shuffled or local`},
		{name: "synthetic too big", env: gomem, args: []string{"train", "--synthetic", "nodes=2000000000,degree=4,feat=100"}, want: "--synthetic: spec: 2000000000 nodes"},
		{name: "partitions beyond memory", env: []string{"GOMEMLIMIT=1MiB"}, args: []string{"train", "--partitions", pdir}, want: "--partitions " + pdir + ": loading 2 parts on 1 rank(s) needs ~"},
		{name: "checkpoint params 2^62", args: []string{"eval", "--model", huge, "--data", cora}, want: "runs past the end of the file"},
		{name: "checkpoint hidden 2^40", args: []string{"eval", "--model", forged("h40.ckpt", func(c *train.Checkpoint) { c.Model.Hidden = 1 << 40 }), "--data", cora}, want: "Hidden: 1099511627776"},
		// 3: resume with contradicting settings, forged training state.
		{name: "resume dropout", args: []string{"train", "--data", cora, "--epochs", "4", "--resume", good, "--dropout", "0.3"}, want: "--dropout 0.3 contradicts --resume " + good + ", which was trained with --dropout 0.5"},
		{name: "resume feat-norm", args: []string{"train", "--data", cora, "--epochs", "4", "--resume", good, "--feat-norm", "row"}, want: "--feat-norm row contradicts"},
		{name: "resume seed", args: []string{"train", "--data", cora, "--epochs", "4", "--resume", good, "--seed", "9"}, want: "--seed 9 contradicts"},
		{name: "resume lr", args: []string{"train", "--data", cora, "--epochs", "4", "--resume", good, "--lr", "0.1"}, want: "--lr 0.1 contradicts"},
		{name: "resume precision", args: []string{"train", "--data", cora, "--epochs", "4", "--resume", good, "--precision", "bf16"}, want: "--precision bf16 contradicts --resume " + good + ", which was trained with --precision fp32"},
		{name: "precision fp16", args: []string{"train", "--data", cora, "--precision", "fp16"}, want: `--precision: "fp16" is not fp32 or bf16`},
		{name: "checkpoint precision", args: []string{"eval", "--model", forged("pr.ckpt", func(c *train.Checkpoint) { c.Model.Precision = "int8" }), "--data", cora}, want: `Precision: "int8"`},
		{name: "checkpoint epoch -5", args: []string{"train", "--data", cora, "--epochs", "4", "--resume", forged("e5.ckpt", func(c *train.Checkpoint) { c.Train.Epoch = -5 })}, want: "train.epoch -5"},
		{name: "checkpoint dropout 5", args: []string{"train", "--data", cora, "--epochs", "4", "--resume", forged("d5.ckpt", func(c *train.Checkpoint) { c.Model.Dropout = 5 })}, want: "Dropout: 5"},
		{name: "checkpoint NaN", args: []string{"eval", "--model", forged("nan.ckpt", func(c *train.Checkpoint) { c.Params[0].W[0] = float32(math.NaN()) }), "--data", cora}, want: "non-finite values"},
		{name: "checkpoint feat_norm", args: []string{"eval", "--model", forged("fn.ckpt", func(c *train.Checkpoint) { c.FeatNorm = "zscore" }), "--data", cora}, want: `feat_norm "zscore"`},
		// 4: output paths that cannot take the output, before any work.
		{name: "save dir", args: []string{"train", "--data", cora, "--save", p("outdir")}, want: "--save: " + p("outdir") + " is a directory"},
		{name: "metrics dir", args: []string{"train", "--data", cora, "--metrics", p("outdir")}, want: "--metrics: " + p("outdir") + " is a directory"},
		{name: "save unwritable", args: []string{"train", "--data", cora, "--save", p("nodir/m.ckpt")}, want: "--save: " + p("nodir/m.ckpt") + ": directory " + p("nodir") + " does not exist"},
		{name: "convert out dir", args: []string{"convert", "--data", cora, "--out", p("outdir")}, want: "--out: " + p("outdir") + " is a directory"},
		{name: "gen out dir", args: []string{"gen", "--out", p("outdir")}, want: "--out: " + p("outdir") + " is a directory"},
		// 5: silent wrong data.
		{name: "split overlap", args: []string{"train", "--data", overlap}, want: "test.csv:1: node 1 is also in the train split"},
		{name: "asymmetric METIS", args: []string{"convert", "--data", p("asym.graph"), "--out", p("asym.sgb")}, want: "asym.graph:2: vertex 1 lists neighbour 3, but vertex 3 does not list 1"},
		{name: "NaN feature sgb", args: []string{"train", "--data", nanSGB}, want: "section x: feature [1,1] is NaN"},
		// 6: predict, stats, bench profile and plot.
		{name: "predict ranks-per-node 0", args: predict("--ranks-per-node", "0"), want: "--ranks-per-node: 0, want ≥ 1"},
		{name: "predict volumes negative rows", args: []string{"predict", "--volumes", p("vol-rows.json"), "--profile", prof, "--network", "10gbit"}, want: "vol-rows.json: volumes[0].recv[0]: rows pre 1, post 1, hybrid -5"},
		{name: "predict volumes train > nodes", args: []string{"predict", "--volumes", p("vol-train.json"), "--profile", prof, "--network", "10gbit"}, want: "vol-train.json: volumes[0]: rank 0, nodes 5 (9 training)"},
		{name: "predict volumes parts", args: []string{"predict", "--volumes", p("vol-parts.json"), "--profile", prof, "--network", "10gbit"}, want: "vol-parts.json: partition: 3 parts"},
		{name: "predict volumes missing", args: []string{"predict", "--volumes", p("none.json"), "--profile", prof, "--network", "10gbit"}, want: "--volumes: open "},
		{name: "stats ranks-per-node -1", args: []string{"stats", pdir, "--ranks-per-node", "-1"}, want: "--ranks-per-node: -1, want >= 1 and a divisor of the 2 ranks"},
		{name: "stats ranks-per-node not dividing", args: []string{"stats", pdir, "--ranks-per-node", "3"}, want: "--ranks-per-node: 3, want >= 1 and a divisor of the 2 ranks"},
		{name: "stats model not attention", args: []string{"stats", pdir, "--heads", "4", "--model", "sage"}, want: `--model: "sage", want an attention model: gat or gatv2`},
		{name: "stats model without heads", args: []string{"stats", pdir, "--model", "gatv2"}, want: "--model: counts an attention layer: give its --heads"},
		{name: "bench profile degree NaN", args: []string{"bench", "profile", "--out", p("prof.json"), "--degree", "NaN"}, want: "--degree: NaN, want a mean degree in (0, --nodes-1 = 149999]"},
		{name: "bench profile degree > nodes", args: []string{"bench", "profile", "--out", p("prof.json"), "--nodes", "10", "--degree", "20"}, want: "--degree: 20, want a mean degree in (0, --nodes-1 = 9]"},
		{name: "bench profile spec", args: []string{"bench", "profile", "--out", p("prof.json"), "--spec", "products,bogus=1"}, want: "--spec: "},
		{name: "bench profile out dir", args: []string{"bench", "profile", "--published", "a64fx", "--out", p("outdir")}, want: "--out: " + p("outdir") + " is a directory"},
		{name: "bench profile out unwritable", args: []string{"bench", "profile", "--published", "a64fx", "--out", p("nodir/p.json")}, want: "--out: " + p("nodir/p.json") + ": directory " + p("nodir") + " does not exist"},
		{name: "predict save-volumes dir", args: predict("--save-volumes", p("outdir")), want: "--save-volumes: " + p("outdir") + " is a directory"},
		{name: "plot partition-scaling Inf", args: []string{"plot", "--partition-scaling", p("scale-inf.csv"), "--out", p("plots")}, want: `scale-inf.csv:3: seconds "Inf" is not a finite non-negative number`},
		{name: "plot partition-scaling no method", args: []string{"plot", "--partition-scaling", p("scale-nometh.csv"), "--out", p("plots")}, want: "scale-nometh.csv:2: empty method"},
		{name: "plot partition-scaling short line", args: []string{"plot", "--partition-scaling", p("scale-short.csv"), "--out", p("plots")}, want: "scale-short.csv:2: 3 fields, the header has 4"},
		{name: "predict profile missing", args: []string{"predict", "--partitions", pdir, "--profile", p("none.json"), "--network", "10gbit"}, want: "--profile: open " + p("none.json")},
		{name: "predict profile garbage", args: []string{"predict", "--partitions", pdir, "--profile", p("prof-garbage.json"), "--network", "10gbit"}, want: "--profile: " + p("prof-garbage.json") + ": line 1, column 1: invalid character"},
		{name: "predict profile truncated", args: []string{"predict", "--partitions", pdir, "--profile", p("prof-trunc.json"), "--network", "10gbit"}, want: ": unexpected end of JSON input"},
		{name: "predict profile negative rate", args: []string{"predict", "--partitions", pdir, "--profile", p("prof-neg.json"), "--network", "10gbit"}, want: "rates[0].gemm[0].gflops = -"},
		{name: "predict profile zero rate", args: []string{"predict", "--partitions", pdir, "--profile", p("prof-zero.json"), "--network", "10gbit"}, want: "rates[0].aggr[0].forward_gups = 0, want a rate in [1e-06, 1e+07]"},
		{name: "predict profile 0 cores", args: []string{"predict", "--partitions", pdir, "--profile", p("prof-cores.json"), "--network", "10gbit"}, want: "cores_per_node 0, want ≥ 1"},
		{name: "predict network unknown", args: []string{"predict", "--partitions", pdir, "--profile", prof, "--network", "warp"}, want: `--network: unknown network "warp"`},
		{name: "predict network 0gbit", args: []string{"predict", "--partitions", pdir, "--profile", prof, "--network", "0gbit"}, want: `--network: rate "0gbit": want a rate from 1kbit to 1000000gbit`},
		{name: "predict network 1e-320gbit", args: []string{"predict", "--partitions", pdir, "--profile", prof, "--network", "1e-320gbit"}, want: `--network: rate "1e-320gbit": want a rate from 1kbit`},
		{name: "predict network 1e300gbit", args: []string{"predict", "--partitions", pdir, "--profile", prof, "--network", "1e300gbit"}, want: `--network: rate "1e300gbit": want a rate from 1kbit to 1000000gbit`},
		{name: "predict network empty item", args: []string{"predict", "--partitions", pdir, "--profile", prof, "--network", "10gbit,"}, want: `--network: unknown network ""`},
		{name: "predict ranks-per-node not dividing", args: predict("--ranks-per-node", "3"), want: "--ranks-per-node: 3, want ≥ 1 and a divisor of the 2 ranks"},
		{name: "predict bits empty item", args: predict("--bits", "8,,4"), want: `--bits: "" is not 32, 8, 4, 2 or auto`},
		{name: "predict bits 16", args: predict("--bits", "32,16"), want: `--bits: "16" is not 32, 8, 4, 2 or auto`},
		{name: "predict intra-bits 3", args: predict("--exchange", "two-level", "--intra-bits", "3"), want: "--intra-bits: 3 bits, want 32, 8, 4, 2"},
		{name: "predict truncated part file", args: []string{"predict", "--partitions", truncPart, "--profile", prof, "--network", "10gbit"}, want: "part-00001.bin: "},
		{name: "stats truncated part file", args: []string{"stats", truncPart}, want: "part-00001.bin: "},
		{name: "bench profile nodes 0", args: []string{"bench", "profile", "--out", p("prof.json"), "--nodes", "0"}, want: "--nodes"},
		{name: "bench profile threads x", args: []string{"bench", "profile", "--out", p("prof.json"), "--threads", "1,x"}, want: `--threads: "x"`},
		{name: "bench profile unknown flag", args: []string{"bench", "profile", "--out", p("prof.json"), "--bogus"}, want: "flag provided but not defined: --bogus"},
		{name: "bench gemm rows 0", args: []string{"bench", "gemm", "--rows", "0"}, want: "--rows"},
		{name: "bench gemm in -1", args: []string{"bench", "gemm", "--in", "-1"}, want: `--in: "-1" is not a width`},
		{name: "bench gemm unknown flag", args: []string{"bench", "gemm", "--sizes", "4"}, want: "flag provided but not defined: --sizes"},
		{name: "partition threads 0", args: []string{"partition", "--data", cora, "--parts", "2", "--method", "multilevel", "--threads", "0", "--out", p("th0")}, want: `-threads: "0" is not auto`},
		{name: "partition ldg passes 0", args: []string{"partition", "--data", cora, "--parts", "2", "--method", "ldg", "--ldg-passes", "0", "--out", p("ldg")}, want: "--ldg-passes: 0"},
		{name: "partition ldg rounds -1", args: []string{"partition", "--data", cora, "--parts", "2", "--method", "ldg", "--ldg-rounds", "-1", "--out", p("ldg")}, want: "--ldg-rounds: -1"},
		{name: "partition ldg parts 0", args: []string{"partition", "--data", cora, "--parts", "0", "--method", "ldg", "--out", p("ldg")}, want: "--parts: 0"},
		{name: "train unknown PyG flag", args: []string{"train", "--data", cora, "--hidden-channels", "16"}, want: "flag provided but not defined: --hidden-channels (did you mean --hidden?)"},
		{name: "train exchange bogus", args: []string{"train", "--data", cora, "--exchange", "bogus"}, want: `--exchange: "bogus" is not`},
		{name: "train intra-bits 3", args: []string{"train", "--data", cora, "--intra-bits", "3"}, want: `--intra-bits: "3" is not`},
		{name: "predict scale 1e300", args: predict("--scale", "1e300"), want: "--scale: scale factor 1e+300 takes a count of"},
		{name: "predict scale Inf", args: predict("--scale", "Inf"), want: "--scale: "},
		{name: "predict dropout NaN", args: predict("--dropout", "NaN"), want: "--dropout: NaN is not in [0, 1)"},
		{name: "predict profile empty item", args: []string{"predict", "--partitions", pdir, "--profile", prof + ",", "--network", "10gbit"}, want: "--profile: \"" + prof + ",\" has an empty file name"},
		{name: "partition imbalance NaN", args: []string{"partition", "--data", cora, "--parts", "2", "--method", "ldg", "--imbalance", "NaN", "--out", p("ldg")}, want: "--imbalance: NaN outside [0, 10]"},
		{name: "partition ldg flag on metis", args: []string{"partition", "--data", cora, "--parts", "2", "--method", "metis", "--ldg-rounds", "8", "--out", p("ldg")}, want: "--ldg-rounds: applies to --method ldg only (not metis)"},
		{name: "train exchange empty", args: []string{"train", "--data", cora, "--exchange", ""}, want: `--exchange: "" is not flat`},
		{name: "bench profile cores beyond the machine", args: []string{"bench", "profile", "--out", p("prof.json"), "--cores", "100000"}, want: "--cores: 100000, but this process may run on"},
		{name: "plot partition-scaling out is a file", args: []string{"plot", "--partition-scaling", p("scale-ok.csv"), "--out", prof}, want: "--out: mkdir " + prof + ": not a directory"},
		{name: "predict plot out is a file", args: []string{"predict", "--plot", p("pred.jsonl"), "--out", prof}, want: "--out: mkdir " + prof + ": not a directory"},
		{name: "predict plot label with a path", args: []string{"predict", "--plot", p("pred-label.jsonl"), "--out", p("plots")}, want: `pred-label.jsonl:1: label "../../x" cannot name a PNG file`},
		{name: "predict plot negative efficiency", args: []string{"predict", "--plot", p("pred-eff.jsonl"), "--out", p("plots")}, want: "pred-eff.jsonl:1: efficiency -5, want a finite fraction ≥ 0"},
		{name: "predict label with a path", args: predict("--label", "a/b"), want: `--label: "a/b" cannot name a PNG file`},
		{name: "predict plot empty item", args: []string{"predict", "--plot", p("pred.jsonl") + ",", "--out", p("plots")}, want: "--plot: \"" + p("pred.jsonl") + ",\" has an empty file name"},
		// 7: npz datasets and splits.
		{name: "npz feature rows", args: []string{"train", "--data", npzRows}, want: npzRows + ":x.npy: has 3 rows but the graph has 4 nodes"},
		{name: "npz float ids", args: []string{"train", "--data", npzFloatIDs}, want: npzFloatIDs + ":edge_index.npy: dtype <f4: node ids must be integers"},
		{name: "npz id out of range", args: []string{"train", "--data", npzRange}, want: npzRange + ":edge_index.npy: element [0, 1]: node id 9 outside [0,3]"},
		{name: "npz mask length", args: []string{"train", "--data", npzMaskLen}, want: npzMaskLen + ":train_mask.npy: mask of 3 entries for 4 nodes"},
		{name: "npz overlapping masks", args: []string{"train", "--data", npzOverlap}, want: npzOverlap + ":val_mask.npy: element 2: node 2 is also in the train split"},
		{name: "npz without split", args: []string{"train", "--data", npzNoSplit}, want: "--split: " + npzNoSplit + " has no train_mask/train_idx"},
		{name: "npz not a zip", args: []string{"train", "--data", p("notzip.npz")}, want: p("notzip.npz") + ": not a readable .npz (zip) archive"},
		{name: "npz bad npy header", args: []string{"train", "--data", p("badnpy.npz")}, want: p("badnpy.npz") + ":edge_index.npy: bad npy header"},
		{name: "split fraction 1.5", args: []string{"train", "--data", npzGood, "--split", "random:1.5,0"}, want: `--split: "random:1.5,0": fraction 1 (1.5) is not a number in [0,1]`},
		{name: "split fractions sum", args: []string{"train", "--data", npzGood, "--split", "random:0.8,0.5"}, want: "the fractions sum to 1.3, more than 1"},
		{name: "split name on sgb", args: []string{"train", "--data", nanSGB, "--split", "public"}, want: `--split: "public": only OGB directories have named splits`},
		{name: "split name on npz", args: []string{"train", "--data", npzGood, "--split", "nosuch"}, want: `--split: "nosuch": only OGB directories have named splits`},
		{name: "split and split-files", args: []string{"train", "--data", npzGood, "--split", "random:0.5,0.2", "--split-files", p("nosplitfiles")}, want: "--split-files: " + p("nosplitfiles") + ": give the split either as files or as --split"},
		{name: "split-files missing train", args: []string{"train", "--data", npzGood, "--split-files", p("nosplitfiles")}, want: "--split-files: " + p("nosplitfiles") + ": no train.npy or train.csv[.gz]"},
		{name: "split on the generated graph", args: []string{"train", "--split", "random:0.9,0.5"}, want: "--split: applies to --data"},
		{name: "random split without labels", args: []string{"train", "--data", p("g4.txt"), "--split", "random:0.5,0.2"}, want: "has no labels to split (give them with --labels)"},
		{name: "edge list without split", args: []string{"train", "--data", p("g4.txt"), "--features", writeNpyF(t, p("x4.npy"), 4), "--labels", npyInt64(t, p("y4.npy"), []int64{0, 1, 0, 1})}, want: "choose a split with --split random:TRAIN,VALID"},
		{name: "predict two-level ranks-per-node 0", args: predict("--ranks-per-node", "0", "--exchange", "two-level"), want: "--ranks-per-node: 0, want ≥ 1"},
	} {
		expectCleanFailure(t, c)
	}

	// The diverged run kept nothing half-written: no checkpoint (it diverged
	// before --save-every), complete metric lines only.
	if _, err := os.Stat(p("div.ckpt")); !os.IsNotExist(err) {
		t.Errorf("a diverged run wrote its checkpoint: %v", err)
	}
	if b, err := os.ReadFile(p("div.jsonl")); err != nil || (len(b) > 0 && b[len(b)-1] != '\n') || bytes.Contains(b, []byte("NaN")) {
		t.Errorf("metrics of the diverged run: %q, %v", b, err)
	}
}

// --resume takes the model and training settings from the checkpoint: a
// resubmission naming only --resume and --epochs continues the saved run
// exactly, with the model flags of the first job left out.
func TestCLIResumeTakesCheckpointSettings(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	model := []string{"--hidden", "32", "--dropout", "0.3", "--seed", "5", "--lr", "0.02", "--feat-norm", "row", "--quiet"}
	ref := filepath.Join(dir, "ref.jsonl")
	if r := run(t, 2*time.Minute, nil, append([]string{"train", "--data", cora, "--epochs", "6", "--metrics", ref}, model...)...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	ckpt, metrics := filepath.Join(dir, "job.ckpt"), filepath.Join(dir, "job.jsonl")
	if r := run(t, 2*time.Minute, nil, append([]string{"train", "--data", cora, "--epochs", "3", "--save", ckpt, "--metrics", metrics}, model...)...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// The killed job's last line is cut mid-way; the resumed job must not
	// append to it.
	b, _ := os.ReadFile(metrics)
	os.WriteFile(metrics, append(b, `{"epoch":4,"lo`...), 0o644)
	r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "6", "--resume", ckpt, "--metrics", metrics, "--quiet", "--hidden", "32")
	if r.code != 0 {
		t.Fatalf("resume with only --resume (and an agreeing --hidden): %s", r.stderr)
	}
	sameLosses(t, "resumed from the checkpoint's settings", losses(t, ref), losses(t, metrics))
}

// A --save onto a full disk ends with one line naming the flag and the
// file, exit 1, no .tmp, and the metrics of the finished epochs complete.
func TestCLIFullDisk(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	disk := testdataset.SmallDisk(t, 64<<10) // the Cora model with its Adam moments is ~280 KB
	save, metrics := filepath.Join(disk, "m.ckpt"), filepath.Join(disk, "m.jsonl")
	expectCleanFailure(t, badCase{name: "save on a full disk",
		args: []string{"train", "--data", cora, "--epochs", "3", "--quiet", "--save", save, "--metrics", metrics},
		want: "--save: write " + save + ".tmp: no space left on device"})
	if _, err := os.Stat(save + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
	if b, err := os.ReadFile(metrics); err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
		t.Errorf("metrics on the full disk: %q, %v", b, err)
	}
	best := filepath.Join(disk, "best.ckpt")
	expectCleanFailure(t, badCase{name: "save-best on a full disk",
		args: []string{"train", "--data", cora, "--epochs", "3", "--quiet", "--save-best", best},
		want: "--save-best: write " + best + ".tmp: no space left on device"})
}

// writeNpyF writes an n×1 float32 .npy file.
func writeNpyF(t *testing.T, path string, n int) string {
	t.Helper()
	if err := graph.WriteNpyF32(path, n, 1, make([]float32, n)); err != nil {
		t.Fatal(err)
	}
	return path
}
