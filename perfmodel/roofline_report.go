package perfmodel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/supergcn/supergcn/internal/container"
)

// RoofRow is one line of a roofline report: a stage's work, its bound on
// the machine, the time measured and the fraction of the bound reached
// (bound / measured; 0 where nothing was measured).
type RoofRow struct {
	Stage     string  `json:"stage"`
	Flops     float64 `json:"flops"`
	Bytes     float64 `json:"bytes"`
	BoundS    float64 `json:"bound_s"`
	Binds     string  `json:"binds"` // "flops" (the GEMM rate) or "bytes" (the STREAM rate)
	MeasuredS float64 `json:"measured_s"`
	Fraction  float64 `json:"fraction"`
}

// StageEpoch is the report's last row: the stages together, an epoch with
// its evaluation pass.
const StageEpoch = "epoch"

// RoofReport is the rows of RoofStages and the epoch: each stage's bound
// on mach and its time in measured (seconds by stage, StageEpoch for the
// epoch). The epoch's bound is the sum of the stages' (each stage is
// bound on its own).
func RoofReport(work map[string]Work, mach Machine, measured map[string]float64) []RoofRow {
	var rows []RoofRow
	total := RoofRow{Stage: StageEpoch}
	for _, st := range RoofStages {
		w := work[st]
		b, binds := mach.Bound(w)
		rows = append(rows, roofRow(st, w, b, binds, measured[st]))
		total.Flops, total.Bytes, total.BoundS = total.Flops+w.Flops, total.Bytes+w.Bytes, total.BoundS+b
	}
	_, binds := mach.Bound(Work{total.Flops, total.Bytes})
	return append(rows, roofRow(StageEpoch, Work{total.Flops, total.Bytes}, total.BoundS, binds, measured[StageEpoch]))
}

func roofRow(stage string, w Work, bound float64, binds string, measured float64) RoofRow {
	r := RoofRow{Stage: stage, Flops: w.Flops, Bytes: w.Bytes, BoundS: bound, Binds: binds, MeasuredS: measured}
	if measured > 0 {
		r.Fraction = bound / measured
	}
	return r
}

// RunTimes is what a roofline takes from a train metrics file: the
// training command line (the header's), its ranks and threads, and each
// stage's median time (seconds by RoofStages and StageEpoch) over the
// epochs with an evaluation pass, the first left out when there are
// others (it warms the caches and the allocator up).
type RunTimes struct {
	Command  []string
	Ranks    int
	Threads  int
	Epochs   int // the epochs the medians are over
	Measured map[string]float64
	// EvalCache says whether the run's evaluation passes reused the
	// first layer's aggregate of the features (the header's eval_cache;
	// nil in files of builds that did not record it).
	EvalCache *bool
}

// metricsKeys maps the stages to train.EpochMetrics' JSON keys.
var metricsKeys = map[string]string{StageAggr: "aggr_s", StageDense: "dense_s", StageOpt: "other_s", StageEval: "eval_s", StageEpoch: "epoch_s"}

// ReadRunTimes reads a train --metrics file. A line that is not a record
// of one is an error naming path:line.
func ReadRunTimes(path string) (*RunTimes, error) {
	f, _, err := container.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rt := &RunTimes{Measured: map[string]float64{}}
	times := map[string][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for ln := 1; sc.Scan(); ln++ {
		var rec struct {
			Header, Final, Evaluated bool
			Epoch                    *int
			Command                  []string
			Ranks, Threads           int
			EvalCache                *bool `json:"eval_cache"`
		}
		var secs map[string]any
		line := sc.Bytes()
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON record of a metrics file: %v", path, ln, err)
		}
		_ = json.Unmarshal(line, &secs)
		switch {
		case rec.Header:
			rt.Command, rt.Ranks, rt.Threads, rt.EvalCache = rec.Command, rec.Ranks, rec.Threads, rec.EvalCache
		case rec.Final:
		case rec.Epoch == nil:
			return nil, fmt.Errorf("%s:%d: not a header, epoch or final record of a metrics file", path, ln)
		case rec.Evaluated:
			for st, k := range metricsKeys {
				v, ok := secs[k].(float64)
				if !ok || v < 0 {
					return nil, fmt.Errorf("%s:%d: field %s: want a time in seconds", path, ln, k)
				}
				times[st] = append(times[st], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if rt.Command == nil {
		return nil, fmt.Errorf("%s: no header record (a train --metrics file starts with one)", path)
	}
	for st, ts := range times {
		if len(ts) > 1 {
			ts = ts[1:]
		}
		rt.Epochs = len(ts)
		rt.Measured[st] = median(ts)
	}
	if rt.Epochs == 0 {
		return nil, fmt.Errorf("%s: no epoch with an evaluation pass", path)
	}
	return rt, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// Machine is the roofline of the profile's rates for threads threads (one
// rank alone on the node where the profile measured it, else the node
// full: RatesFor): its fastest GEMM shape and its STREAM triad.
func (p *Profile) Machine(threads int) (Machine, error) {
	r, _ := p.RatesFor(threads, 1)
	m := Machine{StreamGBs: r.StreamGBs}
	for _, g := range r.Gemm {
		m.GemmGFLOPS = max(m.GemmGFLOPS, g.GFLOPS)
	}
	if err := m.Validate(); err != nil {
		return m, fmt.Errorf("profile %s, %d thread(s): %w (measure it again with bench profile)", p.Name, r.Threads, err)
	}
	return m, nil
}
