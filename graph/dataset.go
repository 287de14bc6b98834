package graph

// Split membership bits, one byte per node (Dataset.Split, partition files).
const (
	InTrain uint8 = 1 << iota
	InValid
	InTest
)

// MaxClasses bounds the classes a dataset may have (the largest label + 1):
// a label of 10^9 in a file is a mistake, and would size the model's output
// layer and the label embedding.
const MaxClasses = 1 << 16

// Dataset is a graph with node features, labels and a train/valid/test split,
// as every loader returns it. Structure-only inputs have FeatDim == 0 and
// Labels == nil until synthetic features are attached.
type Dataset struct {
	Name       string
	Graph      *CSR     // square adjacency, row v = in-neighbours of v
	FeatDim    int      // features per node
	Features   Features // NumNodes×FeatDim in one storage kind (featstore.go); none when FeatDim is 0
	Labels     []int32  // len NumNodes; -1 = unlabelled
	NumClasses int
	Train      []int32 // node ids, ascending
	Valid      []int32
	Test       []int32

	// release unmaps the file that the slices above alias when the Dataset
	// was loaded by LoadBinary (nil otherwise); see Release.
	release func() error
}

// NumNodes is the number of nodes.
func (d *Dataset) NumNodes() int { return d.Graph.NumRows }

// SplitMask returns one byte per node with the InTrain/InValid/InTest bits.
func (d *Dataset) SplitMask() []uint8 {
	m := make([]uint8, d.NumNodes())
	for _, v := range d.Train {
		m[v] |= InTrain
	}
	for _, v := range d.Valid {
		m[v] |= InValid
	}
	for _, v := range d.Test {
		m[v] |= InTest
	}
	return m
}
