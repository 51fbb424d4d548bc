package upstreams

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/catalog"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// evictionCounter counts Options.CacheEvicted reports of the list cache, of the header-binding
// indexes (index…) and of the pin verdicts (pins…), by cause.
type evictionCounter struct{ own, total, indexOwn, indexTotal, pinsOwn, pinsTotal atomic.Int64 }

func (c *evictionCounter) hook(cache string, own bool) {
	switch {
	case cache == catalog.CacheList && own:
		c.own.Add(1)
	case cache == catalog.CacheList:
		c.total.Add(1)
	case cache == catalog.CacheHeaderIndex && own:
		c.indexOwn.Add(1)
	case cache == catalog.CacheHeaderIndex:
		c.indexTotal.Add(1)
	case cache == catalog.CachePinVerdicts && own:
		c.pinsOwn.Add(1)
	case cache == catalog.CachePinVerdicts:
		c.pinsTotal.Add(1)
	}
}

// TestCacheShareOneCallerCannotEvictOthers: a token-exchange backend lists privately, so each
// of a caller's tokens gets its own cached list. Alice, with many tokens, makes the gateway
// cache far more lists than the cache holds; she evicts only her own, and bob's private list
// and the public list of another backend are still served from the cache (no new backend
// request), while her most recent list is cached too. The header-binding index and the pin
// verdicts kept of each list count against the same share, her identity's, not her token's.
func TestCacheShareOneCallerCannotEvictOthers(t *testing.T) {
	const entries, aliceTokens = 16, 3 * 16
	as := startAuthServer(t, nil)
	private := mcptest.StartServer(t, "alpha", mcptest.WithCacheHints(600000, "private"))
	public := mcptest.StartServer(t, "beta", mcptest.WithCacheHints(600000, "public"))
	var ev evictionCounter
	lock := pins.NewLock()
	lock.Backend("alpha") // every tool new, and only logged: the lists are pinned, none blocked
	lock.Backend("beta")
	guard, err := pins.NewGuard(pins.GuardOptions{Config: &pins.Config{LockFile: "x",
		Actions: map[pins.Class]pins.Action{pins.ClassNew: pins.ActionLog}}, Lock: lock, Backends: []string{"alpha", "beta"}})
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRegistry(t, Config{Cache: CacheConfig{MaxEntries: entries}, Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: private.URL(), Protocol: ProtocolVersion, Auth: as.auth(AuthTokenExchange, private.URL())},
		{Name: "beta", URL: public.URL(), Protocol: ProtocolVersion},
	}}, Options{CacheEvicted: ev.hook, Pins: guard})
	list := func(token, sub string) {
		t.Helper()
		if _, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, SubjectToken: token,
			CacheKey: as.iss.URL() + "#" + sub, Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)}); err != nil {
			t.Fatalf("list as %s: %v", sub, err)
		}
	}
	bob, _ := as.iss.Mint(devissuer.Claims{"sub": "bob"})
	list(bob, "bob")
	var last string
	for i := range aliceTokens {
		last, _ = as.iss.Mint(devissuer.Claims{"sub": "alice", "n": i})
		list(last, "alice")
	}
	privateLists, publicLists := len(private.RequestsOf(MethodToolsList)), len(public.RequestsOf(MethodToolsList))
	if privateLists != 1+aliceTokens || publicLists != 1 {
		t.Fatalf("after alice's flood: %d private and %d public backend lists, want %d and 1", privateLists, publicLists, 1+aliceTokens)
	}
	list(bob, "bob")
	list(last, "alice")
	if got := len(private.RequestsOf(MethodToolsList)); got != privateLists {
		t.Fatalf("bob's or alice's latest private list was not served from the cache: %d backend lists, want %d", got, privateLists)
	}
	if got := len(public.RequestsOf(MethodToolsList)); got != 1 {
		t.Fatalf("the public list was evicted: %d backend lists, want 1", got)
	}
	share := entries / 8
	if ev.own.Load() != int64(aliceTokens-share) || ev.total.Load() != 0 {
		t.Fatalf("evictions: %d own share, %d total; want %d, 0", ev.own.Load(), ev.total.Load(), aliceTokens-share)
	}
	// Each list fetched was indexed (its tools' header bindings), under the same share: alice's
	// identity, whatever her token.
	if ev.indexOwn.Load() != int64(aliceTokens-share) || ev.indexTotal.Load() != 0 {
		t.Fatalf("header index evictions: %d own share, %d total; want %d, 0", ev.indexOwn.Load(), ev.indexTotal.Load(), aliceTokens-share)
	}
	if ev.pinsOwn.Load() != int64(aliceTokens-share) || ev.pinsTotal.Load() != 0 {
		t.Fatalf("pin verdict evictions: %d own share, %d total; want %d, 0", ev.pinsOwn.Load(), ev.pinsTotal.Load(), aliceTokens-share)
	}
}
