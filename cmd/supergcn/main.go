// Command supergcn trains graph neural networks full-batch on CPU clusters
// with MPI. Run `supergcn help` for the subcommands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
)

type subcommand struct {
	name, summary string
	run           func(args []string) error
}

var subcommands = map[string]subcommand{}

// register adds a subcommand; each cmd_<name>.go calls it from init.
func register(name, summary string, run func(args []string) error) {
	if _, dup := subcommands[name]; dup {
		panic("duplicate subcommand " + name)
	}
	subcommands[name] = subcommand{name, summary, run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: supergcn <command> [flags]   (supergcn <command> --help for its flags)")
	fmt.Fprintln(os.Stderr, "\ncommands:")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, subcommands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	sc, ok := subcommands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "supergcn: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := sc.run(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "supergcn %s: %v\n", sc.name, err)
		os.Exit(exitCode(err))
	}
}

// exitCode maps an error to the process exit status (1, or 2 for usage errors).
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// usageError marks bad flags or arguments.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// newFlagSet returns a FlagSet whose errors are returned, not printed-and-exited.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("supergcn "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: supergcn %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}
