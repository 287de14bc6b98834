package dist

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/partition"
)

// CheckParts reports whether parts parts can be written by ranks ranks:
// parts must be a multiple of ranks (rank r writes parts [r·k, (r+1)·k),
// k = parts/ranks) or ranks a multiple of parts (part p is written by rank
// p·ranks/parts, the other ranks write none).
func CheckParts(parts, ranks int) error {
	if parts < 1 || ranks < 1 || (parts%ranks != 0 && ranks%parts != 0) {
		return fmt.Errorf("%d parts on %d ranks: the parts must be a multiple of the ranks, or the ranks a multiple of the parts", parts, ranks)
	}
	return nil
}

// writerOf returns the rank that writes part p.
func writerOf(p, parts, ranks int) int {
	if parts >= ranks {
		return p / (parts / ranks)
	}
	return p * (ranks / parts)
}

// WriteOptions are the settings of Write.
type WriteOptions struct {
	Info       partition.MetaInfo
	RoundBytes int                // one all-to-all call's bound (DefaultRoundBytes when 0)
	Progress   *progress.Reporter // rank 0's, nil elsewhere
}

// Write stores the partition owner (the part of each of this rank's nodes
// [g.Lo, g.Hi)) of the distributed graph g as a partition directory at dir,
// the format partition.Write writes and byte for byte the same part files
// for the same graph and owner. Collective: the nodes move to the ranks
// that write their parts (with their in-edges, features, labels and split
// bits), every rank writes its parts into one DIR.tmp-* (dir's file system
// must be shared by the ranks), rank 0 writes meta.json from the reduced
// statistics and renames the directory into place only when every rank
// succeeded; on any error the temporary directory is removed.
func Write(c comm.Comm, dir string, g *Graph, owner []int32, parts int, o WriteOptions) error {
	p, rank := c.Size(), c.Rank()
	err := CheckParts(parts, p)
	if err == nil && len(owner) != g.Hi-g.Lo {
		err = fmt.Errorf("dist: %d owners for %d nodes", len(owner), g.Hi-g.Lo)
	}
	if err == nil {
		for i, q := range owner {
			if q < 0 || int(q) >= parts {
				err = fmt.Errorf("dist: node %d has part %d outside [0,%d)", g.Lo+i, q, parts)
				break
			}
		}
	}
	if err = agree(c, err); err != nil {
		return err
	}
	rb := o.RoundBytes
	if rb <= 0 {
		rb = DefaultRoundBytes
	}
	st := o.Progress.Start("dist: moving nodes to their parts", 0, "")
	shards, err := redistribute(c, g, owner, parts, rb)
	st.Done()
	if err != nil {
		return err
	}
	// The temporary directory: made by rank 0, its name broadcast.
	var tmp string
	if rank == 0 {
		tmp, err = partition.NewTempDir(dir)
	}
	if err = agree(c, err); err != nil {
		return err
	}
	if tmp, err = bcastString(c, tmp); err != nil {
		return err
	}
	fail := func(err error) error { // collective: nothing is left when any rank failed
		err = agree(c, err)
		if err != nil && rank == 0 {
			os.RemoveAll(tmp)
		}
		if berr := c.Barrier(); berr != nil && err == nil {
			err = berr
		}
		return err
	}
	const nf = 10
	stats := make([]int64, parts*nf)
	st = o.Progress.Start("dist: writing part files", int64(len(shards)), "parts")
	hasLabels := g.Labels != nil
	for _, sh := range shards {
		size, sum, werr := partition.WritePart(tmp, sh, hasLabels)
		if werr != nil {
			err = werr
			break
		}
		ps := shardStats(sh)
		ps.Bytes, ps.CRC32C = size, sum
		copy(stats[sh.Rank*nf:], []int64{ps.Nodes, ps.LocalEdges, ps.CutEdges, ps.InnerNodes, ps.BoundaryNodes,
			ps.HaloRows, ps.TrainNodes, ps.Bytes, int64(ps.CRC32C), ps.FeatNNZ})
		st.Add(1)
	}
	st.Done()
	if err := fail(err); err != nil {
		return err
	}
	if err := fail(c.AllreduceSumI64(stats)); err != nil {
		return err
	}
	if rank == 0 {
		ps := make([]partition.PartStat, parts)
		for q := range ps {
			s := stats[q*nf:]
			ps[q] = partition.PartStat{Part: q, Nodes: s[0], LocalEdges: s[1], CutEdges: s[2], InnerNodes: s[3],
				BoundaryNodes: s[4], HaloRows: s[5], TrainNodes: s[6], File: partition.PartFile(q), Bytes: s[7], CRC32C: uint32(s[8]), FeatNNZ: s[9]}
		}
		info := o.Info
		m := partition.Meta{FormatVersion: partition.FormatVersion, Dataset: g.Name, Source: info.Source, Parts: parts,
			Method: info.Method, Weights: info.Weights, Seed: info.Seed, PartitionSeconds: info.Seconds,
			NumNodes: int64(g.NumNodes), NumEdges: g.NumArcs, FeatDim: g.FeatDim, NumClasses: g.NumClasses,
			HasLabels: hasLabels, Weighted: g.Weighted, SparseFeatures: g.Features.Sparse(), NumTrain: g.NumTrain, NumValid: g.NumValid, NumTest: g.NumTest,
			Stats: *partition.StatsOf(ps, int64(g.NumNodes))}
		if err = partition.WriteMeta(tmp, &m); err == nil {
			err = partition.InstallDir(tmp, dir)
		}
	}
	return fail(err)
}

// Shard moves the nodes of g to their parts (owner: the part of each of
// this rank's nodes, one part per rank) and returns this rank's part, the
// shard partition.Split returns for the whole dataset. Collective.
func Shard(c comm.Comm, g *Graph, owner []int32, roundBytes int) (*partition.Shard, error) {
	p := c.Size()
	var err error
	if len(owner) != g.Hi-g.Lo {
		err = fmt.Errorf("dist: %d owners for %d nodes", len(owner), g.Hi-g.Lo)
	}
	for i, q := range owner {
		if err == nil && (q < 0 || int(q) >= p) {
			err = fmt.Errorf("dist: node %d has part %d outside [0,%d)", g.Lo+i, q, p)
		}
	}
	if err = agree(c, err); err != nil {
		return nil, err
	}
	if roundBytes <= 0 {
		roundBytes = DefaultRoundBytes
	}
	shards, err := redistribute(c, g, owner, p, roundBytes)
	if err != nil {
		return nil, err
	}
	return shards[0], nil
}

// shardStats measures one part as partition.ComputeStats does. The graph
// is symmetric, so a node has an out-edge into another part exactly when
// it has an in-edge from one: boundary nodes are those that are not inner.
func shardStats(sh *partition.Shard) partition.PartStat {
	n := int64(len(sh.Global))
	ps := partition.PartStat{Part: sh.Rank, Nodes: n, LocalEdges: sh.Local.NNZ(), CutEdges: int64(len(sh.Remote.Src))}
	if sh.Features.Sparse() {
		ps.FeatNNZ = sh.Features.NNZ()
	}
	for i := int64(0); i < n; i++ {
		if sh.Remote.Ptr[i+1] == sh.Remote.Ptr[i] {
			ps.InnerNodes++
		}
		if hasTrain(sh.Split[i]) {
			ps.TrainNodes++
		}
	}
	ps.BoundaryNodes = n - ps.InnerNodes
	halo := append([]int64(nil), sh.Remote.Src...)
	slices.Sort(halo)
	for i := range halo {
		if i == 0 || halo[i] != halo[i-1] {
			ps.HaloRows++
		}
	}
	return ps
}

// bcastString sends rank 0's s to every rank.
func bcastString(c comm.Comm, s string) (string, error) {
	n := make([]int64, 1)
	if c.Rank() == 0 {
		n[0] = int64(len(s))
	}
	if err := c.AllreduceSumI64(n); err != nil {
		return "", err
	}
	b := make([]byte, n[0])
	copy(b, s)
	if len(b) > 0 {
		if err := c.BcastBytes(b, 0); err != nil {
			return "", err
		}
	}
	return string(b), nil
}

// redistribute moves every node, with its in-edges, features, labels and
// split bits, to the rank that writes its part, and returns the shards of
// the parts this rank writes (ascending part). Local ids: node v of part q
// has index lid(v) = the number of nodes of part q with a smaller global id,
// counted from the per-rank, per-part node counts; they are int32, as in a
// part file, so a part holds fewer than 2^31 nodes.
func redistribute(c comm.Comm, g *Graph, owner []int32, parts, rb int) ([]*partition.Shard, error) {
	lid, err := localIDs(c, owner, parts)
	if err != nil {
		return nil, err
	}
	srcs, info, err := sourceParts(c, g, owner, lid, rb)
	if err != nil {
		return nil, err
	}
	lid = nil
	rc := newRemoteCodec(g.VtxDist, parts, c.Size())
	bw := packByWriter(g, owner, parts, c.Size(), rc, func(u int64) int64 {
		i, _ := slices.BinarySearch(srcs, u)
		return info[i]
	})
	srcs, info = nil, nil
	return bw.send(c, g, parts, rc, rb)
}

// localIDs returns lid of every node of this rank (see redistribute),
// from the node counts of every rank and part. Collective.
func localIDs(c comm.Comm, owner []int32, parts int) ([]int32, error) {
	p, rank := c.Size(), c.Rank()
	cnt := make([]int64, p*parts)
	for _, q := range owner {
		cnt[rank*parts+int(q)]++
	}
	if err := c.AllreduceSumI64(cnt); err != nil {
		return nil, err
	}
	if err := checkPartSizes(cnt, parts); err != nil {
		return nil, err // the same on every rank
	}
	next := make([]int64, parts)
	for r := 0; r < rank; r++ {
		for q := 0; q < parts; q++ {
			next[q] += cnt[r*parts+q]
		}
	}
	lid := make([]int32, len(owner))
	for i, q := range owner {
		lid[i] = int32(next[q])
		next[q]++
	}
	return lid, nil
}

// sourceParts returns the distinct sources of this rank's rows, ascending,
// and for each its part and lid (part << 32 | lid), asked of the ranks
// owning them. Collective.
func sourceParts(c comm.Comm, g *Graph, owner, lid []int32, rb int) (srcs, info []int64, err error) {
	srcs = slices.Clone(g.Adj)
	slices.Sort(srcs)
	srcs = slices.Clone(slices.Compact(srcs)) // sized to the distinct sources: the copy of every arc is garbage
	counts := make([]int, c.Size())
	for _, u := range srcs {
		counts[blockOf(g.VtxDist, u)]++
	}
	asked, acounts, err := exchange(c, srcs, counts, rb)
	if err != nil {
		return nil, nil, err
	}
	for i, u := range asked {
		v := int(u) - g.Lo
		asked[i] = int64(owner[v])<<32 | int64(lid[v])
	}
	info, _, err = exchange(c, asked, acounts, rb)
	if err != nil {
		return nil, nil, err
	}
	return srcs, info, nil
}

// byWriter holds this rank's node records (global id, part, label<<8 |
// split bits, in-degree), edge entries (local: −(lid+1); remote: rc's
// entry), edge weights and feature rows (dense: d values a node; sparse:
// the node's non-zero count in rowNNZ, its column ids and values), grouped
// by the rank that writes their part, with the counts each writer gets.
type byWriter struct {
	nodes, edges              []int64
	weights, feats            []float32
	rowNNZ                    []int64 // sparse features: non-zeros of each node
	featIdx                   []int32 // sparse features: their column ids
	nodeCnt, edgeCnt, featCnt []int
}

// packByWriter groups g's rows by writer rank; info returns a source's
// part << 32 | lid.
func packByWriter(g *Graph, owner []int32, parts, p int, rc *remoteCodec, info func(u int64) int64) *byWriter {
	x := g.Features.Layout() // a node sends its row's values, and their column ids when sparse
	bw := &byWriter{nodeCnt: make([]int, p), edgeCnt: make([]int, p), featCnt: make([]int, p)}
	for i, q := range owner {
		w := writerOf(int(q), parts, p)
		bw.nodeCnt[w] += 4
		bw.edgeCnt[w] += int(g.Ptr[i+1] - g.Ptr[i])
		if g.Features.Present() {
			bw.featCnt[w] += x.RowLen(i)
		}
	}
	nodeOff, edgeOff, featOff := offsets(bw.nodeCnt), offsets(bw.edgeCnt), offsets(bw.featCnt)
	bw.nodes, bw.edges = make([]int64, nodeOff[p]), make([]int64, edgeOff[p])
	if g.Weighted {
		bw.weights = make([]float32, edgeOff[p])
	}
	if g.FeatDim > 0 {
		bw.feats = make([]float32, featOff[p])
	}
	if x.Sparse() {
		bw.rowNNZ, bw.featIdx = make([]int64, nodeOff[p]/4), make([]int32, featOff[p])
	}
	for i, q := range owner {
		w := writerOf(int(q), parts, p)
		label := int64(-2) // no labels
		if g.Labels != nil {
			label = int64(g.Labels[i])
		}
		copy(bw.nodes[nodeOff[w]:], []int64{int64(g.Lo + i), int64(q), label<<8 | int64(g.Split[i]), g.Ptr[i+1] - g.Ptr[i]})
		nodeOff[w] += 4
		if bw.weights != nil {
			copy(bw.weights[edgeOff[w]:], g.Val[g.Ptr[i]:g.Ptr[i+1]])
		}
		for _, u := range g.Adj[g.Ptr[i]:g.Ptr[i+1]] {
			x := info(u)
			if part := int32(x >> 32); part == q {
				bw.edges[edgeOff[w]] = -1 - (x & 0xffffffff) // local: -(lid+1)
			} else {
				bw.edges[edgeOff[w]] = rc.encode(w, u, part)
			}
			edgeOff[w]++
		}
		if bw.feats != nil {
			bw.packFeatures(x, i, nodeOff[w]/4-1, featOff[w])
			featOff[w] += x.RowLen(i)
		}
	}
	return bw
}

// packFeatures stores row i of x at feats[off:] (its column ids at
// featIdx[off:] and its length at rowNNZ[node] when sparse).
func (bw *byWriter) packFeatures(x graph.FeatureLayout, i, node, off int) {
	copy(bw.feats[off:], x.RowVal(i))
	if x.Sparse() {
		bw.rowNNZ[node] = int64(x.RowLen(i))
		copy(bw.featIdx[off:], x.RowIdx(i))
	}
}

// send moves the records to their writers, dropping each array once it
// has left, and builds the shards of the parts this rank writes.
// Collective.
func (bw *byWriter) send(c comm.Comm, g *Graph, parts int, rc *remoteCodec, rb int) ([]*partition.Shard, error) {
	rn, _, err := exchange(c, bw.nodes, bw.nodeCnt, rb)
	if err != nil {
		return nil, err
	}
	bw.nodes = nil
	re, _, err := exchange(c, bw.edges, bw.edgeCnt, rb)
	if err != nil {
		return nil, err
	}
	bw.edges = nil
	if err := rc.exchange(c, rb); err != nil {
		return nil, err
	}
	var rw, rf []float32
	if bw.weights != nil {
		if rw, _, err = exchange(c, bw.weights, bw.edgeCnt, rb); err != nil {
			return nil, err
		}
		bw.weights = nil
	}
	if bw.feats != nil {
		if rf, _, err = exchange(c, bw.feats, bw.featCnt, rb); err != nil {
			return nil, err
		}
		bw.feats = nil
	}
	var rs *sparseRecv
	if g.Features.Sparse() {
		if rs, err = bw.sendSparse(c, rb); err != nil {
			return nil, err
		}
	}
	return buildShards(c, g, parts, rn, re, rc, rw, rf, rs), nil
}

// sparseRecv is what a writer receives of sparse feature rows: each
// node's non-zero count (in the order of the node records) and the column
// ids, beside the values.
type sparseRecv struct {
	rowNNZ []int64
	idx    []int32
}

// sendSparse moves the non-zero counts and column ids of sparse feature
// rows to their writers. Collective.
func (bw *byWriter) sendSparse(c comm.Comm, rb int) (*sparseRecv, error) {
	rows := make([]int, len(bw.nodeCnt))
	for w, k := range bw.nodeCnt {
		rows[w] = k / 4
	}
	rnnz, _, err := exchange(c, bw.rowNNZ, rows, rb)
	if err != nil {
		return nil, err
	}
	bw.rowNNZ = nil
	ridx, _, err := exchange(c, bw.featIdx, bw.featCnt, rb)
	bw.featIdx = nil
	return &sparseRecv{rowNNZ: rnnz, idx: ridx}, err
}

// remoteCodec packs the entry of a remote edge, its source's global id u
// and part q, as q << idBits | u where the node ranges and parts leave
// room (packed), else as u with q sent beside (by writer rank, in edge
// order).
type remoteCodec struct {
	idBits uint
	packed bool
	sent   [][]int32 // by writer rank, unpacked
	parts  []int32   // received, unpacked
	next   int
}

func newRemoteCodec(vd []int64, parts, ranks int) *remoteCodec {
	idBits := uint(bits.Len64(uint64(max(vd[len(vd)-1]-1, 0))))
	partBits := uint(bits.Len64(uint64(max(parts-1, 0))))
	rc := &remoteCodec{idBits: idBits, packed: idBits+partBits <= 63}
	if !rc.packed {
		rc.sent = make([][]int32, ranks)
	}
	return rc
}

// encode returns the entry of a remote edge from u in part q, written by
// rank w.
func (rc *remoteCodec) encode(w int, u int64, q int32) int64 {
	if rc.packed {
		return int64(q)<<rc.idBits | u
	}
	rc.sent[w] = append(rc.sent[w], q)
	return u
}

// exchange sends the parts of unpacked entries to their writers (every
// rank agrees on packed: the node ranges and parts are the same).
// Collective.
func (rc *remoteCodec) exchange(c comm.Comm, rb int) error {
	if rc.packed {
		return nil
	}
	counts := make([]int, c.Size())
	for w, s := range rc.sent {
		counts[w] = len(s)
	}
	var err error
	rc.parts, _, err = exchange(c, slices.Concat(rc.sent...), counts, rb)
	rc.sent = nil
	return err
}

// decode returns the source and part of the next remote entry x received.
func (rc *remoteCodec) decode(x int64) (u int64, q int32) {
	if rc.packed {
		return x & (1<<rc.idBits - 1), int32(x >> rc.idBits)
	}
	rc.next++
	return x, rc.parts[rc.next-1]
}

// checkPartSizes refuses a part of 2^31 nodes or more (cnt: the nodes of
// each part on each rank): its local ids would exceed int32.
func checkPartSizes(cnt []int64, parts int) error {
	for q := 0; q < parts; q++ {
		var size int64
		for k := q; k < len(cnt); k += parts {
			size += cnt[k]
		}
		if size > math.MaxInt32 {
			return fmt.Errorf("dist: part %d has %d nodes, more than the 2^31-1 local ids of a part file: use more parts", q, size)
		}
	}
	return nil
}

// buildShards assembles the shards of this rank's parts from the received
// node records (global id, part, label<<8|split, degree), edge entries
// (-(lid+1) for a local source, else as rc encoded it), their weights rw
// on a weighted graph, and feature rows (the values rf, with rs's counts
// and column ids when sparse). Records arrive by source rank, each
// ascending: global order.
func buildShards(c comm.Comm, g *Graph, parts int, rn, re []int64, rc *remoteCodec, rw, rf []float32, rs *sparseRecv) []*partition.Shard {
	p, rank := c.Size(), c.Rank()
	var mine []int
	for q := 0; q < parts; q++ {
		if writerOf(q, parts, p) == rank {
			mine = append(mine, q)
		}
	}
	idx := map[int]int{}
	shards := make([]*partition.Shard, len(mine))
	nn, ne := make([]int, len(mine)), make([]int64, len(mine))
	var nl, nr = make([]int64, len(mine)), make([]int64, len(mine))
	for k, q := range mine {
		idx[q] = k
	}
	nz := make([]int64, len(mine))
	for i, e := 0, int64(0); i < len(rn); i += 4 {
		k := idx[int(rn[i+1])]
		nn[k]++
		if rs != nil {
			nz[k] += rs.rowNNZ[i/4]
		}
		deg := rn[i+3]
		ne[k] += deg
		for _, x := range re[e : e+deg] {
			if x < 0 {
				nl[k]++
			} else {
				nr[k]++
			}
		}
		e += deg
	}
	d := g.FeatDim
	feats := make([]graph.FeatureLayout, len(mine)) // each shard's feature rows, as they arrive
	for k, q := range mine {
		n := nn[k]
		sh := &partition.Shard{Rank: q, Ranks: parts, NumGlobalNodes: int64(g.NumNodes), Global: make([]int64, 0, n),
			FeatDim: d, NumClasses: g.NumClasses, Split: make([]uint8, 0, n)}
		switch {
		case rs != nil:
			feats[k] = graph.NewFeatureLayout(d, true, n, nz[k])
		case d > 0:
			feats[k] = graph.NewFeatureLayout(d, false, n, int64(n*d))
		}
		if g.Labels != nil {
			sh.Labels = make([]int32, 0, n)
		}
		sh.Local = &graph.CSR{NumRows: n, NumCols: n, Ptr: make([]int64, 1, n+1), Idx: make([]int32, 0, nl[k])}
		sh.Remote = partition.RemoteEdges{Ptr: make([]int64, 1, n+1), Src: make([]int64, 0, nr[k]), Owner: make([]int32, 0, nr[k])}
		if g.Weighted {
			sh.Local.Val, sh.Remote.Val = make([]float32, 0, nl[k]), make([]float32, 0, nr[k])
		}
		shards[k] = sh
	}
	for i, e, f := 0, int64(0), 0; i < len(rn); i += 4 {
		k := idx[int(rn[i+1])]
		sh := shards[k]
		sh.Global = append(sh.Global, rn[i])
		ls := rn[i+2]
		sh.Split = append(sh.Split, uint8(ls&0xff))
		if sh.Labels != nil {
			sh.Labels = append(sh.Labels, int32(ls>>8))
		}
		switch {
		case rs != nil:
			m := int(rs.rowNNZ[i/4])
			feats[k].AppendRow(rs.idx[f:f+m], rf[f:f+m])
			f += m
		case d > 0:
			feats[k].AppendRow(nil, rf[f:f+d])
			f += d
		}
		deg := rn[i+3]
		for j, x := range re[e : e+deg] {
			if x < 0 {
				sh.Local.Idx = append(sh.Local.Idx, int32(-1-x))
				if rw != nil {
					sh.Local.Val = append(sh.Local.Val, rw[e+int64(j)])
				}
			} else {
				u, q := rc.decode(x)
				sh.Remote.Src = append(sh.Remote.Src, u)
				sh.Remote.Owner = append(sh.Remote.Owner, q)
				if rw != nil {
					sh.Remote.Val = append(sh.Remote.Val, rw[e+int64(j)])
				}
			}
		}
		e += deg
		sh.Local.Ptr = append(sh.Local.Ptr, int64(len(sh.Local.Idx)))
		sh.Remote.Ptr = append(sh.Remote.Ptr, int64(len(sh.Remote.Src)))
	}
	for k, sh := range shards {
		sh.Features = graph.FeaturesOf(feats[k])
	}
	return shards
}
