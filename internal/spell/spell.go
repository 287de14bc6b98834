// Package spell matches names as people type them: in any case, '_' for
// '-', by an alias, or misspelt (the nearest name by edit distance).
package spell

import "strings"

// Key is how names are compared: lower case, '_' as '-', trimmed.
func Key(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
}

// Canonical rewrites each comma-separated element of v that names one of
// names or of aliases' keys (compared by Key) to the name it stands for;
// an element that matches nothing is kept as typed.
func Canonical(v string, names []string, aliases map[string]string) string {
	table := map[string]string{}
	for _, n := range names {
		table[Key(n)] = n
	}
	for a, n := range aliases {
		table[Key(a)] = n
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		if n, ok := table[Key(p)]; ok {
			parts[i] = n
		}
	}
	return strings.Join(parts, ",")
}

// Nearest returns the one of names that key (a Key) most likely means,
// or "": the same name, the nearest by edit distance (at most one edit in
// three letters, or one; the first in sort order on a tie), or the only
// name key begins.
func Nearest(key string, names []string) string {
	best, bestDist, prefixed, prefixes := "", max(1, len(key)/3)+1, "", 0
	for _, n := range names {
		switch d := Distance(key, n); {
		case d == 0:
			return n
		case d < bestDist || (d == bestDist && n < best):
			best, bestDist = n, d
		}
		if len(key) >= 3 && strings.HasPrefix(n, key) {
			prefixed, prefixes = n, prefixes+1
		}
	}
	if best == "" && prefixes == 1 {
		return prefixed
	}
	return best
}

// DidYouMean is " (did you mean X?)" for the one of names that name likely
// means, else "".
func DidYouMean(name string, names []string) string {
	if n := Nearest(Key(name), names); n != "" {
		return " (did you mean " + n + "?)"
	}
	return ""
}

// Distance is the edit distance between a and b: insertions, deletions,
// substitutions and swaps of adjacent letters (optimal string alignment).
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
