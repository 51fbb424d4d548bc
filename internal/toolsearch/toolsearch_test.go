package toolsearch

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
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

// TestViewRanksAsIfAlone: a search over the tools a caller may see ranks exactly as a search
// over an index of those tools alone (same slots, same scores, same near-duplicates named): a
// hidden tool is never returned, never displaces a visible one, and its words weigh nothing, so
// a caller cannot learn them from how its own tools rank.
func TestViewRanksAsIfAlone(t *testing.T) {
	checkViewRanksAsIfAlone(t, NewBM25)
}

// checkViewRanksAsIfAlone checks, over random views of the captured catalog, that a search over
// an index that build made of every tool, through the view, ranks as one over an index of the
// view's tools alone.
func checkViewRanksAsIfAlone(t *testing.T, build func([]Tool) *BM25) {
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	full := build(docs)
	queries := loadQueries(t, catalog)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 12 {
		share := 0.1 + 0.8*rng.Float64()
		var keep []int
		for i := range docs {
			if rng.Float64() < share {
				keep = append(keep, i)
			}
		}
		sub := make([]Tool, len(keep))
		visible := make([]bool, len(docs))
		for j, i := range keep {
			sub[j], visible[i] = docs[i], true
		}
		alone := build(sub)
		for _, q := range queries {
			got := full.Search(q.text, 10, func(i int) bool { return visible[i] })
			want := alone.Search(q.text, 10, nil)
			for k := range want {
				want[k].Index = keep[want[k].Index]
				for m, s := range want[k].Similar {
					want[k].Similar[m] = keep[s]
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d (%d of %d tools visible), %q:\n got %v\nwant %v", round, len(keep), len(docs), q.text, got, want)
			}
		}
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
		} else if !reflect.DeepEqual(first, got) {
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
		"GitHub CronJob":               {"git", "hub", "github", "cron", "job", "cronjob"},
		"HTTPS URL":                    {"http", "url"},
	} {
		if got := Tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQueryTerms: a concrete value a user names stands for its kind, a quoted value, a number
// and an identifier are dropped, phrases read as the words they mean, and a few phrasings read as
// the request they are.
func TestQueryTerms(t *testing.T) {
	for in, want := range map[string][]string{
		"show me what's inside the config.yaml file": {"show", "content", "list", "fil"},
		"go to https://example.com in the browser":   {"navigat", "url", "browser"},
		"run javascript to read document.title":      {"run", "javascript", "read", "script"},
		"post in #general and ping @alice":           {"post", "channel", "ping", "user"},
		"wait until the text \"All done\" shows up":  {"wait", "until", "text", "appear"},
		"type 'yes' into Bob's prompt":               {"typ", "bob", "prompt"},
		"send a GET to /users":                       {"send", "get", "http", "request", "url", "path"},
		"delete the index on createdAt":              {"delet", "index"},
		"how many rows are in invoices":              {"count", "row", "invoic"},
		"which databases are on the server":          {"list", "databas", "server"},
		"which kube context":                         {"kub", "context"},
		"open docs.example.org/guide in a tab":       {"open", "url", "tab"},
		"curl localhost:8080/health":                 {"curl", "url", "port"},
		"tail /etc/hosts and ~/notes":                {"tail", "path"},
		"mail ann@example.com about #1203":           {"mail", "email", "issu"},
		"react with :rocket: to it":                  {"react", "emoji"},
		"what is at 40.7128, -74.0060":               {"coordinat"},
		"edit the Dockerfile and .env":               {"edit", "fil"},
		"view diagram.svg":                           {"view", "imag", "fil"},
		"explain the StatefulSet":                    {"explain", "stateful", "set", "statefulset"},
		"hey, could you quickly throw away draft 42": {"delet", "draft"},
		"match $regex values":                        {"match", "valu"},
		"copy it to app/static/img":                  {"copy", "path"},
		"ctrl+c the watcher, then press cmd-s":       {"interrupt", "stop", "key", "watcher", "press"},
		"list the URLs and IDs":                      {"list", "url", "id"},
		"which PRs are stale":                        {"list", "pr", "stal"},
		"jot down that Kim likes tea":                {"not", "remember", "add", "kim", "lik", "tea"},
	} {
		if got := queryTerms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("queryTerms(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQueryActions: the actions a query asks for are those of its verbs in their plain form; a
// question asks to be told (read), and a plural asked about or to be shown asks for a list.
func TestQueryActions(t *testing.T) {
	for in, want := range map[string]action{
		"delete the stale branch":                   actDelete,
		"throw away the stale branch":               actDelete,
		"when was this branch created":              actRead,
		"what did the build produce":                actRead,
		"any failing jobs?":                         actList,
		"is the runner open on Sunday":              actRead,
		"the query is slow":                         0,
		"show me the failing jobs":                  actRead | actList,
		"which runners are idle":                    actList,
		"what runners are idle":                     actList,
		"make a new runner":                         actCreate,
		"set the runner's label":                    actUpdate,
		"move the runner to pool b":                 actMove,
		"delete all the old runners":                actDelete,
		"delete the failing jobs":                   actDelete,
		"kick off a nightly build and then stop it": actRun | actStop,
	} {
		if got := readQuery(in).acts; got != want {
			t.Errorf("readQuery(%q).acts = %b, want %b", in, got, want)
		}
	}
}

// TestActionRanksSiblings: among tools named for the same thing, the one whose action the query
// asks for ranks first, whichever word of the query names the thing.
func TestActionRanksSiblings(t *testing.T) {
	tools := []Tool{
		{Name: "t__create_runner", Backend: "t", Description: "Create a runner."},
		{Name: "t__list_runners", Backend: "t", Description: "List runners."},
		{Name: "t__delete_runner", Backend: "t", Description: "Delete a runner."},
		{Name: "t__update_runner", Backend: "t", Description: "Update a runner."},
	}
	ix := NewBM25(tools)
	for q, want := range map[string]string{
		"set up another runner":       "t__create_runner",
		"show me every runner":        "t__list_runners",
		"which runners are there":     "t__list_runners",
		"throw away that runner":      "t__delete_runner",
		"tweak the runner's settings": "t__update_runner",
		"reassign the runner":         "t__update_runner",
		"which runners are open":      "t__list_runners",
	} {
		if hits := ix.Search(q, 1, nil); len(hits) == 0 || tools[hits[0].Index].Name != want {
			t.Errorf("%q: first %v, want %s", q, hits, want)
		}
	}
}

// TestSplitNameWords: a run-together name word is also indexed as the words it is made of, when
// the tool's own text holds them; another tool's text never splits it.
func TestSplitNameWords(t *testing.T) {
	tools := []Tool{
		{Name: "dev__heapsnapshot", Backend: "dev", Description: "Capture a heap snapshot of the page."},
		{Name: "dev__pagesnapshot", Backend: "dev", Description: "Capture the page."},
		{Name: "other__tool", Backend: "other", Description: "Mentions pagesnapshot, page and snapshot."},
	}
	ix := NewBM25(tools)
	inName := func(term string, doc int32) bool {
		for _, p := range ix.postings[term] {
			if p.doc == doc {
				return p.tf[fieldName] > 0
			}
		}
		return false
	}
	if !inName("heap", 0) || !inName("snapshot", 0) {
		t.Errorf("heapsnapshot not split into heap and snapshot")
	}
	if inName("snapshot", 1) {
		t.Errorf("pagesnapshot split though its own text lacks snapshot")
	}
}
