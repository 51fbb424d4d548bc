package toolsearch

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

var update = flag.Bool("update", false, "rewrite testdata/ranking.golden from the current ranking")

// smallCatalog is a fixed catalog of the kind a gateway serves: namespaced names in every style,
// near-duplicates across backends, and parameters that carry meaning.
func smallCatalog() []Tool {
	return []Tool{
		{Name: "fs__read_text_file", Description: "Read the complete contents of a file as text.", Params: []Param{{"path", "Path of the file"}}},
		{Name: "fs__write_file", Description: "Create a new file or overwrite an existing file with new content.", Params: []Param{{"path", ""}, {"content", "Text to write"}}},
		{Name: "fs__create_directory", Description: "Create a new directory, with its parents.", Params: []Param{{"path", ""}}},
		{Name: "fs__list_directory", Description: "List the files and directories in a path.", Params: []Param{{"path", ""}}},
		{Name: "gh__createIssue", Title: "Create issue", Description: "Open a new issue in a GitHub repository.", Params: []Param{{"owner", ""}, {"repo", ""}, {"title", ""}}},
		{Name: "gh__listIssues", Description: "List issues of a repository, filtered by state and labels.", Params: []Param{{"state", "open, closed or all"}}},
		{Name: "gh__mergePullRequest", Description: "Merge a pull request.", Params: []Param{{"pull_number", ""}}},
		{Name: "web-browser__take-screenshot", Description: "Capture an image of the current page.", Params: []Param{{"fullPage", "Whole scrollable page"}}},
		{Name: "web-browser__navigate", Description: "Go to a URL.", Params: []Param{{"url", ""}}},
		{Name: "web-browser__close", Description: "Close the browser."},
		{Name: "kube__kubectl_logs", Description: "Get the logs of a pod's container.", Params: []Param{{"pod", ""}, {"container", ""}}},
		{Name: "kube__kubectl_scale", Description: "Scale a deployment to a number of replicas.", Params: []Param{{"replicas", ""}}},
		{Name: "db__query", Description: "Run a read-only SQL query.", Params: []Param{{"sql", ""}}},
	}
}

var goldenQueries = []string{
	"show me what's in README.md",
	"make a folder for the reports",
	"file a bug about the crash",
	"which issues are still open",
	"merge PR 12",
	"take a picture of the web page",
	"open https://example.com",
	"why is my pod crashing, show its output",
	"run more copies of the web deployment",
	"select all rows from the users table",
	"close the browser window",
	"nothing here matches xyzzy",
}

// TestRankingGolden pins the ranking of a small fixed catalog: any change to tokenizing, stemming,
// synonyms or weights shows up here as a reviewed diff.
func TestRankingGolden(t *testing.T) {
	ix := NewBM25(smallCatalog())
	var b bytes.Buffer
	for _, q := range goldenQueries {
		fmt.Fprintf(&b, "%s\n", q)
		for _, h := range ix.Search(q, 3, nil) {
			fmt.Fprintf(&b, "\t%s\t%.4f\n", ix.names[h.Index], h.Score)
		}
	}
	mcptest.Golden(t, filepath.Join("testdata", "ranking.golden"), b.Bytes(), *update, "-update")
}

// TestHiddenNeverReturned: a tool the caller may not see is never returned, not even to fill the
// limit when it would have ranked first, and the visible tools keep their order.
func TestHiddenNeverReturned(t *testing.T) {
	tools := smallCatalog()
	ix := NewBM25(tools)
	hidden := slices.IndexFunc(tools, func(tl Tool) bool { return tl.Name == "gh__createIssue" })
	all := ix.Search("create an issue", len(tools), nil)
	if len(all) == 0 || all[0].Index != hidden {
		t.Fatalf("the test needs createIssue to rank first: %v", all)
	}
	got := ix.Search("create an issue", len(tools), func(i int) bool { return i != hidden })
	for _, h := range got {
		if h.Index == hidden {
			t.Fatal("a hidden tool was returned")
		}
	}
	var want []Hit
	for _, h := range all {
		if h.Index != hidden {
			want = append(want, h)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("filtering changed the order of visible tools:\n got %v\nwant %v", got, want)
	}
}

// TestDeterministic: the same catalog and query rank identically on every build of the index
// (as on every replica), whatever the order of parameters in the schema's map.
func TestDeterministic(t *testing.T) {
	raw := []byte(`{"name":"a__x","description":"copy a file","inputSchema":{"properties":{"to":{"description":"destination"},"from":{"description":"source"}}}}`)
	raw2 := []byte(`{"name":"a__y","description":"copy a file","inputSchema":{"properties":{"from":{"description":"source"},"to":{"description":"destination"}}}}`)
	var first []Hit
	for range 20 {
		x, _ := ParseTool(raw)
		y, _ := ParseTool(raw2)
		got := NewBM25([]Tool{x, y}).Search("copy a file from source to destination", 2, nil)
		if len(got) != 2 || got[0].Score != got[1].Score || got[0].Index != 0 {
			t.Fatalf("tie not broken by name: %v", got)
		}
		if first == nil {
			first = got
		} else if !slices.Equal(first, got) {
			t.Fatalf("ranking differs between builds: %v, %v", first, got)
		}
	}
}

func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"github__create_issue":         {"github", "creat", "issu"},
		"getHTTPRequestHeaders":        {"get", "http", "request", "header"},
		"API-retrieve-a-page-property": {"api", "retriev", "pag", "property"},
		"Listing the created files":    {"list", "creat", "fil"},
		"stopped running processes":    {"stop", "run", "process"},
	} {
		if got := Tokens(in); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}
