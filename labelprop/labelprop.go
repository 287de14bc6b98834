// Package labelprop implements SuperGCN's label propagation: a learned label
// embedding W (classes × input features) added to the input features of a
// random part of the training nodes, which then leave the loss.
//
// Each epoch a fraction R of the training nodes is drawn; each drawn node v
// gets x[v] += W[label(v)]/√F (F input features) and is not supervised, the
// other training nodes are. The 1/√F scale matters: Adam moves every weight
// by about the learning rate per step whatever the gradient's size, so an
// unscaled 1433-wide embedding outgrows Cora's row-normalised features
// within tens of epochs and the model leans on labels that test nodes rarely
// have nearby (measured: −5 points on Cora); scaled, it stays on the
// features' scale. The embedding starts at zero and takes weight decay. Evaluation passes embed the labels of all training nodes and nothing
// else: validation and test labels are never read. In a distributed run each
// rank draws among its own training nodes, from a stream seeded by (seed,
// rank, epoch), so runs are reproducible.
package labelprop

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
)

// Embedding is the learned label embedding and the per-epoch draw.
type Embedding struct {
	rate      float64
	scale     float32 // the embedding enters as scale·W[label]
	classes   int
	dim       int
	seed      uint64
	rank      int
	labels    []int32
	trainRows []int32
	param     *nn.Param

	term    *dense.Matrix // the embedded rows' added term (TrainTerm, EvalTerm; reused)
	lpRows  []int32       // this epoch's embedded rows
	supRows []int32       // this epoch's supervised rows
}

// New returns an embedding for a rank's training rows (local ids) and labels.
// rate must be in (0, 1).
func New(rate float64, classes, dim int, labels, trainRows []int32, seed uint64, rank int) (*Embedding, error) {
	if !(rate > 0 && rate < 1) {
		return nil, fmt.Errorf("labelprop: rate must be in (0,1), got %g", rate)
	}
	if classes <= 0 || dim <= 0 {
		return nil, fmt.Errorf("labelprop: need classes > 0 and features > 0 (got %d, %d)", classes, dim)
	}
	for _, v := range trainRows {
		if l := labels[v]; l < 0 || int(l) >= classes {
			return nil, fmt.Errorf("labelprop: training node %d has label %d outside [0,%d)", v, l, classes)
		}
	}
	w := make([]float32, classes*dim)
	return &Embedding{
		rate: rate, scale: float32(1 / math.Sqrt(float64(dim))), classes: classes, dim: dim, seed: seed, rank: rank,
		labels: labels, trainRows: trainRows,
		param: &nn.Param{Name: "label_embedding", W: w, G: make([]float32, len(w)), Rows: classes, Cols: dim, Decay: true},
	}, nil
}

// Param returns the learned parameter, for the optimizer and the all-reduce.
func (e *Embedding) Param() *nn.Param { return e.param }

// Draw splits the training rows for an epoch: embedded rows (a fraction rate,
// at least one row left supervised when there are two or more) and supervised rows.
func (e *Embedding) Draw(epoch int) (embedded, supervised []int32) {
	r := rand.New(rand.NewPCG(e.seed^0x6c62272e07bb0142, uint64(e.rank)<<32|uint64(uint32(epoch))))
	e.lpRows, e.supRows = e.lpRows[:0], e.supRows[:0]
	for _, v := range e.trainRows {
		if r.Float64() < e.rate {
			e.lpRows = append(e.lpRows, v)
		} else {
			e.supRows = append(e.supRows, v)
		}
	}
	return e.lpRows, e.supRows
}

// TrainTerm draws the epoch's rows and returns them, the term the caller
// adds to each of their input rows (len(rows) × features, owned by e until
// the next call) and the rows that supervise.
func (e *Embedding) TrainTerm(epoch int) (rows []int32, term *dense.Matrix, supervised []int32) {
	emb, sup := e.Draw(epoch)
	return emb, e.termOf(emb), sup
}

// EvalTerm is the evaluation's term: every training row and its embedding.
func (e *Embedding) EvalTerm() (rows []int32, term *dense.Matrix) {
	e.lpRows = append(e.lpRows[:0], e.trainRows...)
	return e.lpRows, e.termOf(e.lpRows)
}

// termOf returns scale·W[label(v)] for every v of rows.
func (e *Embedding) termOf(rows []int32) *dense.Matrix {
	e.term = dense.Reshape(e.term, len(rows), e.dim)
	for i, v := range rows {
		dst := e.term.Row(i)
		src := e.param.W[int(e.labels[v])*e.dim : (int(e.labels[v])+1)*e.dim]
		for j, w := range src {
			dst[j] = e.scale * w
		}
	}
	return e.term
}

// Backward sets the embedding's gradient from dL/dx of the last TrainTerm:
// G[label(v)] = Σ over embedded rows v of gx[v].
func (e *Embedding) Backward(gx *dense.Matrix) { e.backward(gx, false) }

// BackwardRows is Backward from the gradient of the embedded rows only, the
// rows TrainTerm returned: row i of gx is that of rows[i] (a sparse input's
// first layer computes no other).
func (e *Embedding) BackwardRows(gx *dense.Matrix) { e.backward(gx, true) }

func (e *Embedding) backward(gx *dense.Matrix, byRow bool) {
	clear(e.param.G)
	for i, v := range e.lpRows {
		r := int(v)
		if byRow {
			r = i
		}
		g := gx.Row(r)
		dst := e.param.G[int(e.labels[v])*e.dim : (int(e.labels[v])+1)*e.dim]
		for j, x := range g {
			dst[j] += e.scale * x
		}
	}
}
