//go:build noasm || !(amd64 || arm64)

package attn

// platformHeads: no assembly head kernels on this architecture or under
// the noasm build tag; the pure-Go twins (heads.go) are the only ones.
func platformHeads() []headKernels { return nil }
