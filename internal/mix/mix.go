// Package mix is the module's integer hash: the SplitMix64 finaliser.
package mix

// Mix64 is the SplitMix64 finaliser: a bijection of uint64 whose outputs
// for consecutive inputs look independent.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
