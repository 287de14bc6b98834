// Package dataset is where a rank's data comes from: a dataset read
// (graph.Load) or generated, cleaned (weights, duplicates, direction,
// synthetic features, feature normalisation), and partitioned in memory
// into this rank's shard, or a partition directory's parts read; the
// distributed reader and partitioners (partition/dist) where the whole
// graph need never be in one process.
package dataset

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/progress"
)

// Source says where a rank's data comes from and how it is cleaned. At
// most one of Data, Synthetic and Partitions is set; none is the built-in
// generated dataset.
type Source struct {
	Data                      string // a dataset graph.Load reads
	Format, Split, SplitFiles string // graph.LoadOptions
	Features, Labels          string // graph.LoadOptions
	NoLabels                  bool   // graph.LoadOptions
	NodeFeatFromEdges         string // graph.LoadOptions
	// EdgeSplit (graph.SplitEdges) splits the cleaned graph's edges for
	// link prediction, removing the held-out ones; Load sets Edges.
	EdgeSplit string
	// EdgeSplitFiles is a directory of fixed edge split files
	// (graph.ReadEdgeSplitFiles), read in place of EdgeSplit.
	EdgeSplitFiles          string
	Edges                   *graph.EdgeSplit
	Synthetic               string // a graph.ParseGenSpec spec, "default" or ""
	Partitions              string // a partition directory (partition.Load)
	SynthFeat, SynthClasses int    // graph.AttachSyntheticFeatures on a structure-only graph
	Undirected, Dedup       bool   // Data: add reverse edges; drop duplicates and self-loops
	IgnoreWeights           bool   // Data with edge weights: drop them (else they are used: weighted GCN/SAGE)
	FeatNorm                string // none|row
	PartMethod              string // metis|multilevel|parmetis|ldg|random (Shard with several ranks)
	PartWeights             string // metis.Options.Weights
	Seed                    uint64
	Progress                *progress.Reporter // long steps (nil: silent)
	MaxArcsRemedy           string             // dist.Source.MaxArcsRemedy of a parmetis read
}

// ErrSettings marks a refusal that another setting of the Source fixes
// (errors.Is), not a fault of the data read.
var ErrSettings = errors.New("dataset: settings")

// settingsError is err marked as ErrSettings.
type settingsError struct{ error }

func (e settingsError) Unwrap() error      { return e.error }
func (settingsError) Is(target error) bool { return target == ErrSettings }

// refuse returns a settings error: field names the input the message
// starts with ("" for none).
func refuse(fieldName, format string, args ...any) error {
	if fieldName == "" {
		return settingsError{fmt.Errorf(format, args...)}
	}
	return settingsError{field.Errorf(fieldName, format, args...)}
}

// LoadOptions are the graph.LoadOptions of the source.
func (s *Source) LoadOptions() graph.LoadOptions {
	return graph.LoadOptions{Format: s.Format, Split: s.Split, SplitFiles: s.SplitFiles, Features: s.Features, Labels: s.Labels,
		NoLabels: s.NoLabels, NodeFeatFromEdges: s.NodeFeatFromEdges}
}

// Describe names the data for a metrics header: the path or spec given.
func (s *Source) Describe() string {
	switch {
	case s.Partitions != "":
		return "partitions:" + s.Partitions
	case s.Data != "":
		return s.Data
	case s.Synthetic != "":
		return "synthetic:" + s.Synthetic
	}
	return "synthetic:default"
}

// step starts reporting a long step when log is set (rank 0, not quiet).
func (s *Source) step(log io.Writer, name string) *progress.Step {
	if log == nil || log == io.Discard {
		return (*progress.Reporter)(nil).Start(name, 0, "")
	}
	return s.Progress.Start(name, 0, "")
}

// Load reads or generates the whole dataset and cleans it; log (nil:
// silent) gets a line for what was read.
func (s *Source) Load(log io.Writer) (*graph.Dataset, error) {
	t0 := time.Now()
	verb := "reading "
	if s.Data == "" {
		verb = "generating "
	}
	st := s.step(log, "data: "+verb+s.Describe())
	ds, err := s.read()
	st.Done()
	if err != nil {
		return nil, err
	}
	if err := s.clean(ds, log); err != nil {
		return nil, err
	}
	if err := s.splitEdges(ds, log); err != nil {
		return nil, err
	}
	if log != nil {
		edges := "edges"
		if ds.Graph.Val != nil {
			edges = "weighted edges"
		}
		feats := fmt.Sprintf("%d features", ds.FeatDim)
		if f := ds.Features; f.Sparse() {
			feats = fmt.Sprintf("%d sparse features (%d non-zeros, %.3g %%)", ds.FeatDim, f.NNZ(), 100*f.Density())
		}
		fmt.Fprintf(log, "data: %s: %d nodes, %d %s, %s, %d classes, split %d/%d/%d (%.2fs)\n",
			ds.Name, ds.NumNodes(), ds.Graph.NNZ(), edges, feats, ds.NumClasses, len(ds.Train), len(ds.Valid), len(ds.Test), time.Since(t0).Seconds())
	}
	return ds, nil
}

// splitEdges makes the edge split of EdgeSplit or EdgeSplitFiles (if
// either is set), removing the held-out edges from ds's graph.
func (s *Source) splitEdges(ds *graph.Dataset, log io.Writer) error {
	var err error
	spec := s.EdgeSplit
	switch {
	case s.EdgeSplit != "" && s.EdgeSplitFiles != "":
		return refuse("dataset.Source.EdgeSplitFiles", "%s: give the edge split either as files or as dataset.Source.EdgeSplit (%q), not both", s.EdgeSplitFiles, s.EdgeSplit)
	case s.EdgeSplit != "":
		if s.Edges, err = graph.SplitEdges(ds, s.EdgeSplit); err != nil {
			return field.Wrap("dataset.Source.EdgeSplit", err)
		}
	case s.EdgeSplitFiles != "":
		if s.Edges, err = graph.ReadEdgeSplitFiles(ds, s.EdgeSplitFiles); err != nil {
			return field.Wrap("dataset.Source.EdgeSplitFiles", err)
		}
		spec = "files " + s.EdgeSplitFiles
	default:
		return nil
	}
	if log != nil {
		e := s.Edges
		fmt.Fprintf(log, "data: edge split %s: %d/%d/%d edges, the %d held out removed from the graph%s\n", spec,
			len(e.Train), len(e.Valid), len(e.Test), len(e.Valid)+len(e.Test), negativesNote(e))
	}
	return nil
}

// negativesNote describes the fixed validation and test negatives of a
// split read from files ("" for none).
func negativesNote(e *graph.EdgeSplit) string {
	var s []string
	for i, name := range []string{"validation", "test"} {
		switch {
		case e.TargetNeg[i] != nil:
			s = append(s, fmt.Sprintf("%s %d negatives per source", name, e.NegK[i]))
		case e.Neg[i] != nil:
			s = append(s, fmt.Sprintf("%s %d shared negatives", name, len(e.Neg[i])))
		}
	}
	if len(s) == 0 {
		return ""
	}
	return "; " + strings.Join(s, ", ")
}

// read loads Data or generates the Synthetic graph (the built-in one
// seeded by Seed when none is named).
func (s *Source) read() (*graph.Dataset, error) {
	if s.Data != "" {
		return graph.Load(s.Data, s.LoadOptions())
	}
	spec := graph.DefaultSpec
	if s.Synthetic != "" && s.Synthetic != "default" {
		var err error
		if spec, err = graph.ParseGenSpec(s.Synthetic); err != nil {
			return nil, field.Wrap("dataset.Source.Synthetic", err)
		}
	}
	if s.Seed != 0 && s.Synthetic == "" {
		spec.Seed = s.Seed
	}
	ds, err := graph.Generate(spec)
	if err != nil && s.Synthetic != "" {
		err = field.Wrap("dataset.Source.Synthetic", err)
	}
	return ds, err
}

// clean applies the weights rule, the cleaning of Data, synthetic
// features and feature normalisation to ds.
func (s *Source) clean(ds *graph.Dataset, log io.Writer) error {
	if ds.Graph.Val != nil && s.IgnoreWeights {
		ds.Graph.Val = nil
		if log != nil {
			fmt.Fprintf(log, "data: %s: edge weights ignored (dataset.Source.IgnoreWeights)\n", s.Data)
		}
	}
	// Generated graphs are already symmetric, without self-loops or duplicates.
	if s.Dedup && s.Data != "" {
		ds.Graph = graph.Dedup(graph.RemoveSelfLoops(ds.Graph))
	}
	if s.Undirected && s.Data != "" {
		ds.Graph = graph.Symmetrize(ds.Graph)
	}
	if s.SynthFeat > 0 {
		if ds.FeatDim > 0 || ds.Labels != nil {
			return refuse("dataset.Source.SynthFeat", "%s already has %d features and labels; the flag is for structure-only graphs", ds.Name, ds.FeatDim)
		}
		if err := graph.AttachSyntheticFeatures(ds, s.SynthFeat, s.SynthClasses, s.Seed+1); err != nil {
			return err
		}
	}
	if f := ds.Features; f.Sparse() && f.Density() > graph.DenseFeatureDensity {
		if log != nil {
			fmt.Fprintf(log, "data: %s: sparse features are %.0f %% non-zero: stored dense (sparse pays below %.0f %%)\n",
				ds.Name, 100*f.Density(), 100*graph.DenseFeatureDensity)
		}
		ds.Features = f.Dense()
	}
	if s.FeatNorm == "row" {
		ds.Features.NormalizeRows()
	}
	return nil
}

// CheckDistributed refuses the settings the distributed reader cannot
// honour.
func (s *Source) CheckDistributed() error {
	switch {
	case !s.Undirected:
		return refuse("", "dataset.Source.Undirected=false: the distributed reader (ldg, or dataset.Source.Data under mpirun) always symmetrises: use METIS in one process for a directed graph")
	case !s.Dedup:
		return refuse("", "dataset.Source.Dedup=false: the distributed reader (ldg, or dataset.Source.Data under mpirun) always drops duplicate edges and self-loops: use METIS in one process to keep them")
	case s.SynthFeat > 0:
		return refuse("dataset.Source.SynthFeat", "not available with the distributed reader (ldg, or dataset.Source.Data under mpirun): attach them once with supergcn convert dataset.Source.SynthFeat")
	case s.NodeFeatFromEdges != "":
		return refuse("graph.LoadOptions.NodeFeatFromEdges", "not available with the distributed reader (ldg, or dataset.Source.Data under mpirun): read with METIS in one process, or fold them once with supergcn convert")
	case s.EdgeSplitFiles != "":
		return refuse("dataset.Source.EdgeSplitFiles", "not available with the distributed reader (ldg, or dataset.Source.Data under mpirun): read with METIS in one process")
	case s.EdgeSplit != "":
		return refuse("dataset.Source.EdgeSplit", "not available with the distributed reader (ldg, or dataset.Source.Data under mpirun): read with METIS in one process")
	case s.NoLabels:
		return refuse("graph.LoadOptions.NoLabels", "not available with the distributed reader (ldg, or dataset.Source.Data under mpirun): read with METIS in one process")
	}
	return nil
}

// Validate checks the settings before any data is read: the vertex
// weights, the synthetic features, one source at most, the generator
// spec and the feature normalisation.
func (s *Source) Validate() error {
	switch s.PartWeights {
	case "none", "degree", "degree+train":
	default:
		return refuse("dataset.Source.PartWeights", "%q is not none, degree or degree+train", s.PartWeights)
	}
	if s.SynthFeat < 0 || s.SynthClasses < 1 || s.SynthClasses > graph.MaxClasses {
		return refuse("", "dataset.Source.SynthFeat %d dataset.Source.SynthClasses %d: want features ≥ 0 and classes in [1, %d]", s.SynthFeat, s.SynthClasses, graph.MaxClasses)
	}
	n := 0
	for _, p := range []string{s.Data, s.Synthetic, s.Partitions} {
		if p != "" {
			n++
		}
	}
	if n > 1 {
		return refuse("", "use only one of dataset.Source.Data, dataset.Source.Synthetic and dataset.Source.Partitions")
	}
	if s.Synthetic != "" && s.Synthetic != "default" {
		if _, err := graph.ParseGenSpec(s.Synthetic); err != nil {
			return refuse("dataset.Source.Synthetic", "%v", err)
		}
	}
	switch s.FeatNorm {
	case "none", "row":
	default:
		return refuse("dataset.Source.FeatNorm", "%q is not none or row", s.FeatNorm)
	}
	return nil
}
