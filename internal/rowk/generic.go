package rowk

import "math"

// The pure-Go twins. Each runs the elements in groups of four (element j
// into partial j mod 4) and is written so that it rounds exactly as the
// vector code: explicit conversions keep the compiler from fusing a
// multiply into an add (the Go spec lets it otherwise, e.g. on arm64 or
// with GOAMD64=v3), and each may start where an assembly prefix of a
// multiple of 8 elements stopped, the sums carried in *s / *st.

func biasSumGeneric(x []float64, o, bias []float32, s *[4]float64) {
	n := len(x)
	o, bias = o[:n], bias[:n]
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	j := 0
	for ; j+4 <= n; j += 4 {
		q, p, b := x[j:j+4:j+4], o[j:j+4:j+4], bias[j:j+4:j+4]
		v0, v1 := float64(p[0]+b[0]), float64(p[1]+b[1])
		v2, v3 := float64(p[2]+b[2]), float64(p[3]+b[3])
		q[0], q[1], q[2], q[3] = v0, v1, v2, v3
		s0 += v0
		s1 += v1
		s2 += v2
		s3 += v3
	}
	for k := range n - j { // the last n mod 4 elements, into partials 0, 1, 2
		v := float64(o[j+k] + bias[j+k])
		x[j+k] = v
		switch k {
		case 0:
			s0 += v
		case 1:
			s1 += v
		case 2:
			s2 += v
		}
	}
	s[0], s[1], s[2], s[3] = s0, s1, s2, s3
}

func sqSumGeneric(x []float64, mean float64, s *[4]float64) {
	n := len(x)
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	j := 0
	for ; j+4 <= n; j += 4 {
		q := x[j : j+4 : j+4]
		d0, d1, d2, d3 := q[0]-mean, q[1]-mean, q[2]-mean, q[3]-mean
		s0 += float64(d0 * d0)
		s1 += float64(d1 * d1)
		s2 += float64(d2 * d2)
		s3 += float64(d3 * d3)
	}
	for k := range n - j {
		d := x[j+k] - mean
		switch k {
		case 0:
			s0 += float64(d * d)
		case 1:
			s1 += float64(d * d)
		case 2:
			s2 += float64(d * d)
		}
	}
	s[0], s[1], s[2], s[3] = s0, s1, s2, s3
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
	// gate: bad gets bit 31 once an exponent field is all ones (adding
	// 1<<23 carries into bit 31 exactly then); w is kept where bits(v) ∈
	// (0, 2³¹], i.e. int32(−bits(v)) < 0.
	gate := func(v, w float32) float32 {
		b := math.Float32bits(v)
		bad |= b&FiniteBits + 1<<23
		return math.Float32frombits(math.Float32bits(w) & uint32(int32(-b)>>31))
	}
	s0, s1, s2, s3 := st.s[0], st.s[1], st.s[2], st.s[3]
	t0, t1, t2, t3 := st.t[0], st.t[1], st.t[2], st.t[3]
	j := 0
	for ; j+4 <= n; j += 4 {
		q, e, p, b, m := g[j:j+4:j+4], h[j:j+4:j+4], o[j:j+4:j+4], bias[j:j+4:j+4], gamma[j:j+4:j+4]
		x, cg, cb := xh[j:j+4:j+4], ag[j:j+4:j+4], ab[j:j+4:j+4]
		w0, w1, w2, w3 := q[0], q[1], q[2], q[3]
		if active {
			w0, w1, w2, w3 = w0*scale, w1*scale, w2*scale, w3*scale
		}
		v0, v1, v2, v3 := gate(e[0], w0), gate(e[1], w1), gate(e[2], w2), gate(e[3], w3)
		q[0], q[1], q[2], q[3] = v0, v1, v2, v3
		x0 := float32((float64(p[0]+b[0]) - mean) * rstd)
		x1 := float32((float64(p[1]+b[1]) - mean) * rstd)
		x2 := float32((float64(p[2]+b[2]) - mean) * rstd)
		x3 := float32((float64(p[3]+b[3]) - mean) * rstd)
		x[0], x[1], x[2], x[3] = x0, x1, x2, x3
		cg[0] += float64(v0 * x0)
		cg[1] += float64(v1 * x1)
		cg[2] += float64(v2 * x2)
		cg[3] += float64(v3 * x3)
		cb[0] += float64(v0)
		cb[1] += float64(v1)
		cb[2] += float64(v2)
		cb[3] += float64(v3)
		h0, h1 := float64(v0*m[0]), float64(v1*m[1])
		h2, h3 := float64(v2*m[2]), float64(v3*m[3])
		s0 += h0
		s1 += h1
		s2 += h2
		s3 += h3
		t0 += float64(h0 * float64(x0))
		t1 += float64(h1 * float64(x1))
		t2 += float64(h2 * float64(x2))
		t3 += float64(h3 * float64(x3))
	}
	for k := range n - j { // the last n mod 4 elements, into partials 0, 1, 2
		w := g[j+k]
		if active {
			w *= scale
		}
		v := gate(h[j+k], w)
		g[j+k] = v
		x := float32((float64(o[j+k]+bias[j+k]) - mean) * rstd)
		xh[j+k] = x
		ag[j+k] += float64(v * x)
		ab[j+k] += float64(v)
		hh := float64(v * gamma[j+k])
		switch k {
		case 0:
			s0 += hh
			t0 += float64(hh * float64(x))
		case 1:
			s1 += hh
			t1 += float64(hh * float64(x))
		case 2:
			s2 += hh
			t2 += float64(hh * float64(x))
		}
	}
	st.s, st.t, st.bad = [4]float64{s0, s1, s2, s3}, [4]float64{t0, t1, t2, t3}, bad
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
