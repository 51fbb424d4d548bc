package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// TestSpellIndex: a normal form listed under one spelling that names it to every reader is
// sent in it (case, escapes, non-ASCII text written otherwise, a template's text); one listed
// under two, or with a dot segment, or as its URI form, is not indexed (the URI form or the
// name itself goes).
func TestSpellIndex(t *testing.T) {
	p := &part{}
	for _, l := range []struct{ n, listed string }{
		{"mem://x/é", "mem://x/é"},           // raw: indexed
		{"mem://x/é", "mem://x/é"},           // the same again: still one spelling
		{"mem://y/é", "mem://y/%c3%a9"},      // lower-case hex: indexed
		{"mem://z/é", "mem://z/%C3%A9"},      // the URI form: not needed
		{"mem://c/é", "mem://c/%C3%A9"},      // collides with the next
		{"mem://c/é", "mem://c/é"},           //
		{"mem://d/é", "mem://d/a/../%C3%A9"}, // a dot segment: never sent
		{"mem://e/é", "MEM://e/é"},           // upper case: indexed
		{"mem://f/é", "mem://f/e\u0301"},     // decomposed: indexed
		{"mem://ascii/a", "mem://ascii/%61"}, // an ASCII escape: indexed
		{"mem://t/~{id}", "MEM://T/%7e{id}"}, // a template: named by its own text
		{"mem://u/{id}", "mem://u/{id}"},     // a template listed in its normal form
	} {
		p.addSpelling(l.n, l.listed)
	}
	e := buildSpellIndex(p, 0, time.Unix(0, 0), [32]byte{})
	want := map[string]string{"mem://x/é": "mem://x/é", "mem://y/é": "mem://y/%c3%a9", "mem://f/é": "mem://f/e\u0301",
		"mem://t/~{id}": "MEM://T/%7e{id}", "mem://e/é": "MEM://e/é", "mem://ascii/a": "mem://ascii/%61"}
	if len(e.spell) != len(want) {
		t.Errorf("index %q, want %q", e.spell, want)
	}
	for n, s := range want {
		if e.spell[n] != s {
			t.Errorf("%q: %q, want %q", n, e.spell[n], s)
		}
	}
}

// TestRespellIndex: a templates list is kept for respelling only when one of its templates is
// listed otherwise than its normal form's URI form; a URI is respelt under the one template it
// falls under, and not when two respell it differently, when one cannot respell it (its
// respelling would not read back as the URI), or when the respelling is its URI form anyway.
func TestRespellIndex(t *testing.T) {
	index := func(listed ...string) []spelledTemplate {
		p := &part{}
		for _, l := range listed {
			n, ok := names.Listed(names.KindResource, l)
			if !ok {
				t.Fatalf("%q not listed", l)
			}
			p.templates = append(p.templates, spelledTemplate{normal: n, listed: l})
			p.items = append(p.items, listItem{target: names.Target{Upstream: "u", Name: n}})
		}
		return buildSpellIndex(p, 0, time.Unix(0, 0), [32]byte{}).templates
	}
	if ts := index("mem://items/{id}", "mem://x/%C3%A9/{id}"); ts != nil {
		t.Errorf("templates in their URI form kept: %q", ts)
	}
	ts := index("MEM://Items/%7e{id}", "mem://other/{id}", "mem://x/é/{id}")
	for _, tt := range []struct{ u, want string }{
		{"mem://items/~1", "MEM://Items/%7e1"},
		{"mem://items/~é", "MEM://Items/%7e%C3%A9"},
		{"mem://x/é/1", "mem://x/é/1"},
		{"mem://other/1", ""}, // its URI form: sent as before
		{"mem://elsewhere/1", ""},
	} {
		got, ok := respell(ts, tt.u)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("respell %q: %q, %v; want %q", tt.u, got, ok, tt.want)
		}
	}
	// Two spellings of one template, a normal one beside a respelt one, and a pair whose
	// respelling does not read back: none.
	for _, ts := range [][]spelledTemplate{
		index("MEM://Items/%7e{id}", "mem://ITEMS/~{id}"),
		index("MEM://Items/%7e{id}", "mem://items/~{id}"),
		{{normal: "mem://items/~{id}", listed: "mem://x/../items/~{id}"}},
		{{normal: "mem://items/~{id}", listed: "MEM://Items/%7e{id}/{b}"}},
	} {
		if got, ok := respell(ts, "mem://items/~1"); ok {
			t.Errorf("respell under %q: %q", ts, got)
		}
	}
}

// TestCachedPartKeepsSpellings: a list taken from the cache spells as the list fetched did, so
// an index rebuilt from it (its own evicted first) sends the same spellings.
func TestCachedPartKeepsSpellings(t *testing.T) {
	c := newListCache(CacheConfig{}, newTestClock().Now, nil)
	k := partKey{upstream: "u", list: templatesListIndex}
	p := &part{ttlMs: 1000, items: []listItem{{target: names.Target{Upstream: "u", Name: "mem://items/~{id}"}}},
		spellings: map[string]string{"mem://x/é": "mem://x/%c3%a9"},
		templates: []spelledTemplate{{normal: "mem://items/~{id}", listed: "MEM://Items/%7e{id}"}}}
	c.put(k, "", p, 0)
	got := c.get(k)
	if got == nil {
		t.Fatal("not cached")
	}
	e := buildSpellIndex(got, 0, time.Unix(0, 0), [32]byte{})
	if e.spell["mem://x/é"] != "mem://x/%c3%a9" || len(e.templates) != 1 {
		t.Errorf("index from the cached list: spell %q, templates %q", e.spell, e.templates)
	}
}

// TestSpellIndexNormalTwin: a plain-ASCII URI or a template listed in its normal form beside
// another spelling of it (the normal form is not recorded, so the items are counted) is two
// items to the backend and one to policy: neither spelling is indexed. Alone, the other
// spelling is.
func TestSpellIndexNormalTwin(t *testing.T) {
	for _, tt := range []struct {
		listed []string
		want   string
	}{
		{[]string{"mem://k/a", "MEM://k/a"}, ""},
		{[]string{"MEM://k/a", "mem://k/a"}, ""},
		{[]string{"MEM://k/a"}, "MEM://k/a"},
		{[]string{"mem://k/{a}", "MEM://K/{a}"}, ""},
		{[]string{"MEM://K/{a}"}, "MEM://K/{a}"},
	} {
		p := &part{}
		var n string
		for _, l := range tt.listed {
			n, _ = names.Listed(names.KindResource, l)
			p.addSpelling(n, l)
			p.items = append(p.items, listItem{target: names.Target{Upstream: "u", Name: n}})
		}
		if got := buildSpellIndex(p, 0, time.Unix(0, 0), [32]byte{}).spell[n]; got != tt.want {
			t.Errorf("%q: %q, want %q", tt.listed, got, tt.want)
		}
	}
}

// TestSpellingListFailureRemembered: a read's spelling needs its backend's templates list; a
// backend whose templates list fails (a real SDK server behind a proxy answering that
// list alone with an error) is asked for it once per spellListRetry, per caller, not at every read, and the
// reads in between are spelt as with a list that cannot be had: the URI form, exactly what a
// read after a failed fetch is sent as. A list_changed ends the wait.
func TestSpellingListFailureRemembered(t *testing.T) {
	var fetches atomic.Int32
	failTemplates := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &req) == nil && req.Method == "resources/templates/list" {
				fetches.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32603,"message":"templates unavailable"}}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	be := mcptest.StartServer(t, "be", mcptest.WithMiddleware(failTemplates),
		mcptest.WithResource(&mcp.Resource{URI: "mem://items/a", Name: "a"}, read))
	c := newTestCatalog(t, Options{}, backend.Config{Name: "be", URL: be.URL()})
	clock := newTestClock()
	c.now = clock.Now
	spell := func(caller, uri string) {
		t.Helper()
		q := &ToolHeaderQuery{Fetch: true, CacheKey: caller}
		if got, want := c.ResourceSpelling(context.Background(), q, names.Target{Upstream: "be", Name: uri}), resuri.URIForm(uri); got != want {
			t.Fatalf("%s read %s spelt %q, want %q (a list that cannot be had)", caller, uri, got, want)
		}
	}
	fetched := func(want int32, when string) {
		t.Helper()
		if n := fetches.Load(); n != want {
			t.Fatalf("%s: the templates list was asked for %d times, want %d", when, n, want)
		}
	}
	const alice, bob = "https://idp#alice", "https://idp#bob"
	for _, uri := range []string{"mem://items/~1", "mem://items/é", "mem://items/~1", "mem://other/2", "mem://items/a"} {
		spell(alice, uri)
	}
	fetched(1, "five reads")
	spell(bob, "mem://items/~1")
	fetched(2, "another caller's read") // each caller's failure is its own
	clock.Advance(spellListRetry)
	spell(alice, "mem://items/~1")
	fetched(3, "a read after the wait")
	c.cache.invalidate("be", []byte{templatesListIndex})
	spell(alice, "mem://items/~1")
	fetched(4, "a read after a list_changed")
}
