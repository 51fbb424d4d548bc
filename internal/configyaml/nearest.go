package configyaml

import (
	"reflect"
	"strings"
	"time"
)

// Nearest is the word of known closest to s by edit distance, ignoring case, if it is near
// enough to be a likely typo of it (at most a third of the longer word's length in edits, at
// least 1, at most 3); "" otherwise.
func Nearest(s string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		d := editDistance(strings.ToLower(s), strings.ToLower(k))
		limit := min(3, max(1, max(len(s), len(k))/3))
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b, counted in bytes:
// insertions, deletions, substitutions and transpositions of neighbours ("ulr" is one edit
// from "url").
func editDistance(a, b string) int {
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

// maxDepth bounds the walk of a type's keys, against a type that contains itself.
const maxDepth = 12

// PathsOf lists, up to limit, the key paths of root's type where a key named key (ignoring
// case) belongs, list entries written "[]": for a key written at the wrong level.
func PathsOf(root reflect.Type, key string, limit int) []string {
	var out []string
	var walk func(t reflect.Type, path string, depth int)
	walk = func(t reflect.Type, path string, depth int) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			if t.Kind() != reflect.Pointer {
				path += "[]"
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || selfDecoding(t) || t == reflect.TypeFor[time.Time]() || depth > maxDepth {
			return
		}
		for _, f := range Fields(t) {
			p := keyPath(path, f.Key)
			if strings.EqualFold(f.Key, key) && len(out) < limit {
				out = append(out, p)
			}
			walk(f.Type, p, depth+1)
		}
	}
	walk(root, "", 0)
	return out
}
