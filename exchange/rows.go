package exchange

import (
	"fmt"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
)

// RowMove is one all-to-all of row blocks outside the graph operator's
// layers, such as the endpoint rows of a link task's scored pairs and
// their gradients: rows [SendOff[q], SendOff[q+1]) of Send go to rank q,
// and rank q's rows land in rows [RecvOff[q], RecvOff[q+1]) of Recv.
type RowMove struct {
	// Pass picks the codec as for a layer's rows: a training pass the
	// Forward role (Backward: the Backward role), an evaluation pass the
	// Eval role, an exact pass none; rows to ranks of this rank's node
	// go through the Intra codec when the role has one (peerCodecs).
	// Pass.Epoch keys the random streams.
	Pass     nn.Pass
	Backward bool
	// Stream is the caller's random stream (a seed and which rows), mixed
	// into every block's seed with the epoch, both ranks and the
	// direction: the bytes depend on these alone, not on the threads.
	Stream uint64
	// What names the rows in errors ("pair rows").
	What             string
	Send, Recv       *dense.Matrix
	SendOff, RecvOff []int
}

// rowsLayer is the layer number a RowMove's seeds mix in: apart from
// every layer of a model.
const rowsLayer = -1

// MoveRows moves m's rows through the codecs of the Propagator's roles
// (float32 with no copy where the role has none), counting its bytes and
// times in Stats as a layer's transfer does (and its bytes also in
// Stats.RowBytes). Collective: every rank calls it, with blocks that
// match its peers'.
func (p *Propagator) MoveRows(m RowMove) error {
	if err := p.checkMove(m); err != nil {
		return err
	}
	ps := m.Pass
	ps.Layer = rowsLayer
	codecs, _ := p.peerCodecs(ps, m.Backward, p.sameNode)
	dir := "forward"
	if m.Backward {
		dir = "backward"
	}
	tr := &transfer{c: p.c, send: m.Send, recv: m.Recv, sendOff: m.SendOff, recvOff: m.RecvOff, codecs: codecs,
		intra: p.sameNode, shared: p.shared, layer: rowsLayer, dir: m.What + " " + dir}
	before := p.stats.CommBytes
	done := make(chan struct{})
	close(done)
	err := p.transferRows(tr, ps, rowsStream(m.Stream, m.Backward, ps.Train), done)
	p.stats.RowBytes += p.stats.CommBytes - before
	if err != nil {
		return fmt.Errorf("exchange: %s: %w", m.What, err)
	}
	return nil
}

// rowsStream is a RowMove's stream for passSeed: 4 and up, apart from a
// layer's 0–3, and distinct per caller stream, direction and pass kind.
func rowsStream(s uint64, backward, train bool) uint64 {
	k := uint64(0)
	if backward {
		k = 1
	}
	if !train {
		k += 2
	}
	return 4 + 4*s + k
}

// checkMove validates a RowMove's shapes against the communicator.
func (p *Propagator) checkMove(m RowMove) error {
	n := p.c.Size() + 1
	if m.Send == nil || m.Recv == nil || len(m.SendOff) != n || len(m.RecvOff) != n {
		return fmt.Errorf("exchange: %s: want send and receive rows with %d offsets each", m.What, n)
	}
	if m.Send.Cols != m.Recv.Cols || m.SendOff[n-1] > m.Send.Rows || m.RecvOff[n-1] > m.Recv.Rows ||
		len(m.Send.Data) < m.Send.Rows*m.Send.Cols || len(m.Recv.Data) < m.Recv.Rows*m.Recv.Cols {
		return fmt.Errorf("exchange: %s: blocks of %d and %d rows in %d×%d and %d×%d matrices", m.What,
			m.SendOff[n-1], m.RecvOff[n-1], m.Send.Rows, m.Send.Cols, m.Recv.Rows, m.Recv.Cols)
	}
	return nil
}
