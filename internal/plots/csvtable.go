package plots

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/supergcn/supergcn/internal/container"
)

// readResultsFile opens path and hands it to read, which names path in its
// errors.
func readResultsFile[T any](path string, read func(io.Reader, string) ([]T, error)) ([]T, error) {
	f, _, err := container.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

// readResultsCSV reads a results.csv from r (header line first) that must
// have the columns want (what names the kind of file in the error when one
// is missing), and calls row for each later line with its line number and
// fields, together with a map from column name to index, plus the line's
// ranks column parsed as a positive count. Bad lines are errors naming
// file:line; a file without result lines is an error.
func readResultsCSV[T any](r io.Reader, path, what string, want []string, row func(line int, rec []string, col map[string]int, ranks int) (T, error)) ([]T, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: no header line: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, w := range want {
		if _, ok := col[w]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column (not a %s results.csv?)", path, w, what)
		}
	}
	var rows []T
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", path, line, len(rec), len(head))
		}
		ranks, err := strconv.Atoi(rec[col["ranks"]])
		if err != nil || ranks < 1 {
			return nil, fmt.Errorf("%s:%d: ranks %q is not a positive count", path, line, rec[col["ranks"]])
		}
		v, err := row(line, rec, col, ranks)
		if err != nil {
			return nil, err
		}
		rows = append(rows, v)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no result lines", path)
	}
	return rows, nil
}
