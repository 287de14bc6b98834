//go:build !linux

package main

import "errors"

func hugeFloats(int) ([]float32, error) {
	return nil, errors.New("--hugepages: only on Linux")
}
