package main

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// excluded are the repository's directories left out of the corpus: the guardrails' own
// detector cases (secret-, personal-data- and injection-shaped on purpose: the true cases, not
// the background the false-positive rate is measured on) and the recorded tools/list catalogs
// (measured on their own), as well as this corpus itself.
var excluded = []string{"internal/guardrails/testdata/", "internal/toolsearch/testdata/"}

// wholeFile is the size up to which a file is read whole; larger files are read to maxLines.
const (
	wholeFile = 8 << 10
	maxLines  = 100
)

// repoFiles lists the export's files by kind (go, md, yaml, json), sorted, without the excluded ones.
func repoFiles(repo string) (map[string][]string, map[string]int64, []string, error) {
	kinds := map[string][]string{}
	sizes := map[string]int64{}
	var dirs []string
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		rel = filepath.ToSlash(rel)
		for _, x := range excluded {
			if strings.HasPrefix(rel+"/", x) {
				return skip(d)
			}
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		kind := strings.TrimPrefix(filepath.Ext(p), ".")
		if kind == "yml" {
			kind = "yaml"
		}
		switch kind {
		case "go", "md", "yaml", "json":
			info, err := d.Info()
			if err != nil {
				return err
			}
			kinds[kind] = append(kinds[kind], p)
			sizes[p] = info.Size()
		}
		return nil
	})
	for _, fs := range kinds {
		sort.Strings(fs)
	}
	sort.Strings(dirs)
	return kinds, sizes, dirs, err
}

// skip skips a directory, or nothing for a file.
func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// spread picks n of xs, evenly spaced.
func spread(xs []string, n int) []string {
	if n >= len(xs) {
		return xs
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}

// filesystemCalls reads every Markdown, YAML and JSON file and an even sample of the Go files
// (files in all), lists every directory, and searches, describes and (dry-run) edits a few.
func filesystemCalls(repo string, files int) ([]call, error) {
	kinds, sizes, dirs, err := repoFiles(repo)
	if err != nil {
		return nil, err
	}
	calls := []call{{tool: "list_allowed_directories"}}
	for _, d := range dirs {
		calls = append(calls, call{"list_directory", map[string]any{"path": d}})
	}
	for _, d := range []string{"", "docs", "internal/gateway", "mcphttp", "helm/mcp-gateway"} {
		calls = append(calls, call{"list_directory_with_sizes", map[string]any{"path": filepath.Join(repo, d), "sortBy": "size"}})
	}
	for _, d := range []string{"docs", "internal/guardrails", "helm", "upstreams/catalog", ".ci"} {
		calls = append(calls, call{"directory_tree", map[string]any{"path": filepath.Join(repo, d)}})
	}
	for _, p := range []string{"*_test.go", "*.md", "*.yaml", "config", "redis"} {
		calls = append(calls, call{"search_files", map[string]any{"path": repo, "pattern": p, "excludePatterns": []string{"**/testdata/**"}}})
	}
	var read []string
	for _, k := range []string{"md", "yaml", "json"} {
		read = append(read, kinds[k]...)
	}
	read = append(read, spread(kinds["go"], max(files-len(read), 0))...)
	for _, p := range read {
		args := map[string]any{"path": p}
		if sizes[p] > wholeFile {
			args["head"] = maxLines
		}
		calls = append(calls, call{"read_text_file", args})
	}
	calls = append(calls, infoAndEdits(kinds, sizes)...)
	return calls, nil
}

// infoAndEdits describes a few files, reads small ones three at a time and proposes dry-run
// edits (a diff; nothing is written).
func infoAndEdits(kinds map[string][]string, sizes map[string]int64) []call {
	var (
		calls []call
		small []string
	)
	for _, p := range kinds["go"] {
		if sizes[p] <= wholeFile/4 {
			small = append(small, p)
		}
	}
	small = spread(small, 40)
	for _, p := range spread(small, 8) {
		calls = append(calls, call{"get_file_info", map[string]any{"path": p}})
	}
	for i := 0; i+3 <= 12; i += 3 {
		calls = append(calls, call{"read_multiple_files", map[string]any{"paths": small[i : i+3]}})
	}
	for _, p := range spread(kinds["go"], 6) {
		calls = append(calls, call{"edit_file", map[string]any{"path": p, "dryRun": true,
			"edits": []map[string]any{{"oldText": "package ", "newText": "package /* edited */ "}}}})
	}
	for _, p := range spread(kinds["md"], 4) {
		calls = append(calls, call{"edit_file", map[string]any{"path": p, "dryRun": true,
			"edits": []map[string]any{{"oldText": "the ", "newText": "The "}}}})
	}
	return calls
}
