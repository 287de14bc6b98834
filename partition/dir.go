package partition

// On-disk partition directory:
//
//	DIR/meta.json          Meta: format version, dataset, method, sizes, per-part statistics and file checksums
//	DIR/part-00000.bin     one file per part, the Shard that Split returns for that part (partfile.go)
//
// meta.json records each file's size and whole-file CRC32-C; Load checks
// both, every section CRC, and the structure of the decoded shard.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
)

// MetaFile is the name of the metadata file in a partition directory.
const MetaFile = "meta.json"

// MetaInfo is what Write records about how the partition was made.
type MetaInfo struct {
	Method  string  // metis, parmetis, random, ...
	Weights string  // vertex weights used (Options.Weights)
	Seed    int     // partitioner seed
	Source  string  // input dataset path, for the record
	Seconds float64 // time the partitioner took
}

// Meta is the content of meta.json.
type Meta struct {
	FormatVersion    int     `json:"format_version"`
	Dataset          string  `json:"dataset"`
	Source           string  `json:"source,omitempty"`
	Parts            int     `json:"parts"`
	Method           string  `json:"method"`
	Weights          string  `json:"weights"`
	Seed             int     `json:"seed"`
	PartitionSeconds float64 `json:"partition_seconds"`
	NumNodes         int64   `json:"num_nodes"`
	NumEdges         int64   `json:"num_edges"`
	FeatDim          int     `json:"feat_dim"`
	NumClasses       int     `json:"num_classes"`
	HasLabels        bool    `json:"has_labels"`
	Weighted         bool    `json:"weighted,omitempty"`        // edge weights in the part files (format version 2)
	SparseFeatures   bool    `json:"sparse_features,omitempty"` // CSR feature rows in the part files (format version 3)
	NumTrain         int64   `json:"num_train"`
	NumValid         int64   `json:"num_valid"`
	NumTest          int64   `json:"num_test"`
	Stats
}

// maxMetaBytes bounds meta.json (a few hundred bytes per part).
const maxMetaBytes = 1 << 30

// ReadMeta reads and checks DIR/meta.json.
func ReadMeta(dir string) (*Meta, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := container.ReadInput(path, maxMetaBytes, MetaFile)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("partition: %s: %v", path, err)
	}
	switch {
	case m.FormatVersion < MinFormatVersion || m.FormatVersion > FormatVersion:
		return nil, fmt.Errorf("partition: %s: format version %d, this build reads %d to %d", path, m.FormatVersion, MinFormatVersion, FormatVersion)
	case m.Weighted && m.FormatVersion < 2:
		return nil, fmt.Errorf("partition: %s: format version %d has no edge weights but says weighted", path, m.FormatVersion)
	case m.SparseFeatures && m.FormatVersion < 3:
		return nil, fmt.Errorf("partition: %s: format version %d has no sparse features but says sparse", path, m.FormatVersion)
	case m.Parts < 1:
		return nil, fmt.Errorf("partition: %s: %d parts", path, m.Parts)
	case len(m.Stats.Parts) != m.Parts:
		return nil, fmt.Errorf("partition: %s: %d per-part entries for %d parts", path, len(m.Stats.Parts), m.Parts)
	case m.NumNodes < 0 || m.FeatDim < 0 || m.FeatDim > maxFeatDim:
		return nil, fmt.Errorf("partition: %s: bad sizes (%d nodes, %d features)", path, m.NumNodes, m.FeatDim)
	case m.NumClasses < 0 || m.NumClasses > graph.MaxClasses:
		return nil, fmt.Errorf("partition: %s: num_classes %d is not in [0, %d]", path, m.NumClasses, graph.MaxClasses)
	}
	for p, ps := range m.Stats.Parts {
		if ps.Part != p || ps.File != PartFile(p) {
			return nil, fmt.Errorf("partition: %s: per-part entry %d names part %d, file %q", path, p, ps.Part, ps.File)
		}
		if ps.Nodes < 0 || ps.Nodes > math.MaxInt32 {
			return nil, fmt.Errorf("partition: %s: part %d has %d nodes, outside [0, 2^31-1] (the int32 local ids of a part file)", path, p, ps.Nodes)
		}
	}
	return &m, nil
}

// Write stores the partition owner of ds (parts parts) as a partition
// directory: one part file per part and meta.json (see the package's file
// format comment). It writes into a fresh DIR.tmp-* beside dir and renames
// it into place, so on error nothing half-written remains. An existing dir
// is replaced only when it is empty or a partition directory (it has
// meta.json); anything else is an error, found before any work is done.
func Write(dir string, ds *graph.Dataset, owner []int32, parts int, info MetaInfo) (err error) {
	if err := checkDataset(ds); err != nil {
		return err
	}
	if err := ValidateOwner(owner, ds.NumNodes(), parts); err != nil {
		return err
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	split := ds.SplitMask()
	st, err := ComputeStats(ds.Graph, owner, parts, split)
	if err != nil {
		return err
	}
	clean := filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(clean), filepath.Base(clean)+".tmp-")
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	sp := newSplitter(ds, owner, parts)
	for p := 0; p < parts; p++ {
		name := PartFile(p)
		sh := sp.shard(p)
		size, sum, err := writePart(filepath.Join(tmp, name), sh, ds.Labels != nil)
		if err != nil {
			return err
		}
		if sh.Features.Sparse() {
			st.Parts[p].FeatNNZ = sh.Features.NNZ()
		}
		st.Parts[p].File, st.Parts[p].Bytes, st.Parts[p].CRC32C = name, size, sum
	}
	m := Meta{FormatVersion: FormatVersion, Dataset: ds.Name, Source: info.Source, Parts: parts,
		Method: info.Method, Weights: info.Weights, Seed: info.Seed, PartitionSeconds: info.Seconds,
		NumNodes: int64(ds.NumNodes()), NumEdges: ds.Graph.NNZ(), FeatDim: ds.FeatDim, NumClasses: ds.NumClasses,
		HasLabels: ds.Labels != nil, Weighted: ds.Graph.Val != nil, SparseFeatures: ds.Features.Sparse(), NumTrain: int64(len(ds.Train)), NumValid: int64(len(ds.Valid)),
		NumTest: int64(len(ds.Test)), Stats: *st}
	if err := WriteMeta(tmp, &m); err != nil {
		return err
	}
	return InstallDir(tmp, clean)
}

// checkDataset checks the parts of ds that Write relies on.
func checkDataset(ds *graph.Dataset) error {
	if ds == nil || ds.Graph == nil {
		return errors.New("partition: nil dataset")
	}
	if err := CheckSquare(ds.Graph); err != nil {
		return err
	}
	if err := graph.CheckWeights(ds.Graph.Val); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	n := ds.NumNodes()
	if ds.FeatDim < 0 {
		return fmt.Errorf("partition: dataset has feature dimension %d", ds.FeatDim)
	}
	if err := ds.Features.CheckShape(n, ds.FeatDim); err != nil {
		return fmt.Errorf("partition: dataset: %w", err)
	}
	if ds.Labels != nil && len(ds.Labels) != n {
		return fmt.Errorf("partition: dataset has %d labels for %d nodes", len(ds.Labels), n)
	}
	for _, set := range [][]int32{ds.Train, ds.Valid, ds.Test} {
		for _, v := range set {
			if v < 0 || int(v) >= n {
				return fmt.Errorf("partition: split node %d outside [0,%d)", v, n)
			}
		}
	}
	return nil
}

// CheckOutput reports whether Write may write dir (absent, empty, or a
// partition directory it will replace, in a parent directory that can take
// a new directory), so a command can refuse before it loads and partitions
// anything.
func CheckOutput(dir string) error {
	if err := replaceable(dir); err != nil {
		return err
	}
	return container.CheckWritableDir(dir)
}

// replaceable reports whether Write may put a partition at dir.
func replaceable(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("partition: %s exists and is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err == nil {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("partition: %s exists, is not empty and holds no %s: not replacing it", dir, MetaFile)
	}
	return nil
}

// install renames the finished tmp directory to dir, replacing an old
// partition there (moved aside first and removed once the new one is in
// place), and fsyncs the parent directory so the rename is durable. The
// files inside tmp were written (and the directory synced) by
// container.WriteFile.
func install(tmp, dir string) error {
	if err := replaceable(dir); err != nil {
		return err
	}
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("partition: moving the old %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("partition: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	if err := container.SyncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	return nil
}

// Load reads the shard of rank `rank` of `ranks` from the partition
// directory dir. The directory's P parts must split evenly over the ranks
// (P % ranks == 0, checked before anything else is read); the rank reads
// parts [rank·k, (rank+1)·k) with k = P/ranks, verifies every file (size,
// whole-file and per-section CRC32-C, structure) and merges them: owned
// nodes are the union (ascending global id), local edges are those of each
// part plus the remote edges whose source is in one of the rank's parts,
// and the other remote edges keep their source with Owner = part / k (a
// rank). The result equals Split(ds, owner/k, rank, ranks) for the dataset
// and owner array the directory was written from, row order included when
// the dataset's rows were sorted by source.
func Load(dir string, rank, ranks int) (*Shard, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	if ranks < 1 || rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("partition: %s: rank %d of %d ranks", dir, rank, ranks)
	}
	if m.Parts%ranks != 0 {
		return nil, fmt.Errorf("partition: %s has %d parts, which %d ranks cannot share evenly (parts %% ranks = %d): "+
			"repartition into a multiple of %d parts or run on a divisor of %d ranks", dir, m.Parts, ranks, m.Parts%ranks, ranks, m.Parts)
	}
	k := m.Parts / ranks
	shards := make([]*Shard, k)
	for i := range shards {
		if shards[i], err = readPart(dir, m, rank*k+i); err != nil {
			return nil, err
		}
	}
	if k == 1 {
		sh := shards[0]
		sh.Rank, sh.Ranks = rank, ranks
		return sh, nil
	}
	sh, err := merge(shards, rank, ranks, k)
	if err != nil {
		return nil, fmt.Errorf("partition: %s: %w", dir, err)
	}
	return sh, nil
}

// merge joins the k consecutive parts of one rank (see Load); their
// nodes together must number below 2^31, the int32 local ids of a shard.
func merge(parts []*Shard, rank, ranks, k int) (*Shard, error) {
	total := 0
	for _, p := range parts {
		total += len(p.Global)
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("rank %d's %d parts hold %d nodes, more than the 2^31-1 local ids of a rank: load on more ranks", rank, k, total)
	}
	pos, ref := mergeOrder(parts, total)
	p0 := parts[0]
	d := p0.FeatDim
	out := &Shard{Rank: rank, Ranks: ranks, NumGlobalNodes: p0.NumGlobalNodes, Global: make([]int64, total),
		FeatDim: d, NumClasses: p0.NumClasses, Split: make([]uint8, total)}
	feats := make([]graph.Features, len(parts))
	for i, p := range parts {
		feats[i] = p.Features
	}
	var err error
	if out.Features, err = graph.MergeFeatures(feats, ref); err != nil {
		return nil, fmt.Errorf("rank %d: %w", rank, err)
	}
	if p0.Labels != nil {
		out.Labels = make([]int32, total)
	}
	mg := newMerger(parts, int32(rank*k), k, pos, total)
	for m, r := range ref {
		p, j := parts[r[0]], int(r[1])
		out.Global[m] = p.Global[j]
		if out.Labels != nil {
			out.Labels[m] = p.Labels[j]
		}
		out.Split[m] = p.Split[j]
		if err := mg.row(m, int(r[0]), j); err != nil {
			return nil, err
		}
	}
	out.Local, out.Remote = mg.loc, mg.rem
	return out, nil
}

// mergeOrder returns the merged local id of node j of part i (pos[i][j])
// and the (part, index) of every merged id (ref): the merged order is the
// global order.
func mergeOrder(parts []*Shard, total int) (pos [][]int32, ref [][2]int32) {
	pos = make([][]int32, len(parts))
	for i, p := range parts {
		pos[i] = make([]int32, len(p.Global))
	}
	ref = make([][2]int32, total)
	head := make([]int, len(parts))
	for m := 0; m < total; m++ {
		best := -1
		for i, p := range parts {
			if head[i] < len(p.Global) && (best < 0 || p.Global[head[i]] < parts[best].Global[head[best]]) {
				best = i
			}
		}
		pos[best][head[best]] = int32(m)
		ref[m] = [2]int32{int32(best), int32(head[best])}
		head[best]++
	}
	return pos, ref
}

// merger builds the merged shard's rows: an edge between two of the parts
// becomes local, the others stay remote (owned by the rank of their part).
type merger struct {
	parts                 []*Shard
	first                 int32 // the first part merged
	k                     int
	pos                   [][]int32
	weighted              bool
	loc                   *graph.CSR
	rem                   RemoteEdges
	fromLocal, fromRemote []weightedEdge
}

func newMerger(parts []*Shard, first int32, k int, pos [][]int32, total int) *merger {
	var nloc, nrem int64
	for _, p := range parts {
		nloc += p.Local.NNZ()
		nrem += int64(len(p.Remote.Src))
	}
	mg := &merger{parts: parts, first: first, k: k, pos: pos, weighted: parts[0].Weighted(),
		loc: &graph.CSR{NumRows: total, NumCols: total, Ptr: make([]int64, total+1), Idx: make([]int32, 0, nloc+nrem)},
		rem: RemoteEdges{Ptr: make([]int64, total+1)}}
	if mg.weighted {
		mg.loc.Val = make([]float32, 0, nloc+nrem)
		mg.rem.Val = []float32{}
	}
	return mg
}

// row appends merged row m, node j of part i.
func (mg *merger) row(m, i, j int) error {
	p := mg.parts[i]
	mg.fromLocal = mg.fromLocal[:0]
	for e := p.Local.Ptr[j]; e < p.Local.Ptr[j+1]; e++ {
		mg.fromLocal = append(mg.fromLocal, weightedEdge{mg.pos[i][p.Local.Idx[e]], edgeWeight(p.Local.Val, e)})
	}
	mg.fromRemote = mg.fromRemote[:0]
	for e := p.Remote.Ptr[j]; e < p.Remote.Ptr[j+1]; e++ {
		src, q := p.Remote.Src[e], p.Remote.Owner[e]
		if q >= mg.first && q < mg.first+int32(mg.k) {
			qi := q - mg.first
			g := mg.parts[qi].Global
			idx := sort.Search(len(g), func(i int) bool { return g[i] >= src })
			if idx == len(g) || g[idx] != src {
				return fmt.Errorf("%s says node %d is in part %d, which does not hold it", PartFile(int(mg.first)+i), src, q)
			}
			mg.fromRemote = append(mg.fromRemote, weightedEdge{mg.pos[qi][idx], edgeWeight(p.Remote.Val, e)})
			continue
		}
		mg.rem.Src = append(mg.rem.Src, src)
		mg.rem.Owner = append(mg.rem.Owner, q/int32(mg.k))
		if mg.weighted {
			mg.rem.Val = append(mg.rem.Val, p.Remote.Val[e])
		}
	}
	// Both lists follow the source order of the original row: merging
	// them by merged id (= global order) keeps sorted rows sorted.
	a, b := mg.fromLocal, mg.fromRemote
	for len(a) > 0 || len(b) > 0 {
		var x weightedEdge
		if len(b) == 0 || (len(a) > 0 && a[0].u <= b[0].u) {
			x, a = a[0], a[1:]
		} else {
			x, b = b[0], b[1:]
		}
		mg.loc.Idx = append(mg.loc.Idx, x.u)
		if mg.weighted {
			mg.loc.Val = append(mg.loc.Val, x.w)
		}
	}
	mg.loc.Ptr[m+1] = int64(len(mg.loc.Idx))
	mg.rem.Ptr[m+1] = int64(len(mg.rem.Src))
	return nil
}

// weightedEdge is a merged row entry: its source and its weight.
type weightedEdge struct {
	u int32
	w float32
}

// edgeWeight is val[e], or 0 for an unweighted graph (val nil).
func edgeWeight(val []float32, e int64) float32 {
	if val == nil {
		return 0
	}
	return val[e]
}
