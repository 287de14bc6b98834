package train

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/container"
)

// FuzzCheckpoint decodes checkpoints: the input is the file without its
// CRC, which the target appends, so that mutations reach the header and
// the field checks rather than stopping at the checksum. A decoded
// checkpoint must describe a buildable model whose parameters it holds.
func FuzzCheckpoint(f *testing.F) {
	dir := f.TempDir()
	for i, edit := range []func(ck *Checkpoint){
		func(ck *Checkpoint) {},
		func(ck *Checkpoint) { ck.Train = nil },
		func(ck *Checkpoint) { ck.Train.Epoch = -5 },
		func(ck *Checkpoint) { ck.Model.Hidden = 1 << 40 },
		func(ck *Checkpoint) { ck.FeatNorm = "row"; ck.Model.Norm = "layer" },
	} {
		ck := smallCheckpoint()
		edit(ck)
		path := filepath.Join(dir, "seed.ckpt")
		if err := SaveCheckpoint(path, ck); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:len(b)-4])
		if i == 0 {
			f.Add(b[:len(b)/2])
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b := binary.LittleEndian.AppendUint32(bytes.Clone(body), container.Checksum(body))
		ck, err := decodeCheckpoint("fuzz.ckpt", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.ckpt: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q does not name the file on one line", err)
			}
			return
		}
		if err := ck.Model.Validate(); err != nil {
			t.Fatalf("accepted model: %v", err)
		}
		n := int64(0)
		for _, p := range ck.Params {
			n += int64(len(p.W))
			if ck.Train != nil && (len(p.M) != len(p.W) || len(p.V) != len(p.W)) {
				t.Fatalf("parameter %s: moments of %d and %d for %d values", p.Name, len(p.M), len(p.V), len(p.W))
			}
		}
		if n < ck.Model.NumParams() {
			t.Fatalf("%d parameter values for a model of %d", n, ck.Model.NumParams())
		}
	})
}
