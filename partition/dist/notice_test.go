package dist

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/internal/progress"
	"github.com/supergcn/supergcn/internal/testdataset"
)

// TestCompressedNoticeOncePerRead: Cora's OGB layout is six gzip files;
// a read by three ranks says once, on rank 0, that rank 0 reads them whole.
func TestCompressedNoticeOncePerRead(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	var out bytes.Buffer
	err := comm.RunGroup(3, func(c comm.Comm) error {
		src := Source{Path: cora}
		if c.Rank() == 0 {
			src.Progress = &progress.Reporter{W: &out, Interval: time.Hour}
		}
		_, err := Read(c, src)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "is compressed"); n != 1 {
		t.Errorf("%d compressed-input notices, want 1:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "rank 0 reads it and any other compressed input whole") {
		t.Errorf("the notice does not say what rank 0 reads:\n%s", out.String())
	}
}
