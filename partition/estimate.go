package partition

// LoadBytes estimates the memory Load(dir, rank, ranks) needs for the
// shard of rank, from meta.json alone (before any part is read): per owned
// node its global id, features, label, split byte and two row offsets; per
// local edge a column, per remote edge a source and an owner; twice that
// when several parts are merged. It returns 0 when ranks does not divide
// the parts (Load reports that).
func LoadBytes(m *Meta, rank, ranks int) int64 {
	if ranks < 1 || rank < 0 || rank >= ranks || m.Parts%ranks != 0 || len(m.Stats.Parts) != m.Parts {
		return 0
	}
	k := m.Parts / ranks
	var b int64
	for _, ps := range m.Stats.Parts[rank*k : (rank+1)*k] {
		feat := 4 * int64(m.FeatDim) * ps.Nodes
		if m.SparseFeatures {
			feat = 8*(ps.Nodes+1) + 8*ps.FeatNNZ // offsets, column ids and values
		}
		b += ps.Nodes*(8+4+1+16) + feat + 16 + ps.LocalEdges*4 + ps.CutEdges*12
	}
	if k > 1 {
		b *= 2
	}
	return b
}
