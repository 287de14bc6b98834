//go:build cgo

package train

const cgoEnabled = true
