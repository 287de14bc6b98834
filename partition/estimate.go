package partition

// LoadBytes estimates the memory Load(dir, rank, ranks) needs for the
// shard of rank, from meta.json alone (before any part is read): per owned
// node its global id, features, label, split byte and two row offsets; per
// local edge a column, per remote edge a source and an owner; twice that
// when several parts are merged. It returns 0 when ranks does not divide
// the parts (Load reports that).
func LoadBytes(m *Meta, rank, ranks int) int64 {
	parts := rankParts(m, rank, ranks)
	var b int64
	for _, ps := range parts {
		b += ps.Nodes*(8+4+1+16) + featureBytes(m, ps) + 16 + ps.LocalEdges*4 + ps.CutEdges*12
	}
	if len(parts) > 1 {
		b *= 2
	}
	return b
}

// FeatureBytes is the memory the features of rank's parts take once
// loaded (Load(dir, rank, ranks)): 4 bytes a value dense; the CSR offsets,
// column ids and values sparse. It returns 0 when ranks does not divide
// the parts.
func FeatureBytes(m *Meta, rank, ranks int) int64 {
	var b int64
	for _, ps := range rankParts(m, rank, ranks) {
		b += featureBytes(m, ps)
	}
	return b
}

// featureBytes is the memory of the features of part ps.
func featureBytes(m *Meta, ps PartStat) int64 {
	if m.SparseFeatures {
		return 8*(ps.Nodes+1) + 8*ps.FeatNNZ // offsets, column ids and values
	}
	return 4 * int64(m.FeatDim) * ps.Nodes
}

// rankParts are the statistics of rank's parts of ranks ranks (nil when
// ranks does not divide the parts).
func rankParts(m *Meta, rank, ranks int) []PartStat {
	if ranks < 1 || rank < 0 || rank >= ranks || m.Parts%ranks != 0 || len(m.Stats.Parts) != m.Parts {
		return nil
	}
	k := m.Parts / ranks
	return m.Stats.Parts[rank*k : (rank+1)*k]
}
