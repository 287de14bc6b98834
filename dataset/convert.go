package dataset

import (
	"strings"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
)

// Conversion rewrites a dataset into supergcn's binary format, or a
// PyG-style .npz (arrays stored uncompressed) when Out ends in .npz,
// cleaned in the order: self-loops removed, duplicates merged,
// symmetrised, synthetic features attached. Sparse features stay sparse
// unless DenseFeatures.
type Conversion struct {
	Data            string
	Load            graph.LoadOptions
	RemoveSelfLoops bool
	Dedup           bool
	Symmetrize      bool
	SynthFeat       int  // graph.AttachSyntheticFeatures DIM (0: none)
	DenseFeatures   bool // store sparse features dense
	Classes         int
	Seed            uint64
	Out             string
}

// Run converts. It returns the dataset written, which the caller releases
// (Release), and how long loading it took.
func (c *Conversion) Run() (*graph.Dataset, time.Duration, error) {
	t0 := time.Now()
	ds, err := graph.Load(c.Data, c.Load)
	if err != nil {
		return nil, 0, err
	}
	load := time.Since(t0)
	if c.RemoveSelfLoops {
		ds.Graph = graph.RemoveSelfLoops(ds.Graph)
	}
	if c.Dedup {
		ds.Graph = graph.Dedup(ds.Graph)
	}
	if c.Symmetrize {
		ds.Graph = graph.Symmetrize(ds.Graph)
	}
	if c.SynthFeat > 0 {
		err = field.Wrap("dataset.Conversion.SynthFeat", graph.AttachSyntheticFeatures(ds, c.SynthFeat, c.Classes, c.Seed))
	}
	if c.DenseFeatures {
		ds.Features = ds.Features.Dense()
	}
	if err == nil && strings.HasSuffix(c.Out, ".npz") {
		err = graph.WriteNpzDataset(c.Out, ds, false, false)
	} else if err == nil {
		err = graph.WriteBinary(c.Out, ds)
	}
	if err != nil {
		ds.Release()
		return nil, 0, err
	}
	return ds, load, nil
}
