package metis

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/graph"
)

// Vertex-weight schemes accepted by Options.Weights.
const (
	WeightsNone        = "none"         // every node weighs the same: balance node counts
	WeightsDegree      = "degree"       // one constraint: in-degree+1 (aggregation work)
	WeightsDegreeTrain = "degree+train" // two constraints: in-degree+1 and is-train
)

// DefaultImbalance is the load imbalance allowed per constraint when
// Options.Imbalance is zero (5 %, i.e. ubvec = 1.05).
const DefaultImbalance = 0.05

// Options tune Metis and ParMetis.
type Options struct {
	// Weights is one of WeightsNone, WeightsDegree, WeightsDegreeTrain.
	// Empty means WeightsDegreeTrain when TrainMask is set, else WeightsDegree.
	//
	// SuperGCN balances two things per rank: the aggregation work of its
	// owned rows (in-degree+1, the +1 for the self loop GCN adds) and the
	// number of labelled training nodes (the loss/backward work); with
	// WeightsDegreeTrain METIS gets both as ncon=2 vertex constraints.
	Weights string
	// Seed seeds the partitioner's random choices (METIS_OPTION_SEED;
	// SCOTCH_randomSeed for ParMETIS through PT-Scotch).
	Seed int
	// Imbalance is the allowed excess of the heaviest part over the average,
	// per constraint, as a fraction (0.05 = 5 %). Zero means DefaultImbalance.
	Imbalance float64
	// TrainMask has one byte per node; a node is a training node when
	// mask&graph.InTrain != 0 (Dataset.SplitMask() or a 0/1 mask both work).
	TrainMask []uint8
}

// weightsScheme resolves the empty default and validates the name.
func (o Options) weightsScheme() (string, error) {
	switch o.Weights {
	case "":
		if o.TrainMask != nil {
			return WeightsDegreeTrain, nil
		}
		return WeightsDegree, nil
	case WeightsNone, WeightsDegree, WeightsDegreeTrain:
		return o.Weights, nil
	}
	return "", fmt.Errorf("partition: unknown weights %q (want %s, %s or %s)",
		o.Weights, WeightsNone, WeightsDegree, WeightsDegreeTrain)
}

// ubfactor returns 1+Imbalance, validated.
func (o Options) ubfactor() (float64, error) {
	imb := o.Imbalance
	if imb == 0 {
		imb = DefaultImbalance
	}
	if imb < 0 || imb > 10 || math.IsNaN(imb) {
		return 0, fmt.Errorf("partition: imbalance %g outside [0, 10]", o.Imbalance)
	}
	return 1 + imb, nil
}

// vertexWeights returns the vertex weights of nodes [lo, hi) of g as METIS
// wants them (ncon values per node, node-major) and ncon. For WeightsNone it
// returns ncon=1 and nil. A degree+train request on a graph with no training
// node in the mask degrades to the degree constraint alone (ncon=1), since an
// all-zero constraint carries no information.
func vertexWeights(g *graph.CSR, lo, hi int, o Options) (int, []int32, error) {
	scheme, err := o.weightsScheme()
	if err != nil {
		return 0, nil, err
	}
	if scheme == WeightsNone {
		return 1, nil, nil
	}
	ncon := 1
	if scheme == WeightsDegreeTrain {
		if len(o.TrainMask) != g.NumRows {
			return 0, nil, fmt.Errorf("partition: weights %s need a train mask of %d nodes, got %d",
				scheme, g.NumRows, len(o.TrainMask))
		}
		for _, m := range o.TrainMask {
			if m&graph.InTrain != 0 {
				ncon = 2
				break
			}
		}
	}
	w := make([]int32, (hi-lo)*ncon)
	for v := lo; v < hi; v++ {
		d := g.Degree(v) + 1
		if d > math.MaxInt32 {
			return 0, nil, fmt.Errorf("partition: node %d has in-degree %d, beyond the int32 weights of METIS", v, d-1)
		}
		i := (v - lo) * ncon
		w[i] = int32(d)
		if ncon == 2 && o.TrainMask[v]&graph.InTrain != 0 {
			w[i+1] = 1
		}
	}
	return ncon, w, nil
}
