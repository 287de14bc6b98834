package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"os"

	"github.com/supergcn/supergcn/nn"
)

const (
	ckptMagic   = "SGCNCKPT"
	ckptVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checkpoint is a saved model: its configuration and parameter values.
type Checkpoint struct {
	Model     nn.Config `json:"model"`
	LabelProp float64   `json:"label_prop"`
	FeatNorm  string    `json:"feat_norm"` // input preprocessing the model was trained with
	Params    []SavedParam
}

// SavedParam is one named parameter tensor.
type SavedParam struct {
	Name string    `json:"name"`
	W    []float32 `json:"-"`
}

type ckptHeader struct {
	Model     nn.Config `json:"model"`
	LabelProp float64   `json:"label_prop"`
	FeatNorm  string    `json:"feat_norm,omitempty"`
	Params    []struct {
		Name string `json:"name"`
		Len  int    `json:"len"`
	} `json:"params"`
}

func (t *trainer) save(path string) error {
	if t.c.Rank() != 0 {
		return nil // parameters are identical on every rank
	}
	ck := Checkpoint{Model: t.model.Config(), LabelProp: t.cfg.LabelProp, FeatNorm: t.cfg.FeatNorm}
	for _, p := range t.params {
		ck.Params = append(ck.Params, SavedParam{Name: p.Name, W: p.W})
	}
	return SaveCheckpoint(path, &ck)
}

// SaveCheckpoint writes ck to path (via path.tmp and a rename): magic,
// version, a JSON header, the parameters as little-endian float32, and a
// CRC32-C of everything before it.
func SaveCheckpoint(path string, ck *Checkpoint) error {
	var h ckptHeader
	h.Model, h.LabelProp, h.FeatNorm = ck.Model, ck.LabelProp, ck.FeatNorm
	for _, p := range ck.Params {
		h.Params = append(h.Params, struct {
			Name string `json:"name"`
			Len  int    `json:"len"`
		}{p.Name, len(p.W)})
	}
	js, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(ckptMagic)
	binary.Write(&buf, binary.LittleEndian, uint32(ckptVersion))
	binary.Write(&buf, binary.LittleEndian, uint32(len(js)))
	buf.Write(js)
	for _, p := range ck.Params {
		binary.Write(&buf, binary.LittleEndian, p.W)
	}
	binary.Write(&buf, binary.LittleEndian, crc32.Checksum(buf.Bytes(), castagnoli))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("--save: %w", err)
	}
	return nil
}

// LoadCheckpoint reads a checkpoint written by SaveCheckpoint, verifying it.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bad := func(msg string) error { return fmt.Errorf("%s: not a valid supergcn checkpoint: %s", path, msg) }
	if len(b) < len(ckptMagic)+12 || string(b[:len(ckptMagic)]) != ckptMagic {
		return nil, bad("bad magic")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, bad("checksum mismatch (damaged or truncated file)")
	}
	off := len(ckptMagic)
	if v := binary.LittleEndian.Uint32(b[off:]); v != ckptVersion {
		return nil, bad(fmt.Sprintf("version %d, this build reads %d", v, ckptVersion))
	}
	n := int(binary.LittleEndian.Uint32(b[off+4:]))
	off += 8
	if off+n > len(body) {
		return nil, bad("header length beyond end of file")
	}
	var h ckptHeader
	if err := json.Unmarshal(b[off:off+n], &h); err != nil {
		return nil, bad("header: " + err.Error())
	}
	off += n
	ck := &Checkpoint{Model: h.Model, LabelProp: h.LabelProp, FeatNorm: h.FeatNorm}
	for _, p := range h.Params {
		if p.Len < 0 || off+4*p.Len > len(body) {
			return nil, bad(fmt.Sprintf("parameter %s runs past the end of the file", p.Name))
		}
		w := make([]float32, p.Len)
		for i := range w {
			w[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:]))
		}
		off += 4 * p.Len
		ck.Params = append(ck.Params, SavedParam{Name: p.Name, W: w})
	}
	if off != len(body) {
		return nil, bad("trailing bytes after the parameters")
	}
	return ck, nil
}
