package graph

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/mix"
)

// RandomSplit draws a train/valid/test split of the labelled nodes:
// floor(Train·L) nodes train, floor(Valid·L) validate and floor(Test·L)
// test, L the labelled node count. Node v's place is the rank of Key(v)
// among the labelled nodes' keys, so the split depends only on the seed,
// the fractions and which nodes are labelled: not on how the nodes are
// spread over processes.
type RandomSplit struct {
	Train, Valid, Test float64
	Seed               uint64
}

// ParseSplit parses LoadOptions.Split: "" (the dataset's own split), a
// split directory NAME of an OGB dataset, or random:TRAIN,VALID[,TEST][:SEED]
// with fractions in [0,1] summing to at most 1 (TEST defaults to the rest;
// SEED to 0). It returns the name, or the random split.
func ParseSplit(s string) (name string, r *RandomSplit, err error) {
	spec, ok := strings.CutPrefix(s, "random:")
	if !ok {
		if s == "random" {
			return "", nil, field.Errorf("graph.LoadOptions.Split", "%q: want random:TRAIN,VALID[,TEST][:SEED], e.g. random:0.6,0.2", s)
		}
		return s, nil, nil
	}
	bad := func(format string, args ...any) error {
		return field.Errorf("graph.LoadOptions.Split", "%q: "+format+" (want random:TRAIN,VALID[,TEST][:SEED], fractions in [0,1])", append([]any{s}, args...)...)
	}
	r = &RandomSplit{}
	if fr, seed, ok := strings.Cut(spec, ":"); ok {
		if r.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
			return "", nil, bad("seed %q is not a non-negative integer", seed)
		}
		spec = fr
	}
	parts := strings.Split(spec, ",")
	if len(parts) < 2 || len(parts) > 3 {
		return "", nil, bad("%d fractions", len(parts))
	}
	var f [3]float64
	for k, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return "", nil, bad("fraction %d (%s) is not a number in [0,1]", k+1, p)
		}
		f[k] = v
	}
	if len(parts) == 2 {
		f[2] = max(0, 1-f[0]-f[1])
	}
	if sum := f[0] + f[1] + f[2]; sum > 1+1e-9 {
		return "", nil, bad("the fractions sum to %.6g, more than 1", sum)
	}
	r.Train, r.Valid, r.Test = f[0], f[1], f[2]
	return "", r, nil
}

// Key is node v's random key: distinct for distinct nodes.
func (r *RandomSplit) Key(v int64) uint64 {
	return mix.Mix64(uint64(v) ^ mix.Mix64(r.Seed^0x9e3779b97f4a7c15))
}

// Ranks returns the cumulative sizes of the parts for l labelled nodes:
// train, train+valid, train+valid+test.
func (r *RandomSplit) Ranks(l int64) [3]int64 {
	var c [3]int64
	total := int64(0)
	for k, f := range [3]float64{r.Train, r.Valid, r.Test} {
		total = min(l, total+int64(math.Floor(f*float64(l)+1e-9)))
		c[k] = total
	}
	if r.Train+r.Valid+r.Test >= 1-1e-9 {
		c[2] = l // fractions summing to 1 leave no node out
	}
	return c
}

// Bounds returns, for each part, the key of the labelled node whose rank
// is the part's cumulative size (the first node past it), with all[k] set
// when the part reaches the last node. keys are this process's labelled
// nodes' keys; sum adds an []int64 element-wise over the processes sharing
// the nodes (a no-op for one process). Collective through sum.
func (r *RandomSplit) Bounds(keys []uint64, sum func([]int64) error) (bound [3]uint64, all [3]bool, err error) {
	l := []int64{int64(len(keys))}
	if err := sum(l); err != nil {
		return bound, all, err
	}
	ranks := r.Ranks(l[0])
	// Radix selection, 8 bits a round, of the three ranks at once.
	var prefix [3]uint64
	rem := ranks
	for shift := 56; shift >= 0; shift -= 8 {
		hist := make([]int64, 3*256)
		hi := ^uint64(0) << (shift + 8) // the bits already fixed (none at first)
		for _, key := range keys {
			for k := range 3 {
				if key&hi == prefix[k] {
					hist[k*256+int(key>>shift&255)]++
				}
			}
		}
		if err := sum(hist); err != nil {
			return bound, all, err
		}
		for k := range 3 {
			if rem[k] >= l[0] {
				continue
			}
			b := 0
			for ; b < 255 && rem[k] >= hist[k*256+b]; b++ {
				rem[k] -= hist[k*256+b]
			}
			prefix[k] |= uint64(b) << shift
		}
	}
	for k := range 3 {
		all[k] = ranks[k] >= l[0]
	}
	return prefix, all, nil
}

// Part returns the split bit (InTrain, InValid, InTest) of a labelled node
// with key, or 0 for one left out, from Bounds' result.
func Part(key uint64, bound [3]uint64, all [3]bool) uint8 {
	for k := range 3 {
		if all[k] || key < bound[k] {
			return uint8(1) << k
		}
	}
	return 0
}

// randomSplit replaces ds's split by r over its labelled nodes.
func randomSplit(ds *Dataset, r *RandomSplit, spec string) error {
	if ds.Labels == nil {
		return field.Errorf("graph.LoadOptions.Split", "%q: %s has no labels to split (give them with graph.LoadOptions.Labels)", spec, ds.Name)
	}
	var keys []uint64
	for v, y := range ds.Labels {
		if y >= 0 {
			keys = append(keys, r.Key(int64(v)))
		}
	}
	bound, all, err := r.Bounds(keys, func([]int64) error { return nil })
	if err != nil {
		return err
	}
	var parts [3][]int32
	for v, y := range ds.Labels {
		if y < 0 {
			continue
		}
		if b := Part(r.Key(int64(v)), bound, all); b != 0 {
			k := bitIndex(b)
			parts[k] = append(parts[k], int32(v))
		}
	}
	ds.Train, ds.Valid, ds.Test = parts[0], parts[1], parts[2]
	return nil
}

// bitIndex is the index of the single bit set in b.
func bitIndex(b uint8) int {
	k := 0
	for b>>k != 1 {
		k++
	}
	return k
}

// SplitArray is one part of a split given as an array: a boolean mask with
// one element per node, or node ids. It is read by ranges of its entries.
type SplitArray struct {
	a     *npzArray
	Mask  bool
	Len   int64 // entries: nodes for a mask, ids otherwise
	nodes int
}

// newSplitArray checks a's shape and dtype for a split part of n nodes
// (n < 0: unknown, masks then set it).
func newSplitArray(a *npzArray, err error, n int) (*SplitArray, error) {
	if err != nil {
		return nil, err
	}
	s := &SplitArray{a: a, Mask: a.h.kind == 'b', nodes: n}
	vector := len(a.Shape) == 1 || (len(a.Shape) == 2 && a.Shape[1] == 1)
	switch {
	case !vector:
		err = errorf(a.name, 0, "shape %v: want (N,) booleans or (K,) node ids (one split)", a.Shape)
	case s.Mask && n >= 0 && a.Shape[0] != n:
		err = errorf(a.name, 0, "mask of %d entries for %d nodes", a.Shape[0], n)
	case a.h.kind == 'f':
		err = errorf(a.name, 0, "dtype %s: want booleans (a mask) or integers (node ids)", a.h.descr)
	}
	if err != nil {
		a.Close()
		return nil, err
	}
	s.Len = int64(a.Shape[0])
	return s, nil
}

// OpenSplitArray opens a .npy file holding a split part for n nodes.
func OpenSplitArray(path string, n int) (*SplitArray, error) {
	a, err := openNpyArray(path)
	return newSplitArray(a, err, n)
}

// Close closes the array.
func (s *SplitArray) Close() error { return s.a.Close() }

// Name names the array for errors.
func (s *SplitArray) Name() string { return s.a.name }

// IDs returns the nodes of entries [lo, hi): for a mask the indices whose
// element is true, else the ids, checked to lie in [0, nodes) (a serial
// loader's split: nodes < 2^31).
func (s *SplitArray) IDs(lo, hi int64) ([]int32, error) {
	var ids idList
	err := s.ids(lo, hi, &ids)
	return ids.i32, err
}

// IDs64 is IDs with int64 node ids (the range readers').
func (s *SplitArray) IDs64(lo, hi int64) ([]int64, error) {
	ids := idList{wide: true}
	err := s.ids(lo, hi, &ids)
	return ids.i64, err
}

// ids appends the nodes of entries [lo, hi) to out.
func (s *SplitArray) ids(lo, hi int64, out *idList) error {
	arr, err := s.a.elems(lo, hi)
	if err != nil {
		return err
	}
	if s.Mask {
		for k, b := range arr.data.([]uint8) {
			if b != 0 {
				out.add(lo + int64(k))
			}
		}
		return nil
	}
	v, err := arr.Int64()
	if err != nil {
		return errorf(s.a.name, 0, "%v", err)
	}
	out.reserve(len(v))
	for k, x := range v {
		if x < 0 || x >= int64(s.nodes) {
			return errorf(s.a.name, 0, "element %d: node id %d outside [0,%d)", lo+int64(k), x, s.nodes)
		}
		out.add(x)
	}
	return nil
}

// splitIDs reads a whole split part into ids (ascending), checking each
// node against the parts read before (seen) and the labels.
func splitIDs(s *SplitArray, labels []int32, seen []uint8, bit uint8) ([]int32, error) {
	ids, err := s.IDs(0, s.Len)
	if err != nil {
		return nil, err
	}
	for k, x := range ids {
		pos := k
		if s.Mask {
			pos = int(x)
		}
		if msg := checkSplitNode(int64(x), labels, seen, bit); msg != "" {
			return nil, errorf(s.a.name, 0, "element %d: %s", pos, msg)
		}
		seen[x] |= bit
	}
	slices.Sort(ids)
	return ids, nil
}

// checkSplitNode says what is wrong with node x (in range) joining the
// split part bit, or "".
func checkSplitNode(x int64, labels []int32, seen []uint8, bit uint8) string {
	switch {
	case seen[x]&bit != 0:
		return fmt.Sprintf("node %d listed twice", x)
	case seen[x] != 0:
		return fmt.Sprintf("node %d is also in the %s split: the splits must be disjoint (a label leak otherwise)", x, splitName(seen[x]))
	case labels != nil && labels[x] < 0:
		return fmt.Sprintf("node %d has no label", x)
	}
	return ""
}

// SplitFile returns the file holding split part k (0 train, 1 valid, 2
// test) in a split-files directory: train, valid (or val) and test, each
// .npy or .csv[.gz|.bz2]; "" if none. Two files for one part (valid.npy
// and val.npy, train.npy and train.csv) are an error naming both: which
// one holds the split is ambiguous.
func SplitFile(dir string, k int) (string, error) {
	var found []string
	for _, base := range [3][]string{{"train"}, {"valid", "val"}, {"test"}}[k] {
		for _, ext := range []string{".npy", ".csv", ".csv.gz", ".csv.bz2"} {
			p := filepath.Join(dir, base+ext)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				found = append(found, p)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", field.Errorf("graph.LoadOptions.SplitFiles", "%s and %s both hold the %s split: remove one", found[0], found[1], splitParts[k])
}

// loadSplitFiles replaces ds's split by the files in dir.
func loadSplitFiles(ds *Dataset, dir string) error {
	seen := make([]uint8, ds.NumNodes())
	var parts [3][]int32
	for k := range 3 {
		p, err := SplitFile(dir, k)
		if err != nil {
			return err
		}
		if p == "" {
			return field.Errorf("graph.LoadOptions.SplitFiles", "%s: no %s.npy or %s.csv[.gz]", dir, splitParts[k], splitParts[k])
		}
		if strings.HasSuffix(p, ".npy") {
			var s *SplitArray
			if s, err = OpenSplitArray(p, ds.NumNodes()); err == nil {
				parts[k], err = splitIDs(s, ds.Labels, seen, uint8(1)<<k)
				s.Close()
			}
		} else {
			parts[k], err = readSplitFile(p, ds.Labels, seen, uint8(1)<<k)
		}
		if err != nil {
			return err
		}
	}
	ds.Train, ds.Valid, ds.Test = parts[0], parts[1], parts[2]
	return nil
}

// splitParts names the split parts in file names.
var splitParts = [3]string{"train", "valid", "test"}

// applySplit replaces ds's split by the random split or split files of o,
// when o asks for one.
func applySplit(ds *Dataset, o LoadOptions) error {
	_, r, err := ParseSplit(o.Split)
	switch {
	case err != nil:
		return err
	case r != nil:
		return randomSplit(ds, r, o.Split)
	case o.SplitFiles != "":
		return loadSplitFiles(ds, o.SplitFiles)
	}
	return nil
}

// Compressed reports whether the array is a deflated npz member: it can
// only be read front to back, by one reader.
func (s *SplitArray) Compressed() bool { return !s.a.stored }
