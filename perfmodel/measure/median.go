package measure

import "github.com/supergcn/supergcn/perfmodel"

// MedianRates is the element-wise median over the copies' rates (all have
// the same entries in the same order, as Rates measures them); the shared
// window's ShareFactorMax is the maximum over the copies, and Straggle
// how far the slowest copy fell behind (perfmodel.StraggleOf).
func MedianRates(rs []perfmodel.Rates) perfmodel.Rates {
	med := func(f func(r *perfmodel.Rates) float64) float64 {
		v := make([]float64, len(rs))
		for i := range rs {
			v[i] = f(&rs[i])
		}
		return perfmodel.Median(v)
	}
	m := rs[0]
	m.Aggr = append([]perfmodel.AggrRate(nil), m.Aggr...)
	m.Gemm = append([]perfmodel.GemmRate(nil), m.Gemm...)
	m.Quant = append([]perfmodel.QuantRate(nil), m.Quant...)
	m.Hidden = append([]perfmodel.HiddenRate(nil), m.Hidden...)
	for i := range m.Aggr {
		m.Aggr[i].Forward = med(func(r *perfmodel.Rates) float64 { return r.Aggr[i].Forward })
		m.Aggr[i].Transpose = med(func(r *perfmodel.Rates) float64 { return r.Aggr[i].Transpose })
	}
	for i := range m.Gemm {
		m.Gemm[i].GFLOPS = med(func(r *perfmodel.Rates) float64 { return r.Gemm[i].GFLOPS })
	}
	for i := range m.Quant {
		m.Quant[i].EncodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Quant[i].EncodeGBs })
		m.Quant[i].DecodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Quant[i].DecodeGBs })
	}
	for i := range m.Hidden {
		m.Hidden[i].GVs = med(func(r *perfmodel.Rates) float64 { return r.Hidden[i].GVs })
	}
	m.ElemGBs = med(func(r *perfmodel.Rates) float64 { return r.ElemGBs })
	m.DropoutGVs = med(func(r *perfmodel.Rates) float64 { return r.DropoutGVs })
	m.LayerNormGVs = med(func(r *perfmodel.Rates) float64 { return r.LayerNormGVs })
	m.SoftmaxGVs = med(func(r *perfmodel.Rates) float64 { return r.SoftmaxGVs })
	m.StreamGBs = med(func(r *perfmodel.Rates) float64 { return r.StreamGBs })
	m.AggrNodes = int(med(func(r *perfmodel.Rates) float64 { return float64(r.AggrNodes) }))
	m.Rows = int(med(func(r *perfmodel.Rates) float64 { return float64(r.Rows) }))
	if m.Attention != nil {
		a := *m.Attention
		a.Score = append([]perfmodel.ScoreRate(nil), a.Score...)
		for i := range a.Score {
			a.Score[i].Forward = med(func(r *perfmodel.Rates) float64 { return r.Attention.Score[i].Forward })
			a.Score[i].Backward = med(func(r *perfmodel.Rates) float64 { return r.Attention.Score[i].Backward })
		}
		a.Aggr = append([]perfmodel.AggrRate(nil), a.Aggr...)
		for i := range a.Aggr {
			a.Aggr[i].Forward = med(func(r *perfmodel.Rates) float64 { return r.Attention.Aggr[i].Forward })
			a.Aggr[i].Transpose = med(func(r *perfmodel.Rates) float64 { return r.Attention.Aggr[i].Transpose })
		}
		m.Attention = &a
	}
	if m.Exchange != nil {
		x := *m.Exchange
		x.RowRates = append([]perfmodel.RowRate(nil), x.RowRates...)
		x.Quant = append([]perfmodel.QuantRate(nil), x.Quant...)
		for i := range x.RowRates {
			x.RowRates[i].GatherGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.RowRates[i].GatherGBs })
			x.RowRates[i].ScatterGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.RowRates[i].ScatterGBs })
			x.RowRates[i].HaloGUPS = med(func(r *perfmodel.Rates) float64 { return r.Exchange.RowRates[i].HaloGUPS })
		}
		for i := range x.Quant {
			x.Quant[i].EncodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.Quant[i].EncodeGBs })
			x.Quant[i].DecodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.Quant[i].DecodeGBs })
		}
		x.ShareFactor = med(func(r *perfmodel.Rates) float64 { return r.Exchange.ShareFactor })
		for i := range rs {
			x.ShareFactorMax = max(x.ShareFactorMax, rs[i].Exchange.ShareFactorMax)
		}
		m.Exchange = &x
	}
	m.Straggle = perfmodel.StraggleOf(rs)
	return m
}
