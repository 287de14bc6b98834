//go:build !linux

package measure

import "errors"

// HugeFloats is Linux only.
func HugeFloats(int) ([]float32, error) {
	return nil, errors.New("only on Linux")
}
