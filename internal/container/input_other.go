//go:build !unix

package container

import "os"

func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

func setBlocking(*os.File) error { return nil }
