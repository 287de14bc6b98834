package spell

import (
	"flag"
	"strings"
)

// Habits are the names other tools give to flags, by Key: Names maps one
// to the defined flag that means the same; Unsupported maps one with no
// equivalent to a sentence saying what it would mean and why it is not
// offered, given instead of the nearest name by spelling.
type Habits struct {
	Names, Unsupported map[string]string
}

// UnknownFlag completes the flag package's "flag provided but not
// defined" error of fs parsing args: the flag as typed, and either the
// sentence of h.Unsupported or the defined flag it most likely means
// (SuggestFlag). It reports false for any other error.
func UnknownFlag(fs *flag.FlagSet, args []string, err error, h Habits) (string, bool) {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return "", false
	}
	msg := "flag provided but not defined: " + typedFlag(args, name)
	if note, ok := h.Unsupported[Key(name)]; ok {
		return msg + ": " + note, true
	}
	if s := SuggestFlag(fs, name, h.Names); s != "" {
		return msg + " (did you mean --" + s + "?)", true
	}
	return msg + " (see " + fs.Name() + " --help)", true
}

// typedFlag returns the argument that named flag name, as typed (without
// any =value).
func typedFlag(args []string, name string) string {
	for _, a := range args {
		flagPart, _, _ := strings.Cut(a, "=")
		if strings.TrimLeft(flagPart, "-") == name && strings.HasPrefix(flagPart, "-") {
			return flagPart
		}
	}
	return "--" + name
}

// SuggestFlag returns the defined flag of fs that name most likely means,
// or "": the flag habits (other tools' names, by Key) map it to, none
// when fs lacks that flag (a near spelling would mean something else),
// else Nearest.
func SuggestFlag(fs *flag.FlagSet, name string, habits map[string]string) string {
	key := Key(name)
	if h, ok := habits[key]; ok {
		if fs.Lookup(h) == nil {
			return ""
		}
		return h
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return Nearest(key, names)
}
