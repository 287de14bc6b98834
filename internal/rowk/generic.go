package rowk

import "math"

// The pure-Go twins. Each sums the elements into eight partial sums
// (element j into partial j mod 8) and is written so that it rounds exactly as the
// vector code: explicit conversions keep the compiler from fusing a
// multiply into an add (the Go spec lets it otherwise, e.g. on arm64 or
// with GOAMD64=v3), and each may start where an assembly prefix of a
// multiple of 8 elements stopped, the sums carried in *s / *st.

func biasSumGeneric(x []float64, o, bias []float32, s *[8]float64) {
	n := len(x)
	o, bias = o[:n], bias[:n]
	s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	j := 0
	for ; j+8 <= n; j += 8 {
		q, p, b := x[j:j+8:j+8], o[j:j+8:j+8], bias[j:j+8:j+8]
		v0, v1 := float64(p[0]+b[0]), float64(p[1]+b[1])
		v2, v3 := float64(p[2]+b[2]), float64(p[3]+b[3])
		v4, v5 := float64(p[4]+b[4]), float64(p[5]+b[5])
		v6, v7 := float64(p[6]+b[6]), float64(p[7]+b[7])
		q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7] = v0, v1, v2, v3, v4, v5, v6, v7
		s0 += v0
		s1 += v1
		s2 += v2
		s3 += v3
		s4 += v4
		s5 += v5
		s6 += v6
		s7 += v7
	}
	*s = [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
	for k := range n - j { // the last n mod 8 elements, into partials 0..6
		v := float64(o[j+k] + bias[j+k])
		x[j+k] = v
		s[k] += v
	}
}

func sqSumGeneric(x []float64, mean float64, s *[8]float64) {
	n := len(x)
	s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	j := 0
	for ; j+8 <= n; j += 8 {
		q := x[j : j+8 : j+8]
		d0, d1, d2, d3 := q[0]-mean, q[1]-mean, q[2]-mean, q[3]-mean
		d4, d5, d6, d7 := q[4]-mean, q[5]-mean, q[6]-mean, q[7]-mean
		s0 += float64(d0 * d0)
		s1 += float64(d1 * d1)
		s2 += float64(d2 * d2)
		s3 += float64(d3 * d3)
		s4 += float64(d4 * d4)
		s5 += float64(d5 * d5)
		s6 += float64(d6 * d6)
		s7 += float64(d7 * d7)
	}
	*s = [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
	for k := range n - j {
		d := x[j+k] - mean
		s[k] += float64(d * d)
	}
}

// relu is max(v, 0) with −0 and negatives to +0, without a branch (a NaN
// with the sign bit set also becomes +0), as nn.ReLU.
func relu(v float32) float32 {
	b := math.Float32bits(v)
	return math.Float32frombits(b &^ uint32(int32(b)>>31))
}

// normOne is one element of norm.
func normOne(x, mean, rstd float64, gamma, beta float32) float32 {
	return relu(float32(float32((x-mean)*rstd)*gamma) + beta)
}

func normGeneric(h []float32, x []float64, gamma, beta []float32, mean, rstd float64) {
	n := len(h)
	x, gamma, beta = x[:n], gamma[:n], beta[:n]
	j := 0
	for ; j+4 <= n; j += 4 {
		q, p, m, b := h[j:j+4:j+4], x[j:j+4:j+4], gamma[j:j+4:j+4], beta[j:j+4:j+4]
		q[0] = normOne(p[0], mean, rstd, m[0], b[0])
		q[1] = normOne(p[1], mean, rstd, m[1], b[1])
		q[2] = normOne(p[2], mean, rstd, m[2], b[2])
		q[3] = normOne(p[3], mean, rstd, m[3], b[3])
	}
	for ; j < n; j++ {
		h[j] = normOne(x[j], mean, rstd, gamma[j], beta[j])
	}
}

// dropFactor is scale where the 16-bit decision u ≥ thresh, else +0.
func dropFactor(u uint16, thresh int32, sb uint32) float32 {
	return math.Float32frombits(sb & uint32(^(int32(u)-thresh)>>31))
}

func normDropGeneric(h []float32, x []float64, gamma, beta []float32, u []uint16, mean, rstd float64, thresh int32, scale float32) {
	n := len(h)
	x, gamma, beta, u = x[:n], gamma[:n], beta[:n], u[:n]
	sb := math.Float32bits(scale)
	j := 0
	for ; j+4 <= n; j += 4 {
		q, p, m, b, d := h[j:j+4:j+4], x[j:j+4:j+4], gamma[j:j+4:j+4], beta[j:j+4:j+4], u[j:j+4:j+4]
		q[0] = normOne(p[0], mean, rstd, m[0], b[0]) * dropFactor(d[0], thresh, sb)
		q[1] = normOne(p[1], mean, rstd, m[1], b[1]) * dropFactor(d[1], thresh, sb)
		q[2] = normOne(p[2], mean, rstd, m[2], b[2]) * dropFactor(d[2], thresh, sb)
		q[3] = normOne(p[3], mean, rstd, m[3], b[3]) * dropFactor(d[3], thresh, sb)
	}
	for ; j < n; j++ {
		h[j] = normOne(x[j], mean, rstd, gamma[j], beta[j]) * dropFactor(u[j], thresh, sb)
	}
}

func normGradGeneric(g, h, o, bias, gamma, xh []float32, ag, ab []float64, mean, rstd float64, scale float32, active bool, st *gradState) {
	n := len(g)
	h, o, bias, gamma, xh, ag, ab = h[:n], o[:n], bias[:n], gamma[:n], xh[:n], ag[:n], ab[:n]
	bad := st.bad
	// one element: gate, x̂ and the column sums, returning ĥ and ĥ·x̂.
	// bad gets bit 31 once an exponent field is all ones (adding 1<<23
	// carries into bit 31 exactly then); w is kept where bits(h) ∈
	// (0, 2³¹], i.e. int32(−bits(h)) < 0.
	one := func(j int) (hh, hx float64) {
		w := g[j]
		if active {
			w *= scale
		}
		b := math.Float32bits(h[j])
		bad |= b&FiniteBits + 1<<23
		v := math.Float32frombits(math.Float32bits(w) & uint32(int32(-b)>>31))
		g[j] = v
		x := float32((float64(o[j]+bias[j]) - mean) * rstd)
		xh[j] = x
		ag[j] += float64(v * x)
		ab[j] += float64(v)
		hh = float64(v * gamma[j])
		return hh, float64(hh * float64(x))
	}
	s, t := st.s, st.t
	j := 0
	for ; j+8 <= n; j += 8 {
		for l := range 8 {
			hh, hx := one(j + l)
			s[l] += hh
			t[l] += hx
		}
	}
	for k := range n - j { // the last n mod 8 elements, into partials 0..6
		hh, hx := one(j + k)
		s[k] += hh
		t[k] += hx
	}
	st.s, st.t, st.bad = s, t, bad
}

func normGradOutGeneric(dst, g, gamma, xh []float32, rstd, sg, sgx float64) {
	n := len(g)
	dst, gamma, xh = dst[:n], gamma[:n], xh[:n]
	j := 0
	for ; j+4 <= n; j += 4 {
		q, d, m, x := g[j:j+4:j+4], dst[j:j+4:j+4], gamma[j:j+4:j+4], xh[j:j+4:j+4]
		d[0] = float32(rstd * (float64(q[0]*m[0]) - sg - float64(float64(x[0])*sgx)))
		d[1] = float32(rstd * (float64(q[1]*m[1]) - sg - float64(float64(x[1])*sgx)))
		d[2] = float32(rstd * (float64(q[2]*m[2]) - sg - float64(float64(x[2])*sgx)))
		d[3] = float32(rstd * (float64(q[3]*m[3]) - sg - float64(float64(x[3])*sgx)))
	}
	for ; j < n; j++ {
		dst[j] = float32(rstd * (float64(g[j]*gamma[j]) - sg - float64(float64(xh[j])*sgx)))
	}
}

func reluBiasGeneric(h, o, bias []float32) {
	n := len(h)
	o, bias = o[:n], bias[:n]
	for j := range n {
		h[j] = relu(o[j] + bias[j])
	}
}

func reluBiasDropGeneric(h, o, bias []float32, u []uint16, thresh int32, scale float32) {
	n := len(h)
	o, bias, u = o[:n], bias[:n], u[:n]
	sb := math.Float32bits(scale)
	j := 0
	for ; j+4 <= n; j += 4 {
		q, p, b, d := h[j:j+4:j+4], o[j:j+4:j+4], bias[j:j+4:j+4], u[j:j+4:j+4]
		q[0] = relu(p[0]+b[0]) * dropFactor(d[0], thresh, sb)
		q[1] = relu(p[1]+b[1]) * dropFactor(d[1], thresh, sb)
		q[2] = relu(p[2]+b[2]) * dropFactor(d[2], thresh, sb)
		q[3] = relu(p[3]+b[3]) * dropFactor(d[3], thresh, sb)
	}
	for ; j < n; j++ {
		h[j] = relu(o[j]+bias[j]) * dropFactor(u[j], thresh, sb)
	}
}

func gateGeneric(g, h []float32, scale float32, active bool, badp *uint32) {
	h = h[:len(g)]
	// bad gets bit 31 once an exponent field is all ones (as in
	// normGradGeneric); OR, unlike a running minimum, costs one cycle of
	// latency per element.
	bad := *badp
	gate := func(v, w float32) float32 {
		b := math.Float32bits(v)
		bad |= b&FiniteBits + 1<<23
		return math.Float32frombits(math.Float32bits(w) & uint32(int32(-b)>>31))
	}
	i := 0
	if active {
		for ; i+4 <= len(g); i += 4 {
			q, p := g[i:i+4:i+4], h[i:i+4:i+4]
			q[0] = gate(p[0], q[0]*scale)
			q[1] = gate(p[1], q[1]*scale)
			q[2] = gate(p[2], q[2]*scale)
			q[3] = gate(p[3], q[3]*scale)
		}
		for ; i < len(g); i++ {
			g[i] = gate(h[i], g[i]*scale)
		}
	} else {
		for ; i+4 <= len(g); i += 4 {
			q, p := g[i:i+4:i+4], h[i:i+4:i+4]
			q[0] = gate(p[0], q[0])
			q[1] = gate(p[1], q[1])
			q[2] = gate(p[2], q[2])
			q[3] = gate(p[3], q[3])
		}
		for ; i < len(g); i++ {
			g[i] = gate(h[i], g[i])
		}
	}
	*badp = bad
}
