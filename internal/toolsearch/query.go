package toolsearch

import (
	"path"
	"slices"
	"strings"
)

// queryTerms are the query's terms, each once, in order, after each concrete value a user names
// is replaced by the kind of thing it is: a URL by "url", a file name by "file", a dotted
// expression by "script", #name by "channel", @name by "user", an upper-case HTTP method by
// itself and "http request", "how many" by "count", "which" before a plural by "list"; an identifier (createdAt) is dropped. Tools speak of "a URL" and "a file"; the words inside
// https://example.com or config.yaml name no tool, and "config" would rank the configuration
// tools for a task about reading a file.
func queryTerms(query string) []string {
	var out []string
	fields := unquoted(strings.Fields(query))
	for i := 0; i < len(fields); i++ {
		kind := kindOf(fields[i])
		switch next := ""; {
		case i+1 < len(fields) && strings.EqualFold(fields[i], "how") && strings.EqualFold(fields[i+1], "many"):
			kind, i = "count", i+1 // "how many rows": a count, not many rows
		case i+1 < len(fields) && strings.EqualFold(fields[i], "which"):
			if next = strings.ToLower(fields[i+1]); len(next) > 3 && next[len(next)-1] == 's' && !strings.HasSuffix(next, "ss") {
				kind = "list" // "which databases are there": a list of them
			}
		}
		for _, t := range Tokens(kind) {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// kindOf is what a field of a query stands for (queryTerms), or field itself.
func kindOf(field string) string {
	v := strings.Trim(field, "\"'`()[]{}<>,;:!?")
	ext := path.Ext(v)
	switch {
	case strings.Contains(v, "://") || strings.HasPrefix(v, "www."):
		return "url"
	case fileExtensions[strings.ToLower(strings.TrimPrefix(ext, "."))] && len(v) > len(ext):
		return "file"
	case len(ext) > 1 && len(v) > len(ext) && isIdentifier(v[:len(v)-len(ext)]) && isIdentifier(ext[1:]):
		return "script" // document.title, window.location.href
	case len(v) > 1 && v[0] == '#' && !isDigits(v[1:]):
		return "channel"
	case len(v) > 1 && v[0] == '@':
		return "user"
	case httpMethods[v]:
		return v + " http request"
	case len(v) > 1 && v[0] == '/' && !strings.ContainsAny(v, " "):
		return "url path" // /users, /etc/hosts
	case isCodeName(v):
		return "" // createdAt, parse_config: a value the task names, not a word of it
	}
	return field
}

// unquoted drops the quoted spans of a query ('connection reset by peer', "Done"): they are
// the value the task works on (text to search for, to type, to wait for), not words about which
// tool does it. A quote opens a span at the start of a field and closes it at the end of one,
// so the apostrophes of what's and Bob's are left alone.
func unquoted(fields []string) []string {
	out := fields[:0:0]
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		q := f[0]
		if q != '"' && q != '\'' && q != '`' {
			out = append(out, f)
			continue
		}
		end := i
		for end < len(fields) && !closes(fields[end], q, end == i) {
			end++
		}
		if end == len(fields) { // never closed: not a quotation
			out = append(out, f)
			continue
		}
		i = end
	}
	return out
}

// closes reports whether f ends a quotation opened by q (f being the opening field itself when
// first): its last character, bar punctuation, is q.
func closes(f string, q byte, first bool) bool {
	f = strings.TrimRight(f, ".,;:!?)")
	return len(f) > 0 && f[len(f)-1] == q && (!first || len(f) > 1)
}

// isCodeName reports a camelCase or snake_case identifier: a lower-case letter followed by an
// upper-case one, or a letter, an underscore and a letter.
func isCodeName(s string) bool {
	for i := 1; i < len(s); i++ {
		if isLower(s[i-1]) && s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
		if s[i-1] == '_' && i >= 2 && isLetter(s[i-2]) && isLetter(s[i]) {
			return true
		}
	}
	return false
}

func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isLetter(c byte) bool { return isLower(c) || c >= 'A' && c <= 'Z' }

// httpMethods are the upper-case method names a task quotes when it means an HTTP request.
var httpMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true, "OPTIONS": true}

func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != "" && !strings.Contains(s, "..")
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// fileExtensions are extensions common enough that "name.ext" is a file name, not a dotted
// expression such as document.title.
var fileExtensions = map[string]bool{
	"txt": true, "md": true, "json": true, "yaml": true, "yml": true, "toml": true, "ini": true,
	"xml": true, "csv": true, "tsv": true, "log": true, "pdf": true, "doc": true, "docx": true,
	"xls": true, "xlsx": true, "png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true,
	"webp": true, "mp3": true, "mp4": true, "wav": true, "zip": true, "tar": true, "gz": true,
	"tgz": true, "html": true, "css": true, "js": true, "ts": true, "tsx": true, "jsx": true,
	"go": true, "py": true, "rb": true, "rs": true, "java": true, "c": true, "h": true,
	"cpp": true, "sh": true, "sql": true, "env": true, "lock": true, "conf": true, "cfg": true,
}
