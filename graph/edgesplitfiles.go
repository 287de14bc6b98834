package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Edge split files: the link-prediction split of OGB's ogbl datasets, as
// get_edge_split() returns it, saved without pickles. A directory holds
// one file per split part, train, valid (or val) and test:
//
//   - NAME.npz with OGB's keys: the positives as edge (E, 2) or
//     source_node and target_node (E,); the fixed negatives as edge_neg
//     (M, 2), shared by every positive (ogbl-collab, ppa, ddi, vessel), or
//     target_node_neg (E, K), K negative targets of each positive's source
//     (ogbl-citation2); weight and year (ogbl-collab) are ignored;
//   - NAME.npy (E, 2) with the negatives, if any, in NAME_neg.npy (M, 2);
//   - NAME.csv or NAME.csv.gz, one pair "u,v" a line, the negatives in
//     NAME_neg.csv[.gz].
//
// The training part has no negatives: they are drawn every epoch.

// edgeSplitExts are the positives' file forms, in the order searched.
var edgeSplitExts = []string{".npz", ".npy", ".csv", ".csv.gz"}

// edgeNpzKeys are the arrays an edge split .npz may hold.
var edgeNpzKeys = []string{"edge", "source_node", "target_node", "edge_neg", "target_node_neg", "weight", "year"}

// edgePart is one part of an edge split read from its files.
type edgePart struct {
	pos, neg [][2]int32
	tneg     []int32 // per-source negative targets, len(pos)×k
	k        int
}

// ReadEdgeSplitFiles reads the edge split in dir (the files above) for
// the nodes of ds and removes the validation and test positives from
// ds.Graph in both directions, so message passing never sees them. Pairs
// keep the files' order; a pair naming a node outside the graph, an array
// of the wrong shape or dtype, an unknown array or a pickle is an error
// naming the file and the entry.
func ReadEdgeSplitFiles(ds *Dataset, dir string) (*EdgeSplit, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	n := ds.NumNodes()
	var parts [3]edgePart
	for k := range parts {
		pos, neg, err := edgeSplitFile(dir, k)
		if err != nil {
			return nil, err
		}
		if parts[k], err = readEdgePart(pos, neg, n); err != nil {
			return nil, err
		}
		switch {
		case k == 0 && (parts[k].neg != nil || parts[k].tneg != nil):
			return nil, fmt.Errorf("%s: the training part has fixed negatives; training draws its negatives every epoch: remove them", firstNonEmpty(neg, pos))
		case len(parts[k].pos) == 0 && k < 2:
			return nil, fmt.Errorf("%s: no %s edges", pos, splitParts[k])
		}
	}
	es := &EdgeSplit{Train: parts[0].pos, Valid: parts[1].pos, Test: parts[2].pos}
	for i, p := range parts[1:] {
		es.Neg[i], es.TargetNeg[i], es.NegK[i] = p.neg, p.tneg, p.k
	}
	held := make(map[[2]int32]bool, len(es.Valid)+len(es.Test))
	for _, p := range append(slices.Clone(es.Valid), es.Test...) {
		held[[2]int32{min(p[0], p[1]), max(p[0], p[1])}] = true
	}
	ds.Graph = removeEdges(ds.Graph, held)
	return es, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// edgeSplitFile finds part k's positives file in dir and, for .npy and
// .csv forms, its negatives file ("" when none). A part in two files, or
// only in a PyTorch pickle, is an error naming them.
func edgeSplitFile(dir string, k int) (pos, neg string, err error) {
	exists := func(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }
	var found []string
	for _, base := range [3][]string{{"train"}, {"valid", "val"}, {"test"}}[k] {
		for _, ext := range edgeSplitExts {
			if p := filepath.Join(dir, base+ext); exists(p) {
				found = append(found, p)
			}
		}
	}
	switch len(found) {
	case 0:
		for _, base := range [3][]string{{"train"}, {"valid", "val"}, {"test"}}[k] {
			if p := filepath.Join(dir, base+".pt"); exists(p) {
				return "", "", fmt.Errorf("%s is a PyTorch pickle, never loaded: save OGB's split with numpy (docs/TASKS.md, \"OGB's link splits\")", p)
			}
		}
		return "", "", fmt.Errorf("%s: no %s part: want %s.npz, .npy, .csv or .csv.gz", dir, splitParts[k], splitParts[k])
	case 1:
	default:
		return "", "", fmt.Errorf("%s and %s both hold the %s edges: remove one", found[0], found[1], splitParts[k])
	}
	pos = found[0]
	stem := strings.TrimSuffix(strings.TrimSuffix(pos, ".gz"), filepath.Ext(strings.TrimSuffix(pos, ".gz")))
	for _, ext := range edgeSplitExts[1:] {
		if p := stem + "_neg" + ext; exists(p) {
			if strings.HasSuffix(pos, ".npz") {
				return "", "", fmt.Errorf("%s: %s holds its negatives (edge_neg or target_node_neg): remove one", p, pos)
			}
			if neg != "" {
				return "", "", fmt.Errorf("%s and %s both hold the %s negatives: remove one", neg, p, splitParts[k])
			}
			neg = p
		}
	}
	return pos, neg, nil
}

// readEdgePart reads a part's positives from pos and negatives from neg
// ("" none), for n nodes.
func readEdgePart(pos, neg string, n int) (edgePart, error) {
	var p edgePart
	var err error
	if strings.HasSuffix(pos, ".npz") {
		return readEdgeNpz(pos, n)
	}
	if p.pos, err = readPairFile(pos, n); err == nil && neg != "" {
		p.neg, err = readPairFile(neg, n)
	}
	return p, err
}

// readPairFile reads pairs from a .npy (E, 2) or a .csv[.gz] file.
func readPairFile(path string, n int) ([][2]int32, error) {
	if strings.HasSuffix(path, ".npy") {
		ids, _, err := npyNodeIDs(path, n, 2)
		return asPairs(ids), err
	}
	return readPairCSV(path, n)
}

func asPairs(ids []int32) [][2]int32 {
	p := make([][2]int32, len(ids)/2)
	for i := range p {
		p[i] = [2]int32{ids[2*i], ids[2*i+1]}
	}
	return p
}

// readPairCSV reads one pair "u,v" (or "u v") a line.
func readPairCSV(path string, n int) ([][2]int32, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	var pairs [][2]int32
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		var p [2]int32
		i := 0
		for j := range 3 {
			f, next := nextField(line, i)
			i = next
			if j == 2 {
				if len(f) != 0 {
					return nil, errorf(path, lr.line, "more than two node ids (want one pair \"u,v\" a line)")
				}
				break
			}
			x, ok := parseInt(f)
			switch {
			case !ok:
				return nil, errorf(path, lr.line, "bad node id %s (want one pair \"u,v\" a line)", quote(f))
			case x < 0 || x >= int64(n):
				return nil, errorf(path, lr.line, "node id %d outside [0,%d)", x, n)
			}
			p[j] = int32(x)
		}
		pairs = append(pairs, p)
	}
	return pairs, lr.Err()
}

// readEdgeNpz reads a part from an .npz with OGB's get_edge_split() keys.
func readEdgeNpz(path string, n int) (edgePart, error) {
	var p edgePart
	z, err := openNpz(path)
	if err != nil {
		return p, err
	}
	defer z.Close()
	for _, name := range z.names() {
		if !slices.Contains(edgeNpzKeys, name) {
			return p, errorf(path, 0, "array %q is not one of OGB's edge split keys (%s)", name, strings.Join(edgeNpzKeys, ", "))
		}
	}
	switch {
	case z.has("edge") && (z.has("source_node") || z.has("target_node")):
		return p, errorf(path, 0, "both edge and source_node/target_node: give the positives once")
	case z.has("source_node") != z.has("target_node"):
		return p, errorf(path, 0, "source_node and target_node go together")
	}
	if p.pos, err = ReadPairFile(path, n); err != nil {
		return p, err
	}
	switch {
	case z.has("edge_neg") && z.has("target_node_neg"):
		return p, errorf(path, 0, "both edge_neg (shared negatives) and target_node_neg (per-source negatives): give one")
	case z.has("edge_neg"):
		ids, _, err := z.nodeIDs("edge_neg", n, 2)
		if err != nil {
			return p, err
		}
		p.neg = asPairs(ids)
	case z.has("target_node_neg"):
		if p.tneg, p.k, err = z.nodeIDs("target_node_neg", n, -1); err != nil {
			return p, err
		}
		if rows := len(p.tneg) / max(p.k, 1); rows != len(p.pos) || p.k == 0 {
			return p, errorf(path+":target_node_neg.npy", 0, "%d rows of %d negatives, want one row per positive (%d) with K ≥ 1", rows, p.k, len(p.pos))
		}
	}
	return p, nil
}

// nodeIDs reads array name of z: integer node ids in [0, n), of shape
// (R, cols) for cols > 0, (R,) or (R, 1) for cols 0, (R, K) any K for cols
// < 0. It returns the ids row-major and the row width.
func (z *npzFile) nodeIDs(name string, n, cols int) ([]int32, int, error) {
	full := z.path + ":" + name + ".npy"
	if m := z.members[name]; m != nil {
		if h, err := readNpyHeaderRaw(z.rawHeader(m), full); err == nil {
			if err := refusePickle(full, h.descr); err != nil {
				return nil, 0, err
			}
		}
	}
	a, err := z.open(name)
	if err != nil {
		return nil, 0, err
	}
	defer a.Close()
	return readNodeIDs(a, n, cols)
}

// npyNodeIDs is nodeIDs of a .npy file.
func npyNodeIDs(path string, n, cols int) ([]int32, int, error) {
	f, _, err := openStat(path)
	if err != nil {
		return nil, 0, err
	}
	h, err := readNpyHeaderRaw(f, path)
	f.Close()
	if err != nil {
		return nil, 0, err
	}
	if err := refusePickle(path, h.descr); err != nil {
		return nil, 0, err
	}
	a, err := openNpyArray(path)
	if err != nil {
		return nil, 0, err
	}
	defer a.Close()
	return readNodeIDs(a, n, cols)
}

// readNodeIDs checks a's shape and dtype against cols (nodeIDs) and reads
// its ids, naming the first entry outside [0, n).
func readNodeIDs(a *npzArray, n, cols int) ([]int32, int, error) {
	width := 1
	if len(a.Shape) == 2 {
		width = a.Shape[1]
	}
	var want string
	switch {
	case cols > 0:
		want = fmt.Sprintf("(E, %d)", cols)
		if len(a.Shape) != 2 || width != cols {
			return nil, 0, errorf(a.name, 0, "shape %v, want %s node ids", a.Shape, want)
		}
	case cols == 0:
		if len(a.Shape) != 1 && !(len(a.Shape) == 2 && width == 1) {
			return nil, 0, errorf(a.name, 0, "shape %v, want (E,) node ids", a.Shape)
		}
	default:
		if len(a.Shape) != 2 {
			return nil, 0, errorf(a.name, 0, "shape %v, want (E, K) node ids", a.Shape)
		}
	}
	if k := a.h.kind; k != 'i' && k != 'u' {
		return nil, 0, errorf(a.name, 0, "dtype %s: want integer node ids", a.h.descr)
	}
	arr, err := a.elems(0, a.n)
	if err != nil {
		return nil, 0, err
	}
	v, err := arr.Int64()
	if err != nil {
		return nil, 0, errorf(a.name, 0, "%v", err)
	}
	ids := make([]int32, len(v))
	for i, x := range v {
		if x < 0 || x >= int64(n) {
			return nil, 0, errorf(a.name, 0, "row %d, column %d: node id %d outside [0,%d)", i/width, i%width, x, n)
		}
		ids[i] = int32(x)
	}
	return ids, width, nil
}

// ReadPairFile reads node pairs for n nodes from path: a .npy (E, 2), a
// .csv[.gz] of one pair "u,v" a line, or an .npz holding edge (E, 2) or
// source_node and target_node (E,) (its other arrays are not read).
func ReadPairFile(path string, n int) ([][2]int32, error) {
	switch {
	case strings.HasSuffix(path, ".npz"):
		z, err := openNpz(path)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		if z.has("edge") {
			ids, _, err := z.nodeIDs("edge", n, 2)
			return asPairs(ids), err
		}
		if !z.has("source_node") || !z.has("target_node") {
			return nil, errorf(path, 0, "no pairs: want edge (E, 2) or source_node and target_node (E,)")
		}
		src, _, err := z.nodeIDs("source_node", n, 0)
		if err != nil {
			return nil, err
		}
		dst, _, err := z.nodeIDs("target_node", n, 0)
		if err != nil {
			return nil, err
		}
		if len(src) != len(dst) {
			return nil, errorf(path+":target_node.npy", 0, "%d entries, source_node has %d", len(dst), len(src))
		}
		p := make([][2]int32, len(src))
		for i := range src {
			p[i] = [2]int32{src[i], dst[i]}
		}
		return p, nil
	case strings.HasSuffix(path, ".npy"), strings.HasSuffix(path, ".csv"), strings.HasSuffix(path, ".csv.gz"):
		return readPairFile(path, n)
	}
	return nil, fmt.Errorf("%s: pairs must be .npy (E, 2), .csv[.gz] (u,v a line) or .npz (edge, or source_node and target_node)", path)
}
