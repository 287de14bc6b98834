package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/nn"
)

// EpochMetrics is one line of the --metrics JSON-lines file. The first keys
// are stable (epoch, loss, train_acc, val_acc, test_acc, epoch_s); later
// issues add keys, never rename them.
type EpochMetrics struct {
	Epoch    int     `json:"epoch"`
	Loss     float64 `json:"loss"`
	TrainAcc float64 `json:"train_acc"`
	ValAcc   float64 `json:"val_acc"`
	TestAcc  float64 `json:"test_acc"`
	EpochS   float64 `json:"epoch_s"`

	Ranks int `json:"ranks"`
	// The training step's time, each the max over ranks: local + halo
	// aggregation; in MPI moving boundary rows and all-reducing gradients;
	// encoding and decoding boundary rows; the dense NN part (GEMMs,
	// activations, loss); waiting for other ranks (to reach an all-to-all,
	// and before the gradient all-reduce).
	AggrS  float64 `json:"aggr_s"`
	CommS  float64 `json:"comm_s"`
	QuantS float64 `json:"quant_s"`
	DenseS float64 `json:"dense_s"`
	SyncS  float64 `json:"sync_s"`
	EvalS  float64 `json:"eval_s"`  // the evaluation pass (0 in epochs without one; max over ranks)
	OtherS float64 `json:"other_s"` // the rest of the epoch: optimizer, bookkeeping (max over ranks)
	// ReduceS is the gradient (and loss) all-reduce after the backward
	// pass, max over ranks: part of comm_s, reported on its own to weigh it.
	ReduceS float64 `json:"reduce_s"`
	// Evaluated is false in epochs that --eval-every skips; their
	// accuracies are left out of the JSON line.
	Evaluated      bool  `json:"evaluated"`
	CommBytes      int64 `json:"comm_bytes"`       // training-step boundary bytes sent by all ranks (data + params)
	CommDataBytes  int64 `json:"comm_data_bytes"`  // of which row payload
	CommParamBytes int64 `json:"comm_param_bytes"` // of which per-row quantisation parameters
	EvalBytes      int64 `json:"eval_bytes"`       // boundary bytes of the evaluation pass, all ranks
	IntraBytes     int64 `json:"intra_bytes"`      // of comm_bytes, those moved between ranks of one node (either exchange)
	// PairBytes and EvalPairBytes are the link task's pair rows (endpoint
	// rows and their gradients), all ranks: of comm_bytes and of eval_bytes.
	PairBytes     int64 `json:"pair_bytes,omitempty"`
	EvalPairBytes int64 `json:"eval_pair_bytes,omitempty"`

	// LR is the learning rate of the epoch's optimizer step. ValLoss and
	// TestLoss are the evaluation pass's cross-entropy averaged over the
	// split's labelled nodes of all ranks (left out, as the accuracies,
	// when the epoch had no evaluation pass).
	LR       float64 `json:"lr"`
	ValLoss  float64 `json:"val_loss"`
	TestLoss float64 `json:"test_loss"`

	// Metric names what train_acc, val_acc and test_acc hold for a task
	// other than node classification (task.Kind.Metric: "rocauc",
	// "rmse"); absent for node classification (accuracies). Extra are the
	// task's other metrics of an evaluated epoch ("val_f1", "test_mae").
	Metric string             `json:"metric,omitempty"`
	Extra  map[string]float64 `json:"extra,omitempty"`

	// Per-rank minimum and maximum of every time of the breakdown above
	// (keyed by its JSON name: epoch_s, aggr_s, ...): the spread between
	// ranks, whose maximum the fields above report.
	RankMin map[string]float64 `json:"rank_min,omitempty"`
	RankMax map[string]float64 `json:"rank_max,omitempty"`
}

// MarshalJSON writes the metrics, without the accuracies and the
// validation and test losses when the epoch had no evaluation pass.
func (m EpochMetrics) MarshalJSON() ([]byte, error) {
	type plain EpochMetrics
	if m.Evaluated {
		return json.Marshal(plain(m))
	}
	// The outer nil fields hide the embedded ones of the same name.
	return json.Marshal(struct {
		plain
		TrainAcc *float64 `json:"train_acc,omitempty"`
		ValAcc   *float64 `json:"val_acc,omitempty"`
		TestAcc  *float64 `json:"test_acc,omitempty"`
		ValLoss  *float64 `json:"val_loss,omitempty"`
		TestLoss *float64 `json:"test_loss,omitempty"`
	}{plain: plain(m)})
}

// RunHeader is the first record a run (or a resumed run) writes to the
// metrics file: what ran, on what, where and when. The caller fills the
// build and command fields; training fills the rest.
type RunHeader struct {
	Header   bool     `json:"header"` // always true: tells the record apart
	Version  string   `json:"version"`
	Commit   string   `json:"commit"`
	Command  []string `json:"command"`
	Dataset  string   `json:"dataset"` // as named on the command line
	DataID   string   `json:"data_id"` // DataIdentity
	Ranks    int      `json:"ranks"`
	Threads  int      `json:"threads"`
	Hosts    []string `json:"hosts"`              // distinct host names, in rank order of first appearance
	Exchange string   `json:"exchange,omitempty"` // the boundary exchange that ran: flat or two-level
	// EvalCache says whether the evaluation passes reused the first
	// layer's aggregate of the features (Config.EvalCache; predict
	// --eval-cache takes it).
	EvalCache bool `json:"eval_cache"`
	// Model is the model trained (nn.Config; absent in files of older
	// builds): plots draw the runs of one model as one scaling line.
	Model        *nn.Config `json:"model,omitempty"`
	Start        string     `json:"start"` // RFC 3339, UTC
	ResumedFrom  string     `json:"resumed_from,omitempty"`
	ResumedEpoch int        `json:"resumed_epoch,omitempty"`
}

// FinalMetrics is the last line of the metrics file.
type FinalMetrics struct {
	Final      bool    `json:"final"`
	BestValAcc float64 `json:"best_val_acc"`
	BestEpoch  int     `json:"best_epoch"`
	TestAcc    float64 `json:"test_acc"` // test accuracy at the best validation epoch
	// BestValLoss is the validation loss of the best epoch (with
	// Config.StopOn StopValLoss, the lowest; BestValAcc is then that
	// epoch's accuracy).
	BestValLoss float64 `json:"best_val_loss,omitempty"`
	// Metric names what best_val_acc, test_acc and last_test_acc hold for
	// a task other than node classification (as EpochMetrics.Metric).
	Metric   string  `json:"metric,omitempty"`
	LastTest float64 `json:"last_test_acc"`
	Epochs   int     `json:"epochs"` // epochs trained, this run's and those of the run it resumed
	TotalS   float64 `json:"total_s"`
	Ranks    int     `json:"ranks"`
	PlanS    float64 `json:"plan_s"` // exchange plan build time (max over ranks)
	// StoppedEarly is the epoch after which early stopping (Config.Patience)
	// ended training, with that Patience; both absent when it did not.
	StoppedEarly int `json:"stopped_early,omitempty"`
	Patience     int `json:"patience,omitempty"`
}

// metricsWriter writes JSON lines straight to the file, one whole line per
// write, so a long run can be followed with tail -f, and a run that is cut
// short (walltime, scancel) leaves the complete lines of the epochs it
// finished and no final record. A failed write (a full disk) truncates the
// file back to its last complete line.
type metricsWriter struct {
	path string
	f    *os.File
	off  int64 // end of the last complete line
}

// newMetricsWriter creates (truncates) path, or with appendTo appends to it
// (a resumed run continues the file of the run it resumes), first cutting
// a partial last line that an interrupted run may have left. The file is
// locked (container.LockOutput) while the run writes it.
func newMetricsWriter(path string, appendTo bool) (*metricsWriter, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, field.Wrap("train.Config.MetricsPath", err)
	}
	if err := container.LockOutput(f, path); err != nil {
		f.Close()
		return nil, field.Wrap("train.Config.MetricsPath", err)
	}
	m := &metricsWriter{path: path, f: f}
	if appendTo {
		m.off, err = completeLines(f)
	}
	if err == nil {
		err = f.Truncate(m.off) // without appendTo, the file starts afresh
	}
	if err != nil {
		f.Close()
		return nil, field.Errorf("train.Config.MetricsPath", "%s: %w", path, err)
	}
	return m, nil
}

// completeLines returns the length of f up to and including its last
// newline (0 when it has none).
func completeLines(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 4096)
	for end := st.Size(); end > 0; {
		start := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && n < int(end-start) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

func (m *metricsWriter) write(v any) error {
	if m == nil {
		return nil
	}
	line, err := marshalLine(v)
	if err != nil {
		return err
	}
	n, err := m.f.WriteAt(line, m.off)
	if err != nil || n < len(line) {
		if terr := m.f.Truncate(m.off); terr != nil {
			return fmt.Errorf("%v (and truncating the partial line: %v)", err, terr)
		}
		return err
	}
	m.off += int64(n)
	return nil
}

// marshalLine encodes v as one JSON line; NaN and infinite float fields
// (which JSON cannot carry) are written as null rather than failing.
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		b, err = json.Marshal(finiteFields(v))
	}
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// finiteFields returns the fields of struct v by their JSON names, with
// nil for the non-finite floats.
func finiteFields(v any) map[string]any {
	out := map[string]any{}
	rv := reflect.Indirect(reflect.ValueOf(v))
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := rv.Field(i)
		if fv.CanFloat() && (math.IsNaN(fv.Float()) || math.IsInf(fv.Float(), 0)) {
			out[name] = nil
			continue
		}
		out[name] = fv.Interface()
	}
	return out
}

// close closes the file; closing twice is a no-op.
func (m *metricsWriter) close() error {
	if m == nil || m.f == nil {
		return nil
	}
	err := m.f.Close()
	m.f = nil
	if err != nil {
		return field.Errorf("train.Config.MetricsPath", "%s: %w", m.path, err)
	}
	return nil
}
