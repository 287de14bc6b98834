package quant

// packFn quantises the values of x into dst (RowBytes(len(x)) bytes) with the
// row's zero point and reciprocal scale, drawing one RNG step per 16 values.
type packFn func(dst []byte, x []float32, zero, inv float32, r *RNG)

// unpackFn writes zero + q·scale for every code of src into dst.
type unpackFn func(dst []float32, src []byte, zero, scale float32)

// packGeneric is the reference for every pack kernel:
//
//	for c := 0; c < len(x); c += 16 {
//		r.step()
//		for l := 0; l < 16 && c+l < len(x); l++ {
//			q := code(x[c+l], zero, inv, uniform(r[l]), levels)
//			dst[(c+l)/per] |= byte(q) << ((c+l)%per*bits)
//		}
//	}
func packGeneric(bits int) packFn {
	per := 8 / bits
	levels := float32(int(1)<<bits - 1)
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) {
		clear(dst[:(len(x)*bits+7)/8])
		for c := 0; c < len(x); c += Lanes {
			r.step()
			n := min(Lanes, len(x)-c)
			for l := 0; l < n; l++ {
				j := c + l
				q := code(x[j], zero, inv, uniform(r[l]), levels)
				dst[j/per] |= byte(q << uint(j%per*bits))
			}
		}
	}
}

// unpackGeneric is the reference for every unpack kernel:
//
//	for j := range dst { dst[j] = zero + float32(q(j))*scale }
func unpackGeneric(bits int) unpackFn {
	per := 8 / bits
	mask := byte(1<<bits - 1)
	return func(dst []float32, src []byte, zero, scale float32) {
		for j := range dst {
			q := src[j/per] >> uint(j%per*bits) & mask
			dst[j] = float32(float32(q)*scale) + zero
		}
	}
}

// kernels is one implementation of the pack/unpack kernels, indexed by bits.
type kernels struct {
	name   string
	pack   [9]packFn
	unpack [9]unpackFn
}

func genericKernels() kernels {
	k := kernels{name: "generic"}
	for _, b := range []int{2, 4, 8} {
		k.pack[b] = packGeneric(b)
		k.unpack[b] = unpackGeneric(b)
	}
	return k
}
