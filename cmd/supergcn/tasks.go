package main

import (
	"fmt"
	"strings"

	"github.com/supergcn/supergcn/task"
)

// taskHelp lists the tasks for --task's help: name, what it trains on.
func taskHelp() string {
	var b strings.Builder
	for i, n := range task.Names() {
		k, _ := task.Lookup(n)
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s, on %s)", k.Name, k.Doc, k.Targets)
	}
	return b.String() + " (docs/TASKS.md)"
}
