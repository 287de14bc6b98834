// Command supergcn trains graph neural networks full-batch on CPU clusters
// with MPI. Run `supergcn help` for the subcommands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"io"
	"os"
	"sort"
	"time"

	"github.com/supergcn/supergcn/dataset"
	"github.com/supergcn/supergcn/internal/procsig"
	"github.com/supergcn/supergcn/internal/spell"
	"github.com/supergcn/supergcn/train"
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

// usage lists the commands and the bench kinds, from the tables the
// dispatchers use.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: supergcn <command> [flags]   (supergcn help <command> for its flags; supergcn --version)")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, subcommands[n].summary)
	}
	fmt.Fprintln(w, "\nbench kinds (supergcn bench <kind> --help):")
	for _, n := range benchKindNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, benchKinds[n].summary)
	}
}

// commandNames returns the subcommands' names, sorted.
func commandNames() []string {
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func main() {
	reexecForBLAS()
	// The stop signals, held since the process started, go to their
	// outcome: train turns them into a stop request first thing; everything
	// else ends at once (the output writers remove their temporaries).
	procsig.Start(nil)
	if len(os.Args) < 2 || os.Args[1] != "train" {
		procsig.Handle(exitOnSignal)
	}
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version" || os.Args[1] == "version") {
		fmt.Println(versionLine())
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "help" {
		// supergcn help CMD = supergcn CMD --help
		os.Args = []string{os.Args[0], os.Args[2], "--help"}
	}
	if len(os.Args) < 2 || os.Args[1] == "help" || helpAsked(os.Args[1:2]) {
		usage(os.Stdout)
		return
	}
	sc, ok := subcommands[os.Args[1]]
	if !ok {
		hint := spell.DidYouMean(os.Args[1], commandNames())
		if hint == "" {
			hint = " (supergcn --help lists them)"
		}
		if launcherRank() > 0 {
			quietRankExit(2)
		}
		fmt.Fprintf(os.Stderr, "supergcn: unknown command %q%s\n", os.Args[1], hint)
		os.Exit(2)
	}
	if err := sc.run(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		var se silentExit
		if errors.As(err, &se) {
			os.Exit(se.code)
		}
		code := exitCode(err)
		// A bad flag is the same on every rank a launcher started: rank 0
		// says it once, the others end with the same status in silence.
		if code == 2 && launcherRank() > 0 {
			quietRankExit(code)
		}
		fmt.Fprintf(os.Stderr, "supergcn %s: %s\n", sc.name, flagtab.UserMessage(err))
		os.Exit(code)
	}
}

// quietRankExit ends a rank other than 0 that found the same bad flag as
// rank 0, which reports it. It waits a moment first: the launcher ends the
// job at the first non-zero exit, which must not come before rank 0's line.
func quietRankExit(code int) {
	time.Sleep(time.Second)
	os.Exit(code)
}

// helpAsked reports whether args ask for the usage (-h, -help, --help).
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--h", "--help":
			return true
		}
	}
	return false
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// exitCode maps an error to the process exit status (1, or 2 for usage errors).
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, dataset.ErrSettings) {
		return 2
	}
	var stopped *train.StoppedError
	if errors.As(err, &stopped) {
		return exitStopped
	}
	return 1
}

// usageError marks bad flags or arguments (exit status 2).
type usageError = flagtab.UsageError

// newFlagSet returns a FlagSet whose errors are returned, not printed-and-exited.
// --help prints the usage on stdout; a bad flag is one line on stderr (main).
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("supergcn "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(os.Stdout, "usage: supergcn %s %s\n\nflags:\n", name, synopsis)
		fs.SetOutput(os.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFlagSet(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	return nil
}

// parseFlagSet is fs.Parse for every command (parseFlags without the
// check for arguments besides the flags): enum values in any case or by an
// alias, and an unknown flag answered with the one it likely means.
func parseFlagSet(fs *flag.FlagSet, args []string) error {
	if !helpAsked(args) {
		fs.Usage = func() {} // a bad flag is one line, not the whole usage
		defer flagtab.CanonicaliseEnums(fs)()
	}
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	if msg, ok := spell.UnknownFlag(fs, args, err, spell.Habits{Names: flagtab.Habits, Unsupported: flagtab.Unsupported}); ok {
		return usageError(msg)
	}
	return usageError(fmt.Sprintf("%v (see %s --help)", err, fs.Name()))
}
