package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// scopedLists answers tools/list privately with one tool named after the request's
// _meta["test/scope"], so each scope a caller lists with is another catalog version (as a
// backend that lists by the caller's scopes would); other requests go to the SDK server.
func scopedLists(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil || req.Method != "tools/list" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
			return
		}
		scope, _ := req.Params.Meta["test/scope"].(string)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[`+
			`{"name":"tool_`+scope+`","description":"Reads the `+scope+` records.","inputSchema":{"type":"object"}}]}}`)
	})
}

// TestIndexShareOneCallerCannotEvictOthers: a caller whose private catalog keeps changing (a
// new scope each time) rebuilds only its own search index: bob's private index and the public
// one stay indexed, so searching them again builds nothing.
func TestIndexShareOneCallerCannotEvictOthers(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithMiddleware(scopedLists))
	pub := mcptest.StartServer(t, "pub")
	reg := func(name, url string) *upstreams.Registry {
		s, _ := testServer(t, Config{}, oneBackendNamed(name, url), upstreams.Options{}, Deps{})
		return s.backends
	}
	private, public := reg("be", be.URL()), reg("pub", pub.URL())
	catalog := func(r *upstreams.Registry, caller, scope string) *upstreams.ToolCatalog {
		t.Helper()
		meta := strings.Replace(mcptest.Meta, `"_meta":{`, `"_meta":{"test/scope":"`+scope+`",`, 1)
		cat, err := r.ToolCatalog(context.Background(), &upstreams.ListRequest{Method: upstreams.MethodToolsList,
			CacheKey: caller, Params: json.RawMessage(`{` + meta + `}`)})
		if err != nil {
			t.Fatal(err)
		}
		return cat
	}
	c := newIndexCache(slog.New(slog.DiscardHandler), private.ListCacheBytes())
	builds, own, total := 0, 0, 0
	c.onBuild = func(int) { builds++ }
	c.onEvict = func(o bool) {
		if o {
			own++
		} else {
			total++
		}
	}
	get := func(cat *upstreams.ToolCatalog, owner string) {
		t.Helper()
		if _, err := c.get(context.Background(), cat, owner); err != nil {
			t.Fatal(err)
		}
	}
	const bob, alice, flood = "https://idp#bob", "https://idp#alice", 3 * indexVersions
	bobs, pubs := catalog(private, bob, "bob"), catalog(public, "", "")
	if !bobs.Private() || pubs.Private() {
		t.Fatal("want bob's catalog private and the other public")
	}
	get(bobs, bob)
	get(pubs, "")
	for i := range flood {
		get(catalog(private, alice, "alice"+strings.Repeat("x", i)), alice)
	}
	before := builds
	get(catalog(private, bob, "bob"), bob)
	get(catalog(public, "", ""), "")
	if builds != before {
		t.Fatalf("bob's or the public index was pushed out by alice's: %d rebuilds", builds-before)
	}
	if own != flood-1 || total != 0 || builds != 2+flood {
		t.Fatalf("%d builds, evictions %d own, %d total; want %d, %d, 0", builds, own, total, 2+flood, flood-1)
	}
}

// TestIndexSharePublicUseLeavesShare: an index first built for a caller's private catalog that a
// public catalog of the same version then uses is no longer that caller's: the caller's next
// private index does not push it out.
func TestIndexSharePublicUseLeavesShare(t *testing.T) {
	pub := mcptest.StartServer(t, "pub")
	s, _ := testServer(t, Config{}, oneBackendNamed("pub", pub.URL()), upstreams.Options{}, Deps{})
	cat, err := s.backends.ToolCatalog(context.Background(), &upstreams.ListRequest{Method: upstreams.MethodToolsList,
		Params: json.RawMessage(`{` + mcptest.Meta + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := newIndexCache(slog.New(slog.DiscardHandler), s.backends.ListCacheBytes())
	builds := 0
	c.onBuild = func(int) { builds++ }
	const alice = "https://idp#alice"
	for _, owner := range []string{alice, ""} {
		if _, err := c.get(context.Background(), cat, owner); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	c.keep(&catalogIndex{}, alice) // alice's next private index
	c.mu.Unlock()
	if _, err := c.get(context.Background(), cat, ""); err != nil {
		t.Fatal(err)
	}
	if builds != 1 {
		t.Fatalf("the index the public catalog uses was built %d times: alice's next index pushed it out", builds)
	}
}

// TestIndexShareUnauthenticatedClients: without authentication, the index of a private catalog
// counts against the client address it was built for (the key every other per-caller bound of
// that client uses), not as everyone's: one client whose private lists keep changing rebuilds
// only its own index, never pushing out another client's.
func TestIndexShareUnauthenticatedClients(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithMiddleware(scopedLists))
	s, e := testServer(t, Config{Search: SearchConfig{Enabled: true}, TrustedProxies: []string{"127.0.0.1/32"}},
		oneBackendNamed("be", be.URL()), upstreams.Options{}, Deps{})
	var builds atomic.Int32
	s.search.index.onBuild = func(int) { builds.Add(1) }
	url := serveTest(t, e).URL + DefaultPath
	find := func(client, scope string) {
		t.Helper()
		meta := strings.Replace(mcptest.Meta, `"_meta":{`, `"_meta":{"test/scope":"`+scope+`",`, 1)
		r := do(t, "POST", url, with(modern("tools/call", findToolsName), "X-Forwarded-For", client),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"find_tools","arguments":{"query":"records"}}}`)
		mcptest.CheckRPC(t, r, 0)
		if !strings.Contains(string(r.Body), "tool_"+scope) {
			t.Fatalf("find_tools for scope %s did not search that scope's catalog: %s", scope, r.Body)
		}
	}
	const bob, alice = "198.51.100.2", "198.51.100.1"
	find(bob, "bob")
	for i := range 3 * indexVersions {
		find(alice, "alice"+strings.Repeat("x", i))
	}
	before := builds.Load()
	find(bob, "bob")
	if n := builds.Load() - before; n != 0 {
		t.Fatalf("bob's private index was pushed out by another client's: %d rebuilds", n)
	}
}
