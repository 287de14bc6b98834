//go:build !amd64 || noasm

package nn

import "github.com/supergcn/supergcn/internal/dispatch"

// archDropWords: no dropout kernels on this architecture (or with noasm).
func archDropWords() []dispatch.Impl[*wordKernels] { return nil }
