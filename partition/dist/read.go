package dist

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/partition"
)

// Source names the input of Read and how to clean it.
type Source struct {
	Path   string // edge list, METIS graph file, OGB-layout directory, .npz file or binary dataset (.sgb)
	Format string // "", "auto", "edgelist", "metis", "ogb", "npz" or "bin"
	Split  string // OGB split directory ("" = public, or the only one), or random:... (graph.ParseSplit)
	// SplitFiles is a directory of train/valid/test files replacing the
	// input's split (graph.LoadOptions.SplitFiles).
	SplitFiles string
	Features   string // optional .npy (N×F) or scipy sparse .npz replacing the dataset's features
	Labels     string // optional .npy (N) replacing the dataset's labels
	// IgnoreWeights drops edge weights (else the graph carries them, see
	// Graph.Val).
	IgnoreWeights bool
	// MaxArcs, when positive, is the most arcs (adjacency entries of the
	// symmetrised graph) the partitioner can take: a header stating more
	// fails before any data is read.
	MaxArcs int64
	// MaxArcsRemedy completes the error for MaxArcs.
	MaxArcsRemedy string
	// RoundBytes bounds one all-to-all call (DefaultRoundBytes when 0).
	RoundBytes int
	// Progress reports long stages (rank 0 passes one, the others nil).
	Progress *progress.Reporter

	noticed bool // in Read's copy: a compressed-input notice was printed
}

// Graph is one rank's block of a dataset distributed by node ranges: rank r
// holds nodes [VtxDist[r], VtxDist[r+1]) with their rows of the undirected,
// loop-free, duplicate-free adjacency (ascending global ids, the graph
// Symmetrize(Dedup(RemoveSelfLoops(g))) of the whole input), features,
// labels and split bits. Global node ids are int64 (up to
// graph.MaxRangeNodeID).
type Graph struct {
	Name       string
	NumNodes   int
	VtxDist    []int64
	Lo, Hi     int       // this rank's nodes
	Ptr        []int64   // Hi-Lo+1 row offsets from 0
	Adj        []int64   // in-neighbours (global ids), ascending in each row
	Val        []float32 // the weight of each Adj entry (Weighted), else nil
	Weighted   bool      // the graph has edge weights (on every rank, even one without entries)
	NumArcs    int64     // adjacency entries over all ranks
	FeatDim    int
	Features   graph.Features // (Hi-Lo)×FeatDim in one storage kind (graph/featstore.go); none when FeatDim is 0
	Labels     []int32        // Hi-Lo, nil when the dataset has none
	NumClasses int
	Split      []uint8 // Hi-Lo, graph.InTrain|InValid|InTest bits
	NumTrain   int64
	NumValid   int64
	NumTest    int64
}

// raw is what the readers produce before the graph is built.
type raw struct {
	name               string
	n                  int
	src, dst           []int64   // this rank's edges src→dst as read
	val                []float32 // their weights (weighted), else nil
	weighted           bool      // the input has edge weights, kept
	featDim            int
	x                  []float32  // rows of [lo,hi)
	xs                 *graph.CSR // rows of [lo,hi), sparse features
	labels             []int32    // rows of [lo,hi) or nil
	classes            int        // from a header; -1: max label + 1
	split              []uint8
	vd                 []int64
	nTrain, nVal, nTst int64
	symmetric          bool   // the input lists every edge both ways (METIS): build checks it
	path               string // the input, for errors
}

func (s *Source) roundBytes() int {
	if s.RoundBytes > 0 {
		return s.RoundBytes
	}
	return DefaultRoundBytes
}

// Read reads rank c.Rank()'s share of src and builds its block of the graph.
// Collective; every rank gets the same error when one fails (the failing
// rank its own, the others a *PeerError).
func Read(c comm.Comm, src Source) (*Graph, error) {
	format, err := graph.CheckLoadOptions(src.Path, src.loadOptions())
	if err = agree(c, err); err != nil {
		return nil, err
	}
	var r *raw
	switch format {
	case "edgelist":
		r, err = readEdgeList(c, &src)
	case "bin":
		r, err = readBinary(c, &src)
	case "ogb":
		if graph.FindOGBData(filepath.Join(src.Path, "raw"), "edge", false) == "" {
			r, err = readNpz(c, &src)
		} else {
			r, err = readOGB(c, &src)
		}
	case "npz":
		r, err = readNpz(c, &src)
	default:
		r, err = readMetis(c, &src)
	}
	if err != nil {
		return nil, err
	}
	if err := overrides(c, &src, r); err != nil {
		return nil, err
	}
	if err := applySplit(c, &src, r); err != nil {
		return nil, err
	}
	st := src.Progress.Start("dist: shuffling and symmetrising edges", 0, "")
	g, err := build(c, r, src.roundBytes())
	st.Done()
	if err != nil {
		return nil, err
	}
	if src.MaxArcs > 0 && g.NumArcs > src.MaxArcs {
		return nil, arcLimitError(src.Path, "the symmetrised graph has", g.NumArcs, src.MaxArcs, src.MaxArcsRemedy)
	}
	return g, nil
}

// arcLimitError names the arc count beyond a partitioner's index width;
// what says where the count comes from.
func arcLimitError(path, what string, arcs, limit int64, remedy string) error {
	return fmt.Errorf("%s: %s %d arcs (adjacency entries), more than the %d this build's partitioner can index (32-bit SCOTCH_Num): %s",
		path, what, arcs, limit, remedy)
}

// blockOf returns the rank whose node range holds v.
func blockOf(vd []int64, v int64) int {
	return sort.Search(len(vd)-1, func(r int) bool { return vd[r+1] > v })
}

// setNodes sets r's node count and node ranges, refusing (on every rank)
// a count whose per-rank share cannot fit this process's memory; path
// names the input. Collective.
func (r *raw) setNodes(c comm.Comm, n int64, path string) error {
	var err error
	if c.Rank() == 0 { // the same on every rank: rank 0 reports it
		err = checkShare(path, n, c.Size())
	}
	if err = agree(c, err); err != nil {
		return err
	}
	r.n, r.vd = int(n), partition.NodeRanges64(n, c.Size())
	return nil
}

// checkShare refuses n nodes on ranks ranks when the largest rank's share
// needs more than this process may use, at graph.NodeBytes a node.
func checkShare(path string, n int64, ranks int) error {
	share := n/int64(ranks) + min(1, n%int64(ranks))
	need := min(share, math.MaxInt64/graph.NodeBytes) * graph.NodeBytes
	err := sysmem.Check(need, fmt.Sprintf("%s: %d nodes on %d ranks: a rank's %d nodes", path, n, ranks, share))
	if err != nil {
		return fmt.Errorf("%w: use more ranks", err)
	}
	return nil
}

// lineOffsets opens rank's share of a text file and returns it with the
// number of the share's first line (agreed collectively). On rank 0 (prog
// set) a step reports the bytes of its share read, with rate and ETA; done
// ends it.
func lineOffsets(c comm.Comm, path string, src *Source) (tr *graph.TextRange, first int64, done func(), err error) {
	tr, err = graph.OpenTextRange(path, c.Rank(), c.Size())
	if err = agree(c, err); err != nil {
		return nil, 0, nil, err
	}
	if tr.Compressed {
		src.textCompressedNotice(c, path)
	}
	what, size := "its share of", tr.End-tr.Start
	if tr.Compressed {
		what = "compressed"
	}
	st := src.Progress.Start(fmt.Sprintf("dist: reading %s %s", what, path), max(size>>20, 1), "MB")
	tr.Progress = func(n int64) { st.Set(n >> 20) }
	before, _, err := exclusiveScan(c, tr.Lines)
	return tr, before + 1, st.Done, err
}

// textCompressedNotice tells, once per Read and on rank 0 (with progress),
// that rank 0 reads the compressed text input path whole, and how to avoid
// it.
func (src *Source) textCompressedNotice(c comm.Comm, path string) {
	if src.Progress == nil || c.Size() == 1 || src.noticed {
		return
	}
	src.noticed = true
	fmt.Fprintf(src.Progress.W, "dist: %s is compressed: rank 0 reads it and any other compressed input whole (decompress them, or supergcn convert the dataset to .sgb, for 1/P memory per rank)\n", path)
}

// readEdgeList reads an edge list by byte ranges.
func readEdgeList(c comm.Comm, src *Source) (*raw, error) {
	tr, first, done, err := lineOffsets(c, src.Path, src)
	if err != nil {
		return nil, err
	}
	ch, err := tr.ReadEdgeList(first)
	done()
	if err = agree(c, err); err != nil {
		return nil, err
	}
	// Every edge line must have the field count of the file's first edge line.
	cols, err := gather(c, int64(ch.Cols))
	if err != nil {
		return nil, err
	}
	lines, err := gather(c, ch.FirstLine)
	if err != nil {
		return nil, err
	}
	ref := -1
	for q, k := range cols {
		if k != 0 {
			ref = q
			break
		}
	}
	var bad error
	switch {
	case ref < 0:
		if c.Rank() == 0 {
			bad = &graph.ParseError{File: src.Path, Msg: "no edges found"}
		}
	case ch.Cols != 0 && int64(ch.Cols) != cols[ref]:
		bad = &graph.ParseError{File: src.Path, Line: ch.FirstLine, Msg: fmt.Sprintf("%d fields but line %d has %d: weights must be given on every edge or on none",
			ch.Cols, lines[ref], cols[ref])}
	}
	if err := agree(c, bad); err != nil {
		return nil, err
	}

	maxID, err := allreduceMax(c, ch.MaxID)
	if err != nil {
		return nil, err
	}
	hint := int64(-1)
	if c.Rank() == 0 {
		hint = ch.Hint
	}
	if hint, err = allreduceMax(c, hint); err != nil {
		return nil, err
	}
	n := maxID + 1 // maxID ≤ graph.MaxRangeNodeID
	if hint > n && hint-n <= n {
		n = hint // isolated nodes after the largest id, as LoadEdgeList
	}
	r := &raw{name: graph.DatasetName(src.Path), src: ch.Src, dst: ch.Dst, classes: -1}
	if cols[ref] == 3 && !src.IgnoreWeights { // every rank knows the first edge line's fields
		r.val, r.weighted = ch.Val, true
	}
	if err := r.setNodes(c, n, src.Path); err != nil {
		return nil, err
	}
	r.split = make([]uint8, r.hi(c)-r.lo(c))
	return r, nil
}

// readMetis reads a METIS graph file by byte ranges: every rank finds the
// header, parses the vertex lines of its share, and numbers them from the
// vertex lines of the ranks before it.
func readMetis(c comm.Comm, src *Source) (*raw, error) {
	h, err := graph.ReadMetisHeader(src.Path)
	if err = agree(c, err); err != nil {
		return nil, err
	}
	tr, first, done, err := lineOffsets(c, src.Path, src)
	if err != nil {
		return nil, err
	}
	ch, err := tr.ReadMetis(first, h)
	done()
	if err = agree(c, err); err != nil {
		return nil, err
	}
	before, total, err := exclusiveScan(c, ch.Rows())
	if err != nil {
		return nil, err
	}
	keep := max(0, min(ch.Rows(), h.N-before)) // rows of real vertices
	var bad error
	switch {
	case total < h.N && c.Rank() == c.Size()-1:
		bad = &graph.ParseError{File: src.Path, Line: first + tr.Lines - 1, Msg: fmt.Sprintf(
			"file ends after %d of the %d vertex lines the header (line %d) announces", total, h.N, h.Line)}
	case total > h.N:
		bad = ch.DataAfter(keep, h)
	}
	if err = agree(c, bad); err != nil {
		return nil, err
	}
	entries, err := allreduceSum(c, ch.Ptr[keep])
	if err != nil {
		return nil, err
	}
	if entries != 2*h.M && c.Rank() == 0 {
		bad = &graph.ParseError{File: src.Path, Line: h.Line, Msg: fmt.Sprintf(
			"header says m=%d edges (%d adjacency entries) but the vertex lines list %d entries", h.M, 2*h.M, entries)}
	}
	if err = agree(c, bad); err != nil {
		return nil, err
	}
	r := &raw{name: graph.DatasetName(src.Path), classes: -1, symmetric: true, path: src.Path,
		src: ch.Idx[:ch.Ptr[keep]]}
	if h.Weighted && !src.IgnoreWeights { // every rank read the header
		r.val, r.weighted = ch.Val[:ch.Ptr[keep]], true
	}
	r.dst = make([]int64, len(r.src))
	for k := int64(0); k < keep; k++ {
		for e := ch.Ptr[k]; e < ch.Ptr[k+1]; e++ {
			r.dst[e] = before + k
		}
	}
	if err := r.setNodes(c, h.N, src.Path); err != nil {
		return nil, err
	}
	r.split = make([]uint8, r.hi(c)-r.lo(c))
	return r, nil
}

func (r *raw) lo(c comm.Comm) int { return int(r.vd[c.Rank()]) }
func (r *raw) hi(c comm.Comm) int { return int(r.vd[c.Rank()+1]) }

// readBinary reads a binary dataset by row ranges (pread).
func readBinary(c comm.Comm, src *Source) (*raw, error) {
	br, err := graph.OpenBinaryRange(src.Path)
	if err == nil && src.MaxArcs > 0 && br.NNZ > src.MaxArcs {
		err = arcLimitError(src.Path, "the header states", br.NNZ, src.MaxArcs, src.MaxArcsRemedy)
	}
	if err = agree(c, err); err != nil {
		if br != nil {
			br.Close()
		}
		return nil, err
	}
	defer br.Close()
	r := &raw{name: br.Name, featDim: br.FeatDim, classes: br.NumClasses,
		nTrain: br.NTrain, nVal: br.NValid, nTst: br.NTest}
	if r.name == "" {
		r.name = graph.DatasetName(src.Path)
	}
	if err := r.setNodes(c, br.Nodes, src.Path); err != nil {
		return nil, err
	}
	lo, hi := int64(r.lo(c)), int64(r.hi(c))
	ptr, idx, err := br.Rows(lo, hi)
	if err == nil {
		r.src = widen(idx)
		r.dst = make([]int64, len(r.src))
		for i := range ptr[:len(ptr)-1] {
			for k := ptr[i]; k < ptr[i+1]; k++ {
				r.dst[k] = lo + int64(i)
			}
		}
		if br.Weighted && !src.IgnoreWeights { // every rank read the header
			r.weighted = true
			r.val, err = br.Weights(lo, hi, ptr)
		}
		switch {
		case err != nil || src.Features != "":
		case br.SparseFeatures:
			r.xs, err = br.SparseFeatureRows(lo, hi)
		default:
			r.x, err = br.Features(lo, hi)
		}
	}
	if err == nil && src.Labels == "" {
		r.labels, err = br.Labels(lo, hi)
	}
	var ids [3][]int64
	if err == nil && src.ownSplit() {
		for k, total := range []int64{br.NTrain, br.NValid, br.NTest} {
			a, b := total*int64(c.Rank())/int64(c.Size()), total*int64(c.Rank()+1)/int64(c.Size())
			var l []int32
			if l, err = br.SplitIDs(k, a, b); err != nil {
				break
			}
			ids[k] = widen(l)
		}
	}
	if err = agree(c, err); err != nil {
		return nil, err
	}
	if err = verifyBinary(c, br); err != nil {
		return nil, err
	}
	if src.Features != "" {
		r.featDim = 0
	}
	if r.split, err = routeSplit(c, r.vd, ids, [3]string{src.Path + " (train)", src.Path + " (valid)", src.Path + " (test)"}); err != nil {
		return nil, err
	}
	return r, nil
}

// verifyBinary checks the section checksums of a binary dataset against
// the CRCs of the byte ranges every rank read (each rank reads its share
// only). Collective; rank 0 returns the error, the others a *PeerError.
func verifyBinary(c comm.Comm, br *graph.BinaryRange) error {
	mine := br.ReadSpans()
	all := make([]int64, len(mine)*c.Size())
	copy(all[len(mine)*c.Rank():], mine)
	if err := c.AllreduceSumI64(all); err != nil {
		return err
	}
	var err error
	if c.Rank() == 0 { // the same result on every rank: one reports it
		err = br.VerifySpans(all)
	}
	return agree(c, err)
}

// routeSplit sends the split node ids each rank read to the ranks owning
// them, as (id, list) pairs, and returns this rank's split bits; a node in
// two lists is an error naming both.
func routeSplit(c comm.Comm, vd []int64, ids [3][]int64, names [3]string) ([]uint8, error) {
	p := c.Size()
	counts := make([]int, p)
	for _, l := range ids {
		for _, v := range l {
			counts[blockOf(vd, v)] += 2
		}
	}
	off := offsets(counts)
	send := make([]int64, off[p])
	next := append([]int(nil), off[:p]...)
	for k, l := range ids {
		for _, v := range l {
			q := blockOf(vd, v)
			send[next[q]], send[next[q]+1] = v, int64(k)
			next[q] += 2
		}
	}
	recv, _, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil {
		return nil, err
	}
	lo := vd[c.Rank()]
	split := make([]uint8, vd[c.Rank()+1]-lo)
	var bad error
	for i := 0; i+1 < len(recv); i += 2 {
		v, k := recv[i], int(recv[i+1])
		bit := uint8(1) << k
		if old := split[v-lo]; old != 0 && bad == nil {
			prev := 0
			for old>>prev != 1 {
				prev++
			}
			bad = fmt.Errorf("%s and %s both hold node %d: the splits must be disjoint", names[prev], names[k], v)
			if prev == k {
				bad = fmt.Errorf("%s lists node %d twice", names[k], v)
			}
		}
		split[v-lo] |= bit
	}
	return split, agree(c, bad)
}

// readOGB reads an OGB-layout directory: raw/edge.csv by byte ranges,
// features and labels (.npy by rows, .csv by byte ranges routed to their
// rows' owners), the split files by byte ranges. raw/num-node-list.csv is
// required (it fixes the node ranges before any feature row is read).
func readOGB(c comm.Comm, src *Source) (*raw, error) {
	dir := src.Path
	if err := agree(c, graph.CheckOGBLayout(dir)); err != nil {
		return nil, err
	}
	rawDir := filepath.Join(dir, "raw")
	edgePath := graph.FindOGBData(rawDir, "edge", false)
	countPath := graph.FindOGBData(rawDir, "num-node-list", false)
	var err error
	n := 0
	switch {
	case edgePath == "":
		err = &graph.ParseError{File: dir, Msg: "no raw/edge.csv (heterogeneous OGB datasets such as ogbn-mag are not supported)"}
	case countPath == "":
		err = &graph.ParseError{File: dir, Msg: "no raw/num-node-list.csv: distributed reading needs the node count up front"}
	default:
		n, err = graph.ReadCount(countPath)
	}
	if err = agree(c, err); err != nil {
		return nil, err
	}
	r := &raw{name: graph.DatasetName(dir), classes: -1}
	if err := r.setNodes(c, int64(n), countPath); err != nil {
		return nil, err
	}
	tr, first, done, err := lineOffsets(c, edgePath, src)
	if err != nil {
		return nil, err
	}
	r.src, r.dst, err = tr.ReadEdgeCSV(first, int64(n))
	done()
	if err = agree(c, err); err != nil {
		return nil, err
	}
	if p := graph.FindOGBData(rawDir, "edge_weight", false); p != "" && !src.IgnoreWeights { // every rank looked
		if r.val, err = readEdgeWeights(c, p, len(r.src), src); err != nil {
			return nil, err
		}
		r.weighted = true
	}
	if src.Features == "" {
		if p := graph.FindOGBData(rawDir, "node-feat", true); p != "" {
			if r.x, r.featDim, err = readRows(c, r, p, false, src); err != nil {
				return nil, err
			}
		}
	}
	if src.Labels == "" {
		if p := graph.FindOGBData(rawDir, "node-label", true); p != "" {
			var y []float32
			if strings.HasSuffix(p, ".npy") {
				r.labels, err = npyLabels(c, r, p)
			} else if y, _, err = readRows(c, r, p, true, src); err == nil {
				r.labels = make([]int32, len(y))
				for i, v := range y {
					r.labels[i] = int32(v)
				}
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if err := readOGBSplit(c, r, dir, src); err != nil {
		return nil, err
	}
	if p := graph.FindOGBData(rawDir, "num-edge-list", false); p != "" {
		total, err := allreduceSum(c, int64(len(r.src)))
		if err != nil {
			return nil, err
		}
		m, err := graph.ReadCount(p)
		if err == nil && int64(m) != total {
			err = &graph.ParseError{File: p, Line: 1, Msg: fmt.Sprintf("says %d edges but %s has %d", m, edgePath, total)}
		}
		if err = agree(c, err); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readOGBSplit reads the split files under dir/split/ (when src wants the
// dataset's own split) into r.split, checking that split nodes are
// labelled.
func readOGBSplit(c comm.Comm, r *raw, dir string, src *Source) error {
	if !src.ownSplit() {
		return nil
	}
	split, err := ogbSplitDir(dir, src.Split)
	if err = agree(c, err); err != nil {
		return err
	}
	var ids [3][]int64
	var names [3]string
	if split != "" {
		for k, name := range []string{"train", "valid", "test"} {
			p := graph.FindOGBData(split, name, false)
			names[k] = p
			if p == "" {
				return agree(c, &graph.ParseError{File: split, Msg: fmt.Sprintf("no %s.csv[.gz]", name)})
			}
			if ids[k], err = readIDLines(c, p, r.n, src); err != nil {
				return err
			}
		}
	}
	return setSplit(c, r, ids, names)
}

// readIDLines reads this rank's share of a file of node ids, one a line.
func readIDLines(c comm.Comm, path string, n int, src *Source) ([]int64, error) {
	tr, first, done, err := lineOffsets(c, path, src)
	if err != nil {
		return nil, err
	}
	ids, err := tr.ReadNodeIDs(first, int64(n))
	done()
	return ids, agree(c, err)
}

// setSplit routes the split ids each rank read (ids[k] of part k, from the
// file names[k]) to their owners into r.split, and checks that split nodes
// are labelled.
func setSplit(c comm.Comm, r *raw, ids [3][]int64, names [3]string) error {
	var err error
	if r.split, err = routeSplit(c, r.vd, ids, names); err != nil {
		return err
	}
	var bad error
	for i, b := range r.split {
		if b != 0 && r.labels != nil && r.labels[i] < 0 {
			k := 0
			for b>>k != 1 {
				k++
			}
			bad = &graph.ParseError{File: names[k], Msg: fmt.Sprintf("node %d has no label", r.lo(c)+i)}
			break
		}
	}
	return agree(c, bad)
}

// ogbSplitDir returns the split directory to read ("" when there is none).
func ogbSplitDir(dir, want string) (string, error) {
	base := filepath.Join(dir, "split")
	ents, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) && want == "" {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	switch {
	case want != "":
		for _, n := range names {
			if n == want {
				return filepath.Join(base, n), nil
			}
		}
		return "", field.Errorf("graph.LoadOptions.Split", "%q: no such split under %s (have %s)", want, base, strings.Join(names, ", "))
	case len(names) == 0:
		return "", nil
	case len(names) == 1:
		return filepath.Join(base, names[0]), nil
	}
	for _, n := range names {
		if n == "public" {
			return filepath.Join(base, n), nil
		}
	}
	return "", field.Errorf("graph.LoadOptions.Split", "%s has several splits (%s): choose one", base, strings.Join(names, ", "))
}

// readRows reads the rows of this rank's nodes from an OGB node table: a
// .npy by rows, a CSV by byte ranges whose rows are sent to their owners.
// labels reads one label a line instead of a float row.
func readRows(c comm.Comm, r *raw, path string, labels bool, src *Source) ([]float32, int, error) {
	lo, hi := r.lo(c), r.hi(c)
	if strings.HasSuffix(path, ".npy") {
		a, err := graph.OpenNpyRange(path)
		var x []float32
		if err == nil {
			defer a.Close()
			if a.Shape[0] != r.n {
				err = &graph.ParseError{File: path, Msg: fmt.Sprintf("has %d rows but the graph has %d nodes", a.Shape[0], r.n)}
			} else {
				x, err = a.FeatureRows(lo, hi)
			}
		}
		if err = agree(c, err); err != nil {
			return nil, 0, err
		}
		return x, a.Shape[1], nil
	}
	tr, first, done, err := lineOffsets(c, path, src)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	var x []float32
	dim := 1
	if labels {
		var y []int32
		y, err = tr.ReadLabels(first)
		x = make([]float32, len(y))
		for i, v := range y {
			x[i] = float32(v)
		}
	} else {
		x, dim, err = tr.ReadFloatRows(first)
	}
	if err = agree(c, err); err != nil {
		return nil, 0, err
	}
	// Every non-empty share must have the same row length.
	d, err := allreduceMax(c, int64(dim))
	if err != nil {
		return nil, 0, err
	}
	rows := int64(len(x) / max(dim, 1))
	var bad error
	if len(x) > 0 && int64(dim) != d {
		bad = &graph.ParseError{File: path, Line: first, Msg: fmt.Sprintf("%d columns, other lines have %d", dim, d)}
	}
	if err = agree(c, bad); err != nil {
		return nil, 0, err
	}
	recv, err := routeRows(c, r, path, x, rows, d)
	return recv, int(d), err
}

// routeRows sends the d-wide rows x that this rank read (rows consecutive
// rows of path, following those the ranks before it read) to the ranks
// owning them, and returns this rank's rows.
func routeRows(c comm.Comm, r *raw, path string, x []float32, rows, d int64) ([]float32, error) {
	return route(c, x, rows, d, r.vd, func(total int64) error {
		return &graph.ParseError{File: path, Msg: fmt.Sprintf("has %d rows but the graph has %d nodes", total, r.n)}
	})
}

// readEdgeWeights reads this rank's share of an OGB edge_weight.csv by
// byte ranges and returns the weights of the edges this rank read (edges
// of them, following those the ranks before it read): weight i is edge
// i's, whichever rank read its line.
func readEdgeWeights(c comm.Comm, path string, edges int, src *Source) ([]float32, error) {
	tr, first, done, err := lineOffsets(c, path, src)
	if err != nil {
		return nil, err
	}
	w, err := tr.ReadEdgeWeights(first)
	done()
	if err = agree(c, err); err != nil {
		return nil, err
	}
	counts, err := gather(c, int64(edges))
	if err != nil {
		return nil, err
	}
	bounds := make([]int64, len(counts)+1)
	for q, k := range counts {
		bounds[q+1] = bounds[q] + k
	}
	return route(c, w, int64(len(w)), 1, bounds, func(total int64) error {
		return graph.EdgeWeightCountError(path, total, bounds[len(counts)])
	})
}

// route sends the d-wide rows x that this rank read (rows consecutive
// rows, following those the ranks before it read) to the ranks whose
// ranges [bounds[q], bounds[q+1]) hold them, and returns this rank's rows.
// When the ranks read other than bounds[P] rows in all, every rank returns
// miscount(total).
func route(c comm.Comm, x []float32, rows, d int64, bounds []int64, miscount func(total int64) error) ([]float32, error) {
	before, total, err := exclusiveScan(c, rows)
	if err != nil {
		return nil, err
	}
	p := c.Size()
	if total != bounds[p] {
		return nil, agree(c, miscount(total))
	}
	counts := make([]int, p)
	for q := 0; q < p; q++ {
		a, b := max(before, bounds[q]), min(before+rows, bounds[q+1])
		if b > a {
			counts[q] = int(b-a) * int(d)
		}
	}
	recv, _, err := exchange(c, x, counts, DefaultRoundBytes)
	if err != nil {
		return nil, err
	}
	if int64(len(recv)) != (bounds[c.Rank()+1]-bounds[c.Rank()])*d {
		return nil, fmt.Errorf("dist: received %d values for %d rows × %d", len(recv), bounds[c.Rank()+1]-bounds[c.Rank()], d)
	}
	return recv, nil
}

// npyLabels reads this rank's labels from a .npy file.
func npyLabels(c comm.Comm, r *raw, path string) ([]int32, error) {
	a, err := graph.OpenNpyRange(path)
	var y []int32
	if err == nil {
		defer a.Close()
		if a.Shape[0] != r.n {
			err = &graph.ParseError{File: path, Msg: fmt.Sprintf("labels have shape %v, want (%d,) or (%d, 1)", a.Shape, r.n, r.n)}
		} else {
			y, err = a.LabelRows(r.lo(c), r.hi(c))
		}
	}
	return y, agree(c, err)
}

// sparseRows reads this rank's rows of the sparse features sr (an .npz
// archive) into r; a rank reads only its rows' bytes of a csr archive
// stored uncompressed, and reads any other archive through, keeping its
// rows (said once, on rank 0).
func sparseRows(c comm.Comm, src *Source, r *raw, sr *graph.SparseRange) error {
	if !sr.ByRows && src.Progress != nil && c.Size() > 1 {
		how := "compressed"
		if sr.Format != "csr" {
			how = sr.Format + " (column or entry order)"
		}
		fmt.Fprintf(src.Progress.W, "dist: %s: sparse features stored %s: every rank reads the whole archive through, keeping only its rows (a csr matrix saved uncompressed, scipy.sparse.save_npz(..., compressed=False), is read by row ranges)\n", sr.Path, how)
	}
	xs, err := sr.ReadRows(r.lo(c), r.hi(c))
	if err = agree(c, err); err != nil {
		return err
	}
	r.x, r.xs, r.featDim = nil, xs, sr.Cols
	return nil
}

// overrides applies the feature (.npy, or a scipy sparse .npz) and label
// files of src.
func overrides(c comm.Comm, src *Source, r *raw) error {
	if strings.HasSuffix(strings.ToLower(src.Features), ".npz") {
		sr, err := graph.OpenSparseRange(src.Features, r.n)
		if err = agree(c, field.Wrap("graph.LoadOptions.Features", err)); err != nil {
			return err
		}
		err = sparseRows(c, src, r, sr)
		sr.Close()
		if err != nil {
			return field.Wrap("graph.LoadOptions.Features", err)
		}
	} else if src.Features != "" {
		a, err := graph.OpenNpyRange(src.Features)
		if err == nil {
			if len(a.Shape) != 2 || a.Shape[0] != r.n {
				err = &graph.ParseError{File: src.Features, Msg: fmt.Sprintf("features have shape %v, want (%d, F)", a.Shape, r.n)}
			} else {
				r.x, err = a.FeatureRows(r.lo(c), r.hi(c))
				r.featDim = a.Shape[1]
			}
			a.Close()
		}
		if err = agree(c, field.Wrap("graph.LoadOptions.Features", err)); err != nil {
			return err
		}
	}
	if src.Labels != "" {
		y, err := npyLabels(c, r, src.Labels)
		if err != nil {
			return field.Wrap("graph.LoadOptions.Labels", err)
		}
		r.labels, r.classes = y, -1
		var bad error
		for i, b := range r.split {
			if b != 0 && y[i] < 0 {
				bad = field.Errorf("graph.LoadOptions.Labels", "%s: node %d is in the split but has no label", src.Labels, r.lo(c)+i)
				break
			}
		}
		if err := agree(c, bad); err != nil {
			return err
		}
	}
	return nil
}
