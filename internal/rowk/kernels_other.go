//go:build noasm || !amd64

package rowk

// archSets: no assembly sets under noasm or off amd64 (the generic set
// serves arm64; NEON is future work).
func archSets() []Set { return nil }
