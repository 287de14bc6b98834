//go:build !unix

package sysmem

func addressSpaceLimit() int64 { return 0 }
