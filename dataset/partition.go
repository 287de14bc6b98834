package dataset

import (
	"fmt"
	"io"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/dist"
	"github.com/supergcn/supergcn/partition/metis"
)

// Partitioning partitions its Source into Parts parts by Source.PartMethod
// with vertex weights Source.PartWeights and writes the partition
// directory Out.
type Partitioning struct {
	Source
	Parts                int
	Imbalance            float64 // allowed load imbalance per constraint
	LDGRounds, LDGPasses int     // dist.LDGOptions
	Out                  string
}

// checkParts refuses more parts than nodes: some parts would be empty
// (METIS cannot bisect an empty graph, and an empty part trains nothing).
func (p *Partitioning) checkParts(nodes int, name string) error {
	if p.Parts > nodes {
		return refuse("dataset.Partitioning.Parts", "%d parts, but %s has %d nodes: give at most one part per node", p.Parts, name, nodes)
	}
	return nil
}

// noTrain is the weights of a graph without training nodes: degree+train
// act as degree (said on log).
func noTrain(weights, name string, log io.Writer) string {
	if weights != metis.WeightsDegreeTrain {
		return weights
	}
	fmt.Fprintf(log, "partition: %s has no training nodes: weights degree+train act as degree\n", name)
	return metis.WeightsDegree
}

// Write loads the whole Source, partitions it (metis, random, or parmetis
// with every rank of c holding the graph; m nil outside MPI) and on rank 0
// writes Out, logging each step to log. It returns when rank 0 began
// writing (zero on the other ranks). Collective for parmetis.
func (p *Partitioning) Write(c comm.Comm, m *MPI, log io.Writer) (time.Time, error) {
	if log == nil {
		log = io.Discard
	}
	ds, err := p.Load(log)
	if err != nil {
		return time.Time{}, err
	}
	if err := p.checkParts(ds.NumNodes(), ds.Name); err != nil {
		return time.Time{}, err
	}
	weights := p.PartWeights
	if len(ds.Train) == 0 {
		weights = noTrain(weights, ds.Name, log)
	}
	opts := metis.Options{Weights: weights, Seed: int(p.Seed), Imbalance: p.Imbalance, TrainMask: ds.SplitMask()}
	t0 := time.Now()
	var owner []int32
	st := p.step(log, fmt.Sprintf("partition: %s into %d parts", p.PartMethod, p.Parts))
	switch p.PartMethod {
	case "metis":
		owner, err = metis.Metis(ds.Graph, p.Parts, opts)
	case "random":
		weights = metis.WeightsNone
		owner = partition.Random(ds.NumNodes(), p.Parts, p.Seed)
	case "parmetis":
		if m == nil {
			err = refuse("", "parmetis: needs MPI (run under mpirun)")
			break
		}
		err = m.Serialize(func() (err error) {
			owner, err = metis.ParMetis(m.Fortran, c.Rank(), c.Size(), ds.Graph, p.Parts, opts)
			return err
		})
	default:
		err = refuse("", "partition method %q is not metis, random or parmetis (the others read distributed: WriteDist)", p.PartMethod)
	}
	st.Done()
	if err != nil {
		return time.Time{}, err
	}
	secs := time.Since(t0).Seconds()
	if c.Rank() != 0 {
		return time.Time{}, nil
	}
	method := p.PartMethod
	if method == "parmetis" {
		method = fmt.Sprintf("parmetis (%d ranks)", c.Size())
	}
	fmt.Fprintf(log, "partition: %s into %d parts, weights %s: %.3fs\n", method, p.Parts, weights, secs)
	t1 := time.Now()
	info := partition.MetaInfo{Method: method, Weights: weights, Seed: int(p.Seed), Source: p.Describe(), Seconds: secs}
	st = p.step(log, "partition: writing "+p.Out)
	err = partition.Write(p.Out, ds, owner, p.Parts, info)
	st.Done()
	return t1, err
}

// WriteDist reads Source.Data distributed (every rank of c its share),
// partitions it (multilevel, parmetis, ldg or random) and writes Out from
// every rank, logging each step to log (rank 0's). It returns when rank 0
// began writing (zero on the other ranks). Collective.
func (p *Partitioning) WriteDist(c comm.Comm, m *MPI, log io.Writer) (time.Time, error) {
	if log == nil {
		log = io.Discard
	}
	t0 := time.Now()
	g, err := dist.Read(c, p.DistSource(p.PartMethod, log))
	if err == nil {
		err = storeDenseIfDense(c, g, log)
	}
	if err != nil {
		return time.Time{}, err
	}
	if err := p.checkParts(g.NumNodes, g.Name); err != nil || c.Size() > 1 {
		if c.Rank() != 0 { // the same on every rank: rank 0 reports it
			err = nil
		}
		if err := dist.Agree(c, err); err != nil {
			return time.Time{}, err
		}
	}
	PrintDist(log, g, c.Size(), t0)
	weights := p.distWeights(g, log)
	t1 := time.Now()
	st := p.step(log, fmt.Sprintf("partition: %s into %d parts on %d ranks", p.PartMethod, p.Parts, c.Size()))
	owner, err := p.ownersDist(c, m, g, weights, log)
	st.Done()
	if err != nil {
		return time.Time{}, err
	}
	secs := time.Since(t1).Seconds()
	method := fmt.Sprintf("%s (%d ranks, distributed)", p.PartMethod, c.Size())
	fmt.Fprintf(log, "partition: %s into %d parts, weights %s: %.3fs\n", method, p.Parts, weights, secs)
	t2 := time.Now()
	info := partition.MetaInfo{Method: method, Weights: weights, Seed: int(p.Seed), Source: p.Describe(), Seconds: secs}
	if err := dist.Write(c, p.Out, g, owner, p.Parts, dist.WriteOptions{Info: info, Progress: p.Progress}); err != nil || c.Rank() != 0 {
		return time.Time{}, err
	}
	return t2, nil
}

// distWeights are the vertex weights the distributed method uses.
func (p *Partitioning) distWeights(g *dist.Graph, log io.Writer) string {
	switch {
	case p.PartMethod == "random" || (p.PartMethod == "ldg" && p.PartWeights == metis.WeightsNone):
		return metis.WeightsNone
	case p.PartMethod == "ldg":
		return metis.WeightsDegree // ldg balances degree+1 (training nodes are not a separate constraint)
	case g.NumTrain == 0:
		return noTrain(p.PartWeights, g.Name, log)
	}
	return p.PartWeights
}

// ownersDist runs the distributed partitioner.
func (p *Partitioning) ownersDist(c comm.Comm, m *MPI, g *dist.Graph, weights string, log io.Writer) ([]int32, error) {
	switch p.PartMethod {
	case "random":
		return dist.RandomOwners(g, p.Parts, p.Seed), nil
	case "ldg":
		return dist.LDG(c, g, p.Parts, dist.LDGOptions{Rounds: p.LDGRounds, Passes: p.LDGPasses, Imbalance: p.Imbalance,
			ByDegree: weights != metis.WeightsNone, Progress: p.Progress})
	case "parmetis":
		return ParMetisDist(c, m, g, p.Parts, weights, metis.Options{Weights: weights, Seed: int(p.Seed), Imbalance: p.Imbalance})
	case "multilevel":
		return MultilevelDist(c, g, p.Parts, weights, p.Seed, p.Imbalance, log)
	}
	return nil, refuse("", "partition method %q is not multilevel, parmetis, ldg or random", p.PartMethod)
}
