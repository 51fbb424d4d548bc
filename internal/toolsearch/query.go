package toolsearch

import (
	"path"
	"slices"
	"strings"
)

// queryTerms are the query's terms, each once, in order, after each concrete value a user names
// is replaced by the kind of thing it is: a URL by "url", a file name by "file". Tools speak of
// "a URL" and "a file"; the words inside https://example.com or config.yaml name no tool, and
// "config" would rank the configuration tools for a task about reading a file.
func queryTerms(query string) []string {
	var out []string
	for _, field := range strings.Fields(query) {
		for _, t := range Tokens(kindOf(field)) {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// kindOf is "url" for a URL, "file" for a file name with a common extension, and field itself
// otherwise.
func kindOf(field string) string {
	v := strings.Trim(field, "\"'`()[]{}<>,;:!?")
	switch {
	case strings.Contains(v, "://") || strings.HasPrefix(v, "www."):
		return "url"
	case fileExtensions[strings.ToLower(strings.TrimPrefix(path.Ext(v), "."))] && len(v) > len(path.Ext(v)):
		return "file"
	}
	return field
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
