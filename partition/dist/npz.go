package dist

import (
	"fmt"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
)

// loadOptions are the graph.LoadOptions src stands for.
func (s *Source) loadOptions() graph.LoadOptions {
	return graph.LoadOptions{Format: s.Format, Split: s.Split, SplitFiles: s.SplitFiles, Features: s.Features, Labels: s.Labels}
}

// ownSplit reports whether the input's own split is wanted.
func (s *Source) ownSplit() bool { return !strings.HasPrefix(s.Split, "random:") && s.SplitFiles == "" }

// share returns this rank's part [lo, hi) of n items; a compressed input
// is read whole by rank 0.
func share(c comm.Comm, n int64, compressed bool) (lo, hi int64) {
	if compressed {
		if c.Rank() == 0 {
			return 0, n
		}
		return 0, 0
	}
	p, r := int64(c.Size()), int64(c.Rank())
	return n * r / p, n * (r + 1) / p
}

// compressedNotice tells (rank 0, with progress) which arrays of src are
// stored deflated, so read whole by rank 0.
func compressedNotice(c comm.Comm, src *Source, s *graph.NpzSource) {
	var which []string
	for _, a := range []struct {
		what       string
		compressed bool
	}{{"edge_index", s.Compressed()},
		{"the features", src.Features == "" && s.FeaturesCompressed()},
		{"the labels", src.Labels == "" && s.LabelsCompressed()}} {
		if a.compressed {
			which = append(which, a.what)
		}
	}
	if src.Progress != nil && c.Size() > 1 && len(which) > 0 {
		src.noticed = true
		fmt.Fprintf(src.Progress.W, "dist: %s: stored compressed, so read whole by rank 0: %s (save with np.savez, not np.savez_compressed, for 1/P memory per rank)\n",
			src.Path, strings.Join(which, ", "))
	}
}

// readNpz reads an npz dataset (graph.NpzSource) by ranges: each rank
// reads its share of edge_index and its own nodes' feature and label rows
// in place; a compressed member is read whole by rank 0, its edges sent to
// their owners by build, its rows to theirs here.
func readNpz(c comm.Comm, src *Source) (*raw, error) {
	s, err := graph.OpenNpzRange(src.Path)
	switch {
	case err != nil:
	case s.Nodes < 0:
		err = &graph.ParseError{File: src.Path, Msg: "no num_nodes, features or labels: distributed reading needs the node count up front"}
	}
	if err = agree(c, err); err != nil {
		if s != nil {
			s.Close()
		}
		return nil, err
	}
	defer s.Close()
	r := &raw{name: s.Name, classes: -1, path: src.Path}
	if err := r.setNodes(c, int64(s.Nodes), src.Path); err != nil {
		return nil, err
	}
	compressedNotice(c, src, s)
	st := src.Progress.Start("dist: reading edge_index of "+src.Path, 0, "")
	lo, hi := share(c, s.Edges, s.Compressed())
	r.src, r.dst, err = s.EdgeRange64(lo, hi)
	if err == nil && s.Weighted && !src.IgnoreWeights { // every rank opened the archive
		r.weighted = true
		r.val, err = s.Weights(lo, hi)
	}
	st.Done()
	if err = agree(c, err); err != nil {
		return nil, err
	}
	if src.Features == "" && s.SparseFeatures {
		sr, err := s.SparseFeatureRange()
		if err = agree(c, err); err != nil {
			return nil, err
		}
		if err := sparseRows(c, src, r, sr); err != nil {
			return nil, err
		}
	} else if src.Features == "" && s.FeatDim > 0 {
		if r.x, err = npzRows(c, src, r, "features", s.FeaturesCompressed(), int64(s.FeatDim), s.FeatureRows); err != nil {
			return nil, err
		}
		r.featDim = s.FeatDim
	}
	if src.Labels == "" && s.HasLabels {
		if r.labels, err = npzLabelRows(c, src, r, s); err != nil {
			return nil, err
		}
	}
	r.split = make([]uint8, r.hi(c)-r.lo(c))
	switch {
	case !src.ownSplit():
		return r, nil
	case s.OGB:
		return r, readOGBSplit(c, r, src.Path, src)
	}
	return r, npzSplit(c, r, s)
}

// npzRows returns this rank's rows (d values each) of a per-node array:
// read in place, or, when compressed, read whole by rank 0 and sent.
func npzRows(c comm.Comm, src *Source, r *raw, what string, compressed bool, d int64, read func(lo, hi int) ([]float32, error)) ([]float32, error) {
	lo, hi := r.lo(c), r.hi(c)
	if compressed {
		l, h := share(c, int64(r.n), true)
		lo, hi = int(l), int(h)
	}
	x, err := read(lo, hi)
	if err = agree(c, err); err != nil || !compressed {
		return x, err
	}
	return routeRows(c, r, src.Path+" ("+what+")", x, int64(hi-lo), d)
}

// npzLabelRows returns this rank's labels.
func npzLabelRows(c comm.Comm, src *Source, r *raw, s *graph.NpzSource) ([]int32, error) {
	if !s.LabelsCompressed() {
		y, err := s.LabelRows(r.lo(c), r.hi(c))
		return y, agree(c, err)
	}
	x, err := npzRows(c, src, r, "labels", true, 1, func(lo, hi int) ([]float32, error) {
		y, err := s.LabelRows(lo, hi)
		x := make([]float32, len(y))
		for i, v := range y {
			x[i] = float32(v) // labels are below 2^16: exact
		}
		return x, err
	})
	y := make([]int32, len(x))
	for i, v := range x {
		y[i] = int32(v)
	}
	return y, err
}

// npzSplit reads the split arrays of a PyG-style file, each rank a share
// of their entries; a labelled file without them is an error.
func npzSplit(c comm.Comm, r *raw, s *graph.NpzSource) error {
	if ok, err := s.HasSplit(r.labels != nil); !ok {
		return agree(c, err)
	}
	var ids [3][]int64
	var names [3]string
	for k := range 3 {
		a, err := s.SplitPart(k, r.n)
		if err == nil {
			names[k] = a.Name()
			ids[k], err = splitShare(c, a)
			a.Close()
		}
		if err = agree(c, err); err != nil {
			return err
		}
	}
	return setSplit(c, r, ids, names)
}

// splitShare reads this rank's share of a split array's entries.
func splitShare(c comm.Comm, a *graph.SplitArray) ([]int64, error) {
	lo, hi := share(c, a.Len, a.Compressed())
	return a.IDs64(lo, hi)
}

// applySplit replaces r's split by src's random split or split files.
func applySplit(c comm.Comm, src *Source, r *raw) error {
	if r.split == nil {
		r.split = make([]uint8, r.hi(c)-r.lo(c))
	}
	_, rs, err := graph.ParseSplit(src.Split)
	switch {
	case err != nil:
		return agree(c, err)
	case rs != nil:
		return randomSplit(c, r, rs, src.Split)
	case src.SplitFiles != "":
		return readSplitFiles(c, r, src)
	}
	return nil
}

// randomSplit draws rs over the labelled nodes: the same split as the
// serial loader's, whatever the number of ranks.
func randomSplit(c comm.Comm, r *raw, rs *graph.RandomSplit, spec string) error {
	if r.labels == nil {
		return agree(c, field.Errorf("graph.LoadOptions.Split", "%q: %s has no labels to split (give them with graph.LoadOptions.Labels)", spec, r.name))
	}
	lo := int64(r.lo(c))
	var keys []uint64
	for i, y := range r.labels {
		if y >= 0 {
			keys = append(keys, rs.Key(lo+int64(i)))
		}
	}
	bound, all, err := rs.Bounds(keys, c.AllreduceSumI64)
	if err != nil {
		return err
	}
	for i, y := range r.labels {
		r.split[i] = 0
		if y >= 0 {
			r.split[i] = graph.Part(rs.Key(lo+int64(i)), bound, all)
		}
	}
	return nil
}

// readSplitFiles reads the split files of src.SplitFiles, each rank a
// share of every file.
func readSplitFiles(c comm.Comm, r *raw, src *Source) error {
	var ids [3][]int64
	var names [3]string
	for k := range 3 {
		p, err := graph.SplitFile(src.SplitFiles, k)
		if err != nil {
			return agree(c, err)
		}
		names[k] = p
		if p == "" {
			part := []string{"train", "valid", "test"}[k]
			return agree(c, field.Errorf("graph.LoadOptions.SplitFiles", "%s: no %s.npy or %s.csv[.gz]", src.SplitFiles, part, part))
		}
		if !strings.HasSuffix(p, ".npy") {
			var err error
			if ids[k], err = readIDLines(c, p, r.n, src); err != nil {
				return err
			}
			continue
		}
		a, err := graph.OpenSplitArray(p, r.n)
		if err == nil {
			ids[k], err = splitShare(c, a)
			a.Close()
		}
		if err = agree(c, err); err != nil {
			return err
		}
	}
	return setSplit(c, r, ids, names)
}
