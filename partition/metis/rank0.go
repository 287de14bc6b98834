package metis

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
)

// OnRank0 partitions g into parts with Metis on rank 0 of c and broadcasts
// the owner array, so every rank returns the same owners, or every rank
// returns rank 0's error (its message travels in the broadcast buffer,
// flagged by the buffer's last byte, so no rank is left waiting). Every
// rank passes the same g and parts; only rank 0 reads o.
func OnRank0(c comm.Comm, g *graph.CSR, parts int, o Options) ([]int32, error) {
	n := g.NumRows
	buf := make([]byte, max(4*n, 512)+1)
	if c.Rank() == 0 {
		owner, err := Metis(g, parts, o)
		if err != nil {
			buf[len(buf)-1] = 1
			copy(buf[:len(buf)-1], err.Error())
		} else {
			for v, p := range owner {
				binary.LittleEndian.PutUint32(buf[4*v:], uint32(p))
			}
		}
	}
	if err := c.BcastBytes(buf, 0); err != nil {
		return nil, err
	}
	if buf[len(buf)-1] != 0 {
		return nil, fmt.Errorf("METIS on rank 0: %s", strings.TrimRight(string(buf[:len(buf)-1]), "\x00"))
	}
	owner := make([]int32, n)
	for v := range owner {
		owner[v] = int32(binary.LittleEndian.Uint32(buf[4*v:]))
	}
	return owner, nil
}
