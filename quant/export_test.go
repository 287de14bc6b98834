package quant

// A test-only width: one bit a value. Adding it to quantBits is the whole
// change a width needs (the generic kernels serve it, no SIMD set lists
// it); every test of this package then runs it (formats), and
// wire_exchange_test.go sends it through the exchange.
func init() { quantBits = append(quantBits, 1) }
