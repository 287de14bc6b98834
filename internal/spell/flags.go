package spell

import (
	"flag"
	"strings"
)

// UnknownFlag completes the flag package's "flag provided but not
// defined" error of fs parsing args: the flag as typed, and the defined
// flag it most likely means (SuggestFlag with habits). It reports false
// for any other error.
func UnknownFlag(fs *flag.FlagSet, args []string, err error, habits map[string]string) (string, bool) {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return "", false
	}
	msg := "flag provided but not defined: " + typedFlag(args, name)
	if s := SuggestFlag(fs, name, habits); s != "" {
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
// or "": the flag habits (other tools' names, by Key) map it to, else
// Nearest.
func SuggestFlag(fs *flag.FlagSet, name string, habits map[string]string) string {
	key := Key(name)
	if h, ok := habits[key]; ok && fs.Lookup(h) != nil {
		return h
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return Nearest(key, names)
}
