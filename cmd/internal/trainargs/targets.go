package trainargs

import (
	"fmt"
	"os"
	"strings"

	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/task"
)

// CheckTargets checks --task and --targets together before any data is
// read: a task with a target table needs one, the others take none.
func CheckTargets(name, path, edgeSplit, edgeSplitFiles string) error {
	k, err := task.Lookup(name)
	if err != nil {
		return flagtab.UsageError(fmt.Sprintf("--task: %q is not one of %s", name, strings.Join(task.Names(), ", ")))
	}
	switch {
	case k.Pairs && edgeSplit == "" && edgeSplitFiles == "":
		return flagtab.UsageError(fmt.Sprintf("--task %s: give --edge-split random:TRAIN,VALID[,TEST][:SEED] or --edge-split-files DIR", k.Name))
	case k.Pairs && edgeSplit != "" && edgeSplitFiles != "":
		return flagtab.UsageError(fmt.Sprintf("--edge-split-files: %s: give the edge split either as files or as --edge-split (%q), not both", edgeSplitFiles, edgeSplit))
	case !k.Pairs && edgeSplit != "":
		return flagtab.UsageError(fmt.Sprintf("--edge-split: for --task link; task %s does not split edges", k.Name))
	case !k.Pairs && edgeSplitFiles != "":
		return flagtab.UsageError(fmt.Sprintf("--edge-split-files: for --task link; task %s does not split edges", k.Name))
	case k.Pairs && path != "":
		return flagtab.UsageError(fmt.Sprintf("--targets: task %s trains on the edges of its edge split", k.Name))
	case k.Pairs && edgeSplitFiles != "":
		if st, err := os.Stat(edgeSplitFiles); err != nil || !st.IsDir() {
			return flagtab.UsageError(fmt.Sprintf("--edge-split-files: %s is not a directory", edgeSplitFiles))
		}
	case k.Pairs:
		if _, err := graph.ParseEdgeSplit(edgeSplit); err != nil {
			return flagtab.UsageError("--edge-split: " + err.Error())
		}
	case k.Table && path == "":
		return flagtab.UsageError(fmt.Sprintf("--task %s: give --targets FILE, %s (%s)", k.Name, k.Targets, task.TargetFormats))
	case !k.Table && path != "":
		return flagtab.UsageError(fmt.Sprintf("--targets: task %s trains on the dataset's labels (--labels); --targets is for %s", k.Name, strings.Join(tableTasks(), " and ")))
	case path != "":
		if err := container.CheckInput(path); err != nil {
			return flagtab.UsageError(fmt.Sprintf("--targets: %v", err))
		}
	}
	return nil
}

// tableTasks lists the tasks that read a target table.
func tableTasks() []string {
	var n []string
	for _, name := range task.Names() {
		if k, _ := task.Lookup(name); k.Table {
			n = append(n, name)
		}
	}
	return n
}

// ReadTargets reads the --targets table of task name (nil for a task
// without one); every rank reads the file.
func ReadTargets(name, path string) (*task.Table, error) {
	if path == "" {
		return nil, nil
	}
	k, err := task.Lookup(name)
	if err != nil {
		return nil, err
	}
	t, err := task.ReadTargets(path, k)
	if err != nil {
		return nil, fmt.Errorf("--targets: %w", err)
	}
	return t, nil
}

// CheckGenTargets checks gen's --targets, --target-task and --target-tasks.
func CheckGenTargets(path, kind string, cols int) error {
	if path == "" {
		return nil
	}
	if !strings.HasSuffix(path, ".npy") {
		return flagtab.UsageError(fmt.Sprintf("--targets: %q: the name must end in .npy", path))
	}
	if err := container.CheckWritable(path); err != nil {
		return flagtab.UsageError(fmt.Sprintf("--targets: %v", err))
	}
	if kind != "multilabel" && kind != "regression" {
		return flagtab.UsageError(fmt.Sprintf("--target-task: %q is not multilabel or regression", kind))
	}
	if cols < 1 {
		return flagtab.UsageError(fmt.Sprintf("--target-tasks: %d, need ≥ 1", cols))
	}
	return nil
}

// WriteGenTargets writes gen's --targets table of the generated dataset.
func WriteGenTargets(path string, ds *graph.Dataset, kind string, cols int, seed uint64) error {
	if path == "" {
		return nil
	}
	t, err := task.Synthesize(ds, kind, cols, seed)
	if err != nil {
		return err
	}
	return graph.WriteNpyF32(path, t.Rows, t.Cols, t.Y)
}
