package graph

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/supergcn/supergcn/internal/field"
)

// LoadOGB reads a node-property dataset in the OGB raw layout from dir:
//
//	raw/edge.csv[.gz|.bz2]          "src,dst" a line, 0-based (required)
//	raw/num-node-list.csv[...]      node count (else max id + 1 / feature or label rows)
//	raw/num-edge-list.csv[...]      edge count, checked when present
//	raw/edge_weight.csv[...]        one weight a line, for the edge on the same line of edge.csv (optional)
//	raw/node-feat.npy or .csv[...]  N×F features (optional)
//	raw/node-label.npy or .csv[...] one class a line; "nan" or empty = -1 (optional)
//	split/<name>/{train,valid,test}.csv[...]  one node id a line
//
// split names the split directory; "" picks "public" when present, else
// the only directory under split/ (an error lists them when there are
// several). Edges are returned as given, as a CSR whose row v lists the
// sources u of the edges u→v: OGB lists each undirected edge of
// ogbn-arxiv/products once, so callers that want an undirected graph
// apply Symmetrize. NumClasses is the largest label + 1.
func LoadOGB(dir, split string) (*Dataset, error) {
	return loadOGB(dir, LoadOptions{Split: split})
}

// loadOGB is LoadOGB; features and labels are not read from dir when o
// overrides them.
func loadOGB(dir string, o LoadOptions) (*Dataset, error) {
	if err := CheckOGBLayout(dir); err != nil {
		return nil, err
	}
	raw := filepath.Join(dir, "raw")
	n, src, dst, err := readOGBEdges(dir, raw)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: baseName(dir)}
	featPath, labelPath := "", ""
	if o.Features == "" {
		featPath = findData(raw, "node-feat", true)
	}
	if o.Labels == "" && !o.NoLabels {
		labelPath = findData(raw, "node-label", true)
	}
	if err := readOGBNodeData(ds, featPath, labelPath, n); err != nil {
		return nil, err
	}
	if n, err = ogbNodeCount(n, src, dst, ds, featPath, labelPath); err != nil {
		return nil, err
	}
	var val []float32
	if p := findData(raw, "edge_weight", false); p != "" {
		if val, err = readEdgeWeightCSV(p, len(src)); err != nil {
			return nil, err
		}
	}
	ds.Graph = FromCOO(n, n, src, dst, val)
	if o.NodeFeatFromEdges != "" {
		if err := foldOGBEdgeFeatures(ds, raw, o.NodeFeatFromEdges, src, dst); err != nil {
			return nil, err
		}
	}
	if !o.ownSplit() {
		return ds, nil
	}
	if err := loadOGBSplit(ds, dir, o.Split); err != nil {
		return nil, err
	}
	return ds, nil
}

// readOGBEdges reads raw/edge.csv, checked against num-node-list.csv and
// num-edge-list.csv when present; n is -1 when the node count is not given.
func readOGBEdges(dir, raw string) (n int, src, dst []int32, err error) {
	edgePath := findData(raw, "edge", false)
	if edgePath == "" {
		return 0, nil, nil, errorf(dir, 0, "no raw/edge.csv[.gz] (heterogeneous OGB datasets such as ogbn-mag are not supported)")
	}
	n, m := -1, -1
	if p := findData(raw, "num-node-list", false); p != "" {
		if n, err = readCount(p); err != nil {
			return 0, nil, nil, err
		}
		if msg := serialIDs().tooLarge(int64(n)); msg != "" {
			return 0, nil, nil, errorf(p, 1, "%d nodes: %s", n, msg)
		}
		if int64(n) > nodeLimit() {
			return 0, nil, nil, tooManyNodes(p, 1, "the node count", int64(n))
		}
	}
	edgeCountPath := findData(raw, "num-edge-list", false)
	if edgeCountPath != "" {
		if m, err = readCount(edgeCountPath); err != nil {
			return 0, nil, nil, err
		}
	}
	if src, dst, err = readEdgeCSV(edgePath, n, m); err != nil {
		return 0, nil, nil, err
	}
	if m >= 0 && m != len(src) {
		return 0, nil, nil, errorf(edgeCountPath, 1, "says %d edges but %s has %d", m, edgePath, len(src))
	}
	return n, src, dst, nil
}

// findData returns the path of raw/<base>.npy (when npy is true), or
// raw/<base>.csv, .csv.gz or .csv.bz2, whichever exists first; "" if none.
// CheckOGBLayout refuses an OGB directory holding one table in two forms
// (edge.csv beside edge.csv.gz, say) in raw/ or a split directory: which of
// them holds the data is ambiguous, and they may differ. A .npy beside a
// .csv is not ambiguous: the .npy is read.
func CheckOGBLayout(dir string) error {
	dirs := []string{filepath.Join(dir, "raw")}
	if splits, err := os.ReadDir(filepath.Join(dir, "split")); err == nil {
		for _, s := range splits {
			if s.IsDir() {
				dirs = append(dirs, filepath.Join(dir, "split", s.Name()))
			}
		}
	}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		first := map[string]string{}
		for _, e := range ents {
			name := e.Name()
			base := strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".bz2")
			if !strings.HasSuffix(base, ".csv") {
				continue
			}
			if prev, ok := first[base]; ok {
				return errorf(filepath.Join(d, name), 0, "%s is also there: two forms of one table, remove one", prev)
			}
			first[base] = name
		}
	}
	return nil
}

func findData(raw, base string, npy bool) string {
	cands := []string{base + ".csv", base + ".csv.gz", base + ".csv.bz2"}
	if npy {
		cands = append([]string{base + ".npy"}, cands...)
	}
	for _, c := range cands {
		p := filepath.Join(raw, c)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// readOGBNodeData reads features and labels (either path may be ""); n is
// the node count when known (-1 otherwise), used to size the tables.
func readOGBNodeData(ds *Dataset, featPath, labelPath string, n int) error {
	var err error
	var x []float32
	switch {
	case strings.HasSuffix(featPath, ".npy"):
		x, ds.FeatDim, err = readNpyFeatures(featPath, -1)
	case featPath != "":
		x, ds.FeatDim, err = readFeatureCSV(featPath, n)
	}
	if err != nil {
		return err
	}
	if ds.FeatDim > 0 {
		ds.Features = DenseX(x, len(x)/ds.FeatDim, ds.FeatDim)
	}
	switch {
	case strings.HasSuffix(labelPath, ".npy"):
		ds.Labels, err = readNpyLabels(labelPath, -1)
	case labelPath != "":
		ds.Labels, err = readLabelCSV(labelPath, n)
	}
	if err != nil {
		return err
	}
	ds.NumClasses = numClasses(ds.Labels)
	return nil
}

// ogbNodeCount checks (or, when n < 0, infers) the node count against the
// edges, feature rows and labels.
func ogbNodeCount(n int, src, dst []int32, ds *Dataset, featPath, labelPath string) (int, error) {
	rows := -1
	if ds.FeatDim > 0 {
		rows = ds.Features.Rows()
	}
	if n < 0 {
		n = max(rows, len(ds.Labels))
		for k := range src {
			n = max(n, int(src[k])+1, int(dst[k])+1)
		}
	}
	if featPath != "" && rows != n {
		return 0, errorf(featPath, 0, "has %d feature rows but the graph has %d nodes", rows, n)
	}
	if labelPath != "" && len(ds.Labels) != n {
		return 0, errorf(labelPath, 0, "has %d labels but the graph has %d nodes", len(ds.Labels), n)
	}
	return n, nil
}

// readCount reads the single non-negative integer of num-node-list.csv or
// num-edge-list.csv (a node-property dataset has one graph).
func readCount(path string) (int, error) {
	lr, err := openLines(path)
	if err != nil {
		return 0, err
	}
	defer lr.Close()
	count, lines := int64(-1), 0
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		if lines++; lines > 1 {
			return 0, errorf(path, lr.line, "expected one count (one graph), found more lines")
		}
		f := trimSpace(line)
		x, ok := parseInt(f)
		if !ok || x < 0 {
			return 0, errorf(path, lr.line, "bad count %s", quote(f))
		}
		count = x
	}
	if err := lr.Err(); err != nil {
		return 0, err
	}
	if count < 0 {
		return 0, errorf(path, 0, "empty: expected one count")
	}
	return int(count), nil
}

// readEdgeCSV reads "src,dst" lines. When n >= 0, ids must lie in [0,n);
// m >= 0 is the expected edge count (sizes the slices).
func readEdgeCSV(path string, n, m int) (src, dst []int32, err error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, nil, err
	}
	defer lr.Close()
	lr.hint = m
	return parseEdgeCSV(lr, n)
}

// parseEdgeCSV parses "src,dst" lines for a serial loader (see
// parseEdgeCSVIDs).
func parseEdgeCSV(lr *lineReader, n int) (src, dst []int32, err error) {
	s, d, err := parseEdgeCSVIDs(lr, int64(n), serialIDs())
	return s.i32, d.i32, err
}

// parseEdgeCSVIDs parses "src,dst" lines with ids in [0, n) (n < 0: ids
// admits them).
func parseEdgeCSVIDs(lr *lineReader, n int64, ids idBounds) (src, dst idList, err error) {
	limit := ids.maxID
	if n >= 0 {
		limit = n - 1
	}
	started := false
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		c := bytes.IndexByte(line, ',')
		if c < 0 || bytes.IndexByte(line[c+1:], ',') >= 0 {
			return idList{}, idList{}, errorf(lr.name, lr.line, "expected 2 comma-separated fields \"src,dst\", found %d",
				bytes.Count(line, []byte{','})+1)
		}
		var uv [2]int64
		for k, f := range [2][]byte{trimSpace(line[:c]), trimSpace(line[c+1:])} {
			x, ok := parseInt(f)
			if !ok {
				return idList{}, idList{}, errorf(lr.name, lr.line, "field %d: bad node id %s", k+1, quote(f))
			}
			if x < 0 || x > limit {
				return idList{}, idList{}, errorf(lr.name, lr.line, "field %d: %s", k+1, ids.outside(x, limit))
			}
			if x >= ids.mem {
				return idList{}, idList{}, tooManyNodes(lr.name, lr.line, fmt.Sprintf("field %d: node id %d", k+1, x), x+1)
			}
			uv[k] = x
		}
		if !started {
			started = true
			est := lr.estimateLines()
			src, dst = newIDList(ids.wide, est), newIDList(ids.wide, est)
		}
		src.add(uv[0])
		dst.add(uv[1])
	}
	return src, dst, lr.Err()
}

// readEdgeWeightCSV reads one edge weight a line (finite, non-negative),
// m of them.
func readEdgeWeightCSV(path string, m int) ([]float32, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	lr.hint = m
	w, err := parseEdgeWeights(lr)
	if err != nil {
		return nil, err
	}
	if len(w) != m {
		return nil, EdgeWeightCountError(path, int64(len(w)), int64(m))
	}
	return w, nil
}

// EdgeWeightCountError is the error for an OGB edge_weight.csv at path
// holding weights lines for edges edges.
func EdgeWeightCountError(path string, weights, edges int64) error {
	return errorf(path, 0, "%d weights for %d edges: one a line, for the edge on the same line of edge.csv", weights, edges)
}

// parseEdgeWeights parses one finite, non-negative edge weight a line.
func parseEdgeWeights(lr *lineReader) ([]float32, error) {
	w := make([]float32, 0, min(max(lr.hint, 0), maxPrealloc))
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		f := trimSpace(line)
		v, ok := parseFloat32(f)
		if !ok {
			return nil, errorf(lr.name, lr.line, "bad edge weight %s (one number a line)", quote(f))
		}
		if msg := weightProblem(v); msg != "" {
			return nil, errorf(lr.name, lr.line, "edge weight %s: %s", quote(f), msg)
		}
		w = append(w, v)
	}
	return w, lr.Err()
}

// readFeatureCSV reads a table of comma-separated floats with the same
// number of columns on every line; rows >= 0 is the expected row count.
func readFeatureCSV(path string, rows int) (x []float32, dim int, err error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, 0, err
	}
	defer lr.Close()
	lr.hint = rows
	return parseFloatTable(lr)
}

func parseFloatTable(lr *lineReader) (x []float32, dim int, err error) {
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		col := 0
		for rest, more := line, true; more; col++ {
			var f []byte
			if c := bytes.IndexByte(rest, ','); c >= 0 {
				f, rest = rest[:c], rest[c+1:]
			} else {
				f, more = rest, false
			}
			if dim > 0 && col >= dim {
				return nil, 0, errorf(lr.name, lr.line, "more than %d fields (line 1 has %d)", dim, dim)
			}
			v, ok := parseFloat32(trimSpace(f))
			if !ok {
				return nil, 0, errorf(lr.name, lr.line, "field %d: bad number %s", col+1, quote(f))
			}
			x = append(x, v)
		}
		if dim == 0 {
			dim = col
			if est := lr.estimateLines(); est > 1 && est <= maxPrealloc*64/dim {
				x = slices.Grow(x, (est-1)*dim)
			}
		} else if col != dim {
			return nil, 0, errorf(lr.name, lr.line, "%d fields but line 1 has %d", col, dim)
		}
	}
	if err := lr.Err(); err != nil {
		return nil, 0, err
	}
	return x, dim, nil
}

// readLabelCSV reads one label a line: an integer >= -1, an integral
// float ("3.0"), or "nan"/empty for an unlabelled node (-1).
func readLabelCSV(path string, rows int) ([]int32, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	lr.hint = rows
	return parseLabels(lr)
}

func parseLabels(lr *lineReader) ([]int32, error) {
	var labels []int32
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		f := trimSpace(line)
		if bytes.IndexByte(f, ',') >= 0 {
			return nil, errorf(lr.name, lr.line, "expected one label, found %d fields (multi-label datasets are not supported)",
				bytes.Count(f, []byte{','})+1)
		}
		y, ok := parseLabel(f)
		if !ok {
			return nil, errorf(lr.name, lr.line, "bad label %s (want an integer >= 0, or nan/empty/-1 for none)", quote(f))
		}
		if y >= MaxClasses {
			return nil, errorf(lr.name, lr.line, "label %d: at most %d classes are supported", y, MaxClasses)
		}
		if labels == nil {
			labels = make([]int32, 0, lr.estimateLines())
		}
		labels = append(labels, y)
	}
	return labels, lr.Err()
}

// parseLabel parses one label field.
func parseLabel(f []byte) (int32, bool) {
	if len(f) == 0 || strings.EqualFold(unsafeString(f), "nan") {
		return -1, true
	}
	x, ok := parseInt(f)
	if !ok {
		v, okf := parseFloat32(f)
		if !okf || v != float32(int64(v)) {
			return 0, false
		}
		x = int64(v)
	}
	if x < -1 || x > maxNodeID {
		return 0, false
	}
	return int32(x), true
}

// numClasses returns the largest label + 1 (0 without labels).
func numClasses(labels []int32) int {
	m := int32(-1)
	for _, y := range labels {
		m = max(m, y)
	}
	return int(m) + 1
}

// loadOGBSplit fills ds.Train/Valid/Test from split/<name>/.
func loadOGBSplit(ds *Dataset, dir, name string) error {
	splitDir := filepath.Join(dir, "split")
	names, err := subdirs(splitDir)
	if err != nil {
		if name != "" {
			return field.Errorf("graph.LoadOptions.Split", "%q: %s has no split directory", name, dir)
		}
		return nil // no split: structure, features and labels only
	}
	name, err = chooseSplit(splitDir, name, names)
	if err != nil {
		return err
	}
	sd := filepath.Join(splitDir, name)
	n := ds.NumNodes()
	seen := make([]uint8, n)
	for i, part := range []*[]int32{&ds.Train, &ds.Valid, &ds.Test} {
		base := []string{"train", "valid", "test"}[i]
		p := findData(sd, base, false)
		if p == "" {
			return errorf(sd, 0, "no %s.csv[.gz]", base)
		}
		ids, err := readSplitFile(p, ds.Labels, seen, uint8(1)<<i)
		if err != nil {
			return err
		}
		*part = ids
	}
	return nil
}

// readSplitFile reads the node ids of one split part, checking range,
// duplicates and (when labels are known) that the nodes are labelled; the
// result is sorted ascending.
func readSplitFile(path string, labels []int32, seen []uint8, bit uint8) ([]int32, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	var ids []int32
	err = lr.eachInt(func(f []byte, x int64, ok bool) error {
		switch {
		case !ok:
			return errorf(path, lr.line, "bad node id %s", quote(f))
		case x < 0 || x >= int64(len(seen)):
			return errorf(path, lr.line, "node id %d outside [0,%d)", x, len(seen))
		}
		if msg := checkSplitNode(x, labels, seen, bit); msg != "" {
			return errorf(path, lr.line, "%s", msg)
		}
		seen[x] |= bit
		ids = append(ids, int32(x))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }) {
		slices.Sort(ids)
	}
	return ids, nil
}

// splitName names the first split part whose bit is set in b.
func splitName(b uint8) string {
	switch {
	case b&InTrain != 0:
		return "train"
	case b&InValid != 0:
		return "valid"
	}
	return "test"
}

// subdirs lists the directories under dir, sorted.
func subdirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// chooseSplit resolves the split name: the requested one, else "public",
// else the only one.
func chooseSplit(splitDir, want string, names []string) (string, error) {
	list := strings.Join(names, ", ")
	switch {
	case want != "":
		if !slices.Contains(names, want) {
			return "", field.Errorf("graph.LoadOptions.Split", "%q: no such split under %s (available: %s)", want, splitDir, list)
		}
		return want, nil
	case slices.Contains(names, "public"):
		return "public", nil
	case len(names) == 1:
		return names[0], nil
	case len(names) == 0:
		return "", errorf(splitDir, 0, "no split directories")
	}
	return "", fmt.Errorf("%s: several splits (%s): choose one with graph.LoadOptions.Split", splitDir, list)
}
